//! `serverlab load bucket`.

use super::bounds::{reply_timeout_help, ReplyTimeout};
use super::shared::{LoadArgs, LoadHelp, NoLedger};
use super::{execute, PacingArgs, PlainOutputArgs};
use crate::args;
use serverlab_load::bucket::{BucketLoad, DelayRange, Stop};
use serverlab_proto::bucket::{DelayMode, DelayUnit, NAME};
use std::process::ExitCode;
use std::time::Duration;

/// Its line of `load --help`.
pub const ABOUT: &str = "Clients sending `<delay>,<bucket>` requests to a bucket server, with \
    the theoretical bound and (with --verify) a check of every bucket";

#[derive(clap::Args)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// Server address: HOST:PORT, HOST (port 12345) or :PORT, or unix:PATH for a Unix socket
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:12345", value_parser = args::endpoint(12345))]
    addr: serverlab_load::Endpoint,
    /// Concurrent clients, each with one request in flight (multiplexed on one event loop per client core)
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=10_000))]
    connections: u16,
    /// Stop after this many requests in all, every one counted (no warm-up) [default: run for --duration]
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..),
          conflicts_with_all = ["duration", "warmup", "search", "scan", "stages"])]
    requests: Option<u64>,
    /// How long to run (10s, 500ms, 2m), after the warm-up [default: 10s]
    #[arg(long, value_parser = args::duration, conflicts_with_all = ["search", "scan", "stages"])]
    duration: Option<Duration>,
    /// Delays, drawn uniformly from LO-HI units (or one number for a fixed delay), or exp:MEAN: exponentially distributed, of mean MEAN units (one worker then makes an M/M/1 queue; give the server a --max-delay that allows the tail)
    #[arg(
        long,
        visible_alias = "delays",
        value_name = "LO-HI|exp:MEAN",
        default_value = "1-3"
    )]
    delay: DelayRange,
    /// The unit delays count in: must match the server's --delay-unit
    #[arg(long, default_value = "s", value_parser = args::named::<DelayUnit>())]
    delay_unit: DelayUnit,
    /// The server's --delay-mode (for the theoretical bound only)
    #[arg(long, default_value = "spin", value_parser = args::named::<DelayMode>())]
    delay_mode: DelayMode,
    /// Buckets are drawn uniformly from 0 to N-1; at most the server's N
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..=(1 << 24)))]
    buckets: u64,
    /// Send all of a connection's requests on one TCP connection
    /// (default: a new connection per request, like the assignment's client)
    #[arg(long)]
    keep_alive: bool,
    #[command(flatten)]
    pacing: PacingArgs,
    /// Requests the server runs at once (a pool's --threads), for the bound
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    server_concurrency: Option<u64>,
    /// Cores the server runs on (the size of its --cpus), for the bound in work mode
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    server_cores: Option<u64>,
    #[command(flatten)]
    load: LoadArgs<Help, NoLedger, PlainOutputArgs>,
}

/// `load bucket`'s words for the flags it shares.
pub struct Help;

impl ReplyTimeout for Help {
    const HELP: &'static str = reply_timeout_help!("30s past twice the longest delay");
}

impl LoadHelp for Help {
    const SEED: &'static str =
        "Seed for delay and bucket choices (and an open loop's Poisson gaps)";
    const VERIFY: &'static str = "Check every reply and every bucket's final value (read with 0,b \
        before and after the run); nothing else may write to the buckets meanwhile";
}

pub fn run(mut a: Args) -> anyhow::Result<ExitCode> {
    a.duration = a.pacing.window_if(a.duration);
    let mut cfg = BucketLoad::new(a.addr);
    cfg.connections = a.connections.into();
    cfg.stop = match (a.requests, a.duration) {
        (Some(n), _) => Stop::Requests(n),
        (None, d) => Stop::DurationS(d.unwrap_or(Duration::from_secs(10)).as_secs_f64()),
    };
    cfg.delay = a.delay;
    cfg.delay_unit = a.delay_unit;
    cfg.delay_mode = a.delay_mode;
    cfg.buckets = a.buckets;
    cfg.keep_alive = a.keep_alive;
    cfg.pacing = a.pacing.pacing(a.requests.is_none());
    cfg.seed = a.load.seed;
    cfg.verify = a.load.verify;
    cfg.agent = a.pacing.agent(NAME);
    cfg.server_concurrency = a.server_concurrency;
    cfg.server_cores = a.server_cores;
    cfg.reply_timeout = a.load.bounds.reply_timeout;
    cfg.max_reply = a.load.bounds.max_reply();
    let output = &a.load.output;
    let planned = cfg.planned();
    execute(&cfg, &a.pacing, planned, output.format(), &output.files())
}
