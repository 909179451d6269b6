//! `serverlab load board`, including the reference client's positional form.

use super::bounds::{reply_timeout_help, ReplyTimeout};
use super::shared::{LoadArgs, LoadHelp, NoLedger};
use super::{execute, usage_error, Format, OutputArgs, PacingArgs};
use crate::args;
use clap::error::ErrorKind;
use serverlab_load::board::{BoardLoad, ReaderMix};
use serverlab_proto::board::NAME;
use std::marker::PhantomData;
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::time::Duration;

/// Its line of `load --help`.
pub const ABOUT: &str = "Posters and readers against a board server (or `load board IP POSTERS \
    READERS SECONDS THROTTLE`, the reference client's form)";

#[derive(clap::Args)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// Reference form: IP POSTERS READERS SECONDS THROTTLE (port 12345; throttle 1 = 1000 requests/s per
    /// thread; prints the reference output and sends EXIT at the end, which stops a server run with
    /// --exit-policy any). The values it sets cannot also be given as flags
    #[arg(value_name = "POSITIONAL", num_args = 0..=5,
          conflicts_with_all = ["addr", "posters", "readers", "duration", "throttle", "rate", "stages", "search", "scan", "send_exit"])]
    positional: Vec<String>,
    /// Server address: HOST:PORT, HOST (port 12345) or :PORT, or unix:PATH for a Unix socket
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:12345", value_parser = args::endpoint(12345))]
    addr: serverlab_load::Endpoint,
    #[command(flatten)]
    board: BoardArgs<Help>,
    /// How long to run (10s, 500ms, 2m), after the warm-up
    #[arg(long, default_value = "10s", value_parser = args::duration, conflicts_with_all = ["search", "scan", "stages"])]
    duration: Duration,
    #[command(flatten)]
    pacing: PacingArgs,
    /// Send EXIT on a new connection at the end, as the reference client does
    #[arg(long)]
    send_exit: bool,
    #[command(flatten)]
    load: LoadArgs<Help, NoLedger, OutputArgs>,
}

/// `load board`'s words for the flags it shares.
pub struct Help;

impl ReplyTimeout for Help {
    const HELP: &'static str = reply_timeout_help!("10s");
}

impl LoadHelp for Help {
    const SEED: &'static str = "Seed for topic, id and operation choices";
    const VERIFY: &'static str =
        "Check every reply against what the server must answer; mismatches fail the run";
}

impl BoardHelp for Help {
    const POSTERS: &'static str =
        "Poster connections (\"threads\" in the reference client's output)";
    const READERS: &'static str =
        "Reader connections (\"threads\" in the reference client's output)";
    const TOPICS: &'static str = "Topics the posters spread over";
    const MESSAGE_SIZE: &'static str = "Bytes per posted message";
    const READER_MIX: &'static str = "What readers send, by weight";
}

/// The board workload's words for its flags (`load board`'s own, or
/// `load resp --workload board`'s).
pub trait BoardHelp: Send + Sync + 'static {
    const POSTERS: &'static str;
    const READERS: &'static str;
    const TOPICS: &'static str;
    const MESSAGE_SIZE: &'static str;
    const READER_MIX: &'static str;
}

/// The board workload's flags, declared once for `load board` and `load
/// resp --workload board`, worded by `H`.
#[derive(clap::Args)]
pub struct BoardArgs<H: BoardHelp> {
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(0..=4096), help = H::POSTERS)]
    pub posters: u16,
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(0..=4096), help = H::READERS)]
    pub readers: u16,
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1_000_000), help = H::TOPICS)]
    pub topics: u32,
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=(1 << 24)), help = H::MESSAGE_SIZE)]
    pub message_size: u32,
    #[arg(long, default_value = "read=100", value_name = "MIX", help = H::READER_MIX)]
    pub reader_mix: ReaderMix,
    #[arg(skip)]
    words: PhantomData<H>,
}

pub fn run(mut a: Args) -> anyhow::Result<ExitCode> {
    a.duration = a.pacing.window(a.duration);
    let mut cfg = BoardLoad::new(a.addr);
    cfg.posters = a.board.posters.into();
    cfg.readers = a.board.readers.into();
    cfg.duration_s = a.duration.as_secs_f64();
    cfg.pacing = a.pacing.pacing(true);
    cfg.topics = a.board.topics as usize;
    cfg.message_size = a.board.message_size as usize;
    cfg.seed = a.load.seed;
    cfg.reader_mix = a.board.reader_mix;
    cfg.verify = a.load.verify;
    cfg.agent = a.pacing.agent(NAME);
    cfg.reply_timeout = a.load.bounds.reply_timeout.unwrap_or(cfg.reply_timeout);
    cfg.max_reply = a.load.bounds.max_reply();
    cfg.send_exit = a.send_exit;
    let output = &a.load.output;
    let mut format = output.format.unwrap_or(Format::Text);
    if !a.positional.is_empty() {
        reference_form(&a.positional, &mut cfg);
        format = output.format.unwrap_or(Format::Caps);
    }
    if cfg.posters + cfg.readers == 0 {
        usage_error(
            ErrorKind::ValueValidation,
            "--posters and --readers are both 0: nothing to run".into(),
        );
    }
    execute(&cfg, &a.pacing, a.duration, format, &output.files())
}

/// `IP POSTERS READERS SECONDS THROTTLE`, as the reference client takes them.
fn reference_form(p: &[String], cfg: &mut BoardLoad) {
    if p.len() != 5 {
        usage_error(
            ErrorKind::WrongNumberOfValues,
            format!(
                "the reference form takes 5 values, IP POSTERS READERS SECONDS THROTTLE; got {}",
                p.len()
            ),
        );
    }
    let bad = |what: &str, v: &str| -> ! {
        usage_error(
            ErrorKind::InvalidValue,
            format!("invalid {what} '{v}' in the reference form"),
        )
    };
    let ip: IpAddr = p[0].parse().unwrap_or_else(|_| bad("IP", &p[0]));
    cfg.addr = SocketAddr::new(ip, 12345).into();
    cfg.posters = p[1]
        .parse()
        .ok()
        .filter(|&n: &usize| n <= 4096)
        .unwrap_or_else(|| bad("POSTERS", &p[1]));
    cfg.readers = p[2]
        .parse()
        .ok()
        .filter(|&n: &usize| n <= 4096)
        .unwrap_or_else(|| bad("READERS", &p[2]));
    cfg.duration_s = p[3]
        .parse()
        .ok()
        .filter(|&s: &u32| s > 0)
        .unwrap_or_else(|| bad("SECONDS", &p[3])) as f64;
    cfg.pacing.throttle = match p[4].as_str() {
        "0" => 0.0,
        "1" => 1000.0,
        v => bad("THROTTLE (0 or 1)", v),
    };
    cfg.send_exit = true;
    // The reference client measures from its first request.
    cfg.pacing.warmup_s = 0.0;
}

/// clap's conflict of the reference form's values with a flag names the
/// form by its placeholder (`'[POSITIONAL]...' cannot be used with
/// '--duration <DURATION>'`): said instead as what it is, the reference
/// client's form, and which flag it sets itself. Every other error as it
/// was.
pub fn said_of_the_form(e: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue};
    if e.kind() != ErrorKind::ArgumentConflict {
        return e;
    }
    let named = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    let mut args = named(ContextKind::InvalidArg);
    args.extend(named(ContextKind::PriorArg));
    if !args.iter().any(|a| a.contains("POSITIONAL")) {
        return e;
    }
    let flags: Vec<String> = args
        .into_iter()
        .filter(|a| !a.contains("POSITIONAL"))
        .map(|a| format!("'{a}'"))
        .collect();
    crate::usage_error_for(
        "load",
        NAME,
        ErrorKind::ArgumentConflict,
        format!(
            "the reference client's form (IP POSTERS READERS SECONDS THROTTLE) sets what {} \
             would: give the form or the flags, not both",
            flags.join(" and ")
        ),
    )
}
