//! `serverlab load <protocol>`: flags (and the reference client's
//! positional form), a run from the load library, and its output.

use anyhow::Context;
use clap::error::ErrorKind;
use clap::{Args, Subcommand, ValueEnum};
use serverlab_load::output;
use serverlab_load::report::LoadReport;
use std::path::PathBuf;
use std::process::ExitCode;

mod agent;
mod board;
mod bounds;
mod bucket;
mod http;
mod kv;
mod ledger;
mod metrics;
mod model;
mod resp;
mod shared;
mod tls;

pub use model::{execute, PacingArgs};

#[derive(Args)]
pub struct LoadCmd {
    #[command(subcommand)]
    protocol: LoadProtocol,
}

/// The loads, one per protocol of `serverlab_proto::for_each_protocol!`:
/// each protocol's module here has an `Args` (its flags), an `ABOUT` (its
/// line of `load --help`) and a `run`. Adding a protocol's load adds its
/// module (docs/design.md, "Adding a protocol").
macro_rules! loads {
    ([] $($module:ident: $variant:ident),* $(,)?) => {
        #[derive(Subcommand)]
        enum LoadProtocol {
            $(#[command(name = stringify!($module), about = $module::ABOUT)] $variant($module::Args),)*
            // Not a protocol of serverlab's: any HTTP/1.1 server.
            #[command(name = "http", about = http::ABOUT)]
            Http(http::Args),
        }

        fn dispatch(protocol: LoadProtocol) -> anyhow::Result<ExitCode> {
            match protocol {
                $(LoadProtocol::$variant(a) => $module::run(a),)*
                LoadProtocol::Http(a) => http::run(a),
            }
        }
    };
}

serverlab_proto::for_each_protocol!(loads);

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Totals, rates, latency percentiles, errors, client CPU
    Text,
    /// The CAPS reference client's output, byte for byte (board only)
    Caps,
    /// Everything, as JSON (schema serverlab-load/3)
    Json,
    /// A row per operation: count, rate, latency percentiles in µs (docs/load-json.md, "CSV")
    Csv,
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
    /// Also write the requests answered in each second (and, open loop, their latency) as CSV
    #[arg(long, value_name = "FILE.csv")]
    pub per_second: Option<PathBuf>,
}

impl OutputArgs {
    pub fn files(&self) -> OutputFiles {
        OutputFiles {
            json: self.json.clone(),
            per_second: self.per_second.clone(),
        }
    }
}

/// The files a result is written to besides what is printed.
#[derive(Default)]
pub struct OutputFiles {
    /// The whole result, as JSON (`--json`).
    pub json: Option<PathBuf>,
    /// The per-second series, as CSV (`--per-second`).
    pub per_second: Option<PathBuf>,
}

impl OutputFiles {
    /// Writes each file asked for.
    fn write(&self, report: &LoadReport) -> anyhow::Result<()> {
        let files = [
            (&self.json, output::json as fn(&LoadReport) -> String),
            (&self.per_second, output::csv::per_second),
        ];
        for (path, render) in files {
            if let Some(path) = path {
                std::fs::write(path, render(report))
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
        }
        Ok(())
    }
}

/// The formats of a load with no reference client's output (bucket, kv).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlainFormat {
    /// Totals, rates, latency percentiles, errors, client CPU
    Text,
    /// Everything, as JSON (schema serverlab-load/3)
    Json,
    /// A row per operation: count, rate, latency percentiles in µs (docs/load-json.md, "CSV")
    Csv,
}

impl From<PlainFormat> for Format {
    fn from(f: PlainFormat) -> Format {
        match f {
            PlainFormat::Text => Format::Text,
            PlainFormat::Json => Format::Json,
            PlainFormat::Csv => Format::Csv,
        }
    }
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
    /// Also write the requests answered in each second (and, open loop, their latency) as CSV
    #[arg(long, value_name = "FILE.csv")]
    pub per_second: Option<PathBuf>,
}

impl PlainOutputArgs {
    pub fn format(&self) -> Format {
        self.format.into()
    }

    pub fn files(&self) -> OutputFiles {
        OutputFiles {
            json: self.json.clone(),
            per_second: self.per_second.clone(),
        }
    }
}

pub fn run(cmd: LoadCmd) -> anyhow::Result<ExitCode> {
    dispatch(cmd.protocol)
}

pub use board::said_of_the_form;

/// Usage error in clap's style (exit 2), naming what is wrong.
pub(crate) fn usage_error(kind: ErrorKind, msg: String) -> ! {
    usage_error_in(serverlab_proto::board::NAME, kind, msg)
}

/// Usage error of `load <protocol>` in clap's style (exit 2).
pub(crate) fn usage_error_in(protocol: &str, kind: ErrorKind, msg: String) -> ! {
    crate::usage_error_of("load", protocol, kind, msg)
}

/// Print the report in `format`, write the files asked for, and pick the
/// exit code.
/// A run in which no request was answered at all is a failure to say in
/// one line with what to do next, not a table of zeros (the JSON, if
/// asked for, is still written).
pub fn emit(report: &LoadReport, format: Format, files: &OutputFiles) -> anyhow::Result<ExitCode> {
    if let Some(first) = nothing_answered(report) {
        files.write(report)?;
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
    print!("{}", rendered(report, format));
    files.write(report)?;
    if report.failed() {
        say_failed(report, format);
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The report as `format` prints it.
fn rendered(report: &LoadReport, format: Format) -> String {
    match format {
        Format::Text => output::text::render(report),
        Format::Caps => {
            // The reference client's output has no room for it: a CAPS
            // student must still see that the client, not their server,
            // may have set the pace.
            if let Some(warning) = output::text::client_warning(
                &report.results.client_cpu,
                output::text::pinned(report),
            ) {
                eprintln!("serverlab: warning: {warning}");
            }
            output::caps::render(report)
        }
        Format::Json => output::json(report),
        Format::Csv => output::csv::operations(report),
    }
}

/// A failed run's last words on stderr: its errors and mismatches where
/// the output did not show them, then that it failed.
fn say_failed(report: &LoadReport, format: Format) {
    if format != Format::Text {
        for e in &report.results.errors {
            eprintln!("serverlab: {e}");
        }
        for e in &report.results.verification.examples {
            eprintln!("serverlab: mismatch: {e}");
        }
    }
    let errors = if report.results.errors.is_empty() {
        "no errors"
    } else {
        "the errors above"
    };
    eprintln!(
        "serverlab: the run failed ({errors}, {})",
        serverlab_util::plural(
            report.results.verification.mismatches,
            "verification mismatch",
            "verification mismatches"
        )
    );
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
    // serverlab's servers do not speak TLS: a TLS server is the user's.
    let tls = addr.strip_prefix("tls://");
    if let (true, Some(under)) = (error.contains("Connection refused"), tls) {
        format!("; nothing listens at {under}: start your TLS server, or point --addr at it")
    } else if error.contains("Connection refused") && protocol == serverlab_load::http::NAME {
        format!(
            "; nothing listens at {addr}: start your server, or point --addr (or the URLs) at it"
        )
    } else if error.contains("Connection refused") {
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
