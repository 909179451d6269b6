//! What a sweep shows while it runs: a line per run, and on a terminal a
//! progress bar with an ETA below them.

use crate::sweep::{design_text, plural, runs_text};
use indicatif::{ProgressBar, ProgressStyle};
use serverlab_sweep::{
    params_text, Calibration, Observer, Plan, Point, RunRecord, RunRef, Schedule, Status, Summary,
};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

pub struct Display {
    out: PathBuf,
    bar: Option<ProgressBar>,
    /// Milliseconds a run of each point (and the baseline) should take,
    /// when every one says (`--duration`): the bar then counts those, so
    /// runs of 1 s and 10 s weigh what they take; else it counts runs.
    run_ms: Option<Vec<(String, u64)>>,
    /// The plan has a baseline (which every added block runs too).
    baseline: bool,
    /// What the runs made so far took against their estimate.
    calibration: Calibration,
    /// The slug of each run this invocation does, in order.
    todo: Vec<String>,
}

impl Display {
    pub fn new(out: &Path) -> Display {
        Display {
            out: out.to_path_buf(),
            bar: None,
            run_ms: None,
            baseline: false,
            calibration: Calibration::default(),
            todo: vec![],
        }
    }

    /// What a run of `slug` adds to the bar.
    fn weight(&self, slug: &str) -> u64 {
        match &self.run_ms {
            Some(ms) => ms.iter().find(|(s, _)| s == slug).map_or(0, |m| m.1),
            None => 1,
        }
    }

    pub fn done(&mut self, s: &Summary) {
        self.abandon();
        println!(
            "serverlab sweep: {} done, {} already there, {} failed; results in {}",
            plural(s.ran as u64, "run"),
            s.skipped,
            s.failed,
            self.out.display()
        );
        for u in &s.unresolved {
            println!(
                "serverlab sweep: {} did not reach the target: {}",
                u.slug,
                u.why()
            );
        }
        println!(
            "serverlab sweep: next: serverlab report {}",
            self.out.display()
        );
    }

    pub fn abandon(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    /// `; about 40 s left`: the runs still to do, at the pace of those
    /// made (this one counted); nothing where a load has no duration.
    fn left(&mut self, run: RunRef<'_>, record: &RunRecord) -> String {
        let plan = run.plan;
        self.calibration.add(plan, run.point, record.wall_s);
        let rest = self
            .todo
            .iter()
            .skip(run.ordinal)
            .filter_map(|s| plan.find(s));
        match (
            run.ordinal < self.todo.len(),
            estimate(plan, &self.calibration, rest),
        ) {
            (true, Some(e)) => format!("; {e} left"),
            _ => String::new(),
        }
    }

    fn line(&self, text: String) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => println!("{text}"),
        }
    }
}

/// How long the runs of `points` (one entry per run) should take, when
/// every load says its duration: each run's warm-up and window plus
/// starting and stopping a server, scaled by what the runs made so far
/// took (`calibration`).
pub fn estimate<'a>(
    plan: &Plan,
    calibration: &Calibration,
    points: impl IntoIterator<Item = &'a Point>,
) -> Option<String> {
    let mut points = points.into_iter().peekable();
    if points.peek().is_none() {
        return Some("nothing to wait for".into());
    }
    let total = calibration.seconds(plan, points)?;
    Some(if total < 90.0 {
        format!("about {total:.0} s")
    } else {
        format!("about {:.0} min", total / 60.0)
    })
}

/// `posters=1 readers=2`, `the baseline`.
fn point_label(point: &Point) -> String {
    if point.slug == serverlab_sweep::BASELINE {
        "the baseline".to_string()
    } else if point.params.is_empty() {
        "the point".to_string()
    } else {
        params_text(&point.params, " ")
    }
}

/// `posters=1 readers=2 rep 3`.
fn label(run: &RunRef<'_>) -> String {
    format!("{} rep {}", point_label(run.point), run.repetition)
}

impl Observer for Display {
    fn planned(&mut self, plan: &Plan, schedule: &Schedule, todo: &[&Point], done: usize) {
        self.calibration = Calibration::from_dir(plan, schedule, &self.out);
        self.todo = todo.iter().map(|p| p.slug.clone()).collect();
        let calibrated = match self.calibration.calibrated() {
            true => " (as long as the runs already made took)",
            false => "",
        };
        let estimate = estimate(plan, &self.calibration, todo.iter().copied())
            .map(|e| format!(", {e}{calibrated}"))
            .unwrap_or_default();
        println!(
            "serverlab sweep {}: {}; {} runs to do, {done} already there{estimate}",
            plan.experiment.name,
            runs_text(plan),
            todo.len()
        );
        println!(
            "serverlab sweep: {}",
            design_text(plan, Some(schedule.seed))
        );
        if let Some(shard) = schedule.shard {
            let blocks: Vec<String> = (1..=schedule.blocks.len() as u32)
                .filter(|&b| shard.owns(b))
                .map(|b| b.to_string())
                .collect();
            println!(
                "serverlab sweep: shard {shard}: blocks {} of {}, each with its baseline",
                blocks.join(", "),
                schedule.blocks.len()
            );
        }
        self.baseline = plan.baseline.is_some();
        self.run_ms = plan
            .block()
            .iter()
            .map(|p| Some((p.slug.clone(), (plan.run_seconds(p)? * 1000.0) as u64)))
            .collect();
        if std::io::stderr().is_terminal() && !todo.is_empty() {
            let len = todo.iter().map(|p| self.weight(&p.slug)).sum();
            let bar = ProgressBar::new(len);
            bar.set_style(
                ProgressStyle::with_template("{elapsed_precise} [{bar:30}] ETA {eta} {msg}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            self.bar = Some(bar);
        }
    }

    fn started(&mut self, run: RunRef<'_>) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!("{}/{} {}", run.ordinal, run.todo, label(&run)));
        }
    }

    fn finished(&mut self, run: RunRef<'_>, record: &RunRecord, throughput: Option<f64>) {
        let head = format!("[{}/{}] {}", run.ordinal, run.todo, label(&run));
        match (record.status, &record.error) {
            (Status::Ok, _) => {
                let rate = throughput
                    .map(|t| format!("{t:.0} requests/s"))
                    .unwrap_or_else(|| "ok".into());
                let busy = match &record.machine {
                    Some(m) if m.busy() => format!(" (busy machine: {})", m.describe()),
                    _ => String::new(),
                };
                // Above the bar on a terminal, as plain lines elsewhere:
                // every run's result either way.
                let left = self.left(run, record);
                self.line(format!("{head}: {rate}{busy}{left}"));
            }
            (Status::Failed, error) => self.line(format!(
                "{head}: FAILED: {}",
                error.as_deref().unwrap_or("unknown error")
            )),
        }
        if let Some(bar) = &self.bar {
            bar.inc(self.weight(&run.point.slug));
        }
    }

    fn extended(&mut self, block: u32, added: &[(&Point, Option<f64>)]) {
        let wide: Vec<String> = added
            .iter()
            .map(|(p, w)| {
                let w = w
                    .map(|w| format!("±{:.1}%", 100.0 * w))
                    .unwrap_or_else(|| "no CI yet".into());
                format!("{} ({w})", point_label(p))
            })
            .collect();
        self.line(format!(
            "serverlab sweep: block {block} for {} points above the target: {}",
            added.len(),
            wide.join(", ")
        ));
        if self.baseline {
            self.todo.push(serverlab_sweep::BASELINE.to_string());
        }
        self.todo.extend(added.iter().map(|(p, _)| p.slug.clone()));
        if let Some(bar) = &self.bar {
            // The block's runs: these points and the baseline, if any.
            let baseline = match self.baseline {
                true => self.weight(serverlab_sweep::BASELINE),
                false => 0,
            };
            let points: u64 = added.iter().map(|(p, _)| self.weight(&p.slug)).sum();
            bar.inc_length(points + baseline);
        }
    }
}
