//! `serverlab sweep EXPERIMENT.toml [--out DIR] [--force] [--target-ci 5%]`:
//! parse and check the experiment, then run it with a progress display.

use crate::sweep_progress::{estimate, Display};
use anyhow::Context;
use clap::Args;
use serverlab_sweep::{Experiment, Options, Plan, Shard, SweepError};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The most an experiment file may have (one is a few KiB).
const MAX_EXPERIMENT: u64 = 16 << 20;

#[derive(Args)]
pub struct SweepArgs {
    /// The experiment file (TOML; see docs/experiments.md)
    #[arg(value_name = "EXPERIMENT.toml")]
    experiment: PathBuf,
    /// Where the results go [default: results/<experiment name>]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Redo runs that are already in DIR (by default they are skipped, so a
    /// stopped sweep resumes where it was)
    #[arg(long)]
    force: bool,
    /// Check the experiment and print every point's command lines, without running
    #[arg(long)]
    dry_run: bool,
    /// Repeat each point until the 95% CI of its throughput is within this
    /// share of its mean (5% or 0.05), up to --max-repetitions [default: the
    /// experiment's target_ci]
    #[arg(long, value_name = "SHARE", value_parser = target_ci)]
    target_ci: Option<f64>,
    /// The most repetitions a point gets under a target [default: the
    /// experiment's max_repetitions, else 10]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    max_repetitions: Option<u32>,
    /// Blocks every point runs in, in place of the experiment's `repetitions`
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    repetitions: Option<u32>,
    /// How long each run's load measures (its --duration), the baseline's too, in place of the experiment's
    #[arg(long, value_name = "T", value_parser = duration_text)]
    duration: Option<String>,
    /// Run only shard I of N (I from 0): the blocks k with (k − 1) mod N =
    /// I, each with its baseline, into its own directory [default:
    /// results/<experiment name>/shard-I-of-N]; `report` reads the shards'
    /// directories together
    #[arg(long, value_name = "I/N", value_parser = Shard::parse)]
    shard: Option<Shard>,
}

/// A duration as written, once the duration grammar accepts it.
fn duration_text(text: &str) -> Result<String, String> {
    serverlab_util::duration::parse(text).map(|_| text.to_string())
}

fn target_ci(text: &str) -> Result<f64, String> {
    serverlab_sweep::design::parse_share(text)
}

/// The experiment with `--target-ci`, `--max-repetitions`,
/// `--repetitions` and `--duration` in place of its own, where given.
fn with_overrides(mut e: Experiment, a: &SweepArgs) -> Result<Experiment, String> {
    let mut design = e.design.clone();
    if let Some(n) = a.repetitions {
        design.repetitions = n;
    }
    e.design = design
        .with_target(a.target_ci, a.max_repetitions)
        .map_err(|msg| format!("--max-repetitions: {msg}"))?;
    if let Some(d) = &a.duration {
        e.set_load_flag("duration", serverlab_sweep::Scalar::Str(d.clone()));
    }
    Ok(e)
}

/// A bad experiment file: say what is wrong, exit 2.
fn bad_input(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("serverlab: {message}");
    ExitCode::from(2)
}

pub fn run(a: SweepArgs) -> anyhow::Result<ExitCode> {
    let plan = match checked_plan(&a) {
        Ok(plan) => plan,
        Err(message) => return Ok(bad_input(message)),
    };
    for note in &plan.notes {
        eprintln!("serverlab: note: {note}");
    }
    for warning in serverlab_sweep::pinning::warnings(&plan) {
        eprintln!("serverlab: warning: {warning}");
    }
    if a.dry_run {
        print_plan(&plan);
        return Ok(ExitCode::SUCCESS);
    }
    let out = a.out.clone().unwrap_or_else(|| {
        let dir = PathBuf::from("results").join(&plan.experiment.name);
        match a.shard {
            Some(shard) => dir.join(shard.dir_name()),
            None => dir,
        }
    });
    if out.exists() && !out.is_dir() {
        return Ok(bad_input(format!(
            "--out {}: a file, not a directory: name a directory for the results",
            out.display()
        )));
    }
    // Another shard of this experiment running here would share its CPUs.
    let _claim = match a.shard {
        Some(shard) => match serverlab_sweep::shard::claim(&plan.experiment.name, shard) {
            Ok(claim) => Some(claim),
            Err(message) => return Ok(bad_input(format!("--shard {shard}: {message}"))),
        },
        None => None,
    };
    let interrupted = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, interrupted.clone())
            .context("cannot install signal handlers")?;
    }
    let opts = Options {
        exe: std::env::current_exe().context("cannot find the serverlab binary")?,
        out: out.clone(),
        force: a.force,
        interrupted,
        precision: serverlab_report::stats::precision,
        shard: a.shard,
    };
    let mut display = Display::new(&out);
    let result = serverlab_sweep::run(&plan, &opts, &mut display);
    finish(result, &mut display)
}

/// The experiment as `a` names and overrides it, planned on this machine
/// and every command line checked by the binary's own parser; or what is
/// wrong with it.
fn checked_plan(a: &SweepArgs) -> Result<Plan, String> {
    let file = a.experiment.display().to_string();
    let text = serverlab_util::file::read_text_capped(&a.experiment, MAX_EXPERIMENT)
        .map_err(|e| format!("the experiment {file}: {e}"))?;
    let experiment = Experiment::parse(&file, &text).map_err(|e| e.to_string())?;
    let plan = Plan::new(with_overrides(experiment, a)?).map_err(|e| e.to_string())?;
    if let Some(shard) = a.shard {
        check_shard(&plan, shard)?;
    }
    let command = <crate::Cli as clap::CommandFactory>::command();
    let check = |args: &[String]| {
        let args = crate::argv::joined(&command, args.iter().map(Into::into));
        crate::Cli::parsed(args)
            .and_then(|(cli, matches)| cli.check(&matches))
            .map_err(|e| e.to_string())
    };
    serverlab_sweep::validate(&plan, &file, &check).map_err(|e| e.to_string())?;
    Ok(plan)
}

/// Whether `plan` can be split so: every shard gets a block, and no
/// target asks for blocks that only all the shards' results could decide.
fn check_shard(plan: &Plan, shard: Shard) -> Result<(), String> {
    let d = &plan.experiment.design;
    if d.target_ci.is_some() {
        return Err(format!(
            "--shard {shard}: a target (target_ci) adds blocks from every run's result, \
             which no shard sees alone; give the shards fixed repetitions instead"
        ));
    }
    if shard.count > d.repetitions {
        return Err(format!(
            "--shard {shard}: the experiment has {} (blocks), so at most {} shards get one; \
             raise --repetitions or use fewer shards",
            plural(d.repetitions as u64, "repetition"),
            d.repetitions
        ));
    }
    Ok(())
}

/// How a sweep ended, said, as an exit code: 1 if a run failed, 130 if
/// interrupted, 2 if the output directory does not fit the experiment.
fn finish(
    result: Result<serverlab_sweep::Summary, SweepError>,
    display: &mut Display,
) -> anyhow::Result<ExitCode> {
    match result {
        Ok(summary) => {
            display.done(&summary);
            Ok(if summary.failed > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Err(SweepError::Interrupted) => {
            display.abandon();
            eprintln!("serverlab: interrupted; run the same command again to resume");
            Ok(ExitCode::from(130))
        }
        Err(SweepError::Spec(e)) => Ok(bad_input(e)),
        Err(e @ SweepError::Stale { .. }) => {
            // The output directory does not fit the command: bad usage.
            display.abandon();
            Ok(bad_input(e))
        }
        Err(e) => {
            display.abandon();
            Err(e.into())
        }
    }
}

/// The plan, a point per line pair: what `sweep` would run.
fn print_plan(plan: &Plan) {
    let e = &plan.experiment;
    let d = &e.design;
    println!(
        "serverlab sweep {}: {}{}",
        e.name,
        runs_text(plan),
        estimate(
            plan,
            &serverlab_sweep::Calibration::default(),
            (0..d.repetitions).flat_map(|_| plan.block())
        )
        .map(|t| format!(", {t}"))
        .unwrap_or_default()
    );
    println!("{}", design_text(plan, None));
    if let Some(c) = &e.client_cpus {
        let cpus = if c.written.contains([',', '-']) {
            "CPUs"
        } else {
            "CPU"
        };
        println!("load pinned to {cpus} {}", c.written);
    }
    for p in plan.block() {
        let shared = match &p.placement {
            Some(c) if c.is_shared() => " (server and load share CPUs)",
            _ => "",
        };
        println!("{}:{shared}", p.slug);
        println!(
            "  serverlab serve {} {}",
            p.server_protocol,
            p.server_flags.join(" ")
        );
        println!(
            "  serverlab load {} {}",
            p.load_protocol,
            p.load_flags.join(" ")
        );
    }
}

/// `25 points × 4 repetitions + a baseline per block = 104 runs`.
pub fn runs_text(plan: &Plan) -> String {
    let reps = plan.experiment.design.repetitions;
    let baseline = if plan.baseline.is_some() {
        " + a baseline per block"
    } else {
        ""
    };
    format!(
        "{} × {}{baseline} = {}",
        plural(plan.points.len() as u64, "point"),
        plural(reps as u64, "repetition"),
        plural(plan.runs() as u64, "run")
    )
}

/// How runs are ordered and repeated: `order: randomized blocks (seed 7);
/// target: 95% CI within ±5% of the mean, up to 10 repetitions`.
pub fn design_text(plan: &Plan, seed: Option<u64>) -> String {
    let d = &plan.experiment.design;
    let seed = seed.or(d.seed);
    let mut text = format!("order: {}", d.order.describe());
    if let (serverlab_sweep::Order::Random, Some(s)) = (d.order, seed) {
        text += &format!(" (seed {s})");
    } else if d.order == serverlab_sweep::Order::Random {
        text += " (seed chosen when it runs, and recorded)";
    }
    if let Some(t) = d.target_ci {
        text += &format!(
            "; target: throughput's 95% CI within ±{}% of the mean, up to {}",
            100.0 * t,
            plural(d.max() as u64, "repetition")
        );
    }
    text
}

/// `1 run`, `2 runs`.
pub fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
