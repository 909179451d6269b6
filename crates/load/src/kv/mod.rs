//! The kv load: sessions in the httperf sense. Each session is one
//! keep-alive connection doing `requests_per_session` requests in
//! lock-step; `concurrency` sessions are in flight at once (each a client
//! of the harness, closed loop). Methods follow a weighted mix, keys a
//! uniform or Zipf distribution, and with `verify` every response is
//! checked: values carry their own checksum and are all `value_size`
//! bytes, and ETags must be the MD5 of the body.

mod preload;
pub mod reply;
mod session;
pub mod workload;

pub use crate::results::kv::{KvResults, Preload, SessionTimes, Sessions};
pub use workload::{KeyDist, Mix, Op};

use crate::endpoint::{host_of, Endpoint};
use crate::harness::{self, Connections, Finish, Pacing, Plan, Timeouts, Window};
use crate::http::{Ready, Target};
use crate::keyspace::ValueSize;
use crate::report::ProtocolResults;
use crate::LoadError;
use serde::Serialize;
use session::SessionClient;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};
use workload::{key_name, min_checked_size, KeyPicker};

/// Operation names, in recorder order ([`Op::index`]).
pub const OPS: [&str; 5] = ["GET", "HEAD", "PUT", "POST", "DELETE"];

/// What `--verify` leaves out: each reply is checked on its own.
pub const NOT_CHECKED: &str = "order and lost updates: each reply is checked on its own (status, \
     the value's checksum and size, the ETag), not against the writes before it; \
     `serverlab check kv` checks those";

/// How long to wait for a connection, and for each response.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// A kv load run's settings.
#[derive(Debug, Clone, Serialize)]
pub struct KvLoad {
    /// The server: a TCP address, or a Unix socket (`unix:/path`).
    pub addr: Endpoint,
    /// Sessions to run; [`usize::MAX`] in a timed run (sessions without
    /// end until the window closes; null in the JSON).
    #[serde(serialize_with = "count_or_null")]
    pub sessions: usize,
    /// A timed run: sessions start until this long after the warm-up, as
    /// wrk's `-d` (None: the run is `sessions` sessions).
    #[serde(rename = "duration_s", serialize_with = "optional_seconds")]
    pub duration: Option<Duration>,
    pub requests_per_session: usize,
    /// Sessions in flight at once.
    pub concurrency: usize,
    /// Pipeline depth within a session, and throttle.
    #[serde(flatten)]
    pub pacing: Pacing,
    pub mix: Mix,
    pub keys: usize,
    pub key_dist: KeyDist,
    /// Bytes per written value.
    pub value_size: ValueSize,
    /// Write every key once before the run.
    pub preload: bool,
    pub seed: u64,
    pub verify: bool,
    /// Which share of a split load this process runs (said in the
    /// report's `agent`, not here: every agent's configuration is the same).
    #[serde(skip)]
    pub agent: harness::Agent,
    /// How long a session with requests in flight waits for a byte.
    #[serde(rename = "reply_timeout_s", serialize_with = "seconds")]
    pub reply_timeout: Duration,
    /// The longest reply accepted (`--max-reply`), over what a response of
    /// this load can be.
    #[serde(skip)]
    pub max_reply: usize,
    /// `--ledger`: every write sent and acknowledged; each concurrency
    /// slot then writes only its own keys ([`KvLoad::own_key`]).
    #[serde(skip)]
    pub ledger: Option<std::sync::Arc<serverlab_util::ledger::Ledger>>,
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn count_or_null<S: serde::Serializer>(n: &usize, s: S) -> Result<S::Ok, S::Error> {
    match *n {
        usize::MAX => s.serialize_none(),
        n => s.serialize_u64(n as u64),
    }
}

fn optional_seconds<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_f64(d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

impl KvLoad {
    pub fn new(addr: impl Into<Endpoint>) -> Self {
        KvLoad {
            addr: addr.into(),
            sessions: 100,
            duration: None,
            requests_per_session: 100,
            concurrency: 10,
            pacing: Pacing::default(),
            mix: workload::default_mix(),
            keys: 1000,
            key_dist: KeyDist::Uniform,
            value_size: ValueSize::Fixed(128),
            preload: false,
            seed: 1,
            verify: false,
            agent: harness::Agent::SOLO,
            reply_timeout: REPLY_TIMEOUT,
            max_reply: crate::driver::MAX_REPLY,
            ledger: None,
        }
    }

    /// With a ledger, the key of `slot`'s nearest `drawn`: every slot owns
    /// the keys congruent to it modulo the concurrency, so each key is
    /// written by one slot's sessions, one after another, and its last
    /// acknowledged value is well defined. `drawn` is a key of this
    /// agent's share (below `agent.share(keys)`, which must be at least the
    /// concurrency), and so is the key returned.
    pub fn own_key(&self, drawn: usize, slot: usize) -> usize {
        let c = self.concurrency;
        let key = drawn - drawn % c + slot;
        if key < self.agent.share(self.keys) {
            key
        } else {
            key - c
        }
    }

    /// The smallest `value_size` that `verify` can check.
    pub fn min_verified_value_size(&self) -> usize {
        min_checked_size(key_name(self.keys.saturating_sub(1)).len())
    }

    fn timeouts(&self) -> Timeouts {
        Timeouts {
            connect: CONNECT_TIMEOUT,
            reply: Some(self.reply_timeout),
            drain: None,
            max_reply: self.reply_limit(),
        }
    }

    /// What a response can be: a head (a few headers) and a value.
    pub fn reply_limit(&self) -> usize {
        crate::driver::reply_limit(self.value_size.max() + 4096, self.max_reply)
    }
}

/// kv's requests, one per operation (in [`OPS`] order), as `load http`
/// targets: `METHOD /{key}`, a write's body its value. Written by the one
/// HTTP client of the loads ([`crate::http`]), whose framing reads the
/// responses too: kv keeps only its sessions, its keys and its checks.
pub(crate) fn requests(host: &str) -> Vec<Ready> {
    use serverlab_util::Named;
    Op::ALL
        .iter()
        .enumerate()
        .map(|(i, op)| {
            debug_assert_eq!(op.index(), i, "Op::ALL is in OPS order");
            let m = op.method();
            let mut t = Target::new(m.name(), "/{key}").expect("a kv request is a target");
            if m.writes() {
                t.body = b"{value}".to_vec();
            }
            Ready::new(&t, host)
        })
        .collect()
}

/// What the sessions share.
pub struct Kv {
    keys: KeyPicker,
    /// Each operation's request ([`requests`]).
    requests: Vec<Ready>,
    /// The next session number to claim.
    next: AtomicUsize,
    /// How long the preload took, if there was one.
    preload_s: Option<f64>,
}

impl harness::Protocol for KvLoad {
    const NAME: &'static str = serverlab_proto::kv::NAME;
    const OPS: &'static [&'static str] = &OPS;
    type Shared = Kv;
    type Exchange<'a> = SessionClient<'a>;

    fn plan(&self) -> Plan {
        let connections = Connections::Series {
            requests: Some(self.requests_per_session),
        };
        let window = self.duration.map_or(Window::Work, Window::Duration);
        harness::plan!(self, window, connections, self.timeouts(), Some("sessions"))
    }

    /// Fail fast, with a clear message, when nothing listens; then the
    /// preload, if asked for.
    fn shares(&self) -> Vec<(&'static str, usize)> {
        vec![
            (
                "sessions in flight (--concurrency)",
                self.concurrency.clamp(1, self.sessions.max(1)),
            ),
            ("sessions", self.sessions),
            ("keys", self.keys),
        ]
    }

    fn setup(&self, errors: &mut Vec<String>) -> Result<Kv, LoadError> {
        let addr = &self.addr;
        addr.connect(CONNECT_TIMEOUT)
            .map_err(LoadError::connecting(addr))?;
        let host = host_of(addr);
        let preload_s = if self.preload {
            let t0 = Instant::now();
            errors.extend(preload::run(self, &host)?);
            Some(t0.elapsed().as_secs_f64())
        } else {
            None
        };
        Ok(Kv {
            // An agent's share stands for every key: a Gaussian's mean
            // and deviation, given over them all, scale to it.
            keys: KeyPicker::of_share(self.agent.share(self.keys).max(1), self.key_dist, self.keys),
            requests: requests(&host),
            next: AtomicUsize::new(0),
            preload_s,
        })
    }

    fn exchanges<'a>(&'a self, kv: &'a Kv) -> Vec<SessionClient<'a>> {
        (0..self.concurrency.clamp(1, self.sessions.max(1)))
            .map(|slot| SessionClient::new(self, kv, slot))
            .collect()
    }

    fn finish(&self, kv: &Kv, done: Finish<'_, SessionClient<'_>>) -> ProtocolResults {
        let mut times = session::session_histogram();
        let mut statuses: BTreeMap<u16, u64> = BTreeMap::new();
        let mut failed = 0;
        for c in &done.exchanges {
            times.add(&c.sessions).expect("same bounds");
            for (s, n) in &c.statuses {
                *statuses.entry(*s).or_insert(0) += n;
            }
            failed += c.failed_sessions;
        }
        if self.verify {
            done.checks.not_checked(NOT_CHECKED);
        }
        // Over the measured window, as the run's own rate: the warm-up
        // is said apart.
        KvResults::of(
            done.measured.duration_s,
            done.measured.requests,
            statuses,
            Sessions {
                // A timed run plans no count.
                planned: match self.sessions {
                    usize::MAX => 0,
                    n => self.agent.share(n) as u64,
                },
                completed: times.len(),
                failed,
                time_ms: SessionTimes::of(&times),
            },
            kv.preload_s.map(|time_s| Preload {
                keys: self.agent.share(self.keys) as u64,
                time_s,
            }),
        )
        .into()
    }

    /// A search or scan times each step: sessions without end.
    fn timed(&self) -> Option<Self> {
        Some(KvLoad {
            sessions: usize::MAX,
            ..self.clone()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverlab_proto::kv::client::encode_request;
    use serverlab_util::Named;

    /// Written by the HTTP client, kv's requests are the bytes the
    /// protocol's own encoder writes.
    #[test]
    fn requests_are_the_protocols_own_bytes() {
        let host = "127.0.0.1:8080";
        let all = requests(host);
        let value = b"key42:0123456789abcdef:xyz".to_vec();
        for &op in Op::ALL {
            let body = op.method().writes().then_some(&value[..]);
            let mut want = Vec::new();
            encode_request(&mut want, op.method(), b"key42", body, host, false);
            let mut got = Vec::new();
            all[op.index()].write(&mut got, b"key42", body.unwrap_or_default(), true);
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&want),
                "{op:?}"
            );
        }
    }
}
