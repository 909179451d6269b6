//! The kv load: sessions in the httperf sense. Each session is one
//! keep-alive connection doing `requests_per_session` requests in
//! lock-step; `concurrency` sessions are in flight at once (one thread
//! each, closed loop). Methods follow a weighted mix, keys a uniform or
//! Zipf distribution, and with `verify` every response is checked: values
//! carry their own checksum, and ETags must be the MD5 of the body.

mod conn;
pub mod output;
mod worker;
pub mod workload;

pub use workload::{KeyDist, Mix};

use crate::env::Environment;
use crate::record::Recorder;
use crate::report::{
    op_summaries, ClientCpu, LoadReport, Results, ThreadSummary, Verification, SCHEMA,
};
use crate::{LoadError, Progress};
use serde::Serialize;
use serde_json::json;
use serverlab_proto::kv::Method;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::AtomicUsize;
use std::time::Instant;
use worker::WorkerOut;
use workload::{key_name, min_checked_size, KeyPicker};

/// Operation names, in recorder order.
pub const OPS: [&str; 5] = ["GET", "HEAD", "PUT", "POST", "DELETE"];

pub(crate) fn op_index(m: Method) -> usize {
    match m {
        Method::Get => 0,
        Method::Head => 1,
        Method::Put => 2,
        Method::Post => 3,
        Method::Delete | Method::Other => 4,
    }
}

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

/// Run the load and gather its report.
pub fn run(cfg: &KvLoad, progress: &Progress) -> Result<LoadReport, LoadError> {
    let environment = Environment::capture();
    let keys = KeyPicker::new(cfg.keys.max(1), cfg.key_dist);
    // Fail fast, with a clear message, when nothing listens.
    drop(
        std::net::TcpStream::connect_timeout(&cfg.addr, worker::CONNECT_TIMEOUT).map_err(
            |source| LoadError::Connect {
                addr: cfg.addr,
                source,
            },
        )?,
    );
    let mut errors = Vec::new();
    let preload_s = if cfg.preload {
        let t0 = Instant::now();
        if let Err(e) = worker::preload(cfg, cfg.concurrency.clamp(1, cfg.keys.max(1))) {
            errors.push(e);
        }
        Some(t0.elapsed().as_secs_f64())
    } else {
        None
    };
    let next = AtomicUsize::new(0);
    let start = Instant::now();
    let threads = cfg.concurrency.clamp(1, cfg.sessions.max(1));
    let outs: Vec<WorkerOut> = if errors.is_empty() {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    let (keys, next) = (&keys, &next);
                    s.spawn(move || worker::run(cfg, keys, next, start, progress))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("load worker panicked"))
                .collect()
        })
    } else {
        Vec::new()
    };
    let wall = start.elapsed().as_secs_f64();
    Ok(build_report(
        cfg,
        environment,
        outs,
        errors,
        wall,
        preload_s,
    ))
}

fn kept_from_workers(outs: &[WorkerOut]) -> u64 {
    outs.iter().map(|o| o.errors.len() as u64).sum()
}

fn build_report(
    cfg: &KvLoad,
    environment: Environment,
    outs: Vec<WorkerOut>,
    mut errors: Vec<String>,
    wall: f64,
    preload_s: Option<f64>,
) -> LoadReport {
    let mut merged = Recorder::new(OPS.len(), Instant::now(), None);
    let mut sessions = worker::session_histogram();
    let mut statuses: BTreeMap<u16, u64> = BTreeMap::new();
    let (mut failed, mut error_count, mut checked, mut mismatches) = (0, 0, 0, 0);
    let (mut examples, mut threads, mut cpu) = (Vec::new(), Vec::new(), (0.0, 0.0));
    for (i, o) in outs.iter().enumerate() {
        merged.merge(&o.rec);
        sessions.add(&o.sessions).expect("same bounds");
        for (s, n) in &o.statuses {
            *statuses.entry(*s).or_insert(0) += n;
        }
        failed += o.failed_sessions;
        error_count += o.error_count;
        checked += o.checked;
        mismatches += o.mismatches;
        errors.extend(o.errors.iter().cloned());
        examples.extend(o.examples.iter().cloned());
        cpu = (cpu.0 + o.cpu.0, cpu.1 + o.cpu.1);
        threads.push(ThreadSummary {
            role: "sessions".into(),
            index: i,
            total: o.rec.total(),
            per_second: o.rec.per_second.clone(),
            runtime_s: o.runtime.as_secs_f64(),
        });
    }
    // Workers keep the first few descriptions; say how many there were.
    let total_errors = errors.len() as u64 - kept_from_workers(&outs) + error_count;
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
            client_cpu: ClientCpu::measure(cpu, 0.0, wall, crate::env::allowed_cpus().len()),
            extra,
        },
    }
}
