//! One concurrency slot of the kv load: it takes sessions from a shared
//! counter until all are taken and runs each as httperf does — a new
//! keep-alive connection, R requests, then close. What it measures and
//! checks stays in the slot until the run ends.

use super::reply::next_response;
use super::workload::{check_value, write_key, write_value, Op};
use super::{Kv, KvLoad};
use crate::checks::Checks;
use crate::driver::Failure;
use crate::harness::{Exchange, Received};
use crate::keyspace::KeyWalk;
use hdrhistogram::Histogram;
use serverlab_proto::kv::client::{ResponseHead, Tag};
use serverlab_proto::kv::digest;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Session times: nanoseconds, 3 significant digits, up to an hour.
pub(crate) fn session_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1_000, 3_600_000_000_000, 3).expect("valid histogram bounds")
}

/// The session a slot is running.
struct Session {
    number: usize,
    rng: fastrand::Rng,
    /// When its connection was started.
    began: Instant,
    /// Requests sent, and answered.
    sent: usize,
    answered: usize,
}

/// A request in flight: its method, its key, and (for a write) the nonce
/// its value was made from, so the reply can be checked against them.
pub struct Sent {
    op: Op,
    key: usize,
    nonce: u64,
}

pub struct SessionClient<'a> {
    cfg: &'a KvLoad,
    kv: &'a Kv,
    slot: usize,
    session: Option<Session>,
    /// Scratch for a key and a value.
    key: Vec<u8>,
    value: Vec<u8>,
    /// After a preload with no DELETE in the mix, every key exists: reads
    /// find it and writes replace it.
    must_exist: bool,
    pub(crate) sessions: Histogram<u64>,
    pub(crate) failed_sessions: u64,
    /// A session of this client waited out the reply timeout: it starts
    /// no more (each would wait as long), so a load against a server that
    /// stopped answering ends within one timeout.
    stalled: bool,
    pub(crate) statuses: BTreeMap<u16, u64>,
    /// Its own walk through the keys, when they are drawn in sequence.
    walk: KeyWalk,
}

impl<'a> SessionClient<'a> {
    pub(crate) fn new(cfg: &'a KvLoad, kv: &'a Kv, slot: usize) -> Self {
        SessionClient {
            cfg,
            kv,
            slot,
            session: None,
            key: Vec::new(),
            value: Vec::new(),
            must_exist: cfg.preload && cfg.mix.weight(Op::Delete) == 0,
            sessions: session_histogram(),
            failed_sessions: 0,
            stalled: false,
            statuses: BTreeMap::new(),
            walk: KeyWalk::new(slot, cfg.concurrency.clamp(1, cfg.sessions.max(1))),
        }
    }

    /// Check one response against what the protocol allows.
    fn check(&mut self, sent: &Sent, head: &ResponseHead, body: &[u8], checks: &mut Checks) {
        checks.checked(1);
        write_key(&mut self.key, sent.key);
        let k = String::from_utf8_lossy(&self.key).into_owned();
        let op = sent.op;
        let m = op.method().name();
        let status = head.status;
        let size = &self.cfg.value_size;
        let allowed: &[u16] = match op {
            Op::Get | Op::Head | Op::Put | Op::Post if self.must_exist => &[200],
            Op::Get | Op::Head | Op::Delete => &[200, 404],
            Op::Put | Op::Post => &[200, 201],
        };
        if !allowed.contains(&status) {
            let why = if self.must_exist {
                " (every key was preloaded and none is deleted)"
            } else {
                ""
            };
            return checks.mismatch(format!(
                "{m} /{k}: status {status}, expected one of {allowed:?}{why}"
            ));
        }
        match op {
            Op::Get if status == 200 => {
                if !size.allows(body.len()) {
                    return checks.mismatch(format!(
                        "GET /{k}: a body of {} bytes, but every value this load writes has {size}",
                        body.len()
                    ));
                }
                if let Err(e) = check_value(&self.key, body) {
                    return checks.mismatch(format!("GET /{k}: the body is wrong: {e}"));
                }
                if head.etag != Tag::Digest(digest(body)) {
                    checks.mismatch(format!("GET /{k}: the ETag is not the MD5 of the body"));
                }
            }
            Op::Head if status == 200 => {
                if !matches!(head.etag, Tag::Digest(_)) {
                    checks.mismatch(format!("HEAD /{k}: no ETag"));
                } else if !head.content_length.is_some_and(|n| size.allows(n as usize)) {
                    checks.mismatch(format!(
                        "HEAD /{k}: Content-Length {}, but every value this load writes has {size} bytes",
                        head.content_length
                            .map_or_else(|| "absent".to_string(), |n| n.to_string())
                    ));
                }
            }
            Op::Put | Op::Post => {
                let len = size.for_nonce(sent.nonce);
                write_value(&mut self.value, &self.key, sent.nonce, len);
                if head.etag != Tag::Digest(digest(&self.value)) {
                    checks.mismatch(format!(
                        "{m} /{k}: the ETag is not the MD5 of the value sent"
                    ));
                }
            }
            _ => {}
        }
    }
}

impl SessionClient<'_> {
    /// With a ledger, a write whose status says it was done: a PUT or
    /// POST answered 200 or 201, a DELETE answered 200 or 404 (either way
    /// the key is absent after it).
    fn ledger_ack(&mut self, sent: &Sent, status: u16) {
        let Some(ledger) = &self.cfg.ledger else {
            return;
        };
        let done = match sent.op {
            Op::Put | Op::Post => status == 200 || status == 201,
            Op::Delete => status == 200 || status == 404,
            Op::Get | Op::Head => false,
        };
        if !done {
            return;
        }
        write_key(&mut self.key, sent.key);
        if sent.op == Op::Delete {
            return ledger.acked(&self.key, None);
        }
        let len = self.cfg.value_size.for_nonce(sent.nonce);
        write_value(&mut self.value, &self.key, sent.nonce, len);
        ledger.acked(&self.key, Some(&self.value));
    }
}

impl Exchange for SessionClient<'_> {
    type Sent = Sent;

    /// Claim the next session, if any is left.
    fn connect(&mut self, now: Instant) -> bool {
        if self.stalled {
            return false;
        }
        // Relaxed: the counter only hands out distinct session numbers; it
        // orders nothing else.
        let local = self.kv.next.fetch_add(1, Ordering::Relaxed);
        if local >= self.cfg.agent.share(self.cfg.sessions) {
            return false;
        }
        // Numbered in the whole run: a split load's agents run different
        // sessions.
        let number = self.cfg.agent.global(local);
        self.session = Some(Session {
            number,
            rng: fastrand::Rng::with_seed(
                self.cfg.seed ^ (number as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            began: now,
            sent: 0,
            answered: 0,
        });
        true
    }

    fn request(&mut self, wire: &mut Vec<u8>) -> Option<(usize, Sent)> {
        let cfg = self.cfg;
        let s = self.session.as_mut()?;
        // Drawn in this order, a session's requests depend only on the seed
        // and the session's number.
        let op = cfg.mix.pick(&mut s.rng);
        let mut drawn = self.kv.keys.pick_walking(&mut s.rng, &mut self.walk);
        if cfg.ledger.is_some() {
            drawn = cfg.own_key(drawn, self.slot);
        }
        // A split load's agent draws from its own keys.
        let key = cfg.agent.global(drawn);
        write_key(&mut self.key, key);
        let writes = op.method().writes();
        let nonce = if writes { s.rng.u64(..) } else { 0 };
        let body = writes.then(|| {
            write_value(
                &mut self.value,
                &self.key,
                nonce,
                cfg.value_size.for_nonce(nonce),
            );
            &self.value[..]
        });
        if let Some(ledger) = &cfg.ledger {
            if writes || op == Op::Delete {
                ledger.sent(&self.key, body);
            }
        }
        self.kv.requests[op.index()].write(wire, &self.key, body.unwrap_or_default(), true);
        s.sent += 1;
        Some((op.index(), Sent { op, key, nonce }))
    }

    fn reply(
        &mut self,
        input: &[u8],
        sent: &Sent,
        rx: Received,
        checks: &mut Checks,
    ) -> Result<Option<usize>, String> {
        let Some(response) = next_response(input, sent.op.method())? else {
            return Ok(None);
        };
        let head = response.head;
        // Counted over the window, as the requests are: not the warm-up's.
        if rx.counted {
            *self.statuses.entry(head.status).or_insert(0) += 1;
        }
        if checks.enabled {
            self.check(sent, &head, response.body, checks);
        }
        self.ledger_ack(sent, head.status);
        let r = self.cfg.requests_per_session;
        let s = self
            .session
            .as_mut()
            .ok_or("a response outside any session")?;
        s.answered += 1;
        if s.answered == r {
            // A session counts where it ended: one that ended in the
            // warm-up, or after the window, is not the window's.
            if rx.counted {
                let ns = (rx.at - s.began).as_nanos().min(u128::from(u64::MAX)) as u64;
                self.sessions.saturating_record(ns.max(1_000));
            }
            self.session = None;
        } else if head.close {
            return Err(format!(
                "the server closed the connection after {} of {r} requests (status {})",
                s.answered, head.status
            ));
        }
        Ok(Some(response.len))
    }

    /// The session failed; the slot goes on with the next.
    fn failed(&mut self, failure: &Failure, unanswered: Option<&Sent>) -> String {
        let Some(s) = self.session.take() else {
            return failure.to_string();
        };
        self.failed_sessions += 1;
        // With a ledger, a write of this slot's keys may be unacknowledged:
        // a later one acknowledged would make the key's last value
        // ambiguous, so the slot stops.
        self.stalled |= matches!(failure, Failure::Stalled(_)) || self.cfg.ledger.is_some();
        let what = match (failure, unanswered) {
            (Failure::Connect { .. }, _) | (_, None) => failure.to_string(),
            (_, Some(_)) => format!(
                "request {} of {}: {failure}",
                s.sent, self.cfg.requests_per_session
            ),
        };
        format!("session {}: {what}", s.number)
    }

    fn label(&self) -> (&'static str, usize) {
        ("sessions", self.slot)
    }
}
