//! `serverlab check <protocol> [ADDR]`: flags, a check from the check
//! library, its output, and the exit code (0 all passed, 1 something
//! failed, 2 bad usage or an unreachable server).

use crate::args;
use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Subcommand, ValueEnum};
use serverlab_check::concurrency::Plan;
use serverlab_check::{text, CheckError, Event, Options, Protocol, Report};
use serverlab_proto::bucket::DelayUnit;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct CheckCmd {
    #[command(subcommand)]
    protocol: CheckProtocol,
}

#[derive(Subcommand)]
enum CheckProtocol {
    /// The message board: every rule of the CAPS protocol, then POST/READ/COUNT/LIST
    /// from many clients, checked for linearizability per topic.
    Board(BoardArgs),
    /// Delay-and-add buckets: every rule, then concurrent adds, checked per bucket.
    Bucket(BucketArgs),
    /// The HTTP/1.1 key-value store: every rule, then concurrent GET/HEAD/PUT/POST/DELETE,
    /// checked per key.
    Kv(KvArgs),
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A line per case, failures with their transcript, the verdict and any witness
    Text,
    /// Everything, as JSON (schema serverlab-check/1)
    Json,
}

/// Flags every check takes.
#[derive(Args)]
struct CommonArgs {
    /// The server: HOST:PORT, or HOST alone for the protocol's port
    /// [default: 127.0.0.1 and the protocol's port]
    #[arg(value_name = "ADDR")]
    addr: Option<String>,
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
    /// How to print the result
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(Args)]
struct BoardArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Also send EXIT, as the last case: it stops the server
    #[arg(long)]
    include_exit: bool,
    /// The server's --max-request
    #[arg(long, default_value_t = 65535, value_parser = clap::value_parser!(u64).range(64..=1 << 30))]
    max_request: u64,
}

#[derive(Args)]
struct BucketArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// The server's number of buckets [default: found by probing on throw-away connections]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    buckets: Option<u64>,
    /// The server's --delay-unit
    #[arg(long, default_value = "s", value_parser = args::named::<DelayUnit>())]
    delay_unit: DelayUnit,
    /// The server's --max-delay, in delay units
    #[arg(long, default_value_t = 60)]
    max_delay: u64,
    /// The server's --max-line
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=65536))]
    max_line: u64,
}

#[derive(Args)]
struct KvArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// The server's --max-value
    #[arg(long, default_value = "1MiB", value_parser = args::size(1, 1 << 30))]
    max_value: u64,
    /// The server's --max-uri
    #[arg(long, default_value = "2KiB", value_parser = args::size(64, 1 << 20))]
    max_uri: u64,
    /// The server's --max-headers
    #[arg(long, default_value = "16KiB", value_parser = args::size(64, 1 << 20))]
    max_headers: u64,
    /// The server's --header-timeout (the 408 case waits this long)
    #[arg(long, default_value = "10s", value_parser = args::duration)]
    header_timeout: Duration,
}

pub fn run(cmd: CheckCmd) -> anyhow::Result<ExitCode> {
    match cmd.protocol {
        CheckProtocol::Board(a) => {
            let mut p = serverlab_check::Board {
                include_exit: a.include_exit,
                max_request: a.max_request as usize,
            };
            check(&mut p, &a.common)
        }
        CheckProtocol::Bucket(a) => {
            let mut p = serverlab_check::Bucket {
                buckets: a.buckets,
                delay_unit: a.delay_unit,
                max_delay: a.max_delay,
                max_line: a.max_line as usize,
            };
            check(&mut p, &a.common)
        }
        CheckProtocol::Kv(a) => {
            let mut p = serverlab_check::Kv {
                max_value: a.max_value,
                max_uri: a.max_uri as usize,
                max_headers: a.max_headers as usize,
                header_timeout: a.header_timeout,
            };
            check(&mut p, &a.common)
        }
    }
}

fn check<P: Protocol>(proto: &mut P, a: &CommonArgs) -> anyhow::Result<ExitCode> {
    let addr = serverlab_check::addr::parse(a.addr.as_deref(), P::DEFAULT_PORT)
        .unwrap_or_else(|e| usage_error(P::NAME, ErrorKind::ValueValidation, format!("ADDR: {e}")));
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
    let result = serverlab_check::run(proto, addr, &opts, &mut |e| {
        if text {
            print(match e {
                Event::Started(r) => text::header(r),
                Event::Case(c) => text::case(c),
                Event::ConcurrencyStarts(p) => text::concurrency_starts(p),
                Event::Concurrency(c) => text::concurrency(c),
            });
        }
    });
    match result {
        Ok(report) => finish(&report, a.format),
        Err(CheckError::Usage(msg)) => usage_error(P::NAME, ErrorKind::InvalidValue, msg),
        Err(e @ CheckError::Unreachable { .. }) => {
            eprintln!("serverlab check: {e}");
            Ok(ExitCode::from(2))
        }
        Err(e @ CheckError::Setup(_)) => {
            eprintln!("serverlab check: {e}");
            Ok(ExitCode::from(1))
        }
    }
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

fn random_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    t.as_nanos() as u64 ^ u64::from(std::process::id()).rotate_left(32)
}

/// Usage error of `check <protocol>` in clap's style (exit 2).
fn usage_error(protocol: &str, kind: ErrorKind, msg: String) -> ! {
    let mut cmd = crate::Cli::command();
    let sub = cmd
        .find_subcommand_mut("check")
        .and_then(|l| l.find_subcommand_mut(protocol))
        .cloned()
        .map(|c| c.bin_name(format!("serverlab check {protocol}")));
    sub.unwrap_or(cmd).error(kind, msg).exit()
}
