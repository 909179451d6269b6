//! `serverlab check <protocol> [ADDR]`: flags, a check from the check
//! library, its output, and the exit code (0 all passed, 1 something
//! failed or the server could not be checked — unreachable, or not
//! speaking the protocol —, 2 bad usage), as `load`'s.

mod board;
mod bucket;
mod kv;
mod ledger;
mod progress;
mod resp;

use crate::args;
use clap::error::ErrorKind;
use clap::{Args, FromArgMatches, Subcommand, ValueEnum};
use serverlab_check::concurrency::Plan;
use serverlab_check::{text, CheckError, Event, Options, Protocol, Report};
use serverlab_util::addr::HostPort;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct CheckCmd {
    #[command(subcommand)]
    protocol: CheckProtocol,
}

/// A protocol's `check` flags beyond the common ones (the server's limits
/// and its own), and the check they describe. Each lives in its own file
/// here, `module::Flags`, named after the protocol in
/// `serverlab_proto::for_each_protocol!`.
trait Checker: Args + FromArgMatches {
    /// Its line of `check --help`.
    const ABOUT: &'static str;
    type Check: Protocol;
    fn check(self) -> Self::Check;
    /// `--ledger`, for a protocol whose data it can check.
    fn ledger(&self) -> Option<(&ledger::LedgerArgs, ledger::Fetch)> {
        None
    }
}

// Not a doc comment: clap would take it as every subcommand's `about`.
#[derive(Args)]
struct CheckArgs<F: Checker> {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    own: F,
}

/// `CheckProtocol`, the `check` subcommands, and `run`, from the
/// registry.
macro_rules! checks {
    ([] $($module:ident: $variant:ident),* $(,)?) => {
        #[derive(Subcommand)]
        enum CheckProtocol {
            $(
                #[command(
                    name = <<$module::Flags as Checker>::Check as Protocol>::NAME,
                    about = <$module::Flags as Checker>::ABOUT
                )]
                $variant(CheckArgs<$module::Flags>),
            )*
        }

        /// Each protocol's `check` subcommand and the names its `--only`
        /// and `--skip` take (for the completion scripts).
        pub fn case_names() -> Vec<(&'static str, Vec<&'static str>)> {
            vec![$({
                type P = <$module::Flags as Checker>::Check;
                (<P as Protocol>::NAME, serverlab_check::run::names::<P>())
            }),*]
        }

        pub fn run(cmd: CheckCmd) -> anyhow::Result<ExitCode> {
            match cmd.protocol {
                $(CheckProtocol::$variant(a) => {
                    type P = <$module::Flags as Checker>::Check;
                    let ledger = a.own.ledger().and_then(|(l, fetch)| {
                        l.run(server_addr::<P>(a.common.addr), fetch)
                    });
                    match ledger {
                        Some(result) => result,
                        None => check(&mut a.own.check(), &a.common),
                    }
                })*
            }
        }
    };
}

serverlab_proto::for_each_protocol!(checks);

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A line per case, failures with their transcript, the verdict and any witness
    Text,
    /// Everything, as JSON (schema serverlab-check/1)
    Json,
}

// Flags every check takes.
#[derive(Args)]
#[command(allow_negative_numbers = true)]
struct CommonArgs {
    /// The server: HOST:PORT, HOST alone for the protocol's port, or :PORT on 127.0.0.1
    /// [default: 127.0.0.1 and the protocol's port]
    #[arg(value_name = "ADDR", value_parser = args::host_port)]
    addr: Option<HostPort>,
    /// Run only these cases (comma-separated or repeated; `linearizable` is the concurrency phase)
    #[arg(long, value_name = "CASE", value_delimiter = ',')]
    only: Vec<String>,
    /// Skip these cases (comma-separated or repeated)
    #[arg(long, value_name = "CASE", value_delimiter = ',')]
    skip: Vec<String>,
    /// Only the original assignment's rules: skip serverlab's own choices
    /// (LF framing, limits, the EXIT policy, kv's reserved paths)
    #[arg(long)]
    assignment: bool,
    /// Clients in the concurrency phase
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=256))]
    concurrency: u16,
    /// How long the concurrency phase runs (5s, 500ms)
    #[arg(long, default_value = "5s", value_parser = args::duration)]
    duration: Duration,
    /// Seed of the concurrency phase's random operations [default: random, printed]
    #[arg(long)]
    seed: Option<u64>,
    /// How long to wait for any one reply (beyond a request's own delay)
    #[arg(long, default_value = "5s", value_parser = args::duration)]
    timeout: Duration,
    /// Search steps per partition before the verdict is "inconclusive"
    #[arg(long, default_value_t = serverlab_check::lin::DEFAULT_STEPS, value_parser = clap::value_parser!(u64).range(1..))]
    budget: u64,
    /// Wall-clock time the linearizability check of the history may take before the verdict is
    /// "inconclusive" (30s, 2m)
    #[arg(long, default_value = "30s", value_parser = args::duration, value_name = "DURATION")]
    lin_budget: Duration,
    /// Configurations one search may remember (its memory, a few dozen bytes each) before the
    /// verdict is "inconclusive"
    #[arg(long, default_value_t = serverlab_check::lin::DEFAULT_STATES, value_parser = at_least_one, value_name = "N")]
    lin_states: usize,
    /// How to print the result
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

fn check<P: Protocol>(proto: &mut P, a: &CommonArgs) -> anyhow::Result<ExitCode> {
    let addr = server_addr::<P>(a.addr);
    let opts = Options {
        only: a.only.clone(),
        skip: a.skip.clone(),
        assignment: a.assignment,
        plan: Plan {
            clients: usize::from(a.concurrency),
            duration: a.duration,
            seed: a.seed.unwrap_or_else(random_seed),
            timeout: a.timeout,
            budget_steps: a.budget,
            lin_budget: a.lin_budget,
            lin_states: a.lin_states,
            assignment: a.assignment,
        },
    };
    let text = a.format == Format::Text;
    let mut out = std::io::stdout().lock();
    let mut print = |s: String| {
        // A closed stdout ends the process quietly (SIGPIPE is default).
        let _ = out.write_all(s.as_bytes());
        let _ = out.flush();
    };
    let mut shown = None;
    let result = serverlab_check::run(proto, addr, &opts, &mut |e| {
        if !text {
            return;
        }
        match e {
            Event::Started(r) => print(text::header(r)),
            Event::Case(c) => print(text::case(c)),
            Event::ConcurrencyStarts(p) => {
                print(text::concurrency_starts(p));
                shown = progress::Shown::start(p.duration, p.lin_budget);
            }
            Event::Concurrency(c) => {
                shown.take();
                print(text::concurrency(c));
            }
        }
    });
    drop(shown);
    match result {
        Ok(report) => finish(&report, a.format),
        Err(CheckError::Usage(msg)) => usage_error(P::NAME, ErrorKind::InvalidValue, msg),
        Err(
            e @ (CheckError::Unreachable { .. }
            | CheckError::NotTheProtocol(_)
            | CheckError::Setup(_)),
        ) => {
            // One line, and exit 1, as `load` does.
            eprintln!("serverlab check: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

/// Where the server is: ADDR, its port the protocol's when not written;
/// without ADDR, 127.0.0.1 and the protocol's port.
fn server_addr<P: Protocol>(given: Option<HostPort>) -> SocketAddr {
    given.map_or(
        SocketAddr::from((Ipv4Addr::LOCALHOST, P::DEFAULT_PORT)),
        |a| a.or_port(P::DEFAULT_PORT),
    )
}

fn finish(report: &Report, format: Format) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match format {
        Format::Text => write!(out, "{}", text::summary(report))?,
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(report)?)?,
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("'{s}' is not a whole number of at least 1")),
    }
}

fn random_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    t.as_nanos() as u64 ^ u64::from(std::process::id()).rotate_left(32)
}

/// Usage error of `check <protocol>` in clap's style (exit 2).
fn usage_error(protocol: &str, kind: ErrorKind, msg: String) -> ! {
    crate::usage_error_of("check", protocol, kind, msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_protocol_s_port_unless_written() {
        use serverlab_check::{Board, Kv};
        assert_eq!(server_addr::<Kv>(None).to_string(), "127.0.0.1:8080");
        let host = args::host_port("127.0.0.2").unwrap();
        assert_eq!(
            server_addr::<Board>(Some(host)).to_string(),
            "127.0.0.2:12345"
        );
        let port = args::host_port(":9").unwrap();
        assert_eq!(server_addr::<Board>(Some(port)).to_string(), "127.0.0.1:9");
    }
}
