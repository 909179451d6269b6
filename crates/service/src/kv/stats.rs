//! The kv server's statistics: counts per method and status, misses,
//! connections, and service times in an HdrHistogram.
//!
//! Nothing here is shared between request threads on the hot path: counts
//! go to the calling thread's stripe of [`Counters`], and service times to
//! the calling thread's own histogram (one per stripe, allocated on first
//! use). Reading (`/_/stats`, the final report) merges the stripes, so the
//! statistics never become the bottleneck they measure.

use crate::stats::{stripe, Counters, STRIPES};
use crossbeam_utils::CachePadded;
use hdrhistogram::Histogram;
use parking_lot::Mutex;
use serde_json::{json, Map, Value};
use serverlab_proto::kv::{Method, Status};

// Counter slots: methods, then statuses, then these.
const STATUS_BASE: usize = Method::ALL.len();
const MISSES: usize = STATUS_BASE + Status::ALL.len();
const OPENED: usize = MISSES + 1;
const CLOSED: usize = MISSES + 2;
const SLOTS: usize = MISSES + 3;

/// Service times are recorded in nanoseconds, 3 significant digits, up to
/// a minute (longer ones saturate).
fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid histogram bounds")
}

/// One thread's service times, allocated on its first record.
type TimeStripe = CachePadded<Mutex<Option<Histogram<u64>>>>;

pub struct KvStats {
    counters: Counters<SLOTS>,
    /// One histogram per stripe. The mutex is uncontended unless more than
    /// `STRIPES` threads record at once, or a reader is merging: a plain
    /// lock is then the simplest correct choice, and it is never held
    /// across anything but one record or one merge step.
    times: Box<[TimeStripe]>,
}

impl Default for KvStats {
    fn default() -> Self {
        KvStats {
            counters: Counters::default(),
            times: (0..STRIPES)
                .map(|_| CachePadded::new(Mutex::new(None)))
                .collect(),
        }
    }
}

fn slot_of<T: PartialEq>(all: &[T], x: &T) -> usize {
    all.iter()
        .position(|y| y == x)
        .expect("every value has a slot")
}

impl KvStats {
    /// A request of `method` was answered with `status`, taking
    /// `service_ns` to apply.
    pub fn request(&self, method: Method, status: Status, service_ns: u64) {
        self.counters.add(slot_of(&Method::ALL, &method), 1);
        self.status(status);
        let mut h = self.times[stripe()].lock();
        h.get_or_insert_with(new_histogram)
            .saturating_record(service_ns.max(1));
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

    pub fn opened(&self) {
        self.counters.add(OPENED, 1);
    }

    pub fn closed(&self) {
        self.counters.add(CLOSED, 1);
    }

    fn merged_times(&self) -> Histogram<u64> {
        let mut all = new_histogram();
        for stripe in self.times.iter() {
            if let Some(h) = stripe.lock().as_ref() {
                all.add(h).expect("same bounds");
            }
        }
        all
    }

    /// Everything but connections, as the final report shows it (the
    /// server reports its own connection statistics there).
    pub fn report(&self, keys: usize) -> Value {
        let mut requests = Map::new();
        let total: u64 = (0..Method::ALL.len()).map(|i| self.counters.get(i)).sum();
        requests.insert("total".into(), total.into());
        for (i, m) in Method::ALL.iter().enumerate() {
            requests.insert(m.name().into(), self.counters.get(i).into());
        }
        let mut statuses = Map::new();
        for (i, s) in Status::ALL.iter().enumerate() {
            statuses.insert(
                s.code().to_string(),
                self.counters.get(STATUS_BASE + i).into(),
            );
        }
        let h = self.merged_times();
        let us = |ns: u64| (ns as f64 / 10.0).round() / 100.0;
        let times = if h.is_empty() {
            json!({ "count": 0, "min": 0.0, "mean": 0.0, "median": 0.0, "p99": 0.0, "max": 0.0 })
        } else {
            json!({
                "count": h.len(),
                "min": us(h.min()),
                "mean": (h.mean() / 10.0).round() / 100.0,
                "median": us(h.value_at_quantile(0.5)),
                "p99": us(h.value_at_quantile(0.99)),
                "max": us(h.max()),
            })
        };
        json!({
            "requests": requests,
            "statuses": statuses,
            "misses": self.counters.get(MISSES),
            "keys": keys,
            "service_time_us": times,
        })
    }

    /// What `GET /_/stats` answers: the report plus connections.
    pub fn snapshot(&self, keys: usize) -> Value {
        let mut v = self.report(keys);
        let (opened, closed) = (self.counters.get(OPENED), self.counters.get(CLOSED));
        v["connections"] = json!({
            "open": opened.saturating_sub(closed),
            "opened": opened,
        });
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_times_merge_across_threads() {
        let s = KvStats::default();
        std::thread::scope(|scope| {
            for t in 0..4u64 {
                let s = &s;
                scope.spawn(move || {
                    for i in 0..100 {
                        s.request(Method::Get, Status::Ok, (t * 100 + i + 1) * 1000);
                    }
                });
            }
        });
        s.request(Method::Put, Status::Created, 1);
        s.status(Status::BadRequest);
        s.miss();
        s.opened();
        s.opened();
        s.closed();
        let v = s.snapshot(7);
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
        assert_eq!(t["min"], 0.0);
        let max = t["max"].as_f64().unwrap();
        assert!((max - 400.0).abs() < 0.5, "{max}");
        let median = t["median"].as_f64().unwrap();
        assert!((median - 200.0).abs() < 1.5, "{median}");
        assert!(s.report(0).get("connections").is_none());
    }
}
