//! The shape of a server's final statistics (`serve --stats-json FILE`,
//! and what `serve` prints when it stops): written by the server, read by
//! the report (`report/src/server_stats.rs` reads [`ServiceTime`] from
//! it), so both sides share these types.
//!
//! Every protocol reports the same typed part — its connections and its
//! service time, with the unit in the field's name — beside its own
//! statistics (`protocol`, a JSON object whose shape each protocol
//! documents in docs/protocols/).

use serde::{Deserialize, Serialize};

/// A server's statistics when it stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerStats {
    pub connections: Connections,
    /// Service time: from the start of applying a complete request to its
    /// reply being appended to the connection's output (the store and the
    /// encoding; no I/O, no queueing, no requested delay), in microseconds.
    pub service_time_us: ServiceTime,
    /// Reactor strategies only (`pool-locked`, `pool-lockfree`,
    /// `thread-per-request`): how long a worker held each request, from
    /// taking its connection to returning it (read, delay, apply, write),
    /// in microseconds. Absent where no worker ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_busy_us: Option<WorkerBusy>,
    /// The protocol's own counts (requests by kind, rejects, …).
    pub protocol: serde_json::Value,
}

/// Connection counts, the same for every protocol and strategy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Connections {
    /// Seconds from binding to the statistics being taken.
    pub uptime_s: f64,
    /// Connections admitted (accepted under `--max-connections`).
    pub accepted: u64,
    /// Admitted connections since closed.
    pub closed: u64,
    /// Most admitted connections open at once.
    pub peak_active: u64,
    /// Accepted and closed at once: `--max-connections` were open and
    /// none was idle to evict.
    pub refused_over_max_connections: u64,
    /// Closed while waiting for a request, to admit a new connection when
    /// `--max-connections` were open (the one idle longest).
    #[serde(default)]
    pub evicted_idle: u64,
    /// Accepted with the spare descriptor and closed at once: the process
    /// was out of file descriptors.
    #[serde(default)]
    pub shed_out_of_fds: u64,
    /// Reset because their replies made no progress for `--write-timeout`.
    pub reset_write_timeout: u64,
    /// Requests whose delay was begun and abandoned, unapplied, because
    /// their client had gone or the stop passed its drain limit.
    #[serde(default)]
    pub delays_abandoned: u64,
    /// Applied requests whose replies were not all written when their
    /// connection was reset (past the drain limit, or `--write-timeout`).
    #[serde(default)]
    pub unanswered_on_reset: u64,
}

/// Service-time statistics. Every applied request is counted; one in
/// `sampled_one_in` per server thread is timed (two clock reads cost a
/// measurable share of a pipelined sub-microsecond request), and the
/// quantiles are over the timed ones. All times in microseconds.
///
/// Statistics written before sampling have neither `timed` nor
/// `sampled_one_in`: every request was timed then, and they read so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "WrittenServiceTime")]
pub struct ServiceTime {
    /// Requests applied.
    pub count: u64,
    /// Requests timed.
    pub timed: u64,
    /// Each server thread times one request in this many (1: every one).
    pub sampled_one_in: u64,
    /// The same in words, where the figures are shown: "sampled 1 in 64"
    /// (so a maximum is a sample's), or "every request timed"
    /// (`serve --time-all`); read from older statistics as their
    /// sampling says.
    pub timing: String,
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// A reactor worker's busy time per request, in microseconds: a run of a
/// connection that answered `n` requests gives each a `n`th of it. Every
/// run and request is counted; one run in `sampled_one_in` per worker
/// thread is timed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerBusy {
    /// Requests the workers' runs answered.
    pub count: u64,
    /// Requests in the timed runs (the histogram's total).
    pub timed: u64,
    /// Runs of a connection by a worker.
    pub runs: u64,
    pub sampled_one_in: u64,
    pub timing: String,
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
    /// Timed runs that answered no request (a close, a request not yet
    /// whole), and their total time: busy time charged to no request.
    pub unanswered_runs_timed: u64,
    pub unanswered_runs_us: f64,
    /// The timed requests' times as `[µs, count]` pairs, ascending, each
    /// the middle of a bucket under 1% wide (only in `--stats-json`).
    pub histogram: Vec<(f64, u64)>,
}

/// How service time is sampled, in words: "sampled 1 in 64", or "every
/// request timed".
pub fn timing(sampled_one_in: u64) -> String {
    match sampled_one_in {
        1 => "every request timed".to_string(),
        n => format!("sampled 1 in {n}"),
    }
}

/// [`ServiceTime`] as any version of the server wrote it.
#[derive(Deserialize)]
struct WrittenServiceTime {
    count: u64,
    timed: Option<u64>,
    sampled_one_in: Option<u64>,
    timing: Option<String>,
    min: f64,
    mean: f64,
    p50: f64,
    p90: f64,
    p99: f64,
    max: f64,
}

impl From<WrittenServiceTime> for ServiceTime {
    fn from(w: WrittenServiceTime) -> ServiceTime {
        let sampled_one_in = w.sampled_one_in.unwrap_or(1);
        ServiceTime {
            count: w.count,
            timed: w.timed.unwrap_or(w.count),
            sampled_one_in,
            timing: w.timing.unwrap_or_else(|| timing(sampled_one_in)),
            min: w.min,
            mean: w.mean,
            p50: w.p50,
            p90: w.p90,
            p99: w.p99,
            max: w.max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_json_with_the_documented_names() {
        let stats = ServerStats {
            connections: Connections {
                uptime_s: 1.5,
                accepted: 3,
                closed: 3,
                peak_active: 2,
                refused_over_max_connections: 0,
                evicted_idle: 2,
                shed_out_of_fds: 3,
                reset_write_timeout: 1,
                delays_abandoned: 2,
                unanswered_on_reset: 0,
            },
            service_time_us: ServiceTime {
                count: 1000,
                timed: 16,
                sampled_one_in: 64,
                timing: "sampled 1 in 64".into(),
                min: 0.1,
                mean: 0.5,
                p50: 0.4,
                p90: 0.9,
                p99: 2.0,
                max: 3.25,
            },
            worker_busy_us: None,
            protocol: serde_json::json!({ "requests": { "POST": 1000 } }),
        };
        let v = serde_json::to_value(&stats).unwrap();
        assert_eq!(v["connections"]["reset_write_timeout"], 1);
        assert_eq!(v["connections"]["delays_abandoned"], 2);
        assert_eq!(v["service_time_us"]["sampled_one_in"], 64);
        assert_eq!(v["service_time_us"]["p99"], 2.0);
        assert_eq!(v["protocol"]["requests"]["POST"], 1000);
        let back: ServerStats = serde_json::from_value(v).unwrap();
        assert_eq!(back, stats);
    }

    #[test]
    fn service_time_from_before_sampling_timed_every_request() {
        let old = serde_json::json!({"count": 40, "min": 2.0, "mean": 9.5, "p50": 8.0,
            "p90": 15.0, "p99": 30.0, "max": 44.0});
        let t: ServiceTime = serde_json::from_value(old).unwrap();
        assert_eq!((t.count, t.timed, t.sampled_one_in), (40, 40, 1));
    }
}
