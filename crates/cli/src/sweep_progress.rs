//! What a sweep shows while it runs: a progress bar with an ETA on a
//! terminal, a plain line per run otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use serverlab_sweep::{params_text, Observer, Plan, RunRecord, RunRef, Status, Summary};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

pub struct Display {
    out: PathBuf,
    bar: Option<ProgressBar>,
}

impl Display {
    pub fn new(out: &Path) -> Display {
        Display {
            out: out.to_path_buf(),
            bar: None,
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

/// How long `runs` runs should take, when the load says its duration:
/// the duration plus starting and stopping a server, per run.
pub fn estimate(plan: &Plan, runs: usize) -> Option<String> {
    let per_run = plan.points.first().and_then(|p| plan.load_seconds(p))? + 0.3;
    let total = per_run * runs as f64;
    Some(if runs == 0 {
        "nothing to wait for".into()
    } else if total < 90.0 {
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
    fn planned(&mut self, plan: &Plan, todo: usize, done: usize) {
        let estimate = estimate(plan, todo)
            .map(|e| format!(", {e}"))
            .unwrap_or_default();
        println!(
            "serverlab sweep {}: {} points × {} repetitions; {todo} runs to do, {done} already there{estimate}",
            plan.experiment.name,
            plan.points.len(),
            plan.experiment.repetitions
        );
        if std::io::stderr().is_terminal() && todo > 0 {
            let bar = ProgressBar::new(todo as u64);
            bar.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:30}] {pos}/{len} runs, ETA {eta} {msg}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            self.bar = Some(bar);
        }
    }

    fn started(&mut self, run: RunRef<'_>) {
        if let Some(bar) = &self.bar {
            bar.set_message(label(&run));
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
            bar.inc(1);
        }
    }
}
