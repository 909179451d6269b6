//! What a scrape reads: the counters the server and its service already
//! keep ([`Common`](serverlab_service::Common), the protocol's typed statistics,
//! the write-ahead log's statistics), turned into metric families at
//! scrape time. Nothing here runs on a serving thread.

use crate::metrics::encode::{counter, counters, gauge, Labels};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;
use serverlab_service::{ErrorCount, ProtocolStats, Service};
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

/// Requests by operation, as the protocol's statistics count them. An
/// operation none of whose requests has come yet is left out (RESP
/// counts over a hundred commands; a load sends a few).
pub fn requests_by_op(stats: &impl ProtocolStats) -> Vec<(&'static str, u64)> {
    let mut out = stats.requests();
    out.retain(|(_, n)| *n > 0);
    out
}

/// Errors by operation and reason, as the protocol's statistics count
/// them; `op="any"` where the protocol does not count an error by
/// operation. A reason that has not happened yet is left out.
pub fn errors(stats: &impl ProtocolStats) -> Vec<ErrorCount> {
    let mut out = stats.errors();
    out.retain(|e| e.count > 0);
    out
}

impl<S: Service> Collector for ServiceCollector<S> {
    fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), Error> {
        let stats = self.svc.stats();
        encode_requests(&mut enc, &stats, |op| self.op_label(op))?;
        let ops: Vec<String> = S::OPS.iter().map(|op| self.op_label(op)).collect();
        encode_durations(&mut enc, self.svc.common(), &ops)?;
        encode_busy(&mut enc, self.svc.common())?;
        encode_connections(&mut enc, self.svc.common())?;
        if let Some((what, n)) = self.svc.store_size() {
            let name = format!("serverlab_store_{what}");
            let help = format!("The store's size: {what} in it now.");
            gauge(&mut enc, &name, &help, n.try_into().unwrap_or(i64::MAX))?;
        }
        if let Some(wal) = self.svc.wal() {
            encode_wal(&mut enc, wal)?;
        }
        for m in stats.more() {
            if m.gauge {
                gauge(
                    &mut enc,
                    m.name,
                    m.help,
                    m.value.try_into().unwrap_or(i64::MAX),
                )?;
            } else {
                counter(&mut enc, m.name, m.help, m.value)?;
            }
        }
        Ok(())
    }
}

fn encode_requests(
    enc: &mut DescriptorEncoder,
    stats: &impl ProtocolStats,
    label: impl Fn(&str) -> String,
) -> Result<(), Error> {
    let by_op: Vec<(Labels, u64)> = requests_by_op(stats)
        .into_iter()
        .map(|(op, n)| (vec![("op", label(op))], n))
        .collect();
    counters(
        enc,
        "serverlab_requests",
        "Requests answered, by operation.",
        &by_op,
    )?;
    let errs: Vec<(Labels, u64)> = errors(stats)
        .into_iter()
        .map(|e| (vec![("op", label(e.op)), ("reason", e.reason)], e.count))
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

/// `serverlab_worker_busy_seconds`: reactor workers' busy time per
/// timed request, once a worker has run (never under other strategies).
fn encode_busy(
    enc: &mut DescriptorEncoder,
    common: &serverlab_service::Common,
) -> Result<(), Error> {
    let bounds_ns: Vec<u64> = DURATION_BOUNDS_S
        .iter()
        .map(|s| (s * 1e9).round() as u64)
        .collect();
    let Some(c) = common.busy.cumulative(&bounds_ns) else {
        return Ok(());
    };
    let buckets = own_buckets(&DURATION_BOUNDS_S, &c.at_most, c.count);
    enc.encode_descriptor(
        "serverlab_worker_busy_seconds",
        "How long a reactor worker held each timed request (sampled as \
         serverlab_request_duration_seconds is): from taking its ready connection to handing \
         it back, the read, any delay, the apply and the write; a run's time shared among the \
         requests it answered.",
        None,
        MetricType::Histogram,
    )?
    .encode_histogram::<Labels>(c.sum_ns / 1e9, c.count, &buckets, None)
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
    use serverlab_service::board::BoardStats;
    use serverlab_service::protocol_stats::{Counts, FrameLimits};

    #[test]
    fn what_has_not_happened_yet_is_left_out() {
        let stats = BoardStats {
            requests: Counts(vec![("POST", 3), ("READ", 2), ("LIST", 0)]),
            read_misses: 0,
            exit_refused: 1,
            limits: FrameLimits { oversize_frames: 0 },
        };
        assert_eq!(requests_by_op(&stats), vec![("POST", 3), ("READ", 2)]);
        let exit = ErrorCount {
            op: "EXIT",
            reason: "exit_refused".into(),
            count: 1,
        };
        assert_eq!(errors(&stats), vec![exit]);
    }
}
