//! The steps of a run made of several: a capacity search (the highest
//! rate that meets a latency target) or a scan of rates. Each step is a
//! whole run; its summary is kept here, the full results of one of them
//! in the report's `results`.

use super::{LoadReport, OpSummary};
use serde::{Deserialize, Serialize};

/// One step: a run at a requested rate (none for the closed-loop probe).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Open loop: the rate asked for. Null: the closed-loop probe.
    pub requested_rps: Option<f64>,
    pub achieved_rps: f64,
    /// The search target's statistic of the latency, µs (a scan: the
    /// p99); null when nothing completed.
    pub stat_us: Option<f64>,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub max_us: Option<f64>,
    /// Requests sent over 1 ms late, all and the client's own.
    pub late_requests: u64,
    pub client_late_requests: u64,
    /// The achieved rate was at least 95% of the requested one.
    pub kept_up: bool,
    /// Errors and verification mismatches in the step.
    pub errors: u64,
    /// A search's verdict: the target met, the rate kept up, no errors.
    pub pass: Option<bool>,
}

impl Step {
    /// A step's summary of its run; `stat_us` as the caller measured it.
    pub fn of(report: &LoadReport, stat_us: Option<f64>) -> Step {
        let r = &report.results;
        let (p50, p99, max) = merged_percentiles(report);
        let schedule = r.schedule.as_ref();
        Step {
            requested_rps: r.requested_rps,
            achieved_rps: r.throughput_rps,
            stat_us,
            p50_us: p50,
            p99_us: p99,
            max_us: max,
            late_requests: schedule.map_or(0, |s| s.late_requests),
            client_late_requests: schedule.map_or(0, |s| s.client_late_requests),
            kept_up: schedule.is_none_or(|s| s.kept_up),
            errors: r.errors.len() as u64 + r.verification.mismatches,
            pass: None,
        }
    }
}

/// The p50, p99 and max of the latency over every operation (from their
/// histograms), µs; None when nothing completed.
fn merged_percentiles(report: &LoadReport) -> (Option<f64>, Option<f64>, Option<f64>) {
    let ops = &report.results.operations;
    let max = ops
        .iter()
        .filter(|o| o.count > 0)
        .map(|o| o.latency_us.max)
        .reduce(f64::max);
    (merged_quantile(ops, 0.5), merged_quantile(ops, 0.99), max)
}

/// Quantile `q` of the latency over every operation, from their
/// histograms (the smallest bucket bound with at least `q` of the count
/// at or below it, as HdrHistogram's value-at-quantile), µs.
pub fn merged_quantile(ops: &[OpSummary], q: f64) -> Option<f64> {
    let mut buckets: Vec<(f64, u64)> = ops
        .iter()
        .flat_map(|o| o.histogram_us.iter().copied())
        .collect();
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: u64 = buckets.iter().map(|b| b.1).sum();
    let target = ((q * total as f64).ceil() as u64).clamp(1, total.max(1));
    let mut seen = 0;
    buckets.iter().find_map(|&(value, count)| {
        seen += count;
        (seen >= target).then_some(value)
    })
}

/// A capacity search: the highest rate at which a statistic of the
/// latency met a target and the rate was kept up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchReport {
    /// As given: `p99<=2ms`.
    pub target: String,
    pub stat: String,
    pub limit_us: f64,
    /// Each step's measured window and warm-up.
    pub step_s: f64,
    pub warmup_s: f64,
    /// The closed-loop run that gave the first guess.
    pub probe: Step,
    /// Every open-loop step, in the order run.
    pub steps: Vec<Step>,
    /// The highest rate that passed (within 5% of the lowest that
    /// failed); null when none did.
    pub capacity_rps: Option<f64>,
    /// What to know about the answer (every rate passed; none did).
    pub note: Option<String>,
}

/// A scan: every rate of a range, one step each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScanReport {
    /// As given: `1k:20k:1k`.
    pub range: String,
    pub step_s: f64,
    pub warmup_s: f64,
    pub steps: Vec<Step>,
}
