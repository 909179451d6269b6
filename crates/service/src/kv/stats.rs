//! The kv server's own statistics: counts per method and status, and
//! misses. Connections and service times are every protocol's
//! ([`Common`]); `/_/stats` shows them too, in the shape the contract
//! gives it (docs/protocols/kv.md, section 3.4).
//!
//! Counts go to the calling thread's stripe of [`Counters`], so nothing is
//! shared between request threads on the hot path; reading sums them.

use crate::durable::DurabilityStats;
use crate::protocol_stats::{Counts, ErrorCount, ProtocolStats};
use crate::stats::Counters;
use crate::Common;
use serde_json::{json, Value};
use serverlab_proto::kv::{Method, Status};

// Counter slots: methods, then statuses, then these.
const STATUS_BASE: usize = Method::ALL.len();
const MISSES: usize = STATUS_BASE + Status::ALL.len();
const SLOTS: usize = MISSES + 1;

#[derive(Default)]
pub struct KvCounters {
    counters: Counters<SLOTS>,
}

fn slot_of<T: PartialEq>(all: &[T], x: &T) -> usize {
    all.iter()
        .position(|y| y == x)
        .expect("every value has a slot")
}

/// A method's counter slot, which is its op too.
pub(crate) fn method_slot(method: Method) -> usize {
    slot_of(&Method::ALL, &method)
}

/// `Method::ALL`'s names, in its order (a test checks them): the ops.
pub(crate) const METHOD_NAMES: [&str; Method::ALL.len()] =
    ["GET", "HEAD", "PUT", "POST", "DELETE", "other"];

/// The kv server's own statistics.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KvStats {
    pub requests: KvRequests,
    /// Responses by status code, whether or not they answered a request
    /// that was applied.
    pub statuses: Counts<u16>,
    /// GETs, HEADs and DELETEs that found no value.
    pub misses: u64,
    /// Keys in the store.
    pub keys: usize,
    /// The log's, under `--durability` other than `none`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub durability: Option<DurabilityStats>,
}

/// Requests applied, by method (`Method::ALL`'s names).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KvRequests {
    pub total: u64,
    #[serde(flatten)]
    pub by_method: Counts,
}

impl ProtocolStats for KvStats {
    fn requests(&self) -> Vec<(&'static str, u64)> {
        self.requests.by_method.0.clone()
    }

    /// The 4xx and 5xx statuses, as `status_404` …
    fn errors(&self) -> Vec<ErrorCount> {
        self.statuses
            .errors(|code| (code >= 400).then(|| format!("status_{code}")))
    }
}

impl KvCounters {
    /// A request of `method` was applied and answered with `status`.
    pub fn request(&self, method: Method, status: Status) {
        self.counters.add(method_slot(method), 1);
        self.status(status);
    }

    /// A response that answered no applied request (a rejected or timed-out one).
    pub fn status(&self, status: Status) {
        self.counters
            .add(STATUS_BASE + slot_of(&Status::ALL, &status), 1);
    }

    /// A GET, HEAD or DELETE found no value.
    pub fn miss(&self) {
        self.counters.add(MISSES, 1);
    }

    /// The protocol's part of the final statistics, but the log's.
    pub fn stats(&self, keys: usize) -> KvStats {
        let by_method: Vec<_> = METHOD_NAMES
            .iter()
            .enumerate()
            .map(|(i, &m)| (m, self.counters.get(i)))
            .collect();
        let statuses = Status::ALL
            .iter()
            .enumerate()
            .map(|(i, s)| (s.code(), self.counters.get(STATUS_BASE + i)))
            .collect();
        KvStats {
            requests: KvRequests {
                total: by_method.iter().map(|e| e.1).sum(),
                by_method: Counts(by_method),
            },
            statuses: Counts(statuses),
            misses: self.counters.get(MISSES),
            keys,
            durability: None,
        }
    }
}

impl KvStats {
    /// What `GET /_/stats` answers: the statistics, the service time
    /// (µs: count, min, mean, median, p90, p99, max, and how it was
    /// sampled) and the connections open and opened so far, then the
    /// log's.
    pub fn snapshot(mut self, common: &Common) -> Value {
        let durability = self.durability.take();
        let mut v = serde_json::to_value(self).expect("statistics serialize");
        let t = common.times.snapshot();
        v["service_time_us"] = json!({
            "count": t.count,
            "min": t.min,
            "mean": t.mean,
            "median": t.p50,
            "p90": t.p90,
            "p99": t.p99,
            "max": t.max,
            "timed": t.timed,
            "sampled_one_in": t.sampled_one_in,
            "timing": t.timing,
        });
        v["connections"] = json!({
            "open": common.connections.active(),
            "opened": common.connections.accepted(),
        });
        if let Some(d) = durability {
            v["durability"] = serde_json::to_value(d).expect("statistics serialize");
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ops_are_the_methods_names() {
        let names: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(names, METHOD_NAMES);
    }

    /// Counts merge across threads; `/_/stats` adds the common service
    /// time and connections (the time quantiles' merging is tested with
    /// them, in `service_time`).
    #[test]
    fn counts_merge_across_threads() {
        let s = KvCounters::default();
        let common = Common::default();
        std::thread::scope(|scope| {
            for _ in 0..4u64 {
                let (s, common) = (&s, &common);
                scope.spawn(move || {
                    for _ in 0..100 {
                        let timer = common.times.start();
                        s.request(Method::Get, Status::Ok);
                        common.times.finish(timer);
                    }
                });
            }
        });
        let timer = common.times.start();
        s.request(Method::Put, Status::Created);
        common.times.finish(timer);
        s.status(Status::BadRequest);
        s.miss();
        common.connections.admit(u64::MAX);
        common.connections.admit(u64::MAX);
        common.connections.closed();
        let v = s.stats(7).snapshot(&common);
        assert_eq!(v["requests"]["total"], 401);
        assert_eq!(v["requests"]["GET"], 400);
        assert_eq!(v["requests"]["PUT"], 1);
        assert_eq!(v["statuses"]["200"], 400);
        assert_eq!(v["statuses"]["201"], 1);
        assert_eq!(v["statuses"]["400"], 1);
        assert_eq!(v["misses"], 1);
        assert_eq!(v["keys"], 7);
        assert_eq!(v["connections"], json!({"open": 1, "opened": 2}));
        let t = &v["service_time_us"];
        assert_eq!(t["count"], 401);
        for k in ["min", "mean", "median", "p90", "p99", "max"] {
            assert!(t[k].as_f64().is_some_and(|x| x > 0.0), "{k}: {t}");
        }
        let alone = serde_json::to_value(s.stats(0)).unwrap();
        assert!(alone.get("connections").is_none());
        assert!(alone.get("service_time_us").is_none());
    }
}
