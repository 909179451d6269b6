//! The load-model flags every protocol's load takes (closed or open loop,
//! pipeline, warm-up; a capacity search or a scan of rates; the HDR log)
//! and running a load under them: the harness's concern, whatever the
//! protocol.

use super::{emit, Format};
use crate::{args, progress};
use anyhow::Context;
use clap::{ArgGroup, Args};
use serverlab_load::harness::rates::{parse_rate, RateRange};
use serverlab_load::harness::target::Target;
use serverlab_load::harness::{self, Arrivals, Execution, Mode, Pacing, Protocol};
use serverlab_load::output::{hdrlog, steps};
use serverlab_load::Progress;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The warm-up of a timed run, unless `--warmup` says otherwise.
pub const WARMUP: Duration = Duration::from_secs(1);

/// How requests are issued.
#[derive(Args)]
#[command(group(ArgGroup::new("open").args(["rate", "search", "scan"]).multiple(true)))]
pub struct PacingArgs {
    /// Closed loop, throttled: requests per second per connection; 0: as fast as replies come
    #[arg(long, default_value_t = 0.0, value_parser = non_negative, conflicts_with = "open")]
    pub throttle: f64,
    /// Requests in flight per connection (1: lock-step)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=4096))]
    pub pipeline: u16,
    /// Open loop: requests per second over all connections (750, 20k, 1.5M); each request has an
    /// intended send time, its latency counts from it, and it waits while its connection is busy
    #[arg(long, value_name = "RATE", value_parser = parse_rate, allow_negative_numbers = true,
          conflicts_with_all = ["search", "scan"])]
    pub rate: Option<f64>,
    /// How an open loop's intended send times are spaced [default: constant]
    #[arg(long, value_parser = args::named::<Arrivals>(), requires = "open")]
    pub arrivals: Option<Arrivals>,
    /// Replies in the first T of a timed run (or of each step) are checked, not recorded [default: 1s]
    #[arg(long, value_name = "T", value_parser = serverlab_util::duration::parse_with_zero)]
    pub warmup: Option<Duration>,
    /// Find the highest rate at which a statistic of the latency meets a target: p50, p90, p99,
    /// p99.9, p99.99 or mean, at most a duration (p99<=2ms, mean<=500us)
    #[arg(long, value_name = "TARGET", value_parser = parse_target, conflicts_with = "scan")]
    pub search: Option<Target>,
    /// Run open loop at each rate MIN:MAX:STEP (1k:20k:1k) and print latency against rate
    #[arg(long, value_name = "MIN:MAX:STEP", value_parser = parse_range)]
    pub scan: Option<RateRange>,
    /// How long each step of a search or scan measures, after its warm-up
    #[arg(long, value_name = "T", default_value = "3s", value_parser = args::duration)]
    pub step_duration: Duration,
    /// Also write an HdrHistogram interval log: one interval per second per operation (every step's)
    #[arg(long, value_name = "FILE")]
    pub hdr_log: Option<PathBuf>,
}

fn non_negative(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a non-negative number")),
    }
}

fn parse_target(s: &str) -> Result<Target, String> {
    s.parse()
}

fn parse_range(s: &str) -> Result<RateRange, String> {
    s.parse()
}

impl PacingArgs {
    /// The settings; `timed`: the run is bounded by time, so it has a
    /// warm-up (a run bounded by a count counts every request).
    pub fn pacing(&self, timed: bool) -> Pacing {
        let timed = timed || self.steps();
        Pacing {
            pipeline: self.pipeline.into(),
            throttle: self.throttle,
            rate: self.rate,
            arrivals: self.arrivals.unwrap_or_default(),
            warmup_s: if timed {
                self.warmup.unwrap_or(WARMUP).as_secs_f64()
            } else {
                0.0
            },
        }
    }

    /// A search or a scan: a run of timed steps.
    pub fn steps(&self) -> bool {
        self.search.is_some() || self.scan.is_some()
    }

    fn execution(&self) -> Execution {
        let step = self.step_duration;
        let mode = match (&self.search, &self.scan) {
            (Some(target), _) => Mode::Search {
                target: *target,
                step,
            },
            (None, Some(range)) => Mode::Scan {
                range: *range,
                step,
            },
            (None, None) => Mode::Once,
        };
        Execution {
            mode,
            hdr_log: self.hdr_log.is_some(),
        }
    }
}

/// Run `cfg`'s load as the flags say (once, a search or a scan), write
/// the HDR log if asked, and print the result. `planned`: how long a
/// single run takes at least, for the progress display.
pub fn execute<P: Protocol>(
    cfg: &P,
    flags: &PacingArgs,
    planned: Duration,
    format: Format,
    json: Option<&PathBuf>,
) -> anyhow::Result<ExitCode> {
    let ex = flags.execution();
    let progress = Progress::default();
    let outcome = if matches!(ex.mode, Mode::Once) {
        let warmup = flags.warmup.unwrap_or(WARMUP);
        progress::show(planned + warmup, &progress, || {
            harness::execute(cfg, &ex, &progress, &mut |_| {})
        })?
    } else {
        harness::execute(cfg, &ex, &progress, &mut step_printer(flags))?
    };
    if let (Some(path), Some(log)) = (&flags.hdr_log, &outcome.log) {
        let about = format!(
            "serverlab load {}: nanoseconds; tag OP: latency from the intended send time \
             (closed loop: from the send), OP.service: from the actual send",
            P::NAME
        );
        let mut file = std::io::BufWriter::new(
            std::fs::File::create(path)
                .with_context(|| format!("cannot write {}", path.display()))?,
        );
        hdrlog::write(log, &about, &mut file)
            .and_then(|()| std::io::Write::flush(&mut file))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    emit(&outcome.report, format, json)
}

/// On a terminal, each step of a search or scan on stderr as it ends
/// (the full table comes with the result).
fn step_printer(flags: &PacingArgs) -> impl FnMut(&serverlab_load::report::Step) {
    let terminal = std::io::stderr().is_terminal();
    let stat = flags
        .search
        .map_or("p99".to_string(), |t| t.stat.name().to_string());
    let mut n = 0;
    move |step| {
        if terminal {
            if step.requested_rps.is_some() {
                n += 1;
            }
            eprint!("{}", steps::step_row(n, step, &stat));
        }
    }
}
