//! Service time, measured the same way for every protocol: the time
//! [`Service::apply`](crate::Service::apply) takes, from a complete request
//! to its reply appended (the store and the encoding; no I/O, no queueing,
//! no requested delay).
//!
//! Every applied request is counted; one in [`SAMPLED_ONE_IN`] per thread
//! is timed. Two clock reads (about 40 ns with the TSC clock) cost as much
//! as a board READ's whole service work (`cargo bench -p
//! serverlab-service`), and a pipelined board request costs the server
//! under a microsecond in all, so timing every request would change what
//! is measured; one in 64 still gives tens of thousands of samples per
//! second of load, at well under a nanosecond per request. The quantiles,
//! and the maximum above all, are then a sample's: every view of them
//! says so ("sampled 1 in 64", [`timing`]).
//!
//! [`ServiceTimes::time_every_request`] (`serve --time-all`) times every
//! request instead: the rare maximum is then the true one, at the price of
//! two clock reads and a histogram record per request (an uncontended
//! lock, since each thread records on its own stripe). What that costs a
//! server's throughput is measured in docs/measuring.md.
//!
//! Nothing is shared between threads on the hot path: each thread counts
//! on its own stripe (a cache-padded counter) and records into its own
//! histogram (allocated on its first sample). Reading merges the stripes.

use crate::stats::{stripe, STRIPES};
use crossbeam_utils::CachePadded;
use hdrhistogram::Histogram;
use parking_lot::Mutex;
use serverlab_util::server_stats::ServiceTime;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Each thread times one applied request in this many (a power of two, so
/// the choice is a mask).
pub const SAMPLED_ONE_IN: u64 = 64;
const _: () = assert!(SAMPLED_ONE_IN.is_power_of_two());

/// Recorded in nanoseconds, 3 significant digits, up to a minute (longer
/// saturates).
fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid histogram bounds")
}

struct Stripe {
    /// Requests applied on this stripe. `Relaxed`: a statistic, and the
    /// sampling decision only needs each thread's own count.
    applied: AtomicU64,
    /// This stripe's samples. The mutex is uncontended unless more than
    /// `STRIPES` threads share stripes or a reader is merging, and is taken
    /// only for one sample in [`SAMPLED_ONE_IN`].
    times: Mutex<Option<Histogram<u64>>>,
}

pub struct ServiceTimes {
    stripes: Box<[CachePadded<Stripe>]>,
    /// A request is timed when its thread's count masked by this is zero:
    /// `SAMPLED_ONE_IN - 1`, or 0 to time every request. Set before the
    /// server serves and never again, so `Relaxed`: read-mostly, it stays
    /// in every core's cache.
    mask: AtomicU64,
}

/// How service time is sampled, in words: "sampled 1 in 64", or "every
/// request timed".
pub fn timing(sampled_one_in: u64) -> String {
    serverlab_util::server_stats::timing(sampled_one_in)
}

impl Default for ServiceTimes {
    fn default() -> Self {
        ServiceTimes {
            mask: AtomicU64::new(SAMPLED_ONE_IN - 1),
            stripes: (0..STRIPES)
                .map(|_| {
                    CachePadded::new(Stripe {
                        applied: AtomicU64::new(0),
                        times: Mutex::new(None),
                    })
                })
                .collect(),
        }
    }
}

/// A request being applied: its stripe, and when it started if it is one
/// of the timed.
#[must_use]
pub struct Timer {
    stripe: usize,
    started: Option<Instant>,
}

impl ServiceTimes {
    /// Time every request from now on, not one in [`SAMPLED_ONE_IN`]
    /// (`serve --time-all`; called before the server serves).
    pub fn time_every_request(&self) {
        self.mask.store(0, Ordering::Relaxed);
    }

    /// Each thread times one request in this many.
    pub fn sampled_one_in(&self) -> u64 {
        self.mask.load(Ordering::Relaxed) + 1
    }

    /// A request is about to be applied: start its clock if it is this
    /// thread's one in [`SAMPLED_ONE_IN`] (or every one, if so set).
    #[inline]
    pub fn start(&self) -> Timer {
        let s = stripe();
        let n = self.stripes[s].applied.load(Ordering::Relaxed);
        let mask = self.mask.load(Ordering::Relaxed);
        Timer {
            stripe: s,
            started: (n & mask == 0).then(Instant::now),
        }
    }

    /// The request is applied: count it (only now, so statistics a request
    /// reports about itself, kv's `/_/stats`, agree with the protocol's own
    /// counts), and record its time if it was timed.
    #[inline]
    pub fn finish(&self, timer: Timer) {
        if let Some(t0) = timer.started {
            let ns = t0.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
            self.record_on(timer.stripe, ns);
        }
        self.stripes[timer.stripe]
            .applied
            .fetch_add(1, Ordering::Relaxed);
    }

    fn record_on(&self, stripe: usize, ns: u64) {
        let mut h = self.stripes[stripe].times.lock();
        h.get_or_insert_with(new_histogram)
            .saturating_record(ns.max(1));
    }

    /// Requests applied so far.
    pub fn count(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.applied.load(Ordering::Relaxed))
            .sum()
    }

    fn merged(&self) -> Histogram<u64> {
        let mut all = new_histogram();
        for stripe in self.stripes.iter() {
            if let Some(h) = stripe.times.lock().as_ref() {
                all.add(h).expect("same bounds");
            }
        }
        all
    }

    /// The timed requests so far as a cumulative histogram (for the
    /// metrics endpoint): how many took at most each of `bounds_ns`
    /// (ascending, to the histogram's 3 significant digits), how many were
    /// timed, and their total in nanoseconds.
    pub fn cumulative(&self, bounds_ns: &[u64]) -> (Vec<u64>, u64, f64) {
        let h = self.merged();
        let at_most = bounds_ns.iter().map(|&b| h.count_between(0, b)).collect();
        let total = if h.is_empty() {
            0.0
        } else {
            h.mean() * h.len() as f64
        };
        (at_most, h.len(), total)
    }

    /// The statistics so far, in microseconds (to the nanosecond).
    pub fn snapshot(&self) -> ServiceTime {
        let h = self.merged();
        let us = |ns: f64| (ns).round() / 1000.0;
        let q = |q: f64| us(h.value_at_quantile(q) as f64);
        let empty = h.is_empty();
        ServiceTime {
            count: self.count(),
            timed: h.len(),
            sampled_one_in: self.sampled_one_in(),
            timing: timing(self.sampled_one_in()),
            min: if empty { 0.0 } else { us(h.min() as f64) },
            mean: if empty { 0.0 } else { us(h.mean()) },
            p50: if empty { 0.0 } else { q(0.5) },
            p90: if empty { 0.0 } else { q(0.9) },
            p99: if empty { 0.0 } else { q(0.99) },
            max: if empty { 0.0 } else { us(h.max() as f64) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples recorded on many threads merge into one set of quantiles
    /// (moved here from the kv statistics, which kept their own).
    #[test]
    fn times_merge_across_threads() {
        let t = ServiceTimes::default();
        std::thread::scope(|scope| {
            for th in 0..4u64 {
                let t = &t;
                scope.spawn(move || {
                    for i in 0..100 {
                        t.record_on(stripe(), (th * 100 + i + 1) * 1000);
                    }
                });
            }
        });
        t.record_on(stripe(), 1);
        let s = t.snapshot();
        assert_eq!(s.timed, 401);
        assert_eq!(s.min, 0.001);
        assert!((s.max - 400.0).abs() < 0.5, "{}", s.max);
        assert!((s.p50 - 200.0).abs() < 1.5, "{}", s.p50);
        assert!((s.p90 - 360.0).abs() < 1.5, "{}", s.p90);
        assert!(s.min <= s.p50 && s.p50 <= s.p99 && s.p99 <= s.max);
    }

    /// Every request is counted; one in SAMPLED_ONE_IN per thread is
    /// timed, the first included, so even one request has a time.
    #[test]
    fn counts_every_request_and_times_a_sample() {
        let t = ServiceTimes::default();
        assert_eq!(t.snapshot().count, 0);
        assert_eq!(t.snapshot().max, 0.0);
        let n = 3 * SAMPLED_ONE_IN + 1;
        for _ in 0..n {
            let timer = t.start();
            t.finish(timer);
        }
        let s = t.snapshot();
        assert_eq!(s.count, n);
        assert_eq!(s.timed, 4, "requests 0, 64, 128 and 192 of this thread");
        assert_eq!(s.sampled_one_in, SAMPLED_ONE_IN);
        assert_eq!(s.timing, "sampled 1 in 64");
        assert!(s.max > 0.0);
    }

    /// Set to time every request, it does.
    #[test]
    fn timing_every_request_times_every_request() {
        let t = ServiceTimes::default();
        t.time_every_request();
        for _ in 0..100 {
            let timer = t.start();
            t.finish(timer);
        }
        let s = t.snapshot();
        assert_eq!((s.count, s.timed, s.sampled_one_in), (100, 100, 1));
        assert_eq!(s.timing, "every request timed");
    }
}
