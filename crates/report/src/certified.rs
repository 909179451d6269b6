//! Each run's verdict (`results.validity` in its `load.json`: whether
//! its figures certify themselves, check by check; docs/measuring.md,
//! "Certified runs"), carried into the report: how many runs and points
//! were not certified and which checks failed, a line per failed check
//! under Problems, and a mark on every such point in the tables (`‡`)
//! and the plots (a ring). A run without a verdict (made before `load`
//! judged its runs) is unknown, never uncertified.

use crate::data::Run;
use crate::points::PointStats;
use serverlab_sweep::layout;

/// The mark after an uncertified point's name in the tables.
pub const MARK: &str = "‡";

/// Whether `run`'s verdict is that it is not certified (None: no
/// verdict recorded).
pub fn run_certified(run: &Run) -> Option<bool> {
    run.load.results.validity.as_ref().map(|v| v.certified)
}

/// Whether some run of the point was judged not certified.
pub fn uncertified(s: &PointStats) -> bool {
    s.runs.runs.iter().any(|r| run_certified(r) == Some(false))
}

/// The verdicts over every point (and the baseline).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Runs with a verdict, and those without (older results).
    pub judged: usize,
    pub unknown: usize,
    pub uncertified_runs: usize,
    /// Points with runs, and those with an uncertified run.
    pub points: usize,
    pub uncertified_points: usize,
    /// Each failed check's name and in how many runs it failed, in the
    /// order first met.
    pub failed_checks: Vec<(String, usize)>,
}

impl Tally {
    pub fn of(stats: &[&PointStats]) -> Tally {
        let mut t = Tally::default();
        for s in stats.iter().filter(|s| !s.runs.runs.is_empty()) {
            t.points += 1;
            t.uncertified_points += usize::from(uncertified(s));
            for run in &s.runs.runs {
                let Some(v) = &run.load.results.validity else {
                    t.unknown += 1;
                    continue;
                };
                t.judged += 1;
                t.uncertified_runs += usize::from(!v.certified);
                for c in v.failed() {
                    match t.failed_checks.iter_mut().find(|(n, _)| *n == c.name) {
                        Some((_, k)) => *k += 1,
                        None => t.failed_checks.push((c.name.clone(), 1)),
                    }
                }
            }
        }
        t
    }

    /// The summary's sentence: `2 of 12 runs (2 of 4 points, marked ‡)
    /// were not certified: stationarity failed in 2 runs, …`; None where
    /// no run had a verdict.
    pub fn sentence(&self) -> Option<String> {
        if self.judged == 0 {
            return None;
        }
        let unknown = if self.unknown > 0 {
            format!(
                " ({} more made before runs were judged have no verdict)",
                self.unknown
            )
        } else {
            String::new()
        };
        if self.uncertified_runs == 0 {
            return Some(format!(
                "Every one of the {} judged runs was certified{unknown}.",
                self.judged
            ));
        }
        Some(format!(
            "{} of {} judged runs ({} of {} points, marked {MARK} in the tables and ringed \
             in the plots) were not certified{unknown}: {}. Their figures may not mean what \
             they say; each is listed under Problems with its fix in the run's `load.json`.",
            self.uncertified_runs,
            self.judged,
            self.uncertified_points,
            self.points,
            self.checks()
        ))
    }

    /// `stationarity failed in 2 runs, sample_size in 1`.
    pub fn checks(&self) -> String {
        let said: Vec<String> = self
            .failed_checks
            .iter()
            .enumerate()
            .map(|(i, (name, k))| {
                let runs = if *k == 1 { "run" } else { "runs" };
                if i == 0 {
                    format!("{name} failed in {k} {runs}")
                } else {
                    format!("{name} in {k} {runs}")
                }
            })
            .collect();
        said.join(", ")
    }
}

/// A Problems line per failed `--threshold` of each run: `SLUG rep K:
/// threshold p99<10ms failed: DETAIL (runs/SLUG/rep-K/load.json)`.
pub fn thresholds(s: &PointStats) -> Vec<String> {
    let slug = &s.runs.point.slug;
    let mut out = Vec::new();
    for run in &s.runs.runs {
        for j in run.load.results.thresholds.iter().filter(|j| !j.passed) {
            out.push(format!(
                "{slug} rep {}: threshold {} failed: {} (`{}/{}`)",
                run.repetition,
                j.threshold,
                j.detail,
                run.dir.display(),
                layout::LOAD_JSON
            ));
        }
    }
    out
}

/// A Problems line per failed check of each uncertified run: `SLUG rep
/// K: not certified: CHECK failed: DETAIL (runs/SLUG/rep-K/load.json)`.
pub fn problems(s: &PointStats) -> Vec<String> {
    let slug = &s.runs.point.slug;
    let mut out = Vec::new();
    for run in &s.runs.runs {
        let Some(v) = run.load.results.validity.as_ref().filter(|v| !v.certified) else {
            continue;
        };
        for c in v.failed() {
            out.push(format!(
                "{slug} rep {}: not certified: {} failed: {} (`{}/{}`)",
                run.repetition,
                c.name,
                c.detail,
                run.dir.display(),
                layout::LOAD_JSON
            ));
        }
    }
    out
}
