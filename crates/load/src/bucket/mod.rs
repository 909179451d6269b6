//! The bucket load: C clients on the event-loop driver, each in a closed
//! loop sending `<delay>,<bucket>` and waiting for the reply — by default
//! on a new TCP connection per request, as the assignment's client does,
//! or all on one connection (keep-alive) — with optional verification of
//! every reply and of every bucket's total, and the theoretical bound the
//! run is judged by.

mod bound;
mod client;
mod ledger;
mod workload;

pub use bound::Bound;
pub use workload::DelayRange;

use crate::checks::Checks;
use crate::conn::FramedConn;
use crate::driver::{self, Slot};
use crate::env::Environment;
use crate::record::Recorder;
use crate::report::{op_summaries, ClientCpu, LoadReport, Results, ThreadSummary, SCHEMA};
use crate::{LoadError, Progress};
use client::BucketClient;
use serde::{Serialize, Serializer};
use serverlab_proto::bucket::{DelayMode, DelayUnit, Reply, Request};
use serverlab_util::Named;
use std::fmt::Display;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

/// Operation names, in recorder order: requests with a delay, and `0,b`.
pub const OPS: [&str; 2] = ["add", "read"];

/// Generous: a saturated server may leave connections in its backlog a
/// while, and SYN retries take seconds.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);
/// How long reading a bucket before or after the run may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// When a run stops.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// After this many requests in all, answered; the time they took is
    /// the measured window.
    Requests(u64),
    /// After this many seconds; replies later than that are not counted.
    DurationS(f64),
}

/// A bucket load run's settings.
#[derive(Debug, Clone, Serialize)]
pub struct BucketLoad {
    pub addr: SocketAddr,
    /// Concurrent clients, each with one request in flight.
    pub connections: usize,
    pub stop: Stop,
    pub delay: DelayRange,
    #[serde(serialize_with = "display")]
    pub delay_unit: DelayUnit,
    /// The server's delay mode; it only changes the bound.
    #[serde(serialize_with = "display")]
    pub delay_mode: DelayMode,
    /// Buckets are drawn from 0..buckets.
    pub buckets: u64,
    /// All requests of a connection on one TCP connection.
    pub keep_alive: bool,
    pub seed: u64,
    pub verify: bool,
    /// Requests the server runs at once, if known (for the bound).
    pub server_concurrency: Option<u64>,
    /// Cores the server runs on, if known (for the bound in work mode).
    pub server_cores: Option<u64>,
}

fn display<T: Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

impl BucketLoad {
    pub fn new(addr: SocketAddr) -> Self {
        BucketLoad {
            addr,
            connections: 8,
            stop: Stop::DurationS(10.0),
            delay: DelayRange { lo: 1, hi: 3 },
            delay_unit: DelayUnit::Seconds,
            delay_mode: DelayMode::Spin,
            buckets: 32,
            keep_alive: false,
            seed: 1,
            verify: false,
            server_concurrency: None,
            server_cores: None,
        }
    }

    /// The shortest the run can take: its duration, or for a request
    /// count, the delays alone at full concurrency. For a progress display.
    pub fn planned(&self) -> Duration {
        match self.stop {
            Stop::DurationS(s) => Duration::from_secs_f64(s),
            Stop::Requests(n) => Duration::from_secs_f64(
                n.div_ceil(self.connections.max(1) as u64) as f64
                    * self.delay.mean()
                    * self.delay_unit.seconds(),
            ),
        }
    }

    fn load_model(&self) -> &'static str {
        if self.keep_alive {
            "closed-loop, keep-alive"
        } else {
            "closed-loop, one request per connection"
        }
    }
}

fn connect(addr: SocketAddr) -> Result<FramedConn, LoadError> {
    FramedConn::connect(addr, CONNECT_TIMEOUT).map_err(|source| LoadError::Connect { addr, source })
}

/// Read every bucket with `0,b`: on one connection in keep-alive mode, a
/// connection per bucket otherwise (a server that closes after each reply
/// answers that too).
fn read_buckets(cfg: &BucketLoad) -> Result<Vec<u64>, LoadError> {
    let mut kept = None;
    let mut wire = Vec::new();
    (0..cfg.buckets)
        .map(|b| {
            let mut conn = match kept.take() {
                Some(c) => c,
                None => {
                    let c = connect(cfg.addr)?;
                    c.set_read_timeout(Some(CHECK_TIMEOUT))?;
                    c
                }
            };
            wire.clear();
            Request {
                delay: 0,
                bucket: b,
            }
            .encode(&mut wire);
            conn.send(&wire)?;
            let value = match Reply::parse(conn.recv()?) {
                Some(Reply::Value(v)) => v,
                Some(Reply::Err(why)) => {
                    return Err(invalid(format!(
                        "reading bucket {b}: the server answered ERR {} (does it have {} buckets?)",
                        String::from_utf8_lossy(why),
                        cfg.buckets
                    )))
                }
                None => return Err(invalid(format!("reading bucket {b}: not a number"))),
            };
            if cfg.keep_alive {
                kept = Some(conn);
            }
            Ok(value)
        })
        .collect()
}

fn invalid(msg: String) -> LoadError {
    LoadError::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, msg))
}

/// Run the load and gather its report.
pub fn run(cfg: &BucketLoad, progress: &Progress) -> Result<LoadReport, LoadError> {
    let environment = Environment::capture();
    let checks = Checks::new(cfg.verify);
    let base = if cfg.verify {
        Some(read_buckets(cfg)?)
    } else {
        None
    };
    let (budget, window) = match cfg.stop {
        Stop::Requests(n) => (Some(AtomicU64::new(n)), None),
        Stop::DurationS(s) => (None, Some(Duration::from_secs_f64(s))),
    };
    let start = Instant::now();
    let mut slots = (0..cfg.connections)
        .map(|index| {
            let client = BucketClient::new(cfg, index, budget.as_ref(), window, start);
            if cfg.keep_alive {
                Slot::connected(cfg.addr, CONNECT_TIMEOUT, client).map_err(|source| {
                    LoadError::Connect {
                        addr: cfg.addr,
                        source,
                    }
                })
            } else {
                Ok(Slot::new(client))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Connecting took time: the window starts now, for every client.
    let start = Instant::now();
    for s in &mut slots {
        s.client.restart(start);
    }
    let opts = driver::Options {
        addr: cfg.addr,
        connect_timeout: CONNECT_TIMEOUT,
        // Delays may be long and queues deep: wait as long as it takes.
        reply_timeout: None,
        deadline: window.map(|w| start + w),
        drain_timeout: None,
    };
    let driven = driver::drive(slots, &opts, progress);
    let wall = start.elapsed().as_secs_f64();
    let results: Vec<BucketClient> = driven.slots.into_iter().map(|s| s.client).collect();
    let mut errors: Vec<String> = results.iter().filter_map(|r| r.error.clone()).collect();
    if let (Some(base), true) = (&base, errors.is_empty()) {
        match read_buckets(cfg) {
            Ok(finals) => {
                let mut acks: Vec<_> = results
                    .iter()
                    .flat_map(|r| r.acks.iter().copied())
                    .collect();
                ledger::check(base, &finals, &mut acks, &checks);
            }
            Err(e) => errors.push(format!("reading the buckets after the run: {e}")),
        }
    }
    let duration_s = match cfg.stop {
        Stop::DurationS(s) => s,
        Stop::Requests(_) => results
            .iter()
            .map(|r| r.finished.saturating_duration_since(start))
            .max()
            .unwrap_or_default()
            .as_secs_f64(),
    };
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
        results,
        duration_s,
        checks,
        errors,
        client_cpu,
    ))
}

#[allow(clippy::too_many_arguments)]
fn build_report(
    cfg: &BucketLoad,
    environment: Environment,
    start: Instant,
    results: Vec<BucketClient>,
    duration_s: f64,
    checks: Checks,
    errors: Vec<String>,
    client_cpu: ClientCpu,
) -> LoadReport {
    let mut merged = Recorder::new(OPS.len(), Instant::now(), None);
    let seconds = duration_s.ceil() as usize;
    let mut threads = Vec::new();
    let (mut units, mut opened) = (0u64, 0u64);
    for r in &results {
        merged.merge(&r.rec);
        units += r.counted_units;
        opened += r.opened;
        let mut per_second = r.rec.per_second.clone();
        per_second.resize(seconds.max(per_second.len()), 0);
        threads.push(ThreadSummary {
            role: "connection".into(),
            index: r.index,
            total: r.rec.total(),
            per_second,
            runtime_s: r.finished.saturating_duration_since(start).as_secs_f64(),
        });
    }
    let mut per_second = merged.per_second.clone();
    per_second.resize(seconds.max(per_second.len()), 0);
    let requests = merged.total();
    let throughput_rps = if duration_s > 0.0 {
        requests as f64 / duration_s
    } else {
        0.0
    };
    let mean_units = if requests > 0 {
        units as f64 / requests as f64
    } else {
        0.0
    };
    let cores_here = environment.cores_online;
    let bound = bound::compute(cfg, mean_units, throughput_rps, cores_here);
    let extra = serde_json::json!({
        "delay_unit": cfg.delay_unit.name(),
        "delay_mode": cfg.delay_mode.name(),
        "mean_delay_units": mean_units,
        "delay_units": units,
        "connections_opened": opened,
        "bound": bound,
    });
    LoadReport {
        schema: SCHEMA.into(),
        protocol: "bucket".into(),
        load_model: cfg.load_model().into(),
        config: serde_json::to_value(cfg).expect("config serializes"),
        environment,
        results: Results {
            duration_s,
            requests,
            throughput_rps,
            operations: op_summaries(&merged, &OPS, duration_s),
            per_second,
            threads,
            late_replies: merged.late,
            errors,
            verification: checks.into_verification(),
            client_cpu,
            extra,
        },
    }
}

/// The bucket lines of the text output: the bound and what it assumed.
pub fn text_lines(report: &LoadReport) -> Vec<String> {
    let extra = &report.results.extra;
    let Ok(bound) = serde_json::from_value::<Bound>(extra["bound"].clone()) else {
        return Vec::new();
    };
    let unit = extra["delay_unit"].as_str().unwrap_or("s");
    let unit_s = unit.parse::<DelayUnit>().map_or(1.0, DelayUnit::seconds);
    let mut lines = bound.lines(unit, unit_s);
    if let Some(n) = extra["connections_opened"].as_u64().filter(|&n| n > 0) {
        lines.push(format!("TCP connections opened: {n}"));
    }
    lines
}
