//! What a scrape reads: the counters the server and its service already
//! keep ([`Common`](serverlab_service::Common), the protocol's own report,
//! the write-ahead log's statistics), turned into metric families at
//! scrape time. Nothing here runs on a serving thread.

use crate::metrics::encode::{counter, counters, gauge, Labels};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;
use serde_json::Value;
use serverlab_service::Service;
use std::fmt::Error;
use std::sync::Arc;

/// Upper bounds of `serverlab_request_duration_seconds`, 10 µs to 10 s.
pub const DURATION_BOUNDS_S: [f64; 19] = [
    0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025,
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Upper bounds of `serverlab_wal_fsync_duration_seconds`, 10 µs to 10 s.
const FSYNC_BOUNDS_S: [f64; 19] = DURATION_BOUNDS_S;

/// Upper bounds of `serverlab_wal_records_per_commit`.
const RECORDS_BOUNDS: [f64; 12] = [
    1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 4096.0,
];

/// The service's counters, read at each scrape.
pub struct ServiceCollector<S> {
    svc: Arc<S>,
    /// RESP: commands are labelled in capitals, as `load resp` labels
    /// them and Redis writes them (`GET`; the server counts them as
    /// `get`).
    capitals: bool,
}

impl<S> ServiceCollector<S> {
    /// `protocol`: the name `serve` takes.
    pub fn new(svc: Arc<S>, protocol: &str) -> Self {
        ServiceCollector {
            svc,
            capitals: protocol == serverlab_proto::resp::NAME,
        }
    }

    /// The `op` label of the operation the service names `op`.
    fn op_label(&self, op: &str) -> String {
        match op {
            // Not operations: requests refused or empty, errors counted
            // without their operation.
            "rejected" | "empty" | "any" | "other" => op.to_string(),
            _ if self.capitals => op.to_ascii_uppercase(),
            _ => op.to_string(),
        }
    }
}

impl<S> std::fmt::Debug for ServiceCollector<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServiceCollector")
    }
}

/// Each bucket's own count from cumulative counts at `bounds` (the
/// `+Inf` bucket is `count`): prometheus-client takes these and sums them.
fn own_buckets(bounds: &[f64], at_most: &[u64], count: u64) -> Vec<(f64, u64)> {
    let mut below = 0;
    let mut buckets: Vec<(f64, u64)> = Vec::with_capacity(bounds.len() + 1);
    for (&bound, &n) in bounds.iter().zip(at_most) {
        buckets.push((bound, n.saturating_sub(below)));
        below = below.max(n);
    }
    buckets.push((f64::MAX, count.saturating_sub(below)));
    buckets
}

/// A histogram from cumulative counts at `bounds` (the `+Inf` bucket is
/// `count`).
fn histogram(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    bounds: &[f64],
    at_most: &[u64],
    count: u64,
    sum: f64,
) -> Result<(), Error> {
    let buckets = own_buckets(bounds, at_most, count);
    let mut metric = enc.encode_descriptor(name, help, None, MetricType::Histogram)?;
    metric.encode_histogram::<Labels>(sum, count, &buckets, None)
}

/// A histogram read from an HDR histogram of integers, the bounds scaled
/// by `per_unit` (nanoseconds per second, or 1).
fn from_hdr(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    h: &hdrhistogram::Histogram<u64>,
    bounds: &[f64],
    per_unit: f64,
) -> Result<(), Error> {
    let at_most: Vec<u64> = bounds
        .iter()
        .map(|b| h.count_between(0, (b * per_unit) as u64))
        .collect();
    let sum = if h.is_empty() {
        0.0
    } else {
        h.mean() * h.len() as f64 / per_unit
    };
    histogram(enc, name, help, bounds, &at_most, h.len(), sum)
}

/// `op` counts from the report's `requests`: an object of counts by
/// operation (its `total` and `rejected` are not operations), or one
/// number (echo, whose one operation is `echo`). An operation none of
/// whose requests has come yet is left out (RESP counts over a hundred
/// commands; a load sends a few).
pub fn requests_by_op(report: &Value) -> Vec<(String, u64)> {
    match &report["requests"] {
        Value::Number(n) => vec![("echo".to_string(), n.as_u64().unwrap_or(0))],
        Value::Object(m) => m
            .iter()
            .filter(|(k, _)| *k != "total" && *k != "rejected")
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
            .filter(|(_, n)| *n > 0)
            .collect(),
        _ => Vec::new(),
    }
}

/// Errors by operation and reason, as each protocol's report counts them;
/// `op="any"` where the protocol does not count an error by operation.
/// A reason that has not happened yet is left out.
pub fn errors(report: &Value) -> Vec<(String, String, u64)> {
    let mut out = every_error(report);
    out.retain(|(_, _, n)| *n > 0);
    out
}

fn every_error(report: &Value) -> Vec<(String, String, u64)> {
    let mut out = Vec::new();
    let same = |k: &str| Some(k.to_string());
    // board
    if let Some(n) = report["read_misses"].as_u64() {
        out.push(("READ".into(), "no_such_message".into(), n));
    }
    if let Some(n) = report["exit_refused"].as_u64() {
        out.push(("EXIT".into(), "exit_refused".into(), n));
    }
    if let Some(n) = report["limits"]["oversize_frames"].as_u64() {
        out.push(("any".into(), "oversize_frame".into(), n));
    }
    // bucket
    each_reason(&mut out, &report["rejected"], &same);
    // kv: the 4xx and 5xx statuses
    each_reason(&mut out, &report["statuses"], &|code: &str| {
        (code.starts_with('4') || code.starts_with('5')).then(|| format!("status_{code}"))
    });
    // resp
    each_reason(&mut out, &report["errors"], &same);
    each_reason(&mut out, &report["protocol_errors"], &|k: &str| {
        Some(format!("protocol_{k}"))
    });
    out
}

/// Every count of the object `v` under `op="any"`, its reason named by
/// `reason_of` (none: not an error).
fn each_reason(
    out: &mut Vec<(String, String, u64)>,
    v: &Value,
    reason_of: &dyn Fn(&str) -> Option<String>,
) {
    if let Value::Object(m) = v {
        for (k, n) in m {
            if let (Some(reason), Some(n)) = (reason_of(k), n.as_u64()) {
                out.push(("any".to_string(), reason, n));
            }
        }
    }
}

impl<S: Service> Collector for ServiceCollector<S> {
    fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), Error> {
        let report = self.svc.report();
        encode_requests(&mut enc, &report, |op| self.op_label(op))?;
        let ops: Vec<String> = S::OPS.iter().map(|op| self.op_label(op)).collect();
        encode_durations(&mut enc, self.svc.common(), &ops)?;
        encode_connections(&mut enc, self.svc.common())?;
        if let Some((what, n)) = self.svc.store_size() {
            let name = format!("serverlab_store_{what}");
            let help = format!("The store's size: {what} in it now.");
            gauge(&mut enc, &name, &help, n.try_into().unwrap_or(i64::MAX))?;
        }
        if let Some(wal) = self.svc.wal() {
            encode_wal(&mut enc, wal)?;
        }
        Ok(())
    }
}

fn encode_requests(
    enc: &mut DescriptorEncoder,
    report: &Value,
    label: impl Fn(&str) -> String,
) -> Result<(), Error> {
    let by_op: Vec<(Labels, u64)> = requests_by_op(report)
        .into_iter()
        .map(|(op, n)| (vec![("op", label(&op))], n))
        .collect();
    counters(
        enc,
        "serverlab_requests",
        "Requests answered, by operation.",
        &by_op,
    )?;
    let errs: Vec<(Labels, u64)> = errors(report)
        .into_iter()
        .map(|(op, reason, n)| (vec![("op", label(&op)), ("reason", reason)], n))
        .collect();
    counters(
        enc,
        "serverlab_request_errors",
        "Requests answered with an error or refused, by operation (any: not counted by \
         operation) and reason.",
        &errs,
    )
}

/// `serverlab_request_duration_seconds{op}`: one histogram per operation
/// timed so far, named by `ops` (the service's [`Service::OPS`], as
/// labelled).
fn encode_durations(
    enc: &mut DescriptorEncoder,
    common: &serverlab_service::Common,
    ops: &[String],
) -> Result<(), Error> {
    let bounds_ns: Vec<u64> = DURATION_BOUNDS_S
        .iter()
        .map(|s| (s * 1e9).round() as u64)
        .collect();
    {
        let mut family = enc.encode_descriptor(
            "serverlab_request_duration_seconds",
            "Service time of the timed requests (one in serverlab_request_duration_sampled_one_in \
         per thread), by operation: from a complete request to its reply appended to the \
         connection's output.",
            None,
            MetricType::Histogram,
        )?;
        for (op, c) in common.times.cumulative_by_op(&bounds_ns) {
            let op = ops.get(op).map_or("other", String::as_str);
            let labels: Labels = vec![("op", op.to_string())];
            let buckets = own_buckets(&DURATION_BOUNDS_S, &c.at_most, c.count);
            family.encode_family(&labels)?.encode_histogram::<Labels>(
                c.sum_ns / 1e9,
                c.count,
                &buckets,
                None,
            )?;
        }
    }
    gauge(
        enc,
        "serverlab_request_duration_sampled_one_in",
        "Each server thread times one request in this many (1: serve --time-all).",
        common.times.sampled_one_in() as i64,
    )
}

fn encode_connections(
    enc: &mut DescriptorEncoder,
    common: &serverlab_service::Common,
) -> Result<(), Error> {
    let c = common.connections.snapshot();
    gauge(
        enc,
        "serverlab_connections_open",
        "Admitted connections open now.",
        common.connections.active() as i64,
    )?;
    counter(
        enc,
        "serverlab_connections_accepted",
        "Connections admitted.",
        c.accepted,
    )?;
    counters(
        enc,
        "serverlab_connections_refused",
        "Connections accepted and closed at once: --max-connections open and none idle to \
         evict (max_connections), or the process out of file descriptors (emfile).",
        &[
            (
                vec![("reason", "max_connections".into())],
                c.refused_over_max_connections,
            ),
            (vec![("reason", "emfile".into())], c.shed_out_of_fds),
        ],
    )?;
    counter(
        enc,
        "serverlab_connections_evicted",
        "Idle connections closed to admit a new one under --max-connections.",
        c.evicted_idle,
    )?;
    counter(
        enc,
        "serverlab_connections_write_timeouts",
        "Connections reset because their replies made no progress for --write-timeout.",
        c.reset_write_timeout,
    )?;
    counter(
        enc,
        "serverlab_bytes_received",
        "Bytes read from connections.",
        common.bytes.total_received(),
    )?;
    counter(
        enc,
        "serverlab_bytes_sent",
        "Bytes written to connections.",
        common.bytes.total_sent(),
    )
}

fn encode_wal(enc: &mut DescriptorEncoder, wal: &serverlab_service::wal::Wal) -> Result<(), Error> {
    let s = wal.stats();
    counter(
        enc,
        "serverlab_wal_commits",
        "Group commits: data fsyncs by the log, each making a batch of records durable.",
        s.fsyncs,
    )?;
    counter(
        enc,
        "serverlab_wal_records",
        "Records appended to the log.",
        s.records,
    )?;
    counter(
        enc,
        "serverlab_wal_bytes",
        "Bytes appended to the log, frames included.",
        s.bytes,
    )?;
    from_hdr(
        enc,
        "serverlab_wal_records_per_commit",
        "Records each data fsync made durable.",
        &s.records_per_fsync,
        &RECORDS_BOUNDS,
        1.0,
    )?;
    from_hdr(
        enc,
        "serverlab_wal_fsync_duration_seconds",
        "Time each successful data fsync took.",
        &s.fsync_ns,
        &FSYNC_BOUNDS_S,
        1e9,
    )?;
    gauge(
        enc,
        "serverlab_wal_failed",
        "1 once the log failed and refuses further writes, else 0.",
        i64::from(wal.failure().is_some()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requests_by_op_leave_out_totals_and_read_echo_as_one_op() {
        let kv = json!({"requests": {"total": 5, "GET": 3, "PUT": 2, "HEAD": 0}});
        assert_eq!(
            requests_by_op(&kv),
            vec![("GET".to_string(), 3), ("PUT".to_string(), 2)],
            "an operation not yet asked is left out"
        );
        assert_eq!(
            requests_by_op(&json!({"requests": 7})),
            vec![("echo".to_string(), 7)]
        );
    }

    #[test]
    fn errors_take_each_protocols_reasons() {
        let kv = json!({"statuses": {"200": 4, "404": 1, "503": 2}});
        assert_eq!(
            errors(&kv),
            vec![
                ("any".into(), "status_404".into(), 1),
                ("any".into(), "status_503".into(), 2)
            ]
        );
        let board = json!({"read_misses": 2, "exit_refused": 1, "limits": {"oversize_frames": 0}});
        assert_eq!(errors(&board).len(), 2, "a reason not yet seen is left out");
    }
}
