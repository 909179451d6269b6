//! One load thread: it takes sessions from a shared counter until all are
//! taken, and runs each as httperf does: a new keep-alive connection, R
//! requests in lock-step, then close. Everything it measures and checks
//! stays in its own [`WorkerOut`] until the run ends.

use super::conn::HttpConn;
use super::workload::{check_value, key_name, write_value, KeyPicker};
use super::{op_index, KvLoad, OPS};
use crate::env::thread_cpu_time;
use crate::record::Recorder;
use crate::Progress;
use hdrhistogram::Histogram;
use serverlab_proto::kv::client::{encode_request, ResponseHead, Tag};
use serverlab_proto::kv::{digest, Method};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long to wait for a connection, and for each response.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Error and mismatch descriptions kept per worker (all are counted).
const EXAMPLES: usize = 10;

/// Session times: nanoseconds, 3 significant digits, up to an hour.
pub(crate) fn session_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1_000, 3_600_000_000_000, 3).expect("valid histogram bounds")
}

pub(crate) struct WorkerOut {
    pub(crate) rec: Recorder,
    pub(crate) sessions: Histogram<u64>,
    pub(crate) failed_sessions: u64,
    pub(crate) statuses: BTreeMap<u16, u64>,
    pub(crate) errors: Vec<String>,
    pub(crate) error_count: u64,
    pub(crate) checked: u64,
    pub(crate) mismatches: u64,
    pub(crate) examples: Vec<String>,
    pub(crate) runtime: Duration,
    pub(crate) cpu: (f64, f64),
}

struct Worker<'a> {
    cfg: &'a KvLoad,
    keys: &'a KeyPicker,
    host: String,
    out: WorkerOut,
    wire: Vec<u8>,
    value: Vec<u8>,
    /// Without DELETE in the mix, after a preload every key must exist.
    must_exist: bool,
}

pub(crate) fn run(
    cfg: &KvLoad,
    keys: &KeyPicker,
    next: &AtomicUsize,
    start: Instant,
    progress: &Progress,
) -> WorkerOut {
    let cpu0 = thread_cpu_time();
    let mut w = Worker {
        cfg,
        keys,
        host: cfg.addr.to_string(),
        out: WorkerOut {
            rec: Recorder::new(OPS.len(), start, None),
            sessions: session_histogram(),
            failed_sessions: 0,
            statuses: BTreeMap::new(),
            errors: Vec::new(),
            error_count: 0,
            checked: 0,
            mismatches: 0,
            examples: Vec::new(),
            runtime: Duration::ZERO,
            cpu: (0.0, 0.0),
        },
        wire: Vec::new(),
        value: Vec::new(),
        must_exist: cfg.preload && cfg.mix.delete == 0,
    };
    // Relaxed: the counter only hands out distinct session numbers; it
    // orders nothing else.
    loop {
        let s = next.fetch_add(1, Ordering::Relaxed);
        if s >= cfg.sessions {
            break;
        }
        let t0 = Instant::now();
        match w.session(s, progress) {
            Ok(()) => {
                let ns = t0.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
                w.out.sessions.saturating_record(ns.max(1_000));
            }
            Err(e) => {
                w.out.failed_sessions += 1;
                w.error(format!("session {s}: {e}"));
            }
        }
    }
    w.out.runtime = start.elapsed();
    let cpu1 = thread_cpu_time();
    w.out.cpu = (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1);
    w.out
}

impl Worker<'_> {
    fn error(&mut self, what: String) {
        self.out.error_count += 1;
        if self.out.errors.len() < EXAMPLES {
            self.out.errors.push(what);
        }
    }

    fn mismatch(&mut self, what: String) {
        self.out.mismatches += 1;
        if self.out.examples.len() < EXAMPLES {
            self.out.examples.push(what);
        }
    }

    /// One session: a connection and `requests_per_session` requests.
    fn session(&mut self, s: usize, progress: &Progress) -> Result<(), String> {
        let cfg = self.cfg;
        let mut rng =
            fastrand::Rng::with_seed(cfg.seed ^ (s as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut conn = HttpConn::connect(cfg.addr, CONNECT_TIMEOUT, READ_TIMEOUT)
            .map_err(|e| format!("cannot connect to {}: {e}", cfg.addr))?;
        for r in 0..cfg.requests_per_session {
            let method = cfg.mix.pick(&mut rng);
            let key = key_name(self.keys.pick(&mut rng));
            let body = method.writes().then(|| {
                write_value(&mut self.value, &key, rng.u64(..), cfg.value_size);
                &self.value[..]
            });
            self.wire.clear();
            encode_request(&mut self.wire, method, &key, body, &self.host, false);
            let sent = Instant::now();
            let answer = conn
                .send(&self.wire)
                .and_then(|()| conn.recv(method))
                .map_err(|e| format!("request {} of {}: {e}", r + 1, cfg.requests_per_session))?;
            let done = Instant::now();
            let (head, body_range) = answer;
            self.out.rec.record(op_index(method), sent, done);
            progress.add(1);
            *self.out.statuses.entry(head.status).or_insert(0) += 1;
            if cfg.verify {
                self.check(method, &key, &head, conn.body(body_range));
            }
            if head.close && r + 1 < cfg.requests_per_session {
                return Err(format!(
                    "the server closed the connection after {} of {} requests (status {})",
                    r + 1,
                    cfg.requests_per_session,
                    head.status
                ));
            }
        }
        Ok(())
    }

    /// Check one response against what the protocol allows.
    fn check(&mut self, method: Method, key: &[u8], head: &ResponseHead, body: &[u8]) {
        self.out.checked += 1;
        let k = String::from_utf8_lossy(key).into_owned();
        let m = method.name();
        let status = head.status;
        let allowed: &[u16] = match method {
            Method::Get | Method::Head if self.must_exist => &[200],
            Method::Get | Method::Head | Method::Delete => &[200, 404],
            Method::Put | Method::Post => &[200, 201],
            Method::Other => &[405],
        };
        if !allowed.contains(&status) {
            return self.mismatch(format!(
                "{m} /{k}: status {status}, expected one of {allowed:?}"
            ));
        }
        match method {
            Method::Get if status == 200 => {
                if let Err(e) = check_value(key, body) {
                    return self.mismatch(format!("GET /{k}: the body is wrong: {e}"));
                }
                if head.etag != Tag::Digest(digest(body)) {
                    self.mismatch(format!("GET /{k}: the ETag is not the MD5 of the body"));
                }
            }
            Method::Head
                if status == 200
                    && (!matches!(head.etag, Tag::Digest(_)) || head.content_length.is_none()) =>
            {
                self.mismatch(format!("HEAD /{k}: no ETag or no Content-Length"));
            }
            Method::Put | Method::Post if head.etag != Tag::Digest(digest(&self.value)) => {
                self.mismatch(format!(
                    "{m} /{k}: the ETag is not the MD5 of the value sent"
                ));
            }
            _ => {}
        }
    }
}

/// Write every key once before the run, on `threads` connections; not
/// measured. Returns an error description for the first failure.
pub(crate) fn preload(cfg: &KvLoad, threads: usize) -> Result<(), String> {
    let next = AtomicUsize::new(0);
    let host = cfg.addr.to_string();
    let results: Vec<Result<(), String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (next, host) = (&next, &host);
                s.spawn(move || {
                    let mut conn = HttpConn::connect(cfg.addr, CONNECT_TIMEOUT, READ_TIMEOUT)
                        .map_err(|e| format!("preload: cannot connect to {}: {e}", cfg.addr))?;
                    let (mut wire, mut value) = (Vec::new(), Vec::new());
                    loop {
                        // Relaxed: hands out distinct keys, orders nothing.
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= cfg.keys {
                            return Ok(());
                        }
                        let key = key_name(i);
                        write_value(&mut value, &key, cfg.seed ^ i as u64, cfg.value_size);
                        wire.clear();
                        encode_request(&mut wire, Method::Put, &key, Some(&value), host, false);
                        conn.send(&wire)
                            .and_then(|()| conn.recv(Method::Put))
                            .map_err(|e| format!("preload of key{i}: {e}"))
                            .and_then(|(head, _)| match head.status {
                                200 | 201 if !head.close => Ok(()),
                                st => Err(format!("preload of key{i}: status {st}")),
                            })?;
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("preload thread panicked"))
            .collect()
    });
    results.into_iter().collect()
}
