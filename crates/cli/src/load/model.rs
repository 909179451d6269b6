//! The load-model flags every protocol's load takes (closed or open loop,
//! pipeline, warm-up; a capacity search or a scan of rates; the HDR log)
//! and running a load under them: the harness's concern, whatever the
//! protocol.

use super::agent::AgentArgs;
use super::{emit, usage_error_in, Format, OutputFiles};
use crate::{args, progress};
use anyhow::Context;
use clap::{ArgGroup, Args};
use serverlab_load::driver::{PollMode, Polling};
use serverlab_load::harness::rates::{parse_rate, RateRange};
use serverlab_load::harness::target::Target;
use serverlab_load::harness::{self, Agent, Arrivals, Execution, Mode, Pacing, Protocol, Stages};
use serverlab_load::intervals::IntervalLog;
use serverlab_load::output::{self, hdrlog, steps};
use serverlab_load::report::LoadReport;
use serverlab_load::thresholds::{self, Threshold};
use serverlab_load::LoadError;
use serverlab_load::Progress;
use serverlab_util::CpuSet;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The warm-up of a timed run, unless `--warmup` says otherwise.
pub const WARMUP: Duration = Duration::from_secs(1);

/// How requests are issued.
#[derive(Args)]
#[command(group(ArgGroup::new("open").args(["rate", "stages", "search", "scan"]).multiple(true)))]
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
    /// Open loop whose rate ramps linearly through stages DURATION:RATE,… from --rate (else 0),
    /// as k6's ramping-arrival-rate (10s:1k,30s:20k,10s:0); the run lasts their total, after
    /// any --warmup (none unless asked; held at the starting rate)
    #[arg(long, value_name = "STAGES", value_parser = parse_stages,
          conflicts_with_all = ["search", "scan"])]
    pub stages: Option<Stages>,
    /// How an open loop's intended send times are spaced [default: constant]
    #[arg(long, value_parser = args::named::<Arrivals>(), requires = "open")]
    pub arrivals: Option<Arrivals>,
    /// Replies in the first T of a timed run (or of each step) are checked, not recorded [default: 1s]
    #[arg(long, value_name = "T", value_parser = serverlab_util::duration::parse_with_zero)]
    pub warmup: Option<Duration>,
    /// Find the highest rate at which a statistic of the latency meets a target: p50, p90, p99,
    /// p99.9, p99.99 or mean, at most (<=) or under (<) a duration (p99<=2ms, mean<500us)
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
    /// Pin the load (every client thread) to these CPUs, as serve --cpus pins the server; one event
    /// loop runs per CPU (examples: 1, 1-3) [default: every CPU allowed]
    #[arg(long, value_name = "LIST", value_parser = args::cpus)]
    pub cpus: Option<CpuSet>,
    /// How the client waits for replies that are due (docs/measuring.md, "Agents that share a
    /// machine")
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = args::named::<PollMode>())]
    pub poll: PollMode,
    /// Fail the run (exit 4) unless the results meet this, repeatable: a latency statistic
    /// (p50, p90, p99, p99.9, p99.99, mean, max) of every operation or of one (get:p99<2ms),
    /// errors (errors<0.1%), or an open loop's rate reached over asked (rate>=0.99)
    #[arg(long, value_name = "THRESHOLD", value_parser = parse_threshold)]
    pub threshold: Vec<Threshold>,
    /// Exit with status 3 when the run's figures do not certify themselves: a check of its
    /// validity failed (docs/measuring.md, "Certified runs")
    #[arg(long)]
    pub require_certified: bool,
    #[command(flatten)]
    pub agents: AgentArgs,
    #[command(flatten)]
    pub watch: WatchArgs,
}

/// How a load can be watched while it runs (docs/observing.md).
#[derive(Args)]
pub struct WatchArgs {
    /// Serve the load's counters for Prometheus at http://HOST:PORT/metrics, on a listener and
    /// thread of their own (docs/observing.md)
    #[arg(long, value_name = "HOST:PORT", value_parser = crate::metrics::parse_addr)]
    pub metrics: Option<SocketAddr>,
    /// With --metrics: keep answering scrapes for T once the result is out, so that a last scrape
    /// sees the final counts
    #[arg(long, value_name = "T", default_value = "0s", requires = "metrics",
          value_parser = serverlab_util::duration::parse_with_zero)]
    pub metrics_linger: Duration,
    /// What to show while the load runs: none; line (a line per second on stderr); bar (one
    /// redrawing line on a terminal) [default: bar when stderr is a terminal and the format is
    /// text, else none]
    #[arg(long, value_enum, value_name = "MODE")]
    pub progress: Option<progress::Mode>,
}

impl WatchArgs {
    /// The display asked for, or the default for `format`.
    fn mode(&self, format: Format) -> progress::Mode {
        self.progress.unwrap_or({
            let text = matches!(format, Format::Text | Format::Caps);
            if text && std::io::stderr().is_terminal() {
                progress::Mode::Bar
            } else {
                progress::Mode::None
            }
        })
    }
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

fn parse_stages(s: &str) -> Result<Stages, String> {
    s.parse()
}

fn parse_threshold(s: &str) -> Result<Threshold, String> {
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
            // A ramp starts from the rate given, else from nothing.
            rate: self.rate.or(self.stages.as_ref().map(|_| 0.0)),
            arrivals: self.arrivals.unwrap_or_default(),
            warmup_s: if timed {
                self.warmup().as_secs_f64()
            } else {
                0.0
            },
            stages: self.stages.clone(),
        }
    }

    /// The warm-up asked for, else 1 s; a ramp's foot is its warm-up,
    /// so with `--stages` none unless asked.
    fn warmup(&self) -> Duration {
        let default = match self.stages {
            Some(_) => Duration::ZERO,
            None => WARMUP,
        };
        self.warmup.unwrap_or(default)
    }

    /// How long a timed run measures: the stages' total, if given (the
    /// protocol's `--duration` conflicts with them), else `given`.
    pub fn window(&self, given: Duration) -> Duration {
        self.stages.as_ref().map_or(given, Stages::total)
    }

    /// [`PacingArgs::window`] for a load that may not be timed.
    pub fn window_if(&self, given: Option<Duration>) -> Option<Duration> {
        self.stages.as_ref().map(Stages::total).or(given)
    }

    /// This process's share of the load (all of it unless --agent says),
    /// or a usage error of `load <protocol>`.
    pub fn agent(&self, protocol: &str) -> Agent {
        self.agents.agent(protocol, self.search.is_some())
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
            hdr_log: self.hdr_log.is_some() || self.agents.out.is_some(),
            start_at: self.agents.start_at,
            poll: Polling {
                mode: self.poll,
                pinned: self.cpus.is_some(),
            },
        }
    }
}

/// Run `cfg`'s load as the flags say (once, a search or a scan), write
/// the HDR log if asked, and print the result. `planned`: how long a
/// single run takes at least, for the progress display. SIGINT or SIGTERM
/// ends the run early: what was measured is still printed and written,
/// marked interrupted, and the exit status is 130 (a second signal exits
/// at once).
pub fn execute<P: Protocol>(
    cfg: &P,
    flags: &PacingArgs,
    planned: Duration,
    format: Format,
    files: &OutputFiles,
) -> anyhow::Result<ExitCode> {
    if let Some(cpus) = &flags.cpus {
        // Before any client thread starts: they inherit the mask, and the
        // driver runs one event loop per CPU allowed.
        cpus.pin_current_thread()
            .with_context(|| format!("cannot pin the load to CPUs {cpus}"))?;
    }
    check_thresholds(cfg, flags);
    let ex = flags.execution();
    let mode = flags.watch.mode(format);
    let (progress, verdict) = watched::<P>(cfg, &flags.watch, mode)?;
    end_early_on_signals(&progress)?;
    let outcome = if matches!(ex.mode, Mode::Once) {
        let warmup = flags.warmup();
        progress::watch(mode, planned + warmup, &progress, || {
            harness::execute(cfg, &ex, &progress, &mut |_| {})
        })
    } else {
        harness::execute(cfg, &ex, &progress, &mut step_printer(flags))
    };
    if let Err(LoadError::Unfed(e)) = &outcome {
        usage_error_in(
            P::NAME,
            clap::error::ErrorKind::ValueValidation,
            e.to_string(),
        );
    }
    // The error once, and what to do about it.
    let mut outcome = outcome.map_err(|e| {
        let text = e.to_string();
        let addr = cfg.plan().addr.to_string();
        anyhow::anyhow!("{text}{}", super::next_step(&text, P::NAME, &addr))
    })?;
    flags.agents.stamp_run_id(&mut outcome.report);
    let met = thresholds::judge_all(&flags.threshold, &mut outcome.report.results);
    if let (Some(path), Some(log)) = (&flags.hdr_log, &outcome.log) {
        write_hdr_log(path, log, P::NAME)?;
    }
    if let (Some((json, hlog)), Some(log)) = (flags.agents.files(cfg.plan().agent)?, &outcome.log) {
        write_hdr_log(&hlog, log, P::NAME)?;
        std::fs::write(&json, output::json(&outcome.report))
            .with_context(|| format!("cannot write {}", json.display()))?;
    }
    let code = emit(&outcome.report, format, files)?;
    // For the endpoint's last scrapes: after the result is written, so a
    // scrape that sees no verdict came before it.
    if let Some(v) = &outcome.report.results.validity {
        let _ = verdict.set(v.clone());
    }
    if flags.watch.metrics.is_some() {
        std::thread::sleep(flags.watch.metrics_linger);
    }
    let code = exit_code(&outcome.report, format, code);
    let code = thresholds_met(&outcome.report, met, code);
    Ok(require_certified(flags, &outcome.report, code))
}

/// Thresholds that name an operation the load does not have, or judge an
/// open loop's rate in a closed loop, are usage errors (exit 2).
fn check_thresholds<P: Protocol>(cfg: &P, flags: &PacingArgs) {
    let ops = cfg.ops();
    for t in &flags.threshold {
        if !t.names_op_in(&ops) {
            let op = t.op.as_deref().unwrap_or_default();
            let named: Vec<String> = ops.iter().map(|o| o.to_ascii_lowercase()).collect();
            usage_error_in(
                P::NAME,
                clap::error::ErrorKind::InvalidValue,
                format!(
                    "--threshold '{t}': a {} load has no operation '{op}' (it has {})",
                    P::NAME,
                    named.join(", ")
                ),
            );
        }
        let open = cfg.plan().pacing.is_open() || flags.steps();
        if t.metric == thresholds::Metric::Rate && !open {
            usage_error_in(
                P::NAME,
                clap::error::ErrorKind::ArgumentConflict,
                format!(
                    "--threshold '{t}' judges an open loop's rate reached over the rate asked: \
                     give --rate or --stages"
                ),
            );
        }
    }
}

/// Status 4 when a threshold failed and nothing else did (each failed one
/// said on stderr; the text output shows them all).
fn thresholds_met(report: &LoadReport, met: bool, code: ExitCode) -> ExitCode {
    if met || code != ExitCode::SUCCESS {
        return code;
    }
    for j in report.results.thresholds.iter().filter(|j| !j.passed) {
        eprintln!("serverlab: threshold {} failed: {}", j.threshold, j.detail);
    }
    ExitCode::from(thresholds::EXIT_FAILED)
}

/// With --require-certified, status 3 for a run that is not certified
/// (said on stderr: which checks failed), when nothing else failed.
fn require_certified(flags: &PacingArgs, report: &LoadReport, code: ExitCode) -> ExitCode {
    let Some(v) = &report.results.validity else {
        return code;
    };
    if !flags.require_certified || v.certified || code != ExitCode::SUCCESS {
        return code;
    }
    let failed: Vec<&str> = v.failed().map(|c| c.name.as_str()).collect();
    eprintln!(
        "serverlab: not certified ({} failed): --require-certified",
        failed.join(", ")
    );
    ExitCode::from(3)
}

/// The run's progress, watched (its loops hand their seconds over) when
/// `--metrics` or a display asks; the metrics endpoint started, and the
/// slot its verdict goes in at the end for the endpoint to show.
fn watched<P: Protocol>(
    cfg: &P,
    watch: &WatchArgs,
    mode: progress::Mode,
) -> anyhow::Result<(Progress, super::metrics::Verdict)> {
    let verdict = super::metrics::Verdict::default();
    if watch.metrics.is_none() && mode == progress::Mode::None {
        return Ok((Progress::default(), verdict));
    }
    let live = std::sync::Arc::new(serverlab_load::live::Live::default());
    if let Some(addr) = watch.metrics {
        let listener = crate::metrics::bind(addr)?;
        let at = listener.local_addr().context("the --metrics listener")?;
        let labels = vec![
            ("protocol", P::NAME.to_string()),
            ("agent", cfg.plan().agent.to_string()),
        ];
        let collector = Box::new(super::metrics::LoadCollector {
            live: live.clone(),
            verdict: verdict.clone(),
        });
        crate::metrics::start(listener, labels, collector)?;
        eprintln!("serverlab load: metrics at http://{at}/metrics");
    }
    Ok((Progress::watched(live), verdict))
}

/// SIGINT and SIGTERM set `progress`'s interrupt flag: the run ends
/// early and reports. A second one, the flag already set, exits at once.
fn end_early_on_signals(progress: &Progress) -> anyhow::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let flag = progress.interrupt_flag();
    for sig in [SIGINT, SIGTERM] {
        // Registered first, so it sees the flag as the previous signal
        // left it.
        signal_hook::flag::register_conditional_shutdown(sig, 130, flag.clone())
            .and_then(|_| signal_hook::flag::register(sig, flag.clone()))
            .context("cannot install signal handlers")?;
    }
    Ok(())
}

/// `log` as an HDR interval log file at `path`.
fn write_hdr_log(path: &PathBuf, log: &IntervalLog, protocol: &str) -> anyhow::Result<()> {
    let about = format!(
        "serverlab load {protocol}: nanoseconds; tag OP: latency from the intended send time \
         (closed loop: from the send), OP.service: from the actual send"
    );
    let mut file = std::io::BufWriter::new(
        std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?,
    );
    hdrlog::write(log, &about, &mut file)
        .and_then(|()| std::io::Write::flush(&mut file))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The exit status once the result is out: 130 for an interrupted run
/// (said on stderr where the output itself cannot say it), 1 for a search
/// that found no capacity, else what the output decided.
fn exit_code(report: &LoadReport, format: Format, printed: ExitCode) -> ExitCode {
    if report.results.interrupted {
        if format != Format::Text {
            eprintln!("serverlab: {}", output::text::interrupted_line(report));
        }
        return ExitCode::from(130);
    }
    let none_found = report
        .search
        .as_ref()
        .is_some_and(|s| s.capacity_rps.is_none());
    if none_found && printed == ExitCode::SUCCESS {
        if format != Format::Text {
            eprintln!("serverlab: capacity: none found");
        }
        return ExitCode::from(1);
    }
    printed
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
