//! Latency per second of the window: each loop keeps one histogram per
//! operation (and, open loop, per view) for the second under way, and
//! when a reply falls in a later second it keeps the finished one as its
//! non-empty buckets only — a second's worth of memory, however long the
//! run. After the run the loops' seconds are merged, second by second,
//! into the per-second latency of the results and the HDR interval log.

use crate::record::new_histogram;
use hdrhistogram::Histogram;
use std::time::{Duration, SystemTime};

/// Which clock a histogram's values count from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum View {
    /// From the intended send time (closed loop: from the send).
    Latency,
    /// Open loop: from the actual send.
    Service,
}

/// One operation's histogram for one second, as its non-empty buckets:
/// (a value in the bucket, its count).
#[derive(Debug, Clone)]
pub struct Second {
    pub second: usize,
    pub view: View,
    pub op: usize,
    pub buckets: Vec<(u64, u64)>,
}

/// One loop's per-second histograms.
pub struct Intervals {
    current: usize,
    latency: Vec<Histogram<u64>>,
    service: Option<Vec<Histogram<u64>>>,
    pub done: Vec<Second>,
}

/// A histogram's non-empty buckets: (a value in each, its count).
pub fn buckets(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    h.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

impl Intervals {
    pub fn new(ops: usize, open: bool) -> Self {
        Intervals {
            current: 0,
            latency: (0..ops).map(|_| new_histogram()).collect(),
            service: open.then(|| (0..ops).map(|_| new_histogram()).collect()),
            done: Vec::new(),
        }
    }

    /// The second under way.
    pub fn current(&self) -> usize {
        self.current
    }

    /// A reply in second `sec` of the window (never earlier than the last:
    /// a loop's clock only moves on).
    pub fn record(&mut self, sec: usize, op: usize, latency_ns: u64, service_ns: Option<u64>) {
        if sec != self.current {
            self.close();
            self.current = sec;
        }
        self.latency[op].saturating_record(latency_ns);
        if let (Some(s), Some(v)) = (self.service.as_mut(), service_ns) {
            s[op].saturating_record(v);
        }
    }

    /// Keep the second under way (at the end of the run).
    pub fn close(&mut self) {
        let views = [
            (View::Latency, Some(&mut self.latency)),
            (View::Service, self.service.as_mut()),
        ];
        for (view, hists) in views {
            for (op, h) in hists.into_iter().flat_map(|v| v.iter_mut().enumerate()) {
                if h.is_empty() {
                    continue;
                }
                self.done.push(Second {
                    second: self.current,
                    view,
                    op,
                    buckets: buckets(h),
                });
                h.reset();
            }
        }
    }
}

/// Every loop's seconds, merged: calls `f` once per (second, view, op)
/// that has replies, in that order, with their histogram.
pub fn merge(loops: Vec<Intervals>, mut f: impl FnMut(usize, View, usize, &Histogram<u64>)) {
    let mut all: Vec<Second> = loops
        .into_iter()
        .flat_map(|mut i| {
            i.close();
            i.done
        })
        .collect();
    all.sort_by_key(|s| (s.second, s.view, s.op));
    let mut scratch = new_histogram();
    let mut i = 0;
    while i < all.len() {
        let key = (all[i].second, all[i].view, all[i].op);
        scratch.reset();
        while i < all.len() && (all[i].second, all[i].view, all[i].op) == key {
            for &(value, count) in &all[i].buckets {
                scratch.saturating_record_n(value, count);
            }
            i += 1;
        }
        f(key.0, key.1, key.2, &scratch);
    }
}

/// An HdrHistogram interval log: intervals (a histogram each, tagged)
/// and comments, timed from `base` ([`crate::output::hdrlog`] writes it).
#[derive(Debug, Clone)]
pub struct IntervalLog {
    /// The wall-clock time interval timestamps count from.
    pub base: SystemTime,
    pub entries: Vec<LogEntry>,
}

#[derive(Debug, Clone)]
pub enum LogEntry {
    Comment(String),
    Interval {
        /// From the log's base.
        start: Duration,
        length: Duration,
        tag: String,
        /// Nanoseconds, as [`Second::buckets`].
        buckets: Vec<(u64, u64)>,
    },
}

impl IntervalLog {
    pub fn new(base: SystemTime) -> Self {
        IntervalLog {
            base,
            entries: Vec::new(),
        }
    }

    pub fn comment(&mut self, text: String) {
        self.entries.push(LogEntry::Comment(text));
    }

    /// An interval of `length` from `start` (from the base), its
    /// histogram given by its non-empty buckets.
    pub fn push(
        &mut self,
        start: Duration,
        length: Duration,
        tag: String,
        buckets: Vec<(u64, u64)>,
    ) {
        self.entries.push(LogEntry::Interval {
            start,
            length,
            tag,
            buckets,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_merge_across_loops_in_order() {
        let mut a = Intervals::new(2, true);
        a.record(0, 0, 1_000, Some(500));
        a.record(0, 1, 2_000, Some(700));
        a.record(2, 0, 3_000, Some(900));
        let mut b = Intervals::new(2, true);
        b.record(0, 0, 4_000, Some(100));
        b.record(1, 1, 5_000, None);
        let mut seen = Vec::new();
        merge(vec![a, b], |sec, view, op, h| {
            seen.push((sec, view, op, h.len(), h.max() / 1000));
        });
        use View::*;
        assert_eq!(
            seen,
            [
                (0, Latency, 0, 2, 4),
                (0, Latency, 1, 1, 2),
                (0, Service, 0, 2, 0),
                (0, Service, 1, 1, 0),
                (1, Latency, 1, 1, 5),
                (2, Latency, 0, 1, 3),
                (2, Service, 0, 1, 0),
            ]
        );
    }
}
