//! `serverlab load kv`: httperf-style sessions against a kv server.

use super::bounds::{reply_timeout_help, ReplyTimeout};
use super::ledger::LedgerArgs;
use super::shared::{LoadArgs, LoadHelp};
use super::{execute, usage_error_in, PacingArgs, PlainOutputArgs};
use crate::args;
use clap::error::ErrorKind;
use serverlab_load::keyspace::ValueSize;
use serverlab_load::kv::{KeyDist, KvLoad, Mix};
use serverlab_proto::kv::NAME;
use std::process::ExitCode;
use std::time::Duration;

/// Its line of `load --help`.
pub const ABOUT: &str = "httperf-style sessions against a kv (HTTP/1.1) server: each session \
    one keep-alive connection doing R requests";

#[derive(clap::Args)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// Server address: HOST:PORT, HOST (port 8080) or :PORT, or unix:PATH for a Unix socket
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080", value_parser = args::endpoint(8080))]
    addr: serverlab_load::Endpoint,
    /// Sessions to run, each a new keep-alive connection (a search or scan: as many as its steps take)
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=10_000_000),
          conflicts_with_all = ["search", "scan", "duration", "stages"])]
    sessions: u32,
    /// Run for this long after the warm-up (10s, 2m), as wrk's -d: sessions start one after
    /// another on each slot until the window closes, and every reply in it counts
    #[arg(long, value_parser = args::duration, conflicts_with_all = ["search", "scan", "stages"])]
    duration: Option<Duration>,
    /// Requests per session, sent one after another on its connection
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    requests_per_session: u32,
    /// Sessions in flight at once (multiplexed on one event loop per client core)
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=4096))]
    concurrency: u16,
    /// Methods by weight, from get, head, put, post, delete
    #[arg(long, default_value = "get=80,put=15,delete=5", value_name = "MIX")]
    mix: Mix,
    /// Distinct keys (key0, key1, …)
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    keys: u32,
    /// How keys are drawn: uniform; zipf:S (key0 hottest); gaussian:MEAN,SD (in keys; gaussian:
    /// centred, SD a sixth of the keys); sequential (each concurrency slot its own stride)
    #[arg(long, default_value = "uniform", value_name = "DIST")]
    key_dist: KeyDist,
    /// Bytes per written value: a size (128, 4KiB), a range MIN..MAX (32..4096, uniform) or sizes
    /// by weight (64:8,1024:1)
    #[arg(long, default_value = "128", value_name = "SIZE", value_parser = args::value_size(0, 1 << 30))]
    value_size: ValueSize,
    /// Write every key once before the run (not measured)
    #[arg(long)]
    preload: bool,
    #[command(flatten)]
    pacing: PacingArgs,
    #[command(flatten)]
    load: LoadArgs<Help, LedgerArgs, PlainOutputArgs>,
}

/// `load kv`'s words for the flags it shares.
pub struct Help;

impl ReplyTimeout for Help {
    const HELP: &'static str = reply_timeout_help!("30s");
}

impl LoadHelp for Help {
    const SEED: &'static str = "Seed for methods, keys and values (a session's requests depend \
        only on it and the session number)";
    const VERIFY: &'static str =
        "Check every response: statuses, self-checking values, ETag = MD5 \
        of the body; mismatches fail the run";
}

/// A usage error of `load CMD` when `value_size` bytes are fewer than
/// `min`, what a verified value over `keys` keys needs.
pub(super) fn check_verified_value_size(cmd: &str, value_size: usize, keys: usize, min: usize) {
    if value_size < min {
        usage_error_in(
            cmd,
            ErrorKind::ValueValidation,
            format!(
                "--value-size {value_size} is too small for --verify: values carry their key and \
                 a checksum, so with --keys {keys} they need at least {min} bytes"
            ),
        );
    }
}

pub fn run(mut a: Args) -> anyhow::Result<ExitCode> {
    a.duration = a.pacing.window_if(a.duration);
    let mut cfg = KvLoad::new(a.addr);
    cfg.sessions = match a.duration {
        Some(_) => usize::MAX,
        None => a.sessions as usize,
    };
    cfg.duration = a.duration;
    cfg.requests_per_session = a.requests_per_session as usize;
    cfg.concurrency = a.concurrency.into();
    cfg.mix = a.mix;
    cfg.keys = a.keys as usize;
    cfg.key_dist = a.key_dist;
    if let Err(e) = cfg.key_dist.fits(cfg.keys) {
        usage_error_in(NAME, ErrorKind::ValueValidation, format!("--key-dist {e}"));
    }
    cfg.value_size = a.value_size;
    cfg.preload = a.preload;
    cfg.seed = a.load.seed;
    cfg.verify = a.load.verify;
    cfg.agent = a.pacing.agent(NAME);
    // Sessions are counted, every request of them: no warm-up, except in
    // a timed run (--duration, the steps of a search or scan).
    if a.pacing.warmup.is_some() && !a.pacing.steps() && a.duration.is_none() {
        usage_error_in(
            NAME,
            ErrorKind::ArgumentConflict,
            "--warmup applies to timed runs: a kv run counts every request of its --sessions \
             (use --warmup with --duration, --search or --scan)"
                .into(),
        );
    }
    cfg.pacing = a.pacing.pacing(a.duration.is_some());
    cfg.reply_timeout = a.load.bounds.reply_timeout.unwrap_or(cfg.reply_timeout);
    cfg.max_reply = a.load.bounds.max_reply();
    if cfg.verify {
        check_verified_value_size(
            NAME,
            cfg.value_size.min(),
            cfg.keys,
            cfg.min_verified_value_size(),
        );
    }
    let ledger = &a.load.ledger;
    if ledger.ledger.is_some() && cfg.agent.share(cfg.keys) < cfg.concurrency {
        usage_error_in(
            NAME,
            ErrorKind::ValueValidation,
            format!(
                "--keys {} gives this agent {} keys, fewer than --concurrency {}: with --ledger \
                 each slot owns its keys",
                cfg.keys,
                cfg.agent.share(cfg.keys),
                cfg.concurrency
            ),
        );
    }
    cfg.ledger = ledger.open()?;
    // A count of sessions has no fixed duration: the bar shows requests,
    // against a nominal minute.
    let planned = a.duration.unwrap_or(Duration::from_secs(60));
    let output = &a.load.output;
    let code = execute(&cfg, &a.pacing, planned, output.format(), &output.files())?;
    super::ledger::close(cfg.ledger.as_ref())?;
    Ok(code)
}
