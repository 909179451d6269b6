//! The numbers a report takes from one run: throughput, the client's
//! concurrency (as the load recorded it), per-thread rates, latency
//! percentiles over every operation, and the server's service time when
//! its statistics hold one ([`crate::server_stats`]).

use crate::server_stats;
use serverlab_load::report::{LoadReport, OpSummary};

/// Latency percentiles of one run, in µs.
#[derive(Debug, Clone, PartialEq)]
pub struct Latency {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
}

/// Reads one percentile out of a [`Latency`].
pub type Pick = fn(&Latency) -> f64;

/// The percentiles a report shows, with their names and accessors.
pub const PERCENTILES: [(&str, Pick); 4] = [
    ("p50", |l| l.p50),
    ("p90", |l| l.p90),
    ("p99", |l| l.p99),
    ("p99.9", |l| l.p99_9),
];

#[derive(Debug, Clone, PartialEq)]
pub struct RunMetrics {
    pub throughput_rps: f64,
    pub requests: f64,
    /// Connections the client kept busy (closed loop: its concurrency).
    pub clients: Option<f64>,
    /// The client threads the per-thread figures divide by: the load's
    /// threads, or its connections when it reports no threads.
    pub threads: Option<f64>,
    /// Requests per client thread per second of the measured window: the
    /// throughput over the threads, so it agrees with the throughput table.
    pub per_thread_rps: Option<f64>,
    /// Requests per client thread in the measured window.
    pub requests_per_thread: Option<f64>,
    /// Latency over all operations; None when no request completed (there
    /// is no latency to average, and 0 µs would be a lie).
    pub latency_us: Option<Latency>,
    /// Requests per second of each operation the load has (0 if none
    /// completed: a rate, unlike a latency, is measured as 0).
    pub ops: Vec<(String, f64)>,
    /// The server's own service time statistics, in µs (name, value).
    pub service_us: Vec<(String, f64)>,
    /// The client used most of its CPUs: it may have set the pace.
    pub client_bottleneck: bool,
    /// Open loop: the rate offered (asked for), requests/s.
    pub offered_rps: Option<f64>,
    /// A capacity search's answer, requests/s, and its target.
    pub capacity_rps: Option<f64>,
    pub capacity_target: Option<String>,
}

impl RunMetrics {
    pub fn of(load: &LoadReport, server: Option<&serde_json::Value>) -> RunMetrics {
        let r = &load.results;
        let clients = clients(load);
        // The reference client divides by each thread's runtime, which runs
        // past the window its count covers; the window's own length is right.
        let threads = (!r.threads.is_empty())
            .then_some(r.threads.len() as f64)
            .or(clients);
        let requests_per_thread = threads.map(|n| r.requests as f64 / n);
        let per_thread_rps = requests_per_thread
            .filter(|_| r.duration_s > 0.0)
            .map(|n| n / r.duration_s);
        let active: Vec<&OpSummary> = r.operations.iter().filter(|o| o.count > 0).collect();
        RunMetrics {
            throughput_rps: r.throughput_rps,
            requests: r.requests as f64,
            clients,
            threads,
            per_thread_rps,
            requests_per_thread,
            latency_us: latency(&active),
            ops: r
                .operations
                .iter()
                .map(|o| (o.name.clone(), o.rate_rps))
                .collect(),
            service_us: server.map(server_stats::service_time).unwrap_or_default(),
            client_bottleneck: r.client_cpu.bottleneck,
            offered_rps: r.requested_rps,
            capacity_rps: load.search.as_ref().and_then(|s| s.capacity_rps),
            capacity_target: load.search.as_ref().map(|s| s.target.clone()),
        }
    }
}

/// The client's concurrency, as the load recorded it (a version-1 result's
/// is guessed when read: `serverlab_load::report::v1`). 0: unknown.
fn clients(load: &LoadReport) -> Option<f64> {
    let n = load.results.concurrency;
    (n > 0).then_some(n as f64)
}

/// One operation: its own percentiles. Several: percentiles of their
/// merged histograms. None: nothing completed.
fn latency(ops: &[&OpSummary]) -> Option<Latency> {
    match ops {
        [] => None,
        [one] => {
            let l = &one.latency_us;
            Some(Latency {
                p50: l.p50,
                p90: l.p90,
                p99: l.p99,
                p99_9: l.p99_9,
            })
        }
        many => {
            let mut buckets: Vec<(f64, u64)> = many
                .iter()
                .flat_map(|o| o.histogram_us.iter().copied())
                .collect();
            buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
            Some(Latency {
                p50: quantile(&buckets, 0.5),
                p90: quantile(&buckets, 0.9),
                p99: quantile(&buckets, 0.99),
                p99_9: quantile(&buckets, 0.999),
            })
        }
    }
}

/// The smallest bucket bound with at least `q` of the count at or below
/// it (as HdrHistogram's value-at-quantile does).
pub fn quantile(sorted: &[(f64, u64)], q: f64) -> f64 {
    let total: u64 = sorted.iter().map(|b| b.1).sum();
    if total == 0 {
        return 0.0;
    }
    let target = ((q * total as f64).ceil() as u64).clamp(1, total);
    let mut seen = 0;
    for &(value, count) in sorted {
        seen += count;
        if seen >= target {
            return value;
        }
    }
    sorted.last().map(|b| b.0).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_of_buckets() {
        let b = [(10.0, 50), (20.0, 40), (30.0, 9), (40.0, 1)];
        assert_eq!(quantile(&b, 0.5), 10.0);
        assert_eq!(quantile(&b, 0.51), 20.0);
        assert_eq!(quantile(&b, 0.9), 20.0);
        assert_eq!(quantile(&b, 0.99), 30.0);
        assert_eq!(quantile(&b, 0.999), 40.0);
        assert_eq!(quantile(&[], 0.5), 0.0);
    }

    /// kv's load keeps 16 requests in flight from 2 worker threads: the
    /// per-thread numbers divide by the 2 threads, and say so.
    #[test]
    fn per_thread_numbers_divide_by_threads_not_connections() {
        let text = include_str!("../tests/fixtures/a/runs/posters=1/rep-1/load.json");
        let mut load: LoadReport = serde_json::from_str(text).unwrap();
        load.results.concurrency = 16;
        let m = RunMetrics::of(&load, None);
        assert_eq!((m.clients, m.threads), (Some(16.0), Some(2.0)));
        assert_eq!(m.requests_per_thread, Some(5000.0));
        assert_eq!(m.per_thread_rps, Some(500.0));
    }
}
