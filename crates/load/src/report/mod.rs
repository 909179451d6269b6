//! The result of a load run: what the JSON output holds (schema
//! `serverlab-load/1`, documented in docs/load-json.md) and what the text
//! and caps sinks print.

use crate::env::Environment;
use crate::record::Recorder;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "serverlab-load/1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadReport {
    pub schema: String,
    pub protocol: String,
    /// How requests were issued: `closed-loop` (the next request waits for
    /// a reply) or `closed-loop, throttled` (and also for its slot).
    pub load_model: String,
    /// Every setting of the run, enough to repeat it.
    pub config: serde_json::Value,
    pub environment: Environment,
    pub results: Results,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    /// The measured window, in seconds.
    pub duration_s: f64,
    /// Requests answered within the window.
    pub requests: u64,
    pub throughput_rps: f64,
    pub operations: Vec<OpSummary>,
    /// Requests answered in each second of the window, all workers.
    pub per_second: Vec<u64>,
    pub threads: Vec<ThreadSummary>,
    /// Replies that arrived after the window: not counted (checked when
    /// verification is on).
    pub late_replies: u64,
    pub errors: Vec<String>,
    pub verification: Verification,
    pub client_cpu: ClientCpu,
    /// Protocol-specific results.
    pub extra: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpSummary {
    pub name: String,
    pub count: u64,
    pub rate_rps: f64,
    pub latency_us: Percentiles,
    /// The latency histogram: `[upper bound µs, count]` per non-empty bucket.
    pub histogram_us: Vec<(f64, u64)>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Percentiles {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
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
            max: us(h.max()),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ThreadSummary {
    pub role: String,
    pub index: usize,
    pub total: u64,
    pub per_second: Vec<u64>,
    /// From the common start to the moment this thread stopped counting.
    pub runtime_s: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Verification {
    pub enabled: bool,
    /// Replies checked against what the server must return.
    pub checked: u64,
    pub mismatches: u64,
    /// The first few mismatches, described.
    pub examples: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClientCpu {
    pub user_s: f64,
    pub system_s: f64,
    /// Of that CPU time, seconds spent polling for replies that had not
    /// arrived yet (the client spins briefly rather than sleep; see
    /// docs/load.md). Not work.
    #[serde(default)]
    pub idle_poll_s: f64,
    /// CPUs the client could use.
    pub cores: usize,
    /// Working CPU time (excluding idle polling) over (wall time × cores):
    /// 1.0 means every allowed core was busy working.
    pub utilization: f64,
    /// The client was busy enough that it, not the server, may have set the
    /// pace.
    pub bottleneck: bool,
}

/// Utilisation above which the client is flagged as a possible bottleneck.
pub const CLIENT_BOTTLENECK: f64 = 0.9;

impl ClientCpu {
    /// From the CPU time the load's threads used (and how much of it was
    /// idle polling), over `wall_s`.
    pub fn measure(used: (f64, f64), idle_poll_s: f64, wall_s: f64, cores: usize) -> Self {
        let (user_s, system_s) = used;
        let work = (user_s + system_s - idle_poll_s).max(0.0);
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
            bottleneck: utilization >= CLIENT_BOTTLENECK,
        }
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
            latency_us: Percentiles::of(&op.latency_ns),
            histogram_us: op
                .latency_ns
                .iter_recorded()
                .map(|v| (v.value_iterated_to() as f64 / 1000.0, v.count_at_value()))
                .collect(),
        })
        .collect()
}

impl LoadReport {
    /// Whether the run failed: errors, or replies that did not verify.
    pub fn failed(&self) -> bool {
        !self.results.errors.is_empty() || self.results.verification.mismatches > 0
    }
}
