//! One concurrency slot of the kv load: it takes sessions from a shared
//! counter until all are taken and runs each as httperf does — a new
//! keep-alive connection, R requests in lock-step, then close — on the
//! event-loop driver. Everything it measures and checks stays in the slot
//! until the run ends.

use super::reply::next_response;
use super::workload::{check_value, write_key, write_value, KeyPicker, Op};
use super::{KvLoad, OPS};
use crate::driver::{Client, Failure};
use crate::record::Recorder;
use hdrhistogram::Histogram;
use serverlab_proto::kv::client::{encode_request, ResponseHead, Tag};
use serverlab_proto::kv::digest;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Error and mismatch descriptions kept per slot (all are counted).
const EXAMPLES: usize = 10;

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
    /// The request in flight: what it was and when it went.
    pending: Option<(Op, Instant)>,
}

pub(crate) struct SessionClient<'a> {
    cfg: &'a KvLoad,
    keys: &'a KeyPicker,
    next: &'a AtomicUsize,
    host: &'a str,
    session: Option<Session>,
    /// The key and (for writes) the value of the request in flight.
    key: Vec<u8>,
    value: Vec<u8>,
    /// After a preload with no DELETE in the mix, every key exists: reads
    /// find it and writes replace it.
    must_exist: bool,
    pub(crate) rec: Recorder,
    pub(crate) sessions: Histogram<u64>,
    pub(crate) failed_sessions: u64,
    pub(crate) statuses: BTreeMap<u16, u64>,
    pub(crate) errors: Vec<String>,
    pub(crate) error_count: u64,
    pub(crate) checked: u64,
    pub(crate) mismatches: u64,
    pub(crate) examples: Vec<String>,
}

impl<'a> SessionClient<'a> {
    pub(crate) fn new(
        cfg: &'a KvLoad,
        keys: &'a KeyPicker,
        next: &'a AtomicUsize,
        host: &'a str,
        start: Instant,
    ) -> Self {
        SessionClient {
            cfg,
            keys,
            next,
            host,
            session: None,
            key: Vec::new(),
            value: Vec::new(),
            must_exist: cfg.preload && cfg.mix.weight(Op::Delete) == 0,
            rec: Recorder::new(OPS.len(), start, None),
            sessions: session_histogram(),
            failed_sessions: 0,
            statuses: BTreeMap::new(),
            errors: Vec::new(),
            error_count: 0,
            checked: 0,
            mismatches: 0,
            examples: Vec::new(),
        }
    }

    fn error(&mut self, what: String) {
        self.error_count += 1;
        if self.errors.len() < EXAMPLES {
            self.errors.push(what);
        }
    }

    fn mismatch(&mut self, what: String) {
        self.mismatches += 1;
        if self.examples.len() < EXAMPLES {
            self.examples.push(what);
        }
    }

    /// Check one response against what the protocol allows.
    fn check(&mut self, op: Op, head: &ResponseHead, body: &[u8]) {
        self.checked += 1;
        let k = String::from_utf8_lossy(&self.key).into_owned();
        let m = op.method().name();
        let status = head.status;
        let size = self.cfg.value_size;
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
            return self.mismatch(format!(
                "{m} /{k}: status {status}, expected one of {allowed:?}{why}"
            ));
        }
        match op {
            Op::Get if status == 200 => {
                if body.len() != size {
                    return self.mismatch(format!(
                        "GET /{k}: a body of {} bytes, but every value this load writes has {size}",
                        body.len()
                    ));
                }
                if let Err(e) = check_value(&self.key, body) {
                    return self.mismatch(format!("GET /{k}: the body is wrong: {e}"));
                }
                if head.etag != Tag::Digest(digest(body)) {
                    self.mismatch(format!("GET /{k}: the ETag is not the MD5 of the body"));
                }
            }
            Op::Head if status == 200 => {
                if !matches!(head.etag, Tag::Digest(_)) {
                    self.mismatch(format!("HEAD /{k}: no ETag"));
                } else if head.content_length != Some(size as u64) {
                    self.mismatch(format!(
                        "HEAD /{k}: Content-Length {}, but every value this load writes has {size} bytes",
                        head.content_length
                            .map_or_else(|| "absent".to_string(), |n| n.to_string())
                    ));
                }
            }
            Op::Put | Op::Post if head.etag != Tag::Digest(digest(&self.value)) => {
                self.mismatch(format!(
                    "{m} /{k}: the ETag is not the MD5 of the value sent"
                ));
            }
            _ => {}
        }
    }
}

impl Client for SessionClient<'_> {
    /// Claim the next session, if any is left.
    fn connect(&mut self, now: Instant) -> bool {
        // Relaxed: the counter only hands out distinct session numbers; it
        // orders nothing else.
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        if number >= self.cfg.sessions {
            return false;
        }
        self.session = Some(Session {
            number,
            rng: fastrand::Rng::with_seed(
                self.cfg.seed ^ (number as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            began: now,
            sent: 0,
            answered: 0,
            pending: None,
        });
        true
    }

    fn fill(&mut self, wire: &mut Vec<u8>, now: Instant) -> usize {
        let cfg = self.cfg;
        let Some(s) = self.session.as_mut() else {
            return 0;
        };
        if s.pending.is_some() || s.sent == cfg.requests_per_session {
            return 0;
        }
        // Drawn in this order, a session's requests depend only on the seed
        // and the session's number.
        let op = cfg.mix.pick(&mut s.rng);
        write_key(&mut self.key, self.keys.pick(&mut s.rng));
        let body = op.method().writes().then(|| {
            write_value(&mut self.value, &self.key, s.rng.u64(..), cfg.value_size);
            &self.value[..]
        });
        encode_request(wire, op.method(), &self.key, body, self.host, false);
        s.pending = Some((op, now));
        s.sent += 1;
        1
    }

    fn take(&mut self, input: &[u8], now: Instant) -> Result<Option<usize>, String> {
        let Some((op, sent)) = self.session.as_ref().and_then(|s| s.pending) else {
            return Err("a response to no request".into());
        };
        let Some(response) = next_response(input, op.method())? else {
            return Ok(None);
        };
        let head = response.head;
        self.rec.record(op.index(), sent, now);
        *self.statuses.entry(head.status).or_insert(0) += 1;
        if self.cfg.verify {
            self.check(op, &head, response.body);
        }
        let r = self.cfg.requests_per_session;
        let s = self.session.as_mut().expect("a session is running");
        s.pending = None;
        s.answered += 1;
        if s.answered == r {
            let ns = (now - s.began).as_nanos().min(u128::from(u64::MAX)) as u64;
            self.sessions.saturating_record(ns.max(1_000));
            self.session = None;
        } else if head.close {
            return Err(format!(
                "the server closed the connection after {} of {r} requests (status {})",
                s.answered, head.status
            ));
        }
        Ok(Some(response.len))
    }

    fn in_flight(&self) -> usize {
        self.session
            .as_ref()
            .map_or(0, |s| usize::from(s.pending.is_some()))
    }

    /// The session's last response came.
    fn connection_done(&self) -> bool {
        self.session.is_none()
    }

    /// The session failed; the slot goes on with the next.
    fn failed(&mut self, failure: Failure, _now: Instant) {
        let Some(s) = self.session.take() else {
            return self.error(failure.to_string());
        };
        self.failed_sessions += 1;
        let what = match (&failure, s.pending) {
            (Failure::Connect { .. }, _) | (_, None) => failure.to_string(),
            (_, Some(_)) => format!(
                "request {} of {}: {failure}",
                s.sent, self.cfg.requests_per_session
            ),
        };
        self.error(format!("session {}: {what}", s.number));
    }
}
