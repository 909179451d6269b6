//! Running a plan: block by block in the recorded order (schedule.json),
//! every run in its own directory with a fresh server, skipping runs
//! already done (resume), recording failures and the machine's state and
//! going on, and adding blocks for points whose throughput is not yet
//! known as precisely as the experiment's target asks.

use crate::child::{self, LoadEnd, LoadFiles, Server};
use crate::error::SweepError;
use crate::layout::{self, Manifest};
use crate::machine::Probe;
use crate::plan::{Plan, Point};
use crate::record::{Invocation, RunRecord, Status, RUN_SCHEMA};
use crate::schedule::{self, Schedule};
use crate::shard::Shard;
use crate::spec::Cpus;
use serverlab_load::report::LoadReport;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a server may take to listen, and to stop after SIGTERM.
const SERVER_START: Duration = Duration::from_secs(30);
const SERVER_STOP: Duration = Duration::from_secs(30);

/// The half-width of the 95% confidence interval of a point's mean
/// throughput, as a share of it, from the throughputs of its runs; None
/// when there are too few to tell. The report's statistics provide it, so
/// the sweep stops where the report will agree the target is met.
pub type Precision = fn(&[f64]) -> Option<f64>;

pub struct Options {
    /// The `serverlab` binary to start servers and loads with.
    pub exe: PathBuf,
    pub out: PathBuf,
    /// Redo runs that are already there.
    pub force: bool,
    /// Set (by a signal handler) to stop after the current run.
    pub interrupted: Arc<AtomicBool>,
    /// What a target (`target_ci`) is compared with.
    pub precision: Precision,
    /// Run only this shard's blocks (`--shard I/N`); None: every block.
    pub shard: Option<Shard>,
}

/// One run of the schedule.
#[derive(Debug, Clone, Copy)]
pub struct RunRef<'a> {
    pub plan: &'a Plan,
    pub point: &'a Point,
    /// Also the block it belongs to.
    pub repetition: u32,
    /// 1-based position among the runs this invocation does.
    pub ordinal: usize,
    /// Runs this invocation does, as far as known (a target may add more).
    pub todo: usize,
}

/// What a progress display is told.
pub trait Observer {
    /// Before the first run: the schedule, the point of each run to do, in
    /// order, and how many are already on disk.
    fn planned(&mut self, plan: &Plan, schedule: &Schedule, todo: &[&Point], done: usize);
    fn started(&mut self, run: RunRef<'_>);
    /// `throughput` is the load's requests per second, when it reported one.
    fn finished(&mut self, run: RunRef<'_>, record: &RunRecord, throughput: Option<f64>);
    /// A target added block `block`: these points, each with the relative
    /// CI half-width it had, and the baseline.
    fn extended(&mut self, block: u32, added: &[(&Point, Option<f64>)]);
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub ran: usize,
    pub skipped: usize,
    pub failed: usize,
    /// Points that ended above the target.
    pub unresolved: Vec<Unresolved>,
}

/// A point whose throughput CI stayed wider than the target.
#[derive(Debug, Clone, PartialEq)]
pub struct Unresolved {
    pub slug: String,
    /// Blocks it ran in, and how many of those runs succeeded.
    pub repetitions: u32,
    pub ok: usize,
    /// Its CI half-width as a share of the mean; None: too few runs.
    pub precision: Option<f64>,
}

impl Unresolved {
    /// Why it never got there, in words.
    pub fn why(&self) -> String {
        let ci = match self.precision {
            Some(p) => format!("±{:.1}%", 100.0 * p),
            None => "no interval".into(),
        };
        let failed = self.repetitions as usize - self.ok;
        if failed > 0 {
            format!(
                "{ci} after {} repetitions, {failed} of which failed",
                self.repetitions
            )
        } else {
            format!(
                "{ci} after {} repetitions (max_repetitions): its runs vary too much",
                self.repetitions
            )
        }
    }
}

/// Run every run of `plan` not already done under `opts.out`, in the
/// schedule's order, then more blocks while a target asks for them.
pub fn run(plan: &Plan, opts: &Options, obs: &mut dyn Observer) -> Result<Summary, SweepError> {
    let mut schedule = schedule_for(plan, opts);
    let mut done = done_runs(plan, &schedule, opts)?;
    if opts.force {
        // Everything is redone. Clear the old runs before the manifest
        // names the new configuration, so that a sweep interrupted now
        // leaves no run made with other flags under it.
        remove_run(&opts.out.join(layout::RUNS))?;
    }
    // Only now, when nothing stale stands in the way, record the experiment.
    prepare(plan, &schedule, opts)?;
    let mut summary = Summary {
        skipped: done.len(),
        ..Summary::default()
    };
    let mut todo = pending(&schedule, &done, 0);
    let points: Vec<&Point> = todo.iter().filter_map(|(_, _, s)| plan.find(s)).collect();
    obs.planned(plan, &schedule, &points, summary.skipped);
    let mut total = todo.len();
    let mut ordinal = 0;
    loop {
        for (sequence, repetition, slug) in todo {
            let point = plan.find(&slug).expect("the schedule fits the plan");
            ordinal += 1;
            let run = RunRef {
                plan,
                point,
                repetition,
                ordinal,
                todo: total,
            };
            let record = run_and_record(plan, run, sequence, opts, obs)?;
            summary.ran += 1;
            summary.failed += usize::from(record.status == Status::Failed);
            done.insert((repetition, slug));
        }
        let from = schedule.runs().count();
        if !add_block(plan, &mut schedule, opts, obs)? {
            break;
        }
        todo = pending(&schedule, &done, from);
        total += todo.len();
    }
    summary.unresolved = unresolved(plan, &schedule, opts);
    Ok(summary)
}

/// Runs of the schedule from position `from` on that are not done:
/// (place in the order, repetition, slug).
fn pending(
    schedule: &Schedule,
    done: &HashSet<(u32, String)>,
    from: usize,
) -> Vec<(usize, u32, String)> {
    schedule
        .runs()
        .skip(from)
        .filter(|(_, b, slug)| !done.contains(&(*b, slug.to_string())))
        .map(|(q, b, slug)| (q, b, slug.to_string()))
        .collect()
}

/// Append (and record) a block for the points a target still wants more
/// runs of, with the baseline; false when none does.
fn add_block(
    plan: &Plan,
    schedule: &mut Schedule,
    opts: &Options,
    obs: &mut dyn Observer,
) -> Result<bool, SweepError> {
    let wanting = wanting_more(plan, schedule, opts);
    if wanting.is_empty() {
        return Ok(false);
    }
    let block = schedule.blocks.len() as u32 + 1;
    let slugs = plan
        .baseline
        .iter()
        .chain(wanting.iter().map(|(p, _)| *p))
        .map(|p| p.slug.clone())
        .collect();
    schedule.extend(slugs);
    schedule.write(&opts.out)?;
    obs.extended(block, &wanting);
    Ok(true)
}

/// Run one run of the schedule, write its record, and tell the observer.
fn run_and_record(
    plan: &Plan,
    run: RunRef<'_>,
    sequence: usize,
    opts: &Options,
    obs: &mut dyn Observer,
) -> Result<RunRecord, SweepError> {
    if opts.interrupted.load(Ordering::Relaxed) {
        return Err(SweepError::Interrupted);
    }
    obs.started(run);
    let dir = layout::run_dir(&opts.out, run.point, run.repetition);
    let Some(record) = run_one(plan, run.point, (run.repetition, sequence), &dir, opts)? else {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(SweepError::Interrupted);
    };
    layout::write_atomic(
        &dir.join(layout::RUN_RECORD),
        &(serde_json::to_string_pretty(&record).expect("a record serializes") + "\n"),
    )?;
    let throughput = read_load(&dir).map(|r| r.results.throughput_rps);
    obs.finished(run, &record, throughput);
    Ok(record)
}

/// The recorded schedule when it still fits the plan (a resumed sweep
/// keeps its order); otherwise a new one, from the experiment's seed, the
/// recorded seed, or a fresh one.
fn schedule_for(plan: &Plan, opts: &Options) -> Schedule {
    let recorded = if opts.force {
        None
    } else {
        Schedule::read(&opts.out)
    };
    match recorded {
        Some(s) if s.fits(plan, opts.shard) => s,
        old => {
            let seed = plan
                .experiment
                .design
                .seed
                .or(old.map(|s| s.seed))
                .unwrap_or_else(schedule::fresh_seed);
            Schedule::new(plan, seed).for_shard(opts.shard)
        }
    }
}

/// The runs of `schedule` already done as the plan now configures them.
/// A finished run made with other flags stops the sweep (unless forced):
/// results of two configurations would be mixed.
fn done_runs(
    plan: &Plan,
    schedule: &Schedule,
    opts: &Options,
) -> Result<HashSet<(u32, String)>, SweepError> {
    let client_cpus = Cpus::written(&plan.experiment.client_cpus);
    let mut done = HashSet::new();
    if opts.force {
        return Ok(done);
    }
    for (_, repetition, slug) in schedule.runs() {
        let point = plan.find(slug).expect("the schedule fits the plan");
        let dir = layout::run_dir(&opts.out, point, repetition);
        let Some(r) = RunRecord::read(&dir.join(layout::RUN_RECORD)) else {
            continue;
        };
        if let Some(detail) = r.differs_from(point, &client_cpus) {
            return Err(SweepError::Stale { dir, detail });
        }
        // Same configuration: done if it succeeded, else tried again.
        if r.status == Status::Ok {
            done.insert((repetition, slug.to_string()));
        }
    }
    Ok(done)
}

/// The successful runs' throughputs of `point` in the schedule's blocks.
fn throughputs(plan: &Plan, schedule: &Schedule, out: &Path, point: &Point) -> Vec<f64> {
    let client_cpus = Cpus::written(&plan.experiment.client_cpus);
    (1..=schedule.repetitions_of(&point.slug))
        .filter_map(|rep| {
            let dir = layout::run_dir(out, point, rep);
            let record = RunRecord::read(&dir.join(layout::RUN_RECORD))?;
            record.done_as(point, &client_cpus).then_some(())?;
            read_load(&dir).map(|l| l.results.throughput_rps)
        })
        .collect()
}

/// Points below `max_repetitions` whose throughput CI is still wider than
/// the target (or has too few runs to tell), with that width.
fn wanting_more<'p>(
    plan: &'p Plan,
    schedule: &Schedule,
    opts: &Options,
) -> Vec<(&'p Point, Option<f64>)> {
    let design = &plan.experiment.design;
    let Some(target) = design.target_ci else {
        return vec![];
    };
    plan.points
        .iter()
        .filter(|p| schedule.repetitions_of(&p.slug) < design.max())
        .filter_map(|p| {
            let precision = (opts.precision)(&throughputs(plan, schedule, &opts.out, p));
            precision
                .is_none_or(|x| x > target)
                .then_some((p, precision))
        })
        .collect()
}

/// Points that ended above the target.
fn unresolved(plan: &Plan, schedule: &Schedule, opts: &Options) -> Vec<Unresolved> {
    let Some(target) = plan.experiment.design.target_ci else {
        return vec![];
    };
    plan.points
        .iter()
        .filter_map(|p| {
            let v = throughputs(plan, schedule, &opts.out, p);
            let precision = (opts.precision)(&v);
            precision.is_none_or(|x| x > target).then(|| Unresolved {
                slug: p.slug.clone(),
                repetitions: schedule.repetitions_of(&p.slug),
                ok: v.len(),
                precision,
            })
        })
        .collect()
}

/// Create `out`, and write the experiment file, the manifest (with this
/// machine and the shard) and the schedule into it.
fn prepare(plan: &Plan, schedule: &Schedule, opts: &Options) -> Result<(), SweepError> {
    let out = &opts.out;
    std::fs::create_dir_all(out.join(layout::RUNS))
        .map_err(|e| SweepError::io("cannot create", out, e))?;
    layout::write_atomic(&out.join(layout::EXPERIMENT), &plan.experiment.source)?;
    let manifest = Manifest {
        shard: opts.shard,
        ..Manifest::of(plan, schedule.seed)
    };
    let manifest = serde_json::to_string_pretty(&manifest).expect("serializes") + "\n";
    layout::write_atomic(&out.join(layout::MANIFEST), &manifest)?;
    schedule.write(out)
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

/// The record of a run about to start: what it runs, not yet how it ended.
fn new_record(
    plan: &Plan,
    point: &Point,
    (repetition, sequence): (u32, usize),
    server_argv: Vec<String>,
) -> RunRecord {
    let invocation = |protocol: &str, flags: &[String], argv| Invocation {
        protocol: protocol.into(),
        flags: flags.to_vec(),
        argv,
        exit_code: None,
    };
    RunRecord {
        schema: RUN_SCHEMA.into(),
        experiment: plan.experiment.name.clone(),
        point: point.index,
        slug: point.slug.clone(),
        repetition,
        sequence,
        params: point.params.clone(),
        server: invocation(&point.server_protocol, &point.server_flags, server_argv),
        load: invocation(&point.load_protocol, &point.load_flags, vec![]),
        client_cpus: Cpus::written(&plan.experiment.client_cpus),
        placement: point.placement.clone(),
        server_addr: None,
        status: Status::Failed,
        error: None,
        started_unix_s: unix_now(),
        wall_s: 0.0,
        machine: None,
    }
}

/// One run in `dir` (emptied first): repetition (block) and place in the
/// sweep's order. None: interrupted, nothing to keep.
fn run_one(
    plan: &Plan,
    point: &Point,
    (repetition, sequence): (u32, usize),
    dir: &Path,
    opts: &Options,
) -> Result<Option<RunRecord>, SweepError> {
    remove_run(dir)?;
    std::fs::create_dir_all(dir).map_err(|e| SweepError::io("cannot create", dir, e))?;
    let exe = opts.exe.to_string_lossy().into_owned();
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let argv = |args: &[String]| {
        std::iter::once(exe.clone())
            .chain(args.iter().cloned())
            .collect()
    };
    let server_args = point.serve_args(&path(layout::SERVER_JSON));
    let mut record = new_record(plan, point, (repetition, sequence), argv(&server_args));
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
    // From before the server starts until both children are reaped, so
    // their CPU time is ours, not "other processes'".
    let probe = Probe::start();
    let server = match Server::start(&opts.exe, &server_args, &log, SERVER_START) {
        Ok(s) => s,
        Err(e) => return Ok(finish(record, Some(e.to_string()))),
    };
    record.server_addr = Some(server.addr.clone());
    let load_args = point.load_args(&server.addr, &path(layout::LOAD_JSON));
    record.load.argv = argv(&load_args);
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
    record.machine = probe.and_then(Probe::finish);
    if opts.interrupted.load(Ordering::Relaxed) || matches!(end, Ok(LoadEnd::Interrupted)) {
        return Ok(None);
    }
    // Both record their exit codes; the load's error, if any, comes first.
    let load = load_error(end, &mut record, dir, &files);
    let error = load.or(server_error(stopped, &mut record, dir, &log));
    if std::fs::metadata(&files.stderr).is_ok_and(|m| m.len() == 0) {
        let _ = std::fs::remove_file(&files.stderr);
    }
    Ok(finish(record, error))
}

/// What went wrong with the load, if anything (its exit code recorded).
fn load_error(
    end: Result<LoadEnd, child::ChildError>,
    record: &mut RunRecord,
    dir: &Path,
    files: &LoadFiles,
) -> Option<String> {
    match end {
        Err(e) => Some(e.to_string()),
        Ok(LoadEnd::Interrupted) => Some("interrupted".into()),
        Ok(LoadEnd::TimedOut(t)) => Some(format!("the load ran over the timeout ({t:?})")),
        Ok(LoadEnd::Exited(status)) => {
            record.load.exit_code = status.code();
            if status.success() {
                match read_load(dir) {
                    None => Some(format!("the load wrote no readable {}", layout::LOAD_JSON)),
                    Some(report) => nothing_measured(&report),
                }
            } else {
                Some(format!(
                    "the load failed ({}): {}",
                    child::describe(Some(status)),
                    why_load_failed(dir, files)
                ))
            }
        }
    }
}

/// Why a load that exited well measured nothing a point can be made of, if
/// it did not: no request completed in its window (a server or a machine
/// stalled for the whole of it), or a throughput that is no number. Such
/// a run fails — a throughput of 0 would pass for a measurement, and a
/// scaling report would divide by it — and a resumed sweep runs it again.
fn nothing_measured(report: &LoadReport) -> Option<String> {
    let r = &report.results;
    if r.requests == 0 {
        Some(format!(
            "the load measured 0 requests in its {:.3} s window (a server or a machine \
             stalled for all of it): no throughput to record",
            r.duration_s
        ))
    } else if !r.throughput_rps.is_finite() || r.throughput_rps <= 0.0 {
        Some(format!(
            "the load measured {} requests but a throughput of {} req/s: no throughput to record",
            r.requests, r.throughput_rps
        ))
    } else {
        None
    }
}

/// The load's own words for its failure: the end of its stderr, or, where
/// it said nothing there (its text report on stdout carries the verdict),
/// the verdict its result file records: a search that found no capacity.
fn why_load_failed(dir: &Path, files: &LoadFiles) -> String {
    let said = child::tail(&files.stderr, 3);
    if !said.is_empty() {
        return said;
    }
    read_load(dir)
        .and_then(|r| r.search)
        .filter(|s| s.capacity_rps.is_none())
        .map_or_else(
            || format!("nothing on stderr; see {}", files.stdout.display()),
            |s| format!("capacity: none found at {}", s.target),
        )
}

/// What went wrong with the server's stop, if anything (its exit code
/// recorded).
fn server_error(
    stopped: Result<std::process::ExitStatus, child::ChildError>,
    record: &mut RunRecord,
    dir: &Path,
    log: &Path,
) -> Option<String> {
    match stopped {
        Ok(status) => {
            record.server.exit_code = status.code();
            if !status.success() {
                Some(format!(
                    "the server ended badly ({}): {}",
                    child::describe(Some(status)),
                    child::tail(log, 3)
                ))
            } else if !dir.join(layout::SERVER_JSON).exists() {
                Some("the server wrote no final statistics".into())
            } else {
                None
            }
        }
        Err(e) => Some(e.to_string()),
    }
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
        fn planned(&mut self, _: &Plan, _: &Schedule, _: &[&Point], _: usize) {}
        fn started(&mut self, _: RunRef<'_>) {}
        fn finished(&mut self, _: RunRef<'_>, _: &RunRecord, _: Option<f64>) {}
        fn extended(&mut self, _: u32, _: &[(&Point, Option<f64>)]) {}
    }

    fn plan(duration: &str) -> Plan {
        let text = format!(
            "protocol = \"board\"\nrepetitions = 2\n[load]\nposters = [1, 2]\nduration = \"{duration}\""
        );
        Plan::new(Experiment::parse("t.toml", &text).unwrap()).unwrap()
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
            sequence: 0,
            params: point.params.clone(),
            server: invocation(&point.server_protocol, &point.server_flags),
            load: invocation(&point.load_protocol, &point.load_flags),
            client_cpus: None,
            placement: None,
            server_addr: None,
            status: Status::Ok,
            error: None,
            started_unix_s: 0,
            wall_s: 1.0,
            machine: None,
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
            precision: |_| None,
            shard: None,
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
