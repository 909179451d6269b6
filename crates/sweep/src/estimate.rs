//! How long runs will take: each run's warm-up and measured window (from
//! its load's flags) plus the set-up around it, then scaled by what the
//! runs already made took against that estimate, so the figure a sweep
//! states (at its start, on resume, and as it goes) follows this machine.

use crate::layout;
use crate::plan::{Plan, Point};
use crate::record::{RunRecord, Status};
use crate::schedule::Schedule;
use std::path::Path;

/// The scale is trusted from this many finished runs on.
const MIN_RUNS: usize = 1;
/// Never scaled by more than this either way: one odd run (a cold cache,
/// a stalled server) must not make the figure absurd.
const MAX_SCALE: f64 = 10.0;

/// What the runs made so far were estimated at, and what they took.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Calibration {
    runs: usize,
    estimated_s: f64,
    actual_s: f64,
}

impl Calibration {
    /// From the runs of `schedule` already on disk under `out` (a resumed
    /// sweep starts calibrated).
    pub fn from_dir(plan: &Plan, schedule: &Schedule, out: &Path) -> Calibration {
        let mut c = Calibration::default();
        for (_, repetition, slug) in schedule.runs() {
            let Some(point) = plan.find(slug) else {
                continue;
            };
            let dir = layout::run_dir(out, point, repetition);
            if let Some(r) = RunRecord::read(&dir.join(layout::RUN_RECORD)) {
                if r.status == Status::Ok {
                    c.add(plan, point, r.wall_s);
                }
            }
        }
        c
    }

    /// A run of `point` took `wall_s`, start of its server to its stop.
    pub fn add(&mut self, plan: &Plan, point: &Point, wall_s: f64) {
        if let Some(estimated) = plan.run_seconds(point) {
            self.runs += 1;
            self.estimated_s += estimated;
            self.actual_s += wall_s;
        }
    }

    /// Actual ÷ estimated so far (1 before any run).
    pub fn scale(&self) -> f64 {
        if self.runs < MIN_RUNS || self.estimated_s <= 0.0 {
            return 1.0;
        }
        (self.actual_s / self.estimated_s).clamp(1.0 / MAX_SCALE, MAX_SCALE)
    }

    /// Whether any run has calibrated it.
    pub fn calibrated(&self) -> bool {
        self.runs >= MIN_RUNS
    }

    /// Seconds the runs of `points` (one entry per run) should take here;
    /// None if any load has no fixed duration.
    pub fn seconds<'a>(
        &self,
        plan: &Plan,
        points: impl IntoIterator<Item = &'a Point>,
    ) -> Option<f64> {
        plan.estimate_seconds(points).map(|s| s * self.scale())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Experiment;

    #[test]
    fn the_estimate_counts_the_warm_up_and_follows_the_runs_made() {
        let text = "protocol = \"board\"\n[load]\nposters = [1, 2]\nduration = \"2s\"\n";
        let plan = Plan::new(Experiment::parse("t.toml", text).unwrap()).unwrap();
        let p = &plan.points[0];
        // 2 s measured after the default 1 s warm-up, and the set-up.
        assert_eq!(plan.run_seconds(p), Some(3.0 + crate::plan::RUN_OVERHEAD_S));
        let warm = "protocol = \"board\"\n[load]\nduration = \"2s\"\nwarmup = \"0s\"\n";
        let cold = Plan::new(Experiment::parse("t.toml", warm).unwrap()).unwrap();
        assert_eq!(
            cold.run_seconds(&cold.points[0]),
            Some(2.0 + crate::plan::RUN_OVERHEAD_S)
        );

        let mut c = Calibration::default();
        assert_eq!(c.scale(), 1.0);
        let each = plan.run_seconds(p).unwrap();
        c.add(&plan, p, 2.0 * each);
        assert!((c.scale() - 2.0).abs() < 1e-9);
        let all = c.seconds(&plan, plan.points.iter()).unwrap();
        assert!((all - 4.0 * each).abs() < 1e-9, "{all}");
        c.add(&plan, p, 1000.0 * each);
        assert_eq!(c.scale(), MAX_SCALE);
    }
}
