//! Worker busy time: how long a worker of a reactor strategy
//! (`pool-locked`, `pool-lockfree`, `thread-per-request`) holds each
//! request — from taking the ready connection off its queue to returning
//! it, with the read, the framing, the delay, the apply and the write in
//! between — which is the request's service time as a queue sees it.
//! [`crate::service_time`] is a part of it (the apply alone).
//!
//! A worker's run of a connection answers one request, or a few buffered
//! together (up to the strategy's budget): a run of `n` requests that took
//! `d` records `d / n` for each, so the recorded times sum to the time the
//! worker was busy. A run that answered none (a connection that closed, a
//! request not yet whole) is busy time too, charged to no request: its
//! count and total are reported apart ("unanswered runs").
//!
//! Cheap and bounded, as [`crate::service_time`] is: every run is counted;
//! one in [`SAMPLED_ONE_IN`] per thread is timed (`serve --time-all`: every
//! one), on the thread's own stripe, into a histogram of 2 significant
//! digits (under 1% apart; about 40 KiB, one per stripe used). A run costs
//! at least a read and a write system call, so two clock reads on the
//! timed ones are well under 1% of it.

use crate::service_time::{Cumulative, SAMPLED_ONE_IN};
use crate::stats::{stripe, STRIPES};
use crossbeam_utils::CachePadded;
use hdrhistogram::Histogram;
use parking_lot::Mutex;
use serverlab_util::server_stats::{timing, WorkerBusy};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Nanoseconds, 2 significant digits, up to a minute (longer saturates).
fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 2).expect("valid histogram bounds")
}

#[derive(Default)]
struct Stripe {
    /// Runs on this stripe (the sampling counts them).
    runs: AtomicU64,
    /// Requests those runs answered.
    answered: AtomicU64,
    /// The timed runs' record.
    timed: Mutex<Timed>,
}

#[derive(Default)]
struct Timed {
    /// Each timed request's share of its run, ns (`None` until the first).
    per_request: Option<Histogram<u64>>,
    /// Timed runs that answered no request, and their total time (ns).
    unanswered_runs: u64,
    unanswered_ns: u64,
}

/// Every worker's busy time; each service's [`crate::Common`] holds one.
pub struct BusyTimes {
    stripes: Box<[CachePadded<Stripe>]>,
    /// A run is timed when its thread's run count masked by this is zero
    /// (see [`crate::service_time::ServiceTimes`]).
    mask: AtomicU64,
}

impl Default for BusyTimes {
    fn default() -> Self {
        BusyTimes {
            stripes: (0..STRIPES).map(|_| CachePadded::default()).collect(),
            mask: AtomicU64::new(SAMPLED_ONE_IN - 1),
        }
    }
}

/// A worker's run of a connection under way: its stripe, and when it
/// started if it is timed.
#[must_use]
pub struct BusyTimer {
    stripe: usize,
    started: Option<Instant>,
}

impl BusyTimes {
    /// Time every run from now on (`serve --time-all`).
    pub fn time_every_run(&self) {
        self.mask.store(0, Ordering::Relaxed);
    }

    /// A worker takes a connection to run it.
    #[inline]
    pub fn start(&self) -> BusyTimer {
        let s = stripe();
        let n = self.stripes[s].runs.load(Ordering::Relaxed);
        BusyTimer {
            stripe: s,
            started: (n & self.mask.load(Ordering::Relaxed) == 0).then(Instant::now),
        }
    }

    /// The run is over, having answered `answered` requests.
    #[inline]
    pub fn finish(&self, timer: BusyTimer, answered: u64) {
        let stripe = &self.stripes[timer.stripe];
        if let Some(t0) = timer.started {
            let ns = t0.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
            self.record(timer.stripe, ns, answered);
        }
        stripe.runs.fetch_add(1, Ordering::Relaxed);
        stripe.answered.fetch_add(answered, Ordering::Relaxed);
    }

    #[inline(never)]
    fn record(&self, stripe: usize, ns: u64, answered: u64) {
        let mut t = self.stripes[stripe].timed.lock();
        match ns.checked_div(answered) {
            Some(each) => t
                .per_request
                .get_or_insert_with(new_histogram)
                .saturating_record_n(each.max(1), answered),
            None => {
                t.unanswered_runs += 1;
                t.unanswered_ns = t.unanswered_ns.saturating_add(ns);
            }
        }
    }

    /// Runs so far.
    fn runs(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.runs.load(Ordering::Relaxed))
            .sum()
    }

    /// The timed requests' histogram, and the timed runs that answered
    /// none (their count and total time, ns), merged across the stripes.
    fn merged(&self) -> (Histogram<u64>, u64, u64) {
        let (mut h, mut unanswered_runs, mut unanswered_ns) = (new_histogram(), 0, 0u64);
        for s in self.stripes.iter() {
            let t = s.timed.lock();
            if let Some(p) = &t.per_request {
                h.add(p).expect("same bounds");
            }
            unanswered_runs += t.unanswered_runs;
            unanswered_ns = unanswered_ns.saturating_add(t.unanswered_ns);
        }
        (h, unanswered_runs, unanswered_ns)
    }

    /// The statistics so far; `None` if no worker ran (a strategy
    /// without reactor workers never does).
    pub fn snapshot(&self) -> Option<WorkerBusy> {
        let runs = self.runs();
        if runs == 0 {
            return None;
        }
        let (h, unanswered_runs, unanswered_ns) = self.merged();
        let sampled_one_in = self.mask.load(Ordering::Relaxed) + 1;
        Some(summary(
            &h,
            runs,
            self.answered(),
            sampled_one_in,
            unanswered_runs,
            unanswered_ns,
        ))
    }

    /// The timed requests so far as a cumulative histogram at `bounds_ns`
    /// (for the metrics endpoint); `None` if no worker ran.
    pub fn cumulative(&self, bounds_ns: &[u64]) -> Option<Cumulative> {
        (self.runs() > 0).then(|| Cumulative::of(&self.merged().0, bounds_ns))
    }

    /// Requests answered by workers' runs so far.
    pub fn answered(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.answered.load(Ordering::Relaxed))
            .sum()
    }
}

/// Nanoseconds as microseconds, to the nanosecond.
fn us(ns: f64) -> f64 {
    ns.round() / 1000.0
}

fn summary(
    h: &Histogram<u64>,
    runs: u64,
    count: u64,
    sampled_one_in: u64,
    unanswered_runs: u64,
    unanswered_ns: u64,
) -> WorkerBusy {
    let empty = h.is_empty();
    let at = |v: f64| if empty { 0.0 } else { us(v) };
    WorkerBusy {
        count,
        timed: h.len(),
        runs,
        sampled_one_in,
        timing: timing(sampled_one_in),
        min: at(h.min() as f64),
        mean: at(h.mean()),
        p50: at(h.value_at_quantile(0.5) as f64),
        p90: at(h.value_at_quantile(0.9) as f64),
        p99: at(h.value_at_quantile(0.99) as f64),
        max: at(h.max() as f64),
        unanswered_runs_timed: unanswered_runs,
        unanswered_runs_us: us(unanswered_ns as f64),
        histogram: h
            .iter_recorded()
            .map(|v| {
                let at = h.median_equivalent(v.value_iterated_to());
                (us(at as f64), v.count_at_value())
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of n requests gives each its nth of the run; a run that
    /// answered none is counted apart; the histogram holds every timed
    /// request, at its bucket's middle, summing to the count timed.
    #[test]
    fn runs_are_shared_among_their_requests() {
        let b = BusyTimes::default();
        assert!(b.snapshot().is_none(), "no worker ran");
        assert!(b.cumulative(&[1]).is_none());
        b.time_every_run();
        b.record(stripe(), 3_000_000, 3);
        b.record(stripe(), 2_000_000, 1);
        b.record(stripe(), 500_000, 0);
        for _ in 0..3 {
            let t = b.start();
            b.finish(t, 1);
        }
        let s = b.snapshot().expect("runs");
        assert_eq!((s.runs, s.count, s.timed), (3, 3, 4 + 3));
        assert_eq!((s.unanswered_runs_timed, s.sampled_one_in), (1, 1));
        assert_eq!(s.unanswered_runs_us, 500.0);
        assert_eq!(s.timing, "every request timed");
        let at_1ms: u64 = s
            .histogram
            .iter()
            .filter(|(v, _)| (v - 1000.0).abs() < 10.0)
            .map(|(_, n)| n)
            .sum();
        assert_eq!(at_1ms, 3, "{:?}", s.histogram);
        assert!((s.max - 2000.0).abs() < 20.0, "{}", s.max);
        let total: u64 = s.histogram.iter().map(|(_, n)| n).sum();
        assert_eq!(total, s.timed);
        let c = b.cumulative(&[1_100_000, 60_000_000_000]).expect("runs");
        assert_eq!((c.count, c.at_most[1]), (7, 7));
        assert_eq!(c.at_most[0], 6, "all but the 2 ms one");
    }

    /// By default one run in SAMPLED_ONE_IN per thread is timed, the
    /// first included; every run and request is counted.
    #[test]
    fn counts_every_run_and_times_a_sample() {
        let b = BusyTimes::default();
        for _ in 0..(2 * SAMPLED_ONE_IN + 1) {
            let t = b.start();
            b.finish(t, 2);
        }
        let s = b.snapshot().expect("runs");
        assert_eq!(
            (s.runs, s.count),
            (2 * SAMPLED_ONE_IN + 1, 4 * SAMPLED_ONE_IN + 2)
        );
        assert_eq!(s.timed, 3 * 2, "runs 0, 64 and 128, two requests each");
        assert_eq!(s.timing, "sampled 1 in 64");
    }
}
