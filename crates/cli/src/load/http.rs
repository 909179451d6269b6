//! `serverlab load http`: any HTTP/1.1 server, with the user's own
//! requests (`--url`, or a targets file in vegeta's formats).

use super::bounds::{reply_timeout_help, ReplyTimeout};
use super::shared::{LoadArgs, LoadHelp, NoLedger};
use super::tls::TrustArgs;
use super::{execute, usage_error_in, PacingArgs, PlainOutputArgs};
use crate::args;
use clap::error::ErrorKind;
use serverlab_load::http::{targets, Expect, HttpLoad, Stop, Target, NAME};
use serverlab_load::kv::KeyDist;
use serverlab_load::Endpoint;
use serverlab_util::file::read_text_capped;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Its line of `load --help`.
pub const ABOUT: &str = "Any HTTP/1.1 server (nginx, your service, serve kv): your own URLs, \
    methods, headers and bodies, or a targets file in vegeta's formats";

#[derive(clap::Args)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// A URL to request: http://HOST[:PORT]/PATH, https://… (TLS), or /PATH with --addr; repeat
    /// for several (drawn by --weight). {key} and {value} in it are filled in per request
    #[arg(long, value_name = "URL", required_unless_present = "targets")]
    url: Vec<String>,
    /// The weight of each --url, in their order (one per --url) [default: 1 each]
    #[arg(long, value_name = "N", value_parser = parse_weight)]
    weight: Vec<u32>,
    /// The method of the --url requests
    #[arg(long, default_value = "GET", conflicts_with = "targets")]
    method: String,
    /// A header line 'Name: value' for every request (repeatable; a targets file's own come first)
    #[arg(long, value_name = "'NAME: VALUE'")]
    header: Vec<String>,
    /// The body of the --url requests: STRING, or @FILE for a file's bytes; {key} and {value}
    /// in it are filled in per request
    #[arg(long, value_name = "STRING|@FILE", conflicts_with = "targets")]
    body: Option<String>,
    /// Targets from a file, in vegeta's HTTP format (METHOD URL [weight=N], header lines, an
    /// optional @body-file line, a blank line between targets) or its JSON lines
    /// ({"method","url","header","body" in base64,"weight"})
    #[arg(long, value_name = "FILE", conflicts_with = "url")]
    targets: Option<PathBuf>,
    /// Where to connect: HOST:PORT, or unix:PATH for a Unix socket (under TLS too, for https://
    /// URLs) [default: the URLs' host, port 80 or 443]
    #[arg(long, value_name = "HOST:PORT", value_parser = args::endpoint(80))]
    addr: Option<Endpoint>,
    /// Connections, each keep-alive unless --no-keepalive
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=10_000))]
    connections: u16,
    /// How long to run (10s, 500ms, 2m), after the warm-up [default: 10s]
    #[arg(long, value_parser = args::duration, conflicts_with_all = ["requests", "search", "scan", "stages"])]
    duration: Option<Duration>,
    /// Requests to send over all connections, every one counted (no warm-up), instead of a duration
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..),
          conflicts_with_all = ["warmup", "search", "scan", "stages"])]
    requests: Option<u64>,
    /// A new connection for every request (its latency includes the connect), with
    /// 'Connection: close'
    #[arg(long)]
    no_keepalive: bool,
    /// The statuses a response may have; any other is an error, counted by status (2xx, 200,
    /// 200-299, or several: 2xx,301)
    #[arg(long, value_name = "STATUSES", default_value = "2xx")]
    expect_status: Expect,
    /// {key} is drawn from 0 to N-1
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000_000))]
    keys: u32,
    /// How {key} is drawn: uniform; zipf or zipf:S (0 hottest); gaussian:MEAN,SD; sequential
    /// (each connection its own stride)
    #[arg(long, default_value = "uniform", value_name = "DIST")]
    key_dist: KeyDist,
    /// Bytes of {value} (examples: 128, 4KiB)
    #[arg(long, default_value = "128", value_name = "SIZE", value_parser = args::size(0, 64 << 20))]
    value_size: u64,
    #[command(flatten)]
    trust: TrustArgs,
    #[command(flatten)]
    pacing: PacingArgs,
    #[command(flatten)]
    load: LoadArgs<Help, NoLedger, PlainOutputArgs>,
}

fn parse_weight(s: &str) -> Result<u32, String> {
    targets::parse_weight(s)
}

/// `load http`'s words for the flags it shares.
pub struct Help;

impl ReplyTimeout for Help {
    const HELP: &'static str = reply_timeout_help!("10s");
}

impl LoadHelp for Help {
    const SEED: &'static str = "Seed for targets, keys and values";
    const VERIFY: &'static str =
        "Every response's status must be one --expect-status allows: any other is a mismatch \
        that fails the run (without --verify it is counted as an error by status)";
}

fn bad(kind: ErrorKind, msg: String) -> ! {
    usage_error_in(NAME, kind, msg)
}

/// The targets the flags give, or a usage error naming the flag at fault.
fn targets_of(a: &Args) -> Vec<Target> {
    let mut list = match &a.targets {
        Some(path) => {
            let text = read_text_capped(path, targets::MAX_TARGETS_FILE).unwrap_or_else(|e| {
                bad(ErrorKind::Io, format!("--targets {}: {e}", path.display()))
            });
            targets::parse(&text).unwrap_or_else(|e| {
                bad(
                    ErrorKind::InvalidValue,
                    format!("--targets {}: {e}", path.display()),
                )
            })
        }
        None => url_targets(a),
    };
    if !a.weight.is_empty() {
        if a.weight.len() != list.len() {
            bad(
                ErrorKind::WrongNumberOfValues,
                format!(
                    "{} --weight for {} targets: give one weight per target, in their order",
                    a.weight.len(),
                    list.len()
                ),
            );
        }
        for (t, w) in list.iter_mut().zip(&a.weight) {
            t.weight = *w;
        }
    }
    for line in &a.header {
        for t in &mut list {
            t.header(line)
                .unwrap_or_else(|e| bad(ErrorKind::InvalidValue, format!("--header: {e}")));
        }
    }
    list
}

/// The `--url` targets, with `--method` and `--body`.
fn url_targets(a: &Args) -> Vec<Target> {
    let body = a.body.as_deref().map(|b| {
        targets::body(b).unwrap_or_else(|e| bad(ErrorKind::InvalidValue, format!("--body: {e}")))
    });
    a.url
        .iter()
        .map(|u| {
            let mut t = Target::new(&a.method, u).unwrap_or_else(|e| {
                let flag = if e.contains("method") {
                    "--method"
                } else {
                    "--url"
                };
                bad(ErrorKind::InvalidValue, format!("{flag}: {e}"))
            });
            t.body = body.clone().unwrap_or_default();
            t
        })
        .collect()
}

/// Where to connect: `--addr`, else the one host the targets name; under
/// TLS for `https://` URLs, the name checked their host's.
fn address(a: &Args, list: &[Target]) -> Endpoint {
    let tls = list.iter().any(|t| t.tls);
    if tls && list.iter().any(|t| !t.tls) {
        bad(
            ErrorKind::ArgumentConflict,
            "the targets mix http:// and https:// (or paths): one load speaks to its server \
             one way"
                .into(),
        );
    }
    if let (false, Some(flag)) = (tls, a.trust.given()) {
        bad(
            ErrorKind::ArgumentConflict,
            format!("{flag} is for TLS: give https:// URLs"),
        );
    }
    let mut hosts: Vec<&str> = list.iter().filter_map(Target::authority).collect();
    hosts.dedup();
    let host = match (&a.addr, &hosts[..]) {
        (_, [first, second, ..]) if a.addr.is_none() || tls => bad(
            ErrorKind::ArgumentConflict,
            format!(
                "the targets name two hosts, {first} and {second}: one load drives one server \
                 (pass --addr to send every request to one address)"
            ),
        ),
        (None, []) => bad(
            ErrorKind::MissingRequiredArgument,
            "the targets are paths with no host: pass --addr HOST:PORT".into(),
        ),
        (_, hosts) => hosts.first().copied(),
    };
    let port = if tls { 443 } else { 80 };
    let under = match (&a.addr, host) {
        (Some(addr), _) => addr.clone(),
        (None, Some(host)) => args::addr(port)(host)
            .map(Endpoint::Tcp)
            .unwrap_or_else(|e| bad(ErrorKind::InvalidValue, format!("the URLs' host: {e}"))),
        (None, None) => unreachable!("no host and no --addr was refused above"),
    };
    match (tls, host) {
        (true, Some(host)) => a.trust.endpoint(under, host, NAME),
        _ => under,
    }
}

pub fn run(mut a: Args) -> anyhow::Result<ExitCode> {
    a.duration = a.pacing.window_if(a.duration);
    let list = targets_of(&a);
    let addr = address(&a, &list);
    let mut cfg = HttpLoad::new(addr, list);
    cfg.connections = a.connections.into();
    cfg.stop = match (a.requests, a.duration) {
        (Some(n), _) => Stop::Requests(n),
        (None, d) => Stop::DurationS(d.unwrap_or(Duration::from_secs(10)).as_secs_f64()),
    };
    cfg.keepalive = !a.no_keepalive;
    cfg.expect_status = a.expect_status.clone();
    cfg.keys = a.keys as usize;
    cfg.key_dist = a.key_dist;
    if let Err(e) = cfg.key_dist.fits(cfg.keys) {
        usage_error_in(NAME, ErrorKind::ValueValidation, format!("--key-dist {e}"));
    }
    cfg.value_size = a.value_size as usize;
    cfg.pacing = a.pacing.pacing(a.requests.is_none());
    cfg.seed = a.load.seed;
    cfg.verify = a.load.verify;
    cfg.agent = a.pacing.agent(NAME);
    cfg.reply_timeout = a.load.bounds.reply_timeout.unwrap_or(cfg.reply_timeout);
    cfg.max_reply = a.load.bounds.max_reply();
    let output = &a.load.output;
    let planned = cfg.planned();
    execute(&cfg, &a.pacing, planned, output.format(), &output.files())
}
