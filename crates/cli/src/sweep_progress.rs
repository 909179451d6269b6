//! What a sweep shows while it runs: a progress bar with an ETA on a
//! terminal, a plain line per run otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use serverlab_sweep::{params_text, Observer, Plan, Point, RunRecord, RunRef, Status, Summary};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

pub struct Display {
    out: PathBuf,
    bar: Option<ProgressBar>,
    /// Each run's expected milliseconds, when the bar counts those.
    work: Option<Vec<u64>>,
}

impl Display {
    pub fn new(out: &Path) -> Display {
        Display {
            out: out.to_path_buf(),
            bar: None,
            work: None,
        }
    }

    pub fn done(&mut self, s: &Summary) {
        self.abandon();
        println!(
            "serverlab sweep: {} runs done, {} already there, {} failed; results in {}",
            s.ran,
            s.skipped,
            s.failed,
            self.out.display()
        );
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

    fn line(&self, text: String) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => println!("{text}"),
        }
    }
}

/// How long the runs of `points` (one entry per run) should take, when
/// every load says its duration: each run's duration plus starting and
/// stopping a server.
pub fn estimate<'a>(plan: &Plan, points: impl IntoIterator<Item = &'a Point>) -> Option<String> {
    let mut points = points.into_iter().peekable();
    if points.peek().is_none() {
        return Some("nothing to wait for".into());
    }
    let total = plan.estimate_seconds(points)?;
    Some(if total < 90.0 {
        format!("about {total:.0} s")
    } else {
        format!("about {:.0} min", total / 60.0)
    })
}

/// `posters=1,readers=2 rep 3`.
fn label(run: &RunRef<'_>) -> String {
    let params = if run.point.params.is_empty() {
        "the point".to_string()
    } else {
        params_text(&run.point.params, " ")
    };
    format!("{params} rep {}", run.repetition)
}

impl Observer for Display {
    fn planned(&mut self, plan: &Plan, todo: &[&Point], done: usize) {
        let estimate = estimate(plan, todo.iter().copied())
            .map(|e| format!(", {e}"))
            .unwrap_or_default();
        println!(
            "serverlab sweep {}: {} points × {} repetitions; {} runs to do, {done} already there{estimate}",
            plan.experiment.name,
            plan.points.len(),
            plan.experiment.repetitions,
            todo.len()
        );
        if std::io::stderr().is_terminal() && !todo.is_empty() {
            // Measured in expected milliseconds when every run's length is
            // known (so runs of 1 s and 10 s weigh what they take), else in runs.
            let work: Option<Vec<u64>> = todo
                .iter()
                .map(|p| plan.run_seconds(p).map(|s| (s * 1000.0) as u64))
                .collect();
            let len = match &work {
                Some(ms) => ms.iter().sum(),
                None => todo.len() as u64,
            };
            let bar = ProgressBar::new(len);
            bar.set_style(
                ProgressStyle::with_template("{elapsed_precise} [{bar:30}] ETA {eta} {msg}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            self.work = work;
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
                if self.bar.is_none() {
                    self.line(format!("{head}: {rate}"));
                }
            }
            (Status::Failed, error) => self.line(format!(
                "{head}: FAILED: {}",
                error.as_deref().unwrap_or("unknown error")
            )),
        }
        if let Some(bar) = &self.bar {
            let step = match &self.work {
                Some(ms) => ms.get(run.ordinal - 1).copied().unwrap_or(0),
                None => 1,
            };
            bar.inc(step);
        }
    }
}
