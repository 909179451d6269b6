//! Running a plan: every point × repetition in its own directory, a fresh
//! server per run, skipping runs already done (resume), recording failures
//! and going on.

use crate::child::{self, LoadEnd, LoadFiles, Server};
use crate::error::SweepError;
use crate::layout::{self, Manifest};
use crate::plan::{Plan, Point};
use crate::record::{Invocation, RunRecord, Status, RUN_SCHEMA};
use crate::spec::Cpus;
use serverlab_load::report::LoadReport;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a server may take to listen, and to stop after SIGTERM.
const SERVER_START: Duration = Duration::from_secs(30);
const SERVER_STOP: Duration = Duration::from_secs(30);

pub struct Options {
    /// The `serverlab` binary to start servers and loads with.
    pub exe: PathBuf,
    pub out: PathBuf,
    /// Redo runs that are already there.
    pub force: bool,
    /// Set (by a signal handler) to stop after the current run.
    pub interrupted: Arc<AtomicBool>,
}

/// One run of the schedule.
#[derive(Debug, Clone, Copy)]
pub struct RunRef<'a> {
    pub point: &'a Point,
    pub repetition: u32,
    /// 1-based position among the runs this invocation does.
    pub ordinal: usize,
    pub todo: usize,
}

/// What a progress display is told.
pub trait Observer {
    /// Before the first run: the point of each run to do, in order, and
    /// how many are already on disk.
    fn planned(&mut self, plan: &Plan, todo: &[&Point], done: usize);
    fn started(&mut self, run: RunRef<'_>);
    /// `throughput` is the load's requests per second, when it reported one.
    fn finished(&mut self, run: RunRef<'_>, record: &RunRecord, throughput: Option<f64>);
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub ran: usize,
    pub skipped: usize,
    pub failed: usize,
}

/// Run every run of `plan` not already done under `opts.out`.
///
/// Repetitions are the outer loop: every point runs once before any runs
/// twice, so slow drift of the machine (other work, heat) spreads over all
/// points instead of biasing the ones that ran last.
pub fn run(plan: &Plan, opts: &Options, obs: &mut dyn Observer) -> Result<Summary, SweepError> {
    let client_cpus = Cpus::written(&plan.experiment.client_cpus);
    let mut schedule = Vec::new();
    let mut skipped = 0;
    for repetition in 1..=plan.experiment.repetitions {
        for point in &plan.points {
            let dir = layout::run_dir(&opts.out, point, repetition);
            match RunRecord::read(&dir.join(layout::RUN_RECORD)) {
                Some(r) if !opts.force && r.done_as(point, &client_cpus) => skipped += 1,
                Some(r) if !opts.force => {
                    if let Some(detail) = r.differs_from(point, &client_cpus) {
                        return Err(SweepError::Stale { dir, detail });
                    }
                    // Same configuration, failed before: try it again.
                    schedule.push((point, repetition));
                }
                _ => schedule.push((point, repetition)),
            }
        }
    }
    if opts.force {
        // Everything is redone. Clear the old runs before the manifest
        // names the new configuration, so that a sweep interrupted now
        // leaves no run made with other flags under it.
        for (point, repetition) in &schedule {
            let dir = layout::run_dir(&opts.out, point, *repetition);
            remove_run(&dir)?;
        }
    }
    // Only now, when nothing stale stands in the way, record the experiment.
    prepare(plan, &opts.out)?;
    let todo: Vec<&Point> = schedule.iter().map(|(p, _)| *p).collect();
    obs.planned(plan, &todo, skipped);
    let mut summary = Summary {
        skipped,
        ..Summary::default()
    };
    let todo = schedule.len();
    for (i, (point, repetition)) in schedule.into_iter().enumerate() {
        if opts.interrupted.load(Ordering::Relaxed) {
            return Err(SweepError::Interrupted);
        }
        let run = RunRef {
            point,
            repetition,
            ordinal: i + 1,
            todo,
        };
        obs.started(run);
        let dir = layout::run_dir(&opts.out, point, repetition);
        let Some(record) = run_one(plan, point, repetition, &dir, opts)? else {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(SweepError::Interrupted);
        };
        layout::write_atomic(
            &dir.join(layout::RUN_RECORD),
            &(serde_json::to_string_pretty(&record).expect("a record serializes") + "\n"),
        )?;
        let throughput = read_load(&dir).map(|r| r.results.throughput_rps);
        summary.ran += 1;
        if record.status == Status::Failed {
            summary.failed += 1;
        }
        obs.finished(run, &record, throughput);
    }
    Ok(summary)
}

/// Create `out`, and write the experiment file and the manifest into it.
fn prepare(plan: &Plan, out: &Path) -> Result<(), SweepError> {
    std::fs::create_dir_all(out.join(layout::RUNS))
        .map_err(|e| SweepError::io("cannot create", out, e))?;
    layout::write_atomic(&out.join(layout::EXPERIMENT), &plan.experiment.source)?;
    let manifest = serde_json::to_string_pretty(&Manifest::of(plan)).expect("serializes") + "\n";
    layout::write_atomic(&out.join(layout::MANIFEST), &manifest)
}

/// Remove one run's directory, if there is one.
fn remove_run(dir: &Path) -> Result<(), SweepError> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(SweepError::io("cannot remove", dir, e))
        }
        _ => Ok(()),
    }
}

fn read_load(dir: &Path) -> Option<LoadReport> {
    let text = std::fs::read_to_string(dir.join(layout::LOAD_JSON)).ok()?;
    serde_json::from_str(&text).ok()
}

/// One run in `dir` (emptied first). None: interrupted, nothing to keep.
fn run_one(
    plan: &Plan,
    point: &Point,
    repetition: u32,
    dir: &Path,
    opts: &Options,
) -> Result<Option<RunRecord>, SweepError> {
    remove_run(dir)?;
    std::fs::create_dir_all(dir).map_err(|e| SweepError::io("cannot create", dir, e))?;
    let exe = opts.exe.to_string_lossy().into_owned();
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let server_args = point.serve_args(&path(layout::SERVER_JSON));
    let mut record = RunRecord {
        schema: RUN_SCHEMA.into(),
        experiment: plan.experiment.name.clone(),
        point: point.index,
        slug: point.slug.clone(),
        repetition,
        params: point.params.clone(),
        server: Invocation {
            protocol: point.server_protocol.clone(),
            flags: point.server_flags.clone(),
            argv: std::iter::once(exe.clone())
                .chain(server_args.iter().cloned())
                .collect(),
            exit_code: None,
        },
        load: Invocation {
            protocol: point.load_protocol.clone(),
            flags: point.load_flags.clone(),
            argv: vec![],
            exit_code: None,
        },
        client_cpus: Cpus::written(&plan.experiment.client_cpus),
        server_addr: None,
        status: Status::Failed,
        error: None,
        started_unix_s: unix_now(),
        wall_s: 0.0,
    };
    let started = Instant::now();
    let finish = |mut record: RunRecord, error: Option<String>| {
        record.status = if error.is_none() {
            Status::Ok
        } else {
            Status::Failed
        };
        record.error = error;
        record.wall_s = started.elapsed().as_secs_f64();
        Some(record)
    };

    let log = dir.join(layout::SERVER_LOG);
    let server = match Server::start(&opts.exe, &server_args, &log, SERVER_START) {
        Ok(s) => s,
        Err(e) => return Ok(finish(record, Some(e.to_string()))),
    };
    record.server_addr = Some(server.addr.to_string());
    let load_args = point.load_args(&server.addr.to_string(), &path(layout::LOAD_JSON));
    record.load.argv = std::iter::once(exe)
        .chain(load_args.iter().cloned())
        .collect();
    let files = LoadFiles {
        stdout: dir.join(layout::LOAD_LOG),
        stderr: dir.join(layout::LOAD_ERR),
    };
    let end = child::run_load(
        &opts.exe,
        &load_args,
        &files,
        plan.experiment.client_cpus.as_ref().map(|c| &c.set),
        plan.experiment.timeout,
        &opts.interrupted,
    );
    let stopped = server.stop(SERVER_STOP);
    if opts.interrupted.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let mut error = match end {
        Err(e) => Some(e.to_string()),
        Ok(LoadEnd::Interrupted) => return Ok(None),
        Ok(LoadEnd::TimedOut(t)) => Some(format!("the load ran over the timeout ({t:?})")),
        Ok(LoadEnd::Exited(status)) => {
            record.load.exit_code = status.code();
            if status.success() {
                read_load(dir)
                    .is_none()
                    .then(|| format!("the load wrote no readable {}", layout::LOAD_JSON))
            } else {
                Some(format!(
                    "the load failed ({}): {}",
                    child::describe(Some(status)),
                    child::tail(&files.stderr, 3)
                ))
            }
        }
    };
    match stopped {
        Ok(status) => {
            record.server.exit_code = status.code();
            if !status.success() && error.is_none() {
                error = Some(format!(
                    "the server ended badly ({}): {}",
                    child::describe(Some(status)),
                    child::tail(&log, 3)
                ));
            } else if error.is_none() && !dir.join(layout::SERVER_JSON).exists() {
                error = Some("the server wrote no final statistics".into());
            }
        }
        Err(e) => error = error.or(Some(e.to_string())),
    }
    if std::fs::metadata(&files.stderr).is_ok_and(|m| m.len() == 0) {
        let _ = std::fs::remove_file(&files.stderr);
    }
    Ok(finish(record, error))
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Experiment;

    struct Quiet;
    impl Observer for Quiet {
        fn planned(&mut self, _: &Plan, _: &[&Point], _: usize) {}
        fn started(&mut self, _: RunRef<'_>) {}
        fn finished(&mut self, _: RunRef<'_>, _: &RunRecord, _: Option<f64>) {}
    }

    fn plan(duration: &str) -> Plan {
        let text = format!(
            "protocol = \"board\"\nrepetitions = 2\n[load]\nposters = [1, 2]\nduration = \"{duration}\""
        );
        Plan::new(Experiment::parse("t.toml", &text).unwrap())
    }

    /// A finished, successful run of `point` as `plan` would make it.
    fn fake_run(out: &Path, point: &Point, repetition: u32) -> PathBuf {
        let dir = layout::run_dir(out, point, repetition);
        std::fs::create_dir_all(&dir).unwrap();
        let invocation = |protocol: &str, flags: &[String]| Invocation {
            protocol: protocol.into(),
            flags: flags.to_vec(),
            argv: vec![],
            exit_code: Some(0),
        };
        let record = RunRecord {
            schema: RUN_SCHEMA.into(),
            experiment: "t".into(),
            point: point.index,
            slug: point.slug.clone(),
            repetition,
            params: point.params.clone(),
            server: invocation(&point.server_protocol, &point.server_flags),
            load: invocation(&point.load_protocol, &point.load_flags),
            client_cpus: None,
            server_addr: None,
            status: Status::Ok,
            error: None,
            started_unix_s: 0,
            wall_s: 1.0,
        };
        let text = serde_json::to_string(&record).unwrap();
        std::fs::write(dir.join(layout::RUN_RECORD), text).unwrap();
        dir
    }

    #[test]
    fn force_clears_old_runs_before_the_manifest_names_the_new_flags() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let old = plan("1s");
        let mut dirs = Vec::new();
        for point in &old.points {
            for rep in 1..=2 {
                dirs.push(fake_run(&out, point, rep));
            }
        }
        let new = plan("2s");
        let opts = |force: bool| Options {
            exe: PathBuf::from("/nonexistent/serverlab"),
            out: out.clone(),
            force,
            // Stop before the first run, as a Ctrl-C right after starting.
            interrupted: Arc::new(AtomicBool::new(true)),
        };
        let refused = run(&new, &opts(false), &mut Quiet);
        assert!(matches!(refused, Err(SweepError::Stale { .. })));
        assert!(
            dirs.iter().all(|d| d.exists()),
            "a refused sweep removed runs"
        );

        let stopped = run(&new, &opts(true), &mut Quiet);
        assert!(matches!(stopped, Err(SweepError::Interrupted)));
        let manifest = Manifest::read(&out).unwrap();
        assert!(manifest.points[0].load_flags.contains(&"2s".to_string()));
        for d in &dirs {
            assert!(!d.exists(), "{} (old flags) is still there", d.display());
        }
    }
}
