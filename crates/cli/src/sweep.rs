//! `serverlab sweep EXPERIMENT.toml [--out DIR] [--force]`: parse and
//! check the experiment, then run it with a progress display.

use crate::sweep_progress::{estimate, Display};
use anyhow::Context;
use clap::{Args, Parser};
use serverlab_sweep::{Experiment, Options, Plan, SweepError};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

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
}

/// A bad experiment file: say what is wrong, exit 2.
fn bad_input(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("serverlab: {message}");
    ExitCode::from(2)
}

pub fn run(a: SweepArgs) -> anyhow::Result<ExitCode> {
    let file = a.experiment.display().to_string();
    let text = match std::fs::read_to_string(&a.experiment) {
        Ok(t) => t,
        Err(e) => return Ok(bad_input(format!("cannot read the experiment {file}: {e}"))),
    };
    let experiment = match Experiment::parse(&file, &text) {
        Ok(e) => e,
        Err(e) => return Ok(bad_input(e)),
    };
    let plan = Plan::new(experiment);
    let check = |args: &[String]| {
        crate::Cli::try_parse_from(args)
            .and_then(|cli| cli.check())
            .map_err(|e| e.to_string())
    };
    if let Err(e) = serverlab_sweep::validate(&plan, &file, &check) {
        return Ok(bad_input(e));
    }
    for warning in serverlab_sweep::pinning::warnings(&plan) {
        eprintln!("serverlab: warning: {warning}");
    }
    if a.dry_run {
        print_plan(&plan);
        return Ok(ExitCode::SUCCESS);
    }
    let out = a
        .out
        .unwrap_or_else(|| PathBuf::from("results").join(&plan.experiment.name));
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
    };
    let mut display = Display::new(&out);
    match serverlab_sweep::run(&plan, &opts, &mut display) {
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
    let runs = plan.runs();
    println!(
        "serverlab sweep {}: {} points × {} repetitions = {runs} runs{}",
        e.name,
        plan.points.len(),
        e.repetitions,
        estimate(plan, (0..e.repetitions).flat_map(|_| &plan.points))
            .map(|t| format!(", {t}"))
            .unwrap_or_default()
    );
    if let Some(c) = &e.client_cpus {
        println!("load pinned to CPUs {}", c.written);
    }
    for p in &plan.points {
        println!("{}:", p.slug);
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
