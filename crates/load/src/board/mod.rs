//! The board load: posters that POST and readers that READ (or COUNT and
//! LIST), one persistent connection each, as the CAPS reference client
//! does, with optional pipelining, pacing and full reply verification.

mod client;
mod mirror;
pub mod workload;

pub use workload::ReaderMix;

use crate::checks::Checks;
use crate::conn::FramedConn;
use crate::driver::{self, Slot};
use crate::env::Environment;
use crate::record::Recorder;
use crate::report::{op_summaries, ClientCpu, LoadReport, Results, ThreadSummary, SCHEMA};
use crate::{LoadError, Progress};
use client::{BoardClient, Role};
use mirror::Mirror;
use serde::Serialize;
use serverlab_proto::board::Request;
use serverlab_proto::number::parse_u64;
use serverlab_proto::Terminator;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Operation names, in recorder order.
pub const OPS: [&str; 4] = ["POST", "READ", "COUNT", "LIST"];
pub(crate) const POST: usize = 0;
pub(crate) const READ: usize = 1;
pub(crate) const COUNT: usize = 2;
pub(crate) const LIST: usize = 3;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a setup or final-check request may wait for its reply.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);
/// How long replies still in flight when the window closes may take.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// A board load run's settings.
#[derive(Debug, Clone, Serialize)]
pub struct BoardLoad {
    pub addr: SocketAddr,
    pub posters: usize,
    pub readers: usize,
    pub duration_s: f64,
    /// Requests per second per connection; 0: as fast as replies come.
    pub throttle: f64,
    /// Requests in flight per connection (1: lock-step).
    pub pipeline: usize,
    pub topics: usize,
    pub message_size: usize,
    pub seed: u64,
    pub reader_mix: ReaderMix,
    pub verify: bool,
    pub send_exit: bool,
}

impl BoardLoad {
    pub fn new(addr: SocketAddr) -> Self {
        BoardLoad {
            addr,
            posters: 5,
            readers: 5,
            duration_s: 10.0,
            throttle: 0.0,
            pipeline: 1,
            topics: 16,
            message_size: 32,
            seed: 1,
            reader_mix: workload::reference_reader_mix(),
            verify: false,
            send_exit: false,
        }
    }

    fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.duration_s)
    }
}

fn connect(addr: SocketAddr) -> Result<FramedConn, LoadError> {
    FramedConn::connect(addr, CONNECT_TIMEOUT).map_err(|source| LoadError::Connect { addr, source })
}

/// Ask COUNT for every topic on one connection.
fn counts(addr: SocketAddr, topics: usize) -> Result<Vec<u64>, LoadError> {
    let mut conn = connect(addr)?;
    conn.set_read_timeout(Some(CHECK_TIMEOUT))?;
    let mut wire = Vec::new();
    let names: Vec<Vec<u8>> = (0..topics).map(workload::topic_name).collect();
    for name in &names {
        Request::Count { topic: name }.encode(&mut wire, Terminator::Nul);
    }
    conn.send(&wire)?;
    // A reply that is not a count (from an echo server, say) counts as 0:
    // only a verifying run relies on these numbers.
    names
        .iter()
        .map(|_| Ok(parse_u64(conn.recv()?).ok().flatten().unwrap_or(0)))
        .collect()
}

/// Send EXIT on a new connection, as the reference client does at the end.
pub fn send_exit(addr: SocketAddr) -> Result<(), LoadError> {
    let mut conn = connect(addr)?;
    conn.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut wire = Vec::new();
    Request::Exit.encode(&mut wire, Terminator::Nul);
    conn.send(&wire)?;
    let _ = conn.recv();
    Ok(())
}

/// What one connection did, once the run is over.
struct ConnResult {
    role: Role,
    index: usize,
    rec: Recorder,
    runtime: Duration,
    hits: u64,
    misses: u64,
    error: Option<String>,
}

/// Run the load and gather its report. Connections are spread over one
/// event loop per CPU the client may use.
pub fn run(cfg: &BoardLoad, progress: &Progress) -> Result<LoadReport, LoadError> {
    let environment = Environment::capture();
    let bases = counts(cfg.addr, cfg.topics)?;
    let mirror = Mirror::new(bases.clone());
    let checks = Checks::new(cfg.verify);
    let roles = (0..cfg.posters)
        .map(|i| (Role::Poster, i))
        .chain((0..cfg.readers).map(|i| (Role::Reader, i)));

    let start = Instant::now();
    let mut slots = roles
        .map(|(role, index)| {
            let client = BoardClient::new(cfg, &mirror, &checks, role, index, start);
            Slot::connected(cfg.addr, CONNECT_TIMEOUT, client).map_err(|source| {
                LoadError::Connect {
                    addr: cfg.addr,
                    source,
                }
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Connecting took time: the window starts now, for every connection.
    let start = Instant::now();
    for s in &mut slots {
        s.client.restart(start);
    }
    let opts = driver::Options {
        addr: cfg.addr,
        connect_timeout: CONNECT_TIMEOUT,
        reply_timeout: None,
        deadline: Some(start + cfg.duration()),
        drain_timeout: Some(DRAIN_TIMEOUT),
    };
    let driven = driver::drive(slots, &opts, progress);
    let wall = start.elapsed().as_secs_f64();
    let results: Vec<ConnResult> = driven
        .slots
        .into_iter()
        .map(|s| ConnResult {
            role: s.client.role,
            index: s.client.index,
            runtime: s.stopped_at.map_or(cfg.duration(), |t| t - start),
            hits: s.client.hits,
            misses: s.client.misses,
            error: s.client.error,
            rec: s.client.rec,
        })
        .collect();

    let mut errors: Vec<String> = results.iter().filter_map(|r| r.error.clone()).collect();
    if cfg.verify && errors.is_empty() {
        final_checks(cfg, &mirror, &bases, &checks, &mut errors);
    }
    if cfg.send_exit {
        if let Err(e) = send_exit(cfg.addr) {
            errors.push(format!("EXIT: {e}"));
        }
    }
    let client_cpu = ClientCpu::measure(
        driven.cpu,
        driven.idle_poll_s,
        wall,
        crate::env::allowed_cpus().len(),
    );
    Ok(build_report(
        cfg,
        environment,
        results,
        &mirror,
        checks,
        errors,
        client_cpu,
    ))
}

/// After the run: no gaps in any topic, and COUNT equals what was acknowledged.
fn final_checks(
    cfg: &BoardLoad,
    mirror: &Mirror,
    bases: &[u64],
    checks: &Checks,
    errors: &mut Vec<String>,
) {
    for t in 0..cfg.topics {
        let gaps = mirror.gaps(t);
        if !gaps.is_empty() {
            checks.mismatch(format!(
                "topic t{t}: ids {gaps:?} were never acknowledged to any poster (gap)"
            ));
        }
    }
    match counts(cfg.addr, cfg.topics) {
        Ok(finals) => {
            for t in 0..cfg.topics {
                checks.checked(1);
                let want = bases[t] + mirror.acked(t);
                if finals[t] != want {
                    checks.mismatch(format!(
                        "topic t{t}: final COUNT {} but {} messages were acknowledged",
                        finals[t], want
                    ));
                }
            }
        }
        Err(e) => errors.push(format!("final COUNT check: {e}")),
    }
}

fn build_report(
    cfg: &BoardLoad,
    environment: Environment,
    results: Vec<ConnResult>,
    mirror: &Mirror,
    checks: Checks,
    errors: Vec<String>,
    client_cpu: ClientCpu,
) -> LoadReport {
    let duration_s = cfg.duration_s;
    let mut merged = Recorder::new(OPS.len(), Instant::now(), None);
    let (mut hits, mut misses) = (0u64, 0u64);
    let mut threads = Vec::new();
    let seconds = duration_s.ceil() as usize;
    for r in &results {
        merged.merge(&r.rec);
        hits += r.hits;
        misses += r.misses;
        let mut per_second = r.rec.per_second.clone();
        per_second.resize(seconds.max(per_second.len()), 0);
        threads.push(ThreadSummary {
            role: r.role.name().into(),
            index: r.index,
            total: r.rec.total(),
            per_second,
            runtime_s: r.runtime.as_secs_f64(),
        });
    }
    let mut per_second = merged.per_second.clone();
    per_second.resize(seconds.max(per_second.len()), 0);
    let requests = merged.total();
    let acked: u64 = (0..cfg.topics).map(|t| mirror.acked(t)).sum();
    let reads = hits + misses;
    let extra = serde_json::json!({
        "reads": { "hits": hits, "misses": misses, "hit_share": if reads > 0 { hits as f64 / reads as f64 } else { 0.0 } },
        "posts_acknowledged": acked,
    });
    let load_model = if cfg.throttle > 0.0 {
        "closed-loop, throttled"
    } else {
        "closed-loop"
    };
    LoadReport {
        schema: SCHEMA.into(),
        protocol: "board".into(),
        load_model: load_model.into(),
        config: serde_json::to_value(cfg).expect("config serializes"),
        environment,
        results: Results {
            duration_s,
            requests,
            throughput_rps: requests as f64 / duration_s,
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
