//! The numbers a report takes from one run: throughput, the client's
//! concurrency, per-thread rates, latency percentiles over every operation,
//! and the server's service time when its statistics hold one.

use serverlab_load::report::{LoadReport, OpSummary};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Latency {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
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
    pub duration_s: f64,
    /// Connections the client kept busy (closed loop: its concurrency).
    pub clients: Option<f64>,
    /// Requests per client thread per second, averaged over threads.
    pub per_thread_rps: Option<f64>,
    /// Requests per client thread over the run.
    pub requests_per_thread: Option<f64>,
    /// Latency over all operations, in µs.
    pub latency_us: Latency,
    /// Requests per second of each operation that happened.
    pub ops: Vec<(String, f64)>,
    /// The server's own service time statistics, in µs (name, value).
    pub service_us: Vec<(String, f64)>,
    /// The client used most of its CPUs: it may have set the pace.
    pub client_bottleneck: bool,
}

impl RunMetrics {
    pub fn of(load: &LoadReport, server: Option<&serde_json::Value>) -> RunMetrics {
        let r = &load.results;
        let clients = clients(load);
        let threads = (!r.threads.is_empty()).then_some(r.threads.len() as f64);
        let per_thread_rps = if r.threads.iter().all(|t| t.runtime_s > 0.0) && threads.is_some() {
            let rates = r.threads.iter().map(|t| t.total as f64 / t.runtime_s);
            Some(rates.sum::<f64>() / r.threads.len() as f64)
        } else {
            clients.map(|c| r.throughput_rps / c)
        };
        let per = threads.or(clients);
        let active: Vec<&OpSummary> = r.operations.iter().filter(|o| o.count > 0).collect();
        RunMetrics {
            throughput_rps: r.throughput_rps,
            requests: r.requests as f64,
            duration_s: r.duration_s,
            clients,
            per_thread_rps,
            requests_per_thread: per.map(|n| r.requests as f64 / n),
            latency_us: latency(&active),
            ops: active
                .iter()
                .map(|o| (o.name.clone(), o.rate_rps))
                .collect(),
            service_us: server.map(service_time).unwrap_or_default(),
            client_bottleneck: r.client_cpu.bottleneck,
        }
    }
}

/// The client's concurrency: posters + readers (board), connections
/// (bucket), concurrency (kv), else one per client thread.
fn clients(load: &LoadReport) -> Option<f64> {
    let c = &load.config;
    let field = |name: &str| c.get(name).and_then(|v| v.as_f64());
    if let (Some(p), Some(r)) = (field("posters"), field("readers")) {
        return Some(p + r);
    }
    field("connections")
        .or_else(|| field("concurrency"))
        .or_else(|| (!load.results.threads.is_empty()).then_some(load.results.threads.len() as f64))
}

/// One operation: its own percentiles. Several: percentiles of their
/// merged histograms, the mean weighted by count.
fn latency(ops: &[&OpSummary]) -> Latency {
    match ops {
        [] => Latency::default(),
        [one] => {
            let l = &one.latency_us;
            Latency {
                mean: l.mean,
                p50: l.p50,
                p90: l.p90,
                p99: l.p99,
                p99_9: l.p99_9,
                max: l.max,
            }
        }
        many => {
            let mut buckets: Vec<(f64, u64)> = many
                .iter()
                .flat_map(|o| o.histogram_us.iter().copied())
                .collect();
            buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
            let count: u64 = many.iter().map(|o| o.count).sum();
            let mean = many
                .iter()
                .map(|o| o.latency_us.mean * o.count as f64)
                .sum::<f64>()
                / count.max(1) as f64;
            Latency {
                mean,
                p50: quantile(&buckets, 0.5),
                p90: quantile(&buckets, 0.9),
                p99: quantile(&buckets, 0.99),
                p99_9: quantile(&buckets, 0.999),
                max: many.iter().map(|o| o.latency_us.max).fold(0.0, f64::max),
            }
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

/// Statistic names a service-time object may hold.
const SERVICE_STATS: [&str; 8] = ["min", "mean", "median", "p50", "p90", "p99", "p99_9", "max"];

/// The first object in the server's statistics whose key mentions
/// "service" and that holds service-time statistics, in µs (a key ending
/// `_ms`, `_ns` or `_s` says its unit; otherwise µs). Empty if none.
pub fn service_time(stats: &serde_json::Value) -> Vec<(String, f64)> {
    let Some(map) = stats.as_object() else {
        return vec![];
    };
    for (key, value) in map {
        let lower = key.to_ascii_lowercase();
        if let (true, Some(inner)) = (lower.contains("service"), value.as_object()) {
            let scale = if lower.ends_with("_ms") {
                1e3
            } else if lower.ends_with("_ns") {
                1e-3
            } else if lower.ends_with("_s") && !lower.ends_with("_us") {
                1e6
            } else {
                1.0
            };
            let found: Vec<(String, f64)> = SERVICE_STATS
                .iter()
                .filter_map(|name| {
                    let v = inner.get(*name)?.as_f64()?;
                    let name = if *name == "p50" { "median" } else { name };
                    Some((name.to_string(), v * scale))
                })
                .collect();
            if found.len() >= 2 {
                return found;
            }
        }
        let nested = service_time(value);
        if !nested.is_empty() {
            return nested;
        }
    }
    vec![]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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

    #[test]
    fn service_time_is_found_with_its_unit() {
        let stats = json!({"connections": {"accepted": 3},
            "kv": {"service_time_ms": {"min": 0.1, "median": 0.25, "p99": 2.0, "max": 3.5}}});
        assert_eq!(
            service_time(&stats),
            [
                ("min".to_string(), 100.0),
                ("median".to_string(), 250.0),
                ("p99".to_string(), 2000.0),
                ("max".to_string(), 3500.0)
            ]
        );
        let us = json!({"service_us": {"p50": 12.0, "p99": 80.0}});
        assert_eq!(service_time(&us)[0], ("median".to_string(), 12.0));
        assert!(service_time(&json!({"requests": {"GET": 3}})).is_empty());
    }
}
