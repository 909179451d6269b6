//! The kv load: sessions in the httperf sense. Each session is one
//! keep-alive connection doing `requests_per_session` requests in
//! lock-step; `concurrency` sessions are in flight at once (each a slot of
//! the event-loop driver, closed loop). Methods follow a weighted mix,
//! keys a uniform or Zipf distribution, and with `verify` every response
//! is checked: values carry their own checksum and are all `value_size`
//! bytes, and ETags must be the MD5 of the body.

pub mod output;
mod preload;
pub mod reply;
mod session;
pub mod workload;

pub use workload::{KeyDist, Mix, Op};

use crate::driver::{self, Slot};
use crate::env::Environment;
use crate::record::Recorder;
use crate::report::{
    op_summaries, ClientCpu, LoadReport, Results, ThreadSummary, Verification, SCHEMA,
};
use crate::{LoadError, Progress};
use preload::PreloadClient;
use serde::Serialize;
use serde_json::json;
use session::SessionClient;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};
use workload::{key_name, min_checked_size, KeyPicker};

/// Operation names, in recorder order ([`Op::index`]).
pub const OPS: [&str; 5] = ["GET", "HEAD", "PUT", "POST", "DELETE"];

/// How long to wait for a connection, and for each response.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// A kv load run's settings.
#[derive(Debug, Clone, Serialize)]
pub struct KvLoad {
    pub addr: SocketAddr,
    pub sessions: usize,
    pub requests_per_session: usize,
    /// Sessions in flight at once.
    pub concurrency: usize,
    pub mix: Mix,
    pub keys: usize,
    pub key_dist: KeyDist,
    /// Bytes per written value.
    pub value_size: usize,
    /// Write every key once before the run.
    pub preload: bool,
    pub seed: u64,
    pub verify: bool,
}

impl KvLoad {
    pub fn new(addr: SocketAddr) -> Self {
        KvLoad {
            addr,
            sessions: 100,
            requests_per_session: 100,
            concurrency: 10,
            mix: Mix::default(),
            keys: 1000,
            key_dist: KeyDist::Uniform,
            value_size: 128,
            preload: false,
            seed: 1,
            verify: false,
        }
    }

    /// The smallest `value_size` that `verify` can check.
    pub fn min_verified_value_size(&self) -> usize {
        min_checked_size(key_name(self.keys.saturating_sub(1)).len())
    }
}

fn options(cfg: &KvLoad) -> driver::Options {
    driver::Options {
        addr: cfg.addr,
        connect_timeout: CONNECT_TIMEOUT,
        reply_timeout: Some(REPLY_TIMEOUT),
        deadline: None,
        drain_timeout: None,
    }
}

/// Run the load and gather its report.
pub fn run(cfg: &KvLoad, progress: &Progress) -> Result<LoadReport, LoadError> {
    let environment = Environment::capture();
    let keys = KeyPicker::new(cfg.keys.max(1), cfg.key_dist);
    let host = cfg.addr.to_string();
    // Fail fast, with a clear message, when nothing listens.
    drop(
        std::net::TcpStream::connect_timeout(&cfg.addr, CONNECT_TIMEOUT).map_err(|source| {
            LoadError::Connect {
                addr: cfg.addr,
                source,
            }
        })?,
    );
    let mut errors = Vec::new();
    let preload_s = if cfg.preload {
        let t0 = Instant::now();
        errors.extend(preload(cfg, &host));
        Some(t0.elapsed().as_secs_f64())
    } else {
        None
    };
    let next = AtomicUsize::new(0);
    let start = Instant::now();
    let slots: Vec<_> = if errors.is_empty() {
        (0..cfg.concurrency.clamp(1, cfg.sessions.max(1)))
            .map(|_| Slot::new(SessionClient::new(cfg, &keys, &next, &host, start)))
            .collect()
    } else {
        Vec::new()
    };
    let driven = driver::drive(slots, &options(cfg), progress);
    let wall = start.elapsed().as_secs_f64();
    let client_cpu = ClientCpu::measure(
        driven.cpu,
        driven.idle_poll_s,
        wall,
        crate::env::allowed_cpus().len(),
    );
    Ok(build_report(
        cfg,
        environment,
        start,
        driven.slots,
        errors,
        wall,
        preload_s,
        client_cpu,
    ))
}

/// Write every key once before the run, on up to `concurrency`
/// connections; not measured. Returns the first failure, described.
fn preload(cfg: &KvLoad, host: &str) -> Option<String> {
    let next = AtomicUsize::new(0);
    let slots = (0..cfg.concurrency.clamp(1, cfg.keys.max(1)))
        .map(|_| Slot::new(PreloadClient::new(cfg, &next, host)))
        .collect();
    let driven = driver::drive(slots, &options(cfg), &Progress::default());
    driven.slots.into_iter().find_map(|s| s.client.error)
}

#[allow(clippy::too_many_arguments)]
fn build_report(
    cfg: &KvLoad,
    environment: Environment,
    start: Instant,
    slots: Vec<Slot<SessionClient>>,
    mut errors: Vec<String>,
    wall: f64,
    preload_s: Option<f64>,
    client_cpu: ClientCpu,
) -> LoadReport {
    let mut merged = Recorder::new(OPS.len(), Instant::now(), None);
    let mut sessions = session::session_histogram();
    let mut statuses: BTreeMap<u16, u64> = BTreeMap::new();
    let (mut failed, mut error_count, mut checked, mut mismatches) = (0, 0, 0, 0);
    let (mut examples, mut threads, mut kept) = (Vec::new(), Vec::new(), 0);
    for (i, slot) in slots.iter().enumerate() {
        let o = &slot.client;
        merged.merge(&o.rec);
        sessions.add(&o.sessions).expect("same bounds");
        for (s, n) in &o.statuses {
            *statuses.entry(*s).or_insert(0) += n;
        }
        failed += o.failed_sessions;
        error_count += o.error_count;
        kept += o.errors.len() as u64;
        checked += o.checked;
        mismatches += o.mismatches;
        errors.extend(o.errors.iter().cloned());
        examples.extend(o.examples.iter().cloned());
        threads.push(ThreadSummary {
            role: "sessions".into(),
            index: i,
            total: o.rec.total(),
            per_second: o.rec.per_second.clone(),
            runtime_s: slot
                .finished_at
                .map_or(wall, |t| t.saturating_duration_since(start).as_secs_f64()),
        });
    }
    // Slots keep the first few descriptions; say how many there were.
    let total_errors = errors.len() as u64 - kept + error_count;
    if total_errors > errors.len() as u64 {
        errors.push(format!(
            "… and {} more errors",
            total_errors - errors.len() as u64
        ));
    }
    examples.truncate(20);
    let requests = merged.total();
    let ms = |ns: u64| ns as f64 / 1e6;
    let session_time = if sessions.is_empty() {
        json!({ "mean": 0.0, "median": 0.0, "min": 0.0, "max": 0.0 })
    } else {
        json!({
            "mean": sessions.mean() / 1e6,
            "median": ms(sessions.value_at_quantile(0.5)),
            "min": ms(sessions.min()),
            "max": ms(sessions.max()),
        })
    };
    let statuses_json: serde_json::Map<String, serde_json::Value> = statuses
        .iter()
        .map(|(s, n)| (s.to_string(), (*n).into()))
        .collect();
    let replies_per_s = if wall > 0.0 {
        requests as f64 / wall
    } else {
        0.0
    };
    let extra = json!({
        "total_time_s": wall,
        "replies_per_s": replies_per_s,
        "statuses": statuses_json,
        "sessions": {
            "planned": cfg.sessions,
            "completed": sessions.len(),
            "failed": failed,
            "time_ms": session_time,
        },
        "preload": preload_s.map(|t| json!({ "keys": cfg.keys, "time_s": t })),
    });
    LoadReport {
        schema: SCHEMA.into(),
        protocol: "kv".into(),
        load_model: "closed-loop sessions".into(),
        config: serde_json::to_value(cfg).expect("config serializes"),
        environment,
        results: Results {
            duration_s: wall,
            requests,
            throughput_rps: replies_per_s,
            operations: op_summaries(&merged, &OPS, wall),
            per_second: merged.per_second.clone(),
            threads,
            late_replies: 0,
            errors,
            verification: Verification {
                enabled: cfg.verify,
                checked,
                mismatches,
                examples,
            },
            client_cpu,
            extra,
        },
    }
}
