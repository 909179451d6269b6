//! Per-worker measurement: latency histograms per operation and a count of
//! completions per second. Workers never share a recorder; they merge once
//! at the end, so recording costs no synchronisation.

use hdrhistogram::Histogram;
use std::time::{Duration, Instant};

/// Latencies are recorded in nanoseconds, 3 significant digits, up to an
/// hour (longer ones saturate).
fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds")
}

pub struct OpRecord {
    pub count: u64,
    pub latency_ns: Histogram<u64>,
}

pub struct Recorder {
    start: Instant,
    window: Option<Duration>,
    pub ops: Vec<OpRecord>,
    pub per_second: Vec<u64>,
    /// Replies that arrived after the measured window (drained, and
    /// checked if the run verifies, but not counted).
    pub late: u64,
}

impl Recorder {
    /// A recorder for `ops` operation kinds. Completions after `window`
    /// (when given) are not counted.
    pub fn new(ops: usize, start: Instant, window: Option<Duration>) -> Self {
        Recorder {
            start,
            window,
            ops: (0..ops)
                .map(|_| OpRecord {
                    count: 0,
                    latency_ns: new_histogram(),
                })
                .collect(),
            per_second: Vec::new(),
            late: 0,
        }
    }

    /// Whether a reply received at `done` counts (falls in the window).
    pub fn in_window(&self, done: Instant) -> bool {
        self.window
            .is_none_or(|w| done.saturating_duration_since(self.start) < w)
    }

    /// One request of kind `op`, timed from `from` (when it was sent, or
    /// when it was due), answered at `done`. Returns false when it fell
    /// outside the window.
    pub fn record(&mut self, op: usize, from: Instant, done: Instant) -> bool {
        if !self.in_window(done) {
            self.late += 1;
            return false;
        }
        let at = done.saturating_duration_since(self.start);
        let sec = at.as_secs() as usize;
        if self.per_second.len() <= sec {
            self.per_second.resize(sec + 1, 0);
        }
        self.per_second[sec] += 1;
        let rec = &mut self.ops[op];
        rec.count += 1;
        rec.latency_ns
            .saturating_record(done.saturating_duration_since(from).as_nanos().max(1) as u64);
        true
    }

    pub fn total(&self) -> u64 {
        self.ops.iter().map(|o| o.count).sum()
    }

    /// Fold another worker's recorder into this one.
    pub fn merge(&mut self, other: &Recorder) {
        for (a, b) in self.ops.iter_mut().zip(&other.ops) {
            a.count += b.count;
            a.latency_ns.add(&b.latency_ns).expect("same bounds");
        }
        if self.per_second.len() < other.per_second.len() {
            self.per_second.resize(other.per_second.len(), 0);
        }
        for (a, b) in self.per_second.iter_mut().zip(&other.per_second) {
            *a += b;
        }
        self.late += other.late;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_and_merge() {
        let t0 = Instant::now();
        let mut a = Recorder::new(2, t0, Some(Duration::from_secs(2)));
        assert!(a.record(0, t0, t0 + Duration::from_micros(50)));
        assert!(a.record(1, t0, t0 + Duration::from_millis(1500)));
        assert!(!a.record(1, t0, t0 + Duration::from_secs(2)));
        let mut b = Recorder::new(2, t0, Some(Duration::from_secs(2)));
        b.record(0, t0, t0 + Duration::from_micros(70));
        a.merge(&b);
        assert_eq!(a.per_second, vec![2, 1]);
        assert_eq!(a.ops[0].count, 2);
        assert_eq!(a.late, 1);
        assert_eq!(a.total(), 3);
        let max_us = a.ops[0].latency_ns.max() as f64 / 1000.0;
        assert!((max_us - 70.0).abs() < 0.1, "{max_us}");
    }
}
