//! `serverlab load resp`: any server speaking Redis's protocol.

use super::board::{BoardArgs, BoardHelp};
use super::bounds::{reply_timeout_help, ReplyTimeout};
use super::kv::check_verified_value_size;
use super::ledger::LedgerArgs;
use super::shared::{LoadArgs, LoadHelp};
use super::tls::TrustArgs;
use super::{execute, usage_error_in, Format, OutputArgs, PacingArgs};
use crate::args;
use clap::error::ErrorKind;
use serverlab_load::keyspace::ValueSize;
use serverlab_load::resp::{Auth, Command, KeyPattern, Mix, RespLoad, Stop, Workload};
use serverlab_proto::resp::NAME;
use std::process::ExitCode;
use std::time::Duration;

/// Its line of `load --help`.
pub const ABOUT: &str = "Any server speaking Redis's protocol (serve resp, redis-server): a \
    command mix over keys, the board mapped onto lists (--workload board), or publish/subscribe \
    delivery (--workload pubsub); checked with --verify";

#[derive(clap::Args)]
pub struct Args {
    /// Server address (serverlab's `serve resp`, redis-server, …): HOST:PORT, HOST (port 6379) or :PORT, or unix:PATH for a Unix socket
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:6379", value_parser = args::named_endpoint(6379))]
    addr: args::NamedEndpoint,
    /// Speak TLS to the server (redis-server's tls-port), the certificate checked as --cacert
    /// or --insecure say (else against Mozilla's roots)
    #[arg(long)]
    tls: bool,
    /// TLS: the server name sent and checked against its certificate [default: --addr's host]
    #[arg(long, value_name = "NAME", requires = "tls")]
    sni: Option<String>,
    #[command(flatten)]
    trust: TrustArgs,
    /// What to send
    #[arg(long, default_value = "keys", value_parser = args::named::<Workload>())]
    workload: Workload,
    /// Connections (keys workload), each persistent
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u16).range(1..=4096))]
    connections: u16,
    /// How long to run (10s, 500ms), after the warm-up
    #[arg(long, default_value = "10s", value_parser = args::duration,
          conflicts_with_all = ["requests", "search", "scan", "stages"])]
    duration: Duration,
    /// Requests to send over all connections, every one counted (no warm-up), instead of a
    /// duration (redis-benchmark's -n)
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..),
          conflicts_with_all = ["warmup", "search", "scan", "stages"])]
    requests: Option<u64>,
    #[command(flatten)]
    pacing: PacingArgs,
    /// Commands by weight, from get, set, del, exists, incr, mget, mset, lpush, rpush, lpop,
    /// rpop, llen, lindex, lrange
    #[arg(
        long,
        default_value = "get=80,set=20",
        value_name = "MIX",
        conflicts_with = "command"
    )]
    mix: Mix,
    /// A command of your own instead of the mix, repeatable (memtier_benchmark's --command):
    /// __key__ is a key drawn as --key-dist says, __data__ a value of --value-size (example:
    /// 'HSET __key__ f __data__'). No model: replies are checked for errors only
    #[arg(long, value_name = "COMMAND")]
    command: Vec<String>,
    /// Each --command's weight, in their order (given for all of them or none) [default: 1 each]
    #[arg(long, value_name = "N", requires = "command",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    command_weight: Vec<u32>,
    /// AUTH on every connection before the run: PASSWORD, or USER:PASSWORD (Redis 6 ACLs)
    #[arg(long, value_name = "[USER:]PASSWORD", value_parser = Auth::parse)]
    auth: Option<Auth>,
    /// SELECT this database on every connection before the run
    #[arg(long, value_name = "N")]
    db: Option<u32>,
    /// Distinct keys of each kind (key:N strings, counter:N, list:N)
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u32).range(1..=100_000_000))]
    keys: u32,
    /// How keys are drawn: uniform; zipf (exponent 0.99) or zipf:S (the lowest keys hottest);
    /// gaussian:MEAN,SD (in keys; gaussian: centred, SD a sixth of the keys); sequential (each
    /// connection its own stride, as memtier's P)
    #[arg(
        long,
        visible_alias = "key-dist",
        default_value = "uniform",
        value_name = "PATTERN"
    )]
    key_pattern: KeyPattern,
    /// Bytes per value written: a size (64, 4KiB), a range MIN..MAX (32..4096, uniform) or sizes
    /// by weight (64:8,1024:1)
    #[arg(long, default_value = "64", value_name = "SIZE", value_parser = args::value_size(1, 512 << 20))]
    value_size: ValueSize,
    /// Read-only keys written before a verified run and read by every connection
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(0..=10_000_000))]
    shared_keys: u32,
    /// Write every string key once before the run (not measured)
    #[arg(long)]
    preload: bool,
    #[command(flatten)]
    board: BoardArgs<Help>,
    #[command(flatten)]
    pubsub: PubSubArgs,
    #[command(flatten)]
    load: LoadArgs<Help, LedgerArgs, OutputArgs>,
}

/// The pub/sub workload's own flags.
#[derive(clap::Args)]
struct PubSubArgs {
    /// Pub/sub workload: connections that PUBLISH (at --rate over all of them, or each as fast
    /// as its replies come) [default: 1]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=4096))]
    publishers: Option<u16>,
    /// Pub/sub workload: connections that SUBSCRIBE, every confirmation read before any
    /// publisher starts (up to 16384, within the file-descriptor limit) [default: 5]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=16384))]
    subscribers: Option<u16>,
    /// Pub/sub workload: channels; subscriber S hears channel C when C mod SUBSCRIBERS = S mod
    /// CHANNELS [default: 1]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    channels: Option<u32>,
    /// Pub/sub workload: subscribers PSUBSCRIBE to a pattern covering their channels instead
    /// of SUBSCRIBing to each
    #[arg(long)]
    patterns: bool,
}

impl PubSubArgs {
    /// The first of its flags given.
    fn given(&self) -> Option<&'static str> {
        [
            (self.publishers.is_some(), "--publishers"),
            (self.subscribers.is_some(), "--subscribers"),
            (self.channels.is_some(), "--channels"),
            (self.patterns, "--patterns"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }
}

/// `load resp`'s words for the flags it shares.
pub struct Help;

impl ReplyTimeout for Help {
    const HELP: &'static str = reply_timeout_help!("10s");
}

impl LoadHelp for Help {
    const SEED: &'static str = "Seed for commands, keys and values";
    const VERIFY: &'static str = "Check every reply: each connection owns its keys, shared keys \
        are read-only; the keys this run uses are deleted first (--workload pubsub: every \
        subscriber gets each message on its channels exactly once, in each publisher's order). \
        Mismatches fail the run";
}

impl BoardHelp for Help {
    const POSTERS: &'static str = "Board workload: connections that RPUSH messages";
    const READERS: &'static str = "Board workload: connections that LINDEX (or LLEN) them";
    const TOPICS: &'static str = "Board workload: topics (lists board:tN)";
    const MESSAGE_SIZE: &'static str = "Board workload: bytes per message";
    const READER_MIX: &'static str =
        "Board workload: what readers send, by weight, from read (LINDEX) and count (LLEN)";
}

pub fn run(mut a: Args) -> anyhow::Result<ExitCode> {
    a.duration = a.pacing.window(a.duration);
    let mut cfg = RespLoad::new(endpoint(&a));
    cfg.workload = a.workload;
    cfg.connections = a.connections.into();
    cfg.stop = match a.requests {
        Some(n) => Stop::Requests(n),
        None => Stop::DurationS(a.duration.as_secs_f64()),
    };
    cfg.pacing = a.pacing.pacing(a.requests.is_none());
    cfg.mix = a.mix;
    cfg.keys = a.keys as usize;
    cfg.key_pattern = a.key_pattern;
    if let Err(e) = cfg.key_pattern.0.fits(cfg.keys) {
        usage_error_in(
            NAME,
            ErrorKind::ValueValidation,
            format!("--key-pattern {e}"),
        );
    }
    cfg.value_size = a.value_size;
    cfg.commands = commands(&a.command, &a.command_weight);
    cfg.auth = a.auth;
    cfg.db = a.db;
    cfg.shared_keys = a.shared_keys as usize;
    cfg.preload = a.preload;
    cfg.posters = a.board.posters.into();
    cfg.readers = a.board.readers.into();
    cfg.topics = a.board.topics as usize;
    cfg.message_size = a.board.message_size as usize;
    cfg.reader_mix = a.board.reader_mix;
    pubsub(&mut cfg, &a.pubsub, a.requests.is_some());
    cfg.seed = a.load.seed;
    cfg.verify = a.load.verify;
    cfg.agent = a.pacing.agent(NAME);
    cfg.reply_timeout = a.load.bounds.reply_timeout.unwrap_or(cfg.reply_timeout);
    cfg.max_reply = a.load.bounds.max_reply();
    check(&cfg);
    let (ledger, output) = (&a.load.ledger, &a.load.output);
    if ledger.ledger.is_some() {
        check_ledger(&cfg);
    }
    cfg.ledger = ledger.open()?;
    let format = output.format.unwrap_or(Format::Text);
    if format == Format::Caps && cfg.workload != Workload::Board {
        bad(
            ErrorKind::InvalidValue,
            "--format caps is the board reference client's output: use it with --workload board"
                .into(),
        );
    }
    let planned = cfg.planned();
    let code = execute(&cfg, &a.pacing, planned, format, &output.files())?;
    super::ledger::close(cfg.ledger.as_ref())?;
    Ok(code)
}

/// Where to connect: `--addr`, under TLS with `--tls`.
fn endpoint(a: &Args) -> serverlab_load::Endpoint {
    if !a.tls {
        if let Some(flag) = a.trust.given() {
            bad(
                ErrorKind::ArgumentConflict,
                format!("{flag} is for TLS: add --tls"),
            );
        }
        return a.addr.at.clone();
    }
    let host = a.sni.as_deref().unwrap_or(&a.addr.host);
    a.trust.endpoint(a.addr.at.clone(), host, NAME)
}

/// The pub/sub workload's settings, and what cannot go with them.
fn pubsub(cfg: &mut RespLoad, p: &PubSubArgs, counted: bool) {
    if cfg.workload != Workload::Pubsub {
        if let Some(flag) = p.given() {
            bad(
                ErrorKind::ArgumentConflict,
                format!("{flag} is for the pub/sub workload: add --workload pubsub"),
            );
        }
        return;
    }
    cfg.publishers = p.publishers.map_or(cfg.publishers, usize::from);
    cfg.subscribers = p.subscribers.map_or(cfg.subscribers, usize::from);
    cfg.channels = p.channels.map_or(cfg.channels, |c| c as usize);
    cfg.patterns = p.patterns;
    if counted {
        bad(
            ErrorKind::ArgumentConflict,
            "--requests: the pub/sub workload runs for a --duration (its subscribers drain after \
             the publishers stop)"
                .into(),
        );
    }
    if !cfg.commands.is_empty() {
        bad(
            ErrorKind::ArgumentConflict,
            "--command is sent by the keys workload's connections: use it without --workload \
             pubsub"
                .into(),
        );
    }
    use serverlab_load::resp::pubsub::{stamp::STAMP, MAX_STREAMS};
    if cfg.value_size.min() < STAMP {
        bad(
            ErrorKind::ValueValidation,
            format!(
                "--value-size {}: a pub/sub message holds a {STAMP}-byte stamp (who sent it, \
                 where, its number and when); give at least {STAMP}",
                cfg.value_size.min()
            ),
        );
    }
    if cfg.publishers.saturating_mul(cfg.channels) > MAX_STREAMS {
        bad(
            ErrorKind::ValueValidation,
            format!(
                "--publishers {} times --channels {} is past {MAX_STREAMS}: each publisher's \
                 messages on each channel are counted and checked apart",
                cfg.publishers, cfg.channels
            ),
        );
    }
}

/// `--ledger` records what a `GET` can read back: string writes of the
/// keys workload.
fn check_ledger(cfg: &RespLoad) {
    if cfg.workload != Workload::Keys {
        bad(
            ErrorKind::ArgumentConflict,
            format!(
                "--ledger records the keys workload's writes: use it without --workload {}",
                cfg.workload
            ),
        );
    }
    if !cfg.commands.is_empty() {
        bad(
            ErrorKind::ArgumentConflict,
            "--ledger records the built-in string writes, which a GET reads back: your --command \
             has no model of what it writes"
                .into(),
        );
    }
    use serverlab_load::resp::Op;
    let lists: Vec<&str> = cfg
        .mix
        .ops()
        .filter(|op| matches!(op, Op::List(_)))
        .map(serverlab_util::Named::name)
        .collect();
    if !lists.is_empty() {
        bad(
            ErrorKind::ArgumentConflict,
            format!(
                "--ledger records string writes, which a GET reads back: --mix has {} (use get, \
                 set, del, exists, incr, mget, mset)",
                lists.join(", ")
            ),
        );
    }
}

/// `--command`s with their `--command-weight`s, each named apart.
fn commands(texts: &[String], weights: &[u32]) -> Vec<Command> {
    if !weights.is_empty() && weights.len() != texts.len() {
        bad(
            ErrorKind::ArgumentConflict,
            format!(
                "--command-weight given {} times for {} --command: give one weight per command, in \
                 their order, or none",
                weights.len(),
                texts.len()
            ),
        );
    }
    let mut out: Vec<Command> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let w = weights.get(i).copied().unwrap_or(1);
            Command::parse(t, w).unwrap_or_else(|e| bad(ErrorKind::InvalidValue, e))
        })
        .collect();
    serverlab_load::resp::commands::name_apart(&mut out);
    out
}

fn bad(kind: ErrorKind, msg: String) -> ! {
    usage_error_in(NAME, kind, msg)
}

/// What the flags' parsers cannot see alone.
fn check(cfg: &RespLoad) {
    if cfg.workload == Workload::Board && !cfg.commands.is_empty() {
        bad(
            ErrorKind::ArgumentConflict,
            "--command is sent by the keys workload's connections: use it without --workload board"
                .into(),
        );
    }
    match cfg.workload {
        Workload::Board => {
            if cfg.posters + cfg.readers == 0 {
                bad(
                    ErrorKind::ValueValidation,
                    "--posters and --readers are both 0: nothing to run".into(),
                );
            }
            use serverlab_load::board::workload::ReaderOp;
            if cfg.reader_mix.weight(ReaderOp::List) > 0 {
                bad(
                    ErrorKind::InvalidValue,
                    "--reader-mix: list has no RESP form here (read is LINDEX, count is LLEN)"
                        .into(),
                );
            }
        }
        Workload::Pubsub => {}
        Workload::Keys => {
            if cfg.verify && !cfg.commands.is_empty() {
                bad(
                    ErrorKind::ArgumentConflict,
                    "--verify checks the built-in commands (--mix) against a model of what they \
                     do; there is none of your --command, whose replies are checked for errors \
                     only: drop --verify"
                        .into(),
                );
            }
            if cfg.verify && cfg.keys < cfg.connections {
                bad(
                    ErrorKind::ValueValidation,
                    format!(
                        "--keys {} is fewer than --connections {}: with --verify each connection owns its keys",
                        cfg.keys, cfg.connections
                    ),
                );
            }
            if cfg.verify {
                let min = cfg.min_verified_value_size();
                check_verified_value_size(NAME, cfg.value_size.min(), cfg.keys, min);
            }
        }
    }
}
