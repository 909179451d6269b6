//! `serverlab load <protocol>`: flags (and the reference client's
//! positional form), a run from the load library, and its output.

use anyhow::Context;
use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Subcommand, ValueEnum};
use serverlab_load::output;
use serverlab_load::report::LoadReport;
use std::path::PathBuf;
use std::process::ExitCode;

mod board;
mod bucket;
mod kv;
mod model;

pub use model::{execute, PacingArgs};

#[derive(Args)]
pub struct LoadCmd {
    #[command(subcommand)]
    protocol: LoadProtocol,
}

/// The loads, one entry each: `Variant(module)`, where the module has an
/// `Args` (its flags) and a `run`. Adding a protocol's load adds its
/// module and one entry (docs/design.md, "Adding a protocol").
macro_rules! loads {
    ($($(#[$doc:meta])* $variant:ident($module:ident),)*) => {
        #[derive(Subcommand)]
        enum LoadProtocol {
            $($(#[$doc])* $variant($module::Args),)*
        }

        fn dispatch(protocol: LoadProtocol) -> anyhow::Result<ExitCode> {
            match protocol {
                $(LoadProtocol::$variant(a) => $module::run(a),)*
            }
        }
    };
}

loads! {
    /// Posters and readers against a board server (or `load board IP POSTERS READERS SECONDS THROTTLE`,
    /// the reference client's form).
    Board(board),
    /// Clients sending `<delay>,<bucket>` requests to a bucket server, with the
    /// theoretical bound and (with --verify) a check of every bucket.
    Bucket(bucket),
    /// httperf-style sessions against a kv (HTTP/1.1) server: each session one keep-alive
    /// connection doing R requests.
    Kv(kv),
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Totals, rates, latency percentiles, errors, client CPU
    Text,
    /// The CAPS reference client's output, byte for byte (board only)
    Caps,
    /// Everything, as JSON (schema serverlab-load/3)
    Json,
}

/// Output flags every load takes.
#[derive(Args)]
pub struct OutputArgs {
    /// How to print the result
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Also write the full result as JSON to this file
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

pub fn run(cmd: LoadCmd) -> anyhow::Result<ExitCode> {
    dispatch(cmd.protocol)
}

/// Usage error in clap's style (exit 2), naming what is wrong.
pub(crate) fn usage_error(kind: ErrorKind, msg: String) -> ! {
    usage_error_in("board", kind, msg)
}

/// Usage error of `load <protocol>` in clap's style (exit 2).
pub(crate) fn usage_error_in(protocol: &str, kind: ErrorKind, msg: String) -> ! {
    let mut cmd = crate::Cli::command();
    let sub = cmd
        .find_subcommand_mut("load")
        .and_then(|l| l.find_subcommand_mut(protocol))
        .cloned()
        .map(|c| c.bin_name(format!("serverlab load {protocol}")));
    sub.unwrap_or(cmd).error(kind, msg).exit()
}

/// Print the report in `format`, write JSON if asked, and pick the exit code.
pub fn emit(
    report: &LoadReport,
    format: Format,
    json: Option<&PathBuf>,
) -> anyhow::Result<ExitCode> {
    let text = match format {
        Format::Text => output::text::render(report),
        Format::Caps => output::caps::render(report),
        Format::Json => output::json(report),
    };
    print!("{text}");
    if let Some(path) = json {
        std::fs::write(path, output::json(report))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if report.failed() {
        if format != Format::Text {
            for e in &report.results.errors {
                eprintln!("serverlab: {e}");
            }
            for e in &report.results.verification.examples {
                eprintln!("serverlab: mismatch: {e}");
            }
        }
        eprintln!(
            "serverlab: the run failed ({} errors, {} verification mismatches)",
            report.results.errors.len(),
            report.results.verification.mismatches
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
