//! What each run's own intervals say of a difference between two points
//! (`report --compare`): every run gives its p99 a 95% interval
//! (`ci95` in its `load.json`) and measures what the client itself added
//! (`results.client_share`). Two points whose p99 intervals overlap
//! differ by less than their runs can tell apart: "within the intervals,
//! not a difference". And a gap between them no larger than the client's
//! own share at p99 may be the client's, not the servers'.

use crate::points::PointStats;
use serverlab_load::record::new_histogram;
use serverlab_load::report::{Ci95, LoadReport, OpSummary};

/// A run's p99 interval over every operation, µs: an operation's own,
/// or where several answered, read off their histograms together
/// (widened as the run's were, where consecutive latencies correlated).
pub fn run_p99(load: &LoadReport) -> Option<[f64; 2]> {
    let active: Vec<&OpSummary> = load
        .results
        .operations
        .iter()
        .filter(|o| o.count > 0)
        .collect();
    match active.as_slice() {
        [] => None,
        [one] => one.latency_us.ci95.as_ref()?.p99,
        many => {
            let mut h = new_histogram();
            for o in many {
                for &(us, n) in &o.histogram_us {
                    h.saturating_record_n((us * 1000.0) as u64, n);
                }
            }
            let share = many
                .iter()
                .filter_map(|o| {
                    Some(o.latency_us.ci95.as_ref()?.effective_samples? / o.count as f64)
                })
                .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.min(s))));
            Ci95::of(&h, share.map(|s| s * h.len() as f64)).p99
        }
    }
}

/// A point's p99 interval: from the lowest of its runs' to the highest
/// (a run's own where it has one run); None where a run has none.
pub fn point_p99(s: &PointStats) -> Option<[f64; 2]> {
    let mut out: Option<[f64; 2]> = None;
    for run in &s.runs.runs {
        let [lo, hi] = run_p99(&run.load)?;
        out = Some(out.map_or([lo, hi], |[a, b]| [a.min(lo), b.max(hi)]));
    }
    out
}

/// The most the client added at p99 in any of a point's runs, µs.
pub fn client_p99(s: &PointStats) -> Option<f64> {
    s.runs
        .runs
        .iter()
        .filter_map(|r| r.load.results.client_share.as_ref())
        .map(|c| c.total_us.p99)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
}

/// A p99 row where a run gave p99 no interval.
pub const NONE: &str = "a run gave p99 no interval (too few effective samples: its \
    sample_size check): no difference the runs can tell";

/// What the intervals say of two points' p99.
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    pub this: [f64; 2],
    pub other: [f64; 2],
    /// The intervals overlap: no difference they can tell.
    pub overlap: bool,
    /// The gap between the two p99s, µs, and the most the client added
    /// at p99 on either side (where measured).
    pub gap_us: f64,
    pub client_us: Option<f64>,
}

impl Said {
    /// Points `a` and `b`, whose p99s are `a_us` and `b_us`.
    pub fn of(a: &PointStats, b: &PointStats, a_us: f64, b_us: f64) -> Option<Said> {
        let (this, other) = (point_p99(a)?, point_p99(b)?);
        let client_us = match (client_p99(a), client_p99(b)) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        };
        Some(Said {
            this,
            other,
            overlap: this[0] <= other[1] && other[0] <= this[1],
            gap_us: (a_us - b_us).abs(),
            client_us,
        })
    }

    /// The table's cell, in the row's unit (`scale` per µs, `unit` its
    /// symbol).
    pub fn cell(&self, scale: f64, unit: &str) -> String {
        let v = |x: f64| crate::units::num(x * scale);
        let span = |[lo, hi]: [f64; 2]| format!("[{}, {}]", v(lo), v(hi));
        let head = if self.overlap {
            format!(
                "within the intervals, not a difference: {} and {} {unit} overlap",
                span(self.this),
                span(self.other)
            )
        } else {
            format!(
                "apart: {} and {} {unit} do not overlap",
                span(self.this),
                span(self.other)
            )
        };
        match self.client_us {
            Some(c) if c >= self.gap_us => format!(
                "{head}; the gap ({} {unit}) is no larger than what the client adds at p99 \
                 ({} {unit}): it may be the client's",
                v(self.gap_us),
                v(c)
            ),
            _ => head,
        }
    }
}
