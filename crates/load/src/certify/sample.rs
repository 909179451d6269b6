//! What a run keeps for its verdict, in bounded memory however long it
//! runs: a thinned, time-ordered series of replies (each kept reply's
//! latency and the next reply's, for the correlation of neighbours), a
//! thinned sample of the gaps between a client's actual sends, and a
//! histogram of how late requests went out. One per event loop; merged
//! at the end.
//!
//! Thinning: every `stride`-th value is kept; when [`CAP`] are kept,
//! every other one is dropped and the stride doubles — so between
//! `CAP/2` and `CAP` values, evenly spread over the run.

use crate::record::new_histogram;
use hdrhistogram::Histogram;

/// The most values a thinned list keeps.
pub const CAP: usize = 4096;
const _: () = assert!(CAP.is_multiple_of(2));

/// A kept reply.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// When it arrived, ns from the window's start.
    pub at_ns: u64,
    pub latency_ns: u64,
    /// The latency of the loop's next reply, once it came.
    pub next_ns: Option<u64>,
}

/// Every `stride`-th value offered, at most [`CAP`].
#[derive(Debug, Clone)]
pub struct Thinned<T> {
    pub values: Vec<T>,
    stride: u64,
    seen: u64,
}

impl<T> Default for Thinned<T> {
    fn default() -> Self {
        Thinned {
            values: Vec::new(),
            stride: 1,
            seen: 0,
        }
    }
}

impl<T> Thinned<T> {
    /// Offer the next value; true when it was kept (and still is: the
    /// value that fills the list is dropped with every other one).
    pub fn offer(&mut self, v: T) -> bool {
        let keep = self.seen.is_multiple_of(self.stride);
        self.seen += 1;
        if !keep {
            return false;
        }
        self.values.push(v);
        if self.values.len() >= CAP {
            let mut i = 0;
            self.values.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.stride *= 2;
            // CAP is even: the last, at an odd index, went.
            return false;
        }
        true
    }

    /// Values offered, kept or not.
    pub fn seen(&self) -> u64 {
        self.seen
    }
}

/// One loop's sample.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    pub replies: Thinned<Point>,
    /// The last reply was kept: the next one's latency completes it.
    pending_next: bool,
    /// Gaps between a client's consecutive actual sends, ns.
    pub send_gaps: Thinned<u64>,
    /// Open loop: how late each recorded request went out, ns (from its
    /// intended send time); made at the first (a closed loop has none,
    /// and makes none: a histogram is a quarter of a megabyte).
    pub send_lag_ns: Option<Histogram<u64>>,
}

impl Sample {
    /// A reply recorded at `at_ns` into the window, `latency_ns` long.
    pub fn reply(&mut self, at_ns: u64, latency_ns: u64) {
        if std::mem::take(&mut self.pending_next) {
            if let Some(last) = self.replies.values.last_mut() {
                last.next_ns = Some(latency_ns);
            }
        }
        self.pending_next = self.replies.offer(Point {
            at_ns,
            latency_ns,
            next_ns: None,
        });
    }

    /// An open-loop request that went out `lag_ns` after it was due.
    pub fn lag(&mut self, lag_ns: u64) {
        self.send_lag_ns
            .get_or_insert_with(new_histogram)
            .saturating_record(lag_ns.max(1));
    }

    pub fn send_gap(&mut self, gap_ns: u64) {
        self.send_gaps.offer(gap_ns);
    }
}

/// The loops' samples as one: their replies in time order, thinned to at
/// most [`CAP`]; their gaps, thinned alike; their lags added.
#[derive(Debug, Clone)]
pub struct Merged {
    pub replies: Vec<Point>,
    /// Replies offered in all (kept or not).
    pub replies_seen: u64,
    pub send_gaps: Vec<u64>,
    pub send_lag_ns: Histogram<u64>,
}

impl Sample {
    /// Take in another loop's sample (what it kept, unsorted: see
    /// [`Sample::merged`]).
    pub fn absorb(&mut self, other: &Sample) {
        self.replies.values.extend_from_slice(&other.replies.values);
        self.replies.seen += other.replies.seen;
        self.send_gaps
            .values
            .extend_from_slice(&other.send_gaps.values);
        self.send_gaps.seen += other.send_gaps.seen;
        if let Some(theirs) = &other.send_lag_ns {
            self.send_lag_ns
                .get_or_insert_with(new_histogram)
                .add(theirs)
                .expect("same bounds");
        }
    }

    /// What the loops kept, as one series (after [`Sample::absorb`]).
    pub fn merged(&self) -> Merged {
        let mut replies = self.replies.values.clone();
        replies.sort_by_key(|p| p.at_ns);
        Merged {
            replies: every_kth(replies),
            replies_seen: self.replies.seen,
            send_gaps: every_kth(self.send_gaps.values.clone()),
            send_lag_ns: self.send_lag_ns.clone().unwrap_or_else(new_histogram),
        }
    }
}

/// At most [`CAP`] of `v`, evenly spread.
fn every_kth<T>(v: Vec<T>) -> Vec<T> {
    let k = v.len().div_ceil(CAP).max(1);
    v.into_iter().step_by(k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_run_keeps_a_bounded_evenly_thinned_series_with_each_points_neighbour() {
        let mut s = Sample::default();
        let n = 100_000u64;
        for i in 0..n {
            s.reply(i * 1000, i);
        }
        let kept = &s.replies.values;
        assert!(kept.len() >= CAP / 2 && kept.len() < CAP, "{}", kept.len());
        let stride = kept[1].latency_ns - kept[0].latency_ns;
        assert!(stride.is_power_of_two() && stride > 1);
        for w in kept.windows(2) {
            assert_eq!(w[1].latency_ns - w[0].latency_ns, stride);
        }
        for p in &kept[..kept.len() - 1] {
            assert_eq!(p.next_ns, Some(p.latency_ns + 1));
        }
        assert_eq!(s.replies.seen(), n);
        let mut both = Sample::default();
        both.absorb(&s);
        both.absorb(&s);
        let m = both.merged();
        assert!(m.replies.len() <= CAP);
        assert_eq!(m.replies_seen, 2 * n);
        assert!(m.replies.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
    }
}
