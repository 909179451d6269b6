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
//! histograms (allocated on its first sample). Reading merges the stripes.
//!
//! The timed requests are recorded by operation ([`Service::OPS`]
//! (crate::Service::OPS), the names the protocol's request counters use):
//! a stripe keeps one histogram per operation it has timed, and which
//! operation a request is is asked of the service only when the request
//! is timed, so the requests not timed pay nothing for it. The histogram
//! of all timed requests — the one the final statistics and every other
//! view report — is the merge of every operation's, so it holds exactly
//! the samples it held before they were split. A histogram is about
//! 220 KiB (1 ns to 60 s at 3 significant digits), so a server holds at
//! most one per operation per stripe (32 stripes; a stripe per serving
//! thread below that): a board server on 4 threads timing all six of its
//! operations holds 24, about 5 MiB.

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
    /// This stripe's samples, by operation (index: the service's op;
    /// `None` until that op's first sample here). The mutex is
    /// uncontended unless more than `STRIPES` threads share stripes or a
    /// reader is merging, and is taken only for one sample in
    /// [`SAMPLED_ONE_IN`].
    times: Mutex<Vec<Option<Histogram<u64>>>>,
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
                        times: Mutex::new(Vec::new()),
                    })
                })
                .collect(),
        }
    }
}

/// A request being applied: its stripe, and if it is one of the timed,
/// its operation and when it started.
#[must_use]
pub struct Timer {
    stripe: usize,
    started: Option<(usize, Instant)>,
}

/// Timed requests as a cumulative histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct Cumulative {
    /// How many took at most each bound (ascending, to the histogram's 3
    /// significant digits).
    pub at_most: Vec<u64>,
    /// How many were timed.
    pub count: u64,
    /// Their total time, in nanoseconds.
    pub sum_ns: f64,
}

impl Cumulative {
    pub(crate) fn of(h: &Histogram<u64>, bounds_ns: &[u64]) -> Cumulative {
        Cumulative {
            at_most: bounds_ns.iter().map(|&b| h.count_between(0, b)).collect(),
            count: h.len(),
            sum_ns: if h.is_empty() {
                0.0
            } else {
                h.mean() * h.len() as f64
            },
        }
    }
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

    /// A request of operation 0 is about to be applied (see
    /// [`ServiceTimes::start_op`]).
    #[inline]
    pub fn start(&self) -> Timer {
        self.start_op(|| 0)
    }

    /// A request is about to be applied: if it is this thread's one in
    /// [`SAMPLED_ONE_IN`] (or every one, if so set), ask `op` which
    /// operation it is and start its clock. `op` is called for the timed
    /// requests only, before the clock starts.
    #[inline]
    pub fn start_op(&self, op: impl FnOnce() -> usize) -> Timer {
        let s = stripe();
        let n = self.stripes[s].applied.load(Ordering::Relaxed);
        let mask = self.mask.load(Ordering::Relaxed);
        Timer {
            stripe: s,
            started: (n & mask == 0).then(|| (op(), Instant::now())),
        }
    }

    /// The request is applied: count it (only now, so statistics a request
    /// reports about itself, kv's `/_/stats`, agree with the protocol's own
    /// counts), and record its time if it was timed.
    #[inline]
    pub fn finish(&self, timer: Timer) {
        if let Some((op, t0)) = timer.started {
            let ns = t0.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
            self.record_on(timer.stripe, op, ns);
        }
        self.stripes[timer.stripe]
            .applied
            .fetch_add(1, Ordering::Relaxed);
    }

    #[inline(never)]
    fn record_on(&self, stripe: usize, op: usize, ns: u64) {
        let mut by_op = self.stripes[stripe].times.lock();
        if by_op.len() <= op {
            by_op.resize_with(op + 1, || None);
        }
        by_op[op]
            .get_or_insert_with(new_histogram)
            .saturating_record(ns.max(1));
    }

    /// Requests applied so far.
    pub fn count(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.applied.load(Ordering::Relaxed))
            .sum()
    }

    /// Every timed request's time, all operations together.
    fn merged(&self) -> Histogram<u64> {
        let mut all = new_histogram();
        for stripe in self.stripes.iter() {
            for h in stripe.times.lock().iter().flatten() {
                all.add(h).expect("same bounds");
            }
        }
        all
    }

    /// The timed requests' times by operation (index: the op), each
    /// merged across the stripes; `None` for an op never timed.
    fn merged_by_op(&self) -> Vec<Option<Histogram<u64>>> {
        let mut by_op: Vec<Option<Histogram<u64>>> = Vec::new();
        for stripe in self.stripes.iter() {
            for (op, h) in stripe.times.lock().iter().enumerate() {
                let Some(h) = h else { continue };
                if by_op.len() <= op {
                    by_op.resize_with(op + 1, || None);
                }
                by_op[op]
                    .get_or_insert_with(new_histogram)
                    .add(h)
                    .expect("same bounds");
            }
        }
        by_op
    }

    /// The timed requests so far by operation, as cumulative histograms
    /// (for the metrics endpoint): for each op timed at least once, in op
    /// order, the op and its [`Cumulative`] at `bounds_ns`.
    pub fn cumulative_by_op(&self, bounds_ns: &[u64]) -> Vec<(usize, Cumulative)> {
        self.merged_by_op()
            .into_iter()
            .enumerate()
            .filter_map(|(op, h)| Some((op, Cumulative::of(&h?, bounds_ns))))
            .collect()
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
                        t.record_on(stripe(), 0, (th * 100 + i + 1) * 1000);
                    }
                });
            }
        });
        t.record_on(stripe(), 0, 1);
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

    /// Timed requests are recorded by the operation `start_op` names,
    /// asked only of the timed ones; the operations' histograms sum to
    /// the one every other view reports (the same count and quantiles as
    /// if they had not been split), and an op never timed has none.
    #[test]
    fn timed_requests_are_split_by_operation() {
        let t = ServiceTimes::default();
        let asked = AtomicU64::new(0);
        let ops = [0usize, 2, 2, 5, 2];
        // Three threads, one after another: should two share a stripe,
        // the second still starts on a multiple of 64.
        for _ in 0..3 {
            std::thread::scope(|scope| {
                scope.spawn(|| {
                    for i in 0..(SAMPLED_ONE_IN as usize * 10) {
                        let timer = t.start_op(|| {
                            asked.fetch_add(1, Ordering::Relaxed);
                            ops[(i / SAMPLED_ONE_IN as usize) % ops.len()]
                        });
                        t.finish(timer);
                    }
                });
            });
        }
        assert_eq!(asked.load(Ordering::Relaxed), 30, "asked only of the timed");
        let bounds = [1_000, 60_000_000_000];
        let by_op = t.cumulative_by_op(&bounds);
        let counts: Vec<(usize, u64)> = by_op.iter().map(|(op, c)| (*op, c.count)).collect();
        // Each thread timed its requests 0, 64, … 576: ops 0 2 2 5 2 twice.
        assert_eq!(counts, vec![(0, 6), (2, 18), (5, 6)]);
        for (_, c) in &by_op {
            assert_eq!(c.at_most[1], c.count, "every sample under a minute");
        }
        let s = t.snapshot();
        assert_eq!((s.count, s.timed), (3 * 10 * SAMPLED_ONE_IN, 30));
        let sum: f64 = by_op.iter().map(|(_, c)| c.sum_ns).sum();
        let all = t.merged();
        assert!((sum - all.mean() * all.len() as f64).abs() < 1.0, "{sum}");

        // Recorded directly: the all-ops histogram is the merge, exactly.
        let t = ServiceTimes::default();
        let mut one = new_histogram();
        for (i, ns) in [5_000u64, 7_000, 9_000, 11_000, 2_000_000]
            .iter()
            .enumerate()
        {
            t.record_on(stripe(), i % 3, *ns);
            one.record(*ns).unwrap();
        }
        assert_eq!(t.merged(), one);
        let s = t.snapshot();
        assert_eq!((s.timed, s.min), (5, 5.0));
        assert!((s.max - 2000.0).abs() < 2.0, "{}", s.max);
    }
}
