//! The result of a load run: what the JSON output holds (schema
//! `serverlab-load/3`, documented in docs/load-json.md) and what the text
//! and caps sinks print. Reading also accepts `serverlab-load/2` files
//! (the same fields, less what open loops added) and `serverlab-load/1`
//! files ([`v1`]), so reports of old result directories still work.

mod agents;
mod ci;
mod open;
mod steps;
pub mod v1;

pub use crate::results::{ProtocolResults, TextLines};
pub use agents::{AgentLine, AgentRun, Merged};
pub use ci::{Ci95, LEVELS};
pub use open::{ScheduleReport, SecondLatency, KEPT_UP};
pub use steps::{merged_quantile, ScanReport, SearchReport, Step};

use crate::env::Environment;
use crate::record::Recorder;
use hdrhistogram::Histogram;
use serde::{Deserialize, Deserializer, Serialize};

pub const SCHEMA: &str = "serverlab-load/3";
/// The schema before open loops: read as the current one.
pub const SCHEMA_V2: &str = "serverlab-load/2";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadReport {
    /// [`SCHEMA`] when written; as the file said when read.
    pub schema: String,
    pub protocol: String,
    /// How requests were issued: `closed-loop` (the next request waits for
    /// a reply) or `closed-loop, throttled` (and also for its slot), with
    /// how the protocol uses connections where it matters
    /// (`closed-loop, keep-alive`).
    pub load_model: String,
    /// Every setting of the run, enough to repeat it.
    pub config: serde_json::Value,
    pub environment: Environment,
    /// A capacity search's: the run at the capacity found (or the last
    /// step run, when no rate passed).
    pub results: Results,
    /// A capacity search (`--search`): every step and the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchReport>,
    /// A scan of rates (`--scan`): every step; `results` is the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scan: Option<ScanReport>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// The measured window, in seconds (where the server stopped
    /// answering part way, all of it: [`Results::served`] has the
    /// seconds it answered).
    pub duration_s: f64,
    /// Requests answered within the window.
    pub requests: u64,
    /// `requests` over `duration_s`.
    pub throughput_rps: f64,
    /// The warm-up before the window, in seconds: its replies were
    /// checked, not counted (absent: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warmup_s: f64,
    /// The server stopped answering before the window closed (the run
    /// failed): the seconds it answered and the rate over them, the
    /// figure to quote. Absent when it answered to the end, and in a
    /// merge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<Served>,
    /// Open loop: the rate asked for, over all connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_rps: Option<f64>,
    /// Clients the load ran at once, each with its connection: a closed
    /// loop's concurrency. 0 when unknown (a version-1 file that did not
    /// say).
    pub concurrency: u64,
    pub operations: Vec<OpSummary>,
    /// Requests answered in each second of the window, all clients.
    pub per_second: Vec<u64>,
    /// Open loop: each second's replies and their latency (from the
    /// intended send time), so a stall shows in time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_second_latency_us: Option<Vec<SecondLatency>>,
    /// Open loop: how well the schedule was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<ScheduleReport>,
    pub threads: Vec<ThreadSummary>,
    /// Replies that arrived after the window: not counted (checked when
    /// verification is on).
    pub late_replies: u64,
    /// The run was interrupted (SIGINT, SIGTERM): the window closed
    /// early, and `duration_s` is the time measured until then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    pub errors: Vec<String>,
    /// Requests that failed with their connection (not error replies,
    /// which the protocol's results count): every one, where `errors`
    /// describes the first few. Absent: none (and in files before it).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub failures: u64,
    /// `--threshold`s, each judged passed or failed; absent when none
    /// was given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<crate::thresholds::Judged>,
    pub verification: Verification,
    pub client_cpu: ClientCpu,
    /// One agent of a split load (or a run given a start instant): its
    /// share and when it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentRun>,
    /// A result merged from agents' (`serverlab merge`): each agent, and
    /// what makes the merge suspect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<Merged>,
    /// Whether the run's figures certify themselves, check by check
    /// ([`crate::certify::verdict`]; a merge's: [`crate::certify::merged`]);
    /// absent from files before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validity: Option<crate::certify::verdict::Validity>,
    /// The client's own share of each latency, measured: from due to
    /// the send call, and from the kernel's receipt of the reply to the
    /// client's stamp ([`crate::certify::client`]); absent from a merge
    /// and from files before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_share: Option<crate::certify::client::ClientShareReport>,
    /// What each connection's TLS handshake took, apart from the
    /// requests' latency; absent without TLS (and from a merge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<crate::tls::HandshakeReport>,
    /// The protocol's own results, under its name (`"board": {…}`). Always
    /// there in what a run writes; absent only from a version-1 file whose
    /// `extra` could not be read. (Read by [`LoadReport`], which reads this
    /// part on its own.)
    #[serde(flatten)]
    pub protocol: Option<ProtocolResults>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn is_zero_u64(x: &u64) -> bool {
    *x == 0
}

/// A run whose server stopped answering part way through its window:
/// the rate over the seconds it answered, and the silence after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Served {
    /// From the window's start to the last reply counted in it.
    pub duration_s: f64,
    /// The window's requests over `duration_s`.
    pub throughput_rps: f64,
    /// The rest of the window, without a reply.
    pub silent_s: f64,
}

impl Served {
    /// Silence at the end of a window, in mean gaps between replies,
    /// past which the server is said to have stopped (and at least
    /// [`Served::SILENT_S`]).
    pub const GAPS: f64 = 10.0;
    pub const SILENT_S: f64 = 1.0;

    /// Whether a window of `duration_s` whose last of `requests` counted
    /// replies came `last_s` after its start, in a run that `failed`,
    /// ends in the server's silence, and if so what it served: a failed
    /// run (the errors say why) whose last whole second or more, and
    /// [`Served::GAPS`] times the mean gap between its replies, had none.
    pub fn of(requests: u64, last_s: Option<f64>, duration_s: f64, failed: bool) -> Option<Self> {
        let last_s = last_s?.min(duration_s);
        if !failed || requests == 0 || last_s <= 0.0 {
            return None;
        }
        let silent_s = duration_s - last_s;
        let gap = last_s / requests as f64;
        if silent_s < Self::SILENT_S.max(Self::GAPS * gap) {
            return None;
        }
        Some(Served {
            duration_s: last_s,
            throughput_rps: requests as f64 / last_s,
            silent_s,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpSummary {
    pub name: String,
    pub count: u64,
    pub rate_rps: f64,
    /// Open loop: from the intended send time (the figure to quote).
    /// Closed loop: from the send.
    pub latency_us: Percentiles,
    /// Open loop: from the actual send (what a closed loop would measure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_us: Option<Percentiles>,
    /// The latency histogram: `[upper bound µs, count]` per non-empty bucket.
    pub histogram_us: Vec<(f64, u64)>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    /// Not in files before `serverlab-load/3` (read as 0).
    #[serde(default)]
    pub p99_99: f64,
    pub max: f64,
    /// Each percentile's 95% confidence interval (an operation's
    /// latencies; not in per-second figures, nor in files before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<Ci95>,
}

impl Percentiles {
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Percentiles::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Percentiles {
            mean: h.mean() / 1000.0,
            p50: us(h.value_at_quantile(0.5)),
            p90: us(h.value_at_quantile(0.9)),
            p99: us(h.value_at_quantile(0.99)),
            p99_9: us(h.value_at_quantile(0.999)),
            p99_99: us(h.value_at_quantile(0.9999)),
            max: us(h.max()),
            ci95: None,
        }
    }

    /// [`Percentiles::of`], with each percentile's interval
    /// ([`Ci95::of`]; `effective`: the samples' effective number when
    /// fewer than recorded).
    pub fn with_intervals(h: &Histogram<u64>, effective: Option<f64>) -> Self {
        Percentiles {
            ci95: (!h.is_empty()).then(|| Ci95::of(h, effective)),
            ..Percentiles::of(h)
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadSummary {
    pub role: String,
    pub index: usize,
    pub total: u64,
    pub per_second: Vec<u64>,
    /// From the common start to the moment this thread stopped counting.
    pub runtime_s: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    pub enabled: bool,
    /// Replies checked against what the server must return.
    pub checked: u64,
    pub mismatches: u64,
    /// The first few mismatches, described.
    pub examples: Vec<String>,
    /// What the checks leave out, where a reply is checked alone (its
    /// form, not the writes before it), and what checks that.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_checked: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientCpu {
    pub user_s: f64,
    pub system_s: f64,
    /// Of that CPU time, seconds spent polling for replies that had not
    /// arrived yet (the client spins briefly rather than sleep; see
    /// docs/measuring.md), by the loop threads' own CPU clock, so never
    /// more than `user_s + system_s`. Not work.
    #[serde(default)]
    pub idle_poll_s: f64,
    /// CPUs the client could use.
    pub cores: usize,
    /// Working CPU time (excluding idle polling) over (wall time × cores):
    /// 1.0 means every allowed core was busy working.
    pub utilization: f64,
    /// The share of the client's CPUs that was busy over the run, with
    /// any process's work (the client's own, polling included), from
    /// /proc/stat; absent where it cannot be read. Well above the
    /// client's own share: something else ran there — on one machine,
    /// often the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores_busy: Option<f64>,
    /// The client was busy enough that it, not the server, may have set the
    /// pace: it kept its cores busy itself, or it ran on cores kept busy
    /// with others' work too (a server on the same CPU), waiting for them
    /// and taking from that work each cycle it used.
    pub bottleneck: bool,
    /// How the client waited for replies that were due (`--poll`);
    /// absent in files written before it was recorded, and in a merge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll: Option<PollUse>,
}

/// How a load's event loops waited for replies that were due
/// (docs/measuring.md, "Agents that share a machine").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PollUse {
    /// As asked: "spin", "sleep" or "auto".
    pub mode: String,
    /// What the loops did: "spin", "sleep", or "spin-uncontended"
    /// (auto without CPUs of its own: spin while no other task wants
    /// the CPU). Absent in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
    /// The share of the loops' time they were allowed to poll without
    /// sleeping (spin: 1, sleep: 0; auto: what it chose).
    pub spin_share: f64,
    /// Why, in one line (auto: what it decided on).
    pub why: String,
}

/// Utilisation above which the client is flagged as a possible bottleneck;
/// also the share of busy cores above which a client that shares them
/// ([`CLIENT_SHARED`]) is: it waited for them, so its sends and reads
/// came late, and what it used was taken from the others.
pub const CLIENT_BOTTLENECK: f64 = 0.9;
/// Others' work on the client's cores, as a share of them, that counts as
/// sharing them.
pub const CLIENT_SHARED: f64 = 0.25;

impl ClientCpu {
    /// From the CPU time the load's threads used (and how much of it was
    /// idle polling), over `wall_s`.
    pub fn measure(used: (f64, f64), idle_poll_s: f64, wall_s: f64, cores: usize) -> Self {
        let (user_s, system_s) = used;
        // Both are CPU time, though by different clocks: polling is part
        // of the whole, never more.
        let idle_poll_s = idle_poll_s.clamp(0.0, user_s + system_s);
        let work = user_s + system_s - idle_poll_s;
        let utilization = if wall_s > 0.0 {
            work / (wall_s * cores.max(1) as f64)
        } else {
            0.0
        };
        ClientCpu {
            user_s,
            system_s,
            idle_poll_s,
            cores,
            utilization,
            cores_busy: None,
            bottleneck: utilization >= CLIENT_BOTTLENECK,
            poll: None,
        }
    }

    /// With how busy the client's cores were over the run (`busy_share`
    /// of their time, by anyone), which flags a client that worked on
    /// cores that others kept busy too.
    pub fn on_cores(mut self, busy_share: Option<f64>) -> Self {
        self.cores_busy = busy_share.map(|b| b.clamp(0.0, 1.0));
        let crowded = self.cores_busy.is_some_and(|b| b >= CLIENT_BOTTLENECK) && self.shared();
        self.bottleneck |= crowded;
        self
    }

    /// Whether others' work kept the client's cores busy too (a server
    /// on the same CPUs, or anything else): more of them than the client's
    /// whole CPU time (polling included) could have.
    pub fn shared(&self) -> bool {
        self.cores_busy
            .is_some_and(|b| b - self.own_share() >= CLIENT_SHARED)
    }

    /// The share of its cores the client kept busy, polling included.
    pub fn own_share(&self) -> f64 {
        // Utilisation leaves polling out: add it back, over the same
        // capacity.
        let work = self.user_s + self.system_s - self.idle_poll_s;
        if work > 0.0 {
            self.utilization * (self.user_s + self.system_s) / work
        } else {
            self.utilization
        }
    }

    /// Whether the client's loops spun and kept its cores busy doing it
    /// (its work and its polling together past [`CLIENT_BOTTLENECK`]):
    /// then the cores, not the server, may have set the pace, however
    /// little of them its work took.
    pub fn spun_busy(&self) -> bool {
        let spun = self.poll.as_ref().is_some_and(|p| p.spin_share > 0.0);
        spun && self.idle_poll_s > 0.0 && self.own_share() >= CLIENT_BOTTLENECK
    }
}

/// Summaries of a merged recorder's operations, named in order.
pub fn op_summaries(rec: &Recorder, names: &[&str], duration_s: f64) -> Vec<OpSummary> {
    rec.ops
        .iter()
        .zip(names)
        .map(|(op, name)| OpSummary {
            name: name.to_string(),
            count: op.count,
            rate_rps: if duration_s > 0.0 {
                op.count as f64 / duration_s
            } else {
                0.0
            },
            latency_us: Percentiles::with_intervals(&op.latency_ns, None),
            service_us: op
                .service_ns
                .as_ref()
                .map(|h| Percentiles::with_intervals(h, None)),
            histogram_us: op
                .latency_ns
                .iter_recorded()
                .map(|v| (v.value_iterated_to() as f64 / 1000.0, v.count_at_value()))
                .collect(),
        })
        .collect()
}

/// Why a result file cannot be read as a load result.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("no \"schema\": not a serverlab load result")]
    Missing,
    #[error("unknown schema {0:?} (this serverlab reads {SCHEMA}, {SCHEMA_V2} and {v1})", v1 = v1::SCHEMA)]
    Unknown(String),
    #[error("results.{0} (the {0} load's own results) is missing or malformed: {1}")]
    ProtocolPart(String, String),
    #[error("{0}")]
    Json(#[from] serde_json::Error),
}

/// The current schema's fields, as written.
#[derive(Deserialize)]
struct Current {
    schema: String,
    protocol: String,
    load_model: String,
    config: serde_json::Value,
    environment: Environment,
    results: Results,
    #[serde(default)]
    search: Option<SearchReport>,
    #[serde(default)]
    scan: Option<ScanReport>,
}

impl LoadReport {
    /// A result of any schema: the current one (or version 2, its fields
    /// less open loops') as written, a version-1 one as [`v1::upgrade`]
    /// reads it.
    pub fn from_value(value: serde_json::Value) -> Result<Self, SchemaError> {
        match value.get("schema").and_then(|s| s.as_str()) {
            Some(SCHEMA | SCHEMA_V2) => Self::current(value),
            Some(v1::SCHEMA) => v1::upgrade(value),
            Some(other) => Err(SchemaError::Unknown(other.into())),
            None => Err(SchemaError::Missing),
        }
    }

    fn current(mut value: serde_json::Value) -> Result<Self, SchemaError> {
        // The protocol's part is read on its own, straight from JSON (a
        // flattened field reads as absent however it is malformed, and
        // loses integer map keys such as kv's statuses).
        let protocol = value["protocol"].as_str().unwrap_or_default().to_string();
        let part = value
            .get_mut("results")
            .and_then(|r| r.as_object_mut())
            .and_then(|r| r.remove(&protocol));
        let c: Current = serde_json::from_value(value)?;
        let typed = match part {
            None => Err("absent".to_string()),
            Some(part) => ProtocolResults::named(&protocol, part).map_err(|e| e.to_string()),
        };
        let typed = typed.map_err(|why| SchemaError::ProtocolPart(protocol, why))?;
        Ok(LoadReport {
            schema: c.schema,
            protocol: c.protocol,
            load_model: c.load_model,
            config: c.config,
            environment: c.environment,
            results: Results {
                protocol: Some(typed),
                ..c.results
            },
            search: c.search,
            scan: c.scan,
        })
    }

    /// Whether the run failed: errors, or replies that did not verify.
    pub fn failed(&self) -> bool {
        !self.results.errors.is_empty() || self.results.verification.mismatches > 0
    }
}

impl<'de> Deserialize<'de> for LoadReport {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        LoadReport::from_value(value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests;
