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
mod bounds;
mod bucket;
mod kv;
mod model;
mod resp;

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
    /// Any server speaking Redis's protocol (serve resp, redis-server): a command mix over keys,
    /// or the board mapped onto lists (--workload board); checked with --verify.
    Resp(resp),
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

/// The formats of a load with no reference client's output (bucket, kv).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlainFormat {
    /// Totals, rates, latency percentiles, errors, client CPU
    Text,
    /// Everything, as JSON (schema serverlab-load/3)
    Json,
}

/// Output flags of a load with no reference client's output.
#[derive(Args)]
pub struct PlainOutputArgs {
    /// How to print the result
    #[arg(long, value_enum, default_value = "text")]
    format: PlainFormat,
    /// Also write the full result as JSON to this file
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

impl PlainOutputArgs {
    pub fn format(&self) -> Format {
        match self.format {
            PlainFormat::Text => Format::Text,
            PlainFormat::Json => Format::Json,
        }
    }
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
/// A run in which no request was answered at all is a failure to say in
/// one line with what to do next, not a table of zeros (the JSON, if
/// asked for, is still written).
pub fn emit(
    report: &LoadReport,
    format: Format,
    json: Option<&PathBuf>,
) -> anyhow::Result<ExitCode> {
    if let Some(first) = nothing_answered(report) {
        if let Some(path) = json {
            std::fs::write(path, output::json(report))
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        if format == Format::Json {
            print!("{}", output::json(report));
        }
        let n = report.results.errors.len();
        let all = if n > 1 {
            format!(" ({n} errors, all clients)")
        } else {
            String::new()
        };
        let addr = report
            .config
            .get("addr")
            .and_then(|a| a.as_str())
            .unwrap_or("");
        eprintln!(
            "serverlab: no request was answered: {first}{all}{}",
            next_step(first, &report.protocol, addr)
        );
        return Ok(ExitCode::from(1));
    }
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

/// The first error of a run in which not one request was answered.
fn nothing_answered(report: &LoadReport) -> Option<&str> {
    let r = &report.results;
    let silent = r.requests == 0 && r.late_replies == 0 && r.per_second.iter().all(|&n| n == 0);
    let steps = report.search.is_some() || report.scan.is_some();
    r.errors
        .first()
        .filter(|_| silent && !steps)
        .map(String::as_str)
}

/// What to do about a network error of a `protocol` load of `addr`, as
/// "; <advice>" (empty when there is nothing useful to add).
pub(crate) fn next_step(error: &str, protocol: &str, addr: &str) -> String {
    let addr = if addr.is_empty() { "HOST:PORT" } else { addr };
    if error.contains("Connection refused") {
        format!(
            "; nothing listens there: start a server with `serverlab serve {protocol} --addr {addr}` \
             (in another terminal), or point --addr at yours"
        )
    } else if error.contains("does not look like") {
        format!(
            "; is --addr {addr} the {protocol} server? `serverlab load PROTOCOL` must name the \
             protocol the server speaks"
        )
    } else if error.contains("closed the connection") || error.contains("reset by peer") {
        format!(
            "; the server at {addr} accepted the connection, then closed it: is it a {protocol} \
             server, and not at its connection limit?"
        )
    } else if error.contains("timed out") || error.contains("no reply within") {
        "; the server accepted or answered nothing in time: is it stopped (SIGSTOP), \
         overloaded, or another program?"
            .into()
    } else {
        String::new()
    }
}
