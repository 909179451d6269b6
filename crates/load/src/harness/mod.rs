//! The one load harness every protocol runs on. It owns the run: the
//! environment, the clients on the event-loop driver, the load model
//! (when each request goes out: closed loop, or open loop on a schedule),
//! the warm-up and the window, the recorders and checks merged at the
//! end, the client's CPU, the report — and runs made of several (a
//! capacity search, a scan of rates). A protocol supplies only what is
//! its own ([`Protocol`]): its settings, its setup before the window
//! (state to check against), its clients ([`Exchange`]: what to send and
//! what each reply must be), and its final checks and typed results.

mod agent;
mod clients;
mod exchange;
mod gather;
mod metered;
mod pace;
pub mod rates;
mod schedule;
pub mod search;
pub mod target;

pub use agent::{Agent, Unfed};
pub use clients::{run_clients, CompletedClient, CompletedRun};
pub use exchange::{Exchange, Received};
pub use gather::Measured;
pub use metered::{ErrorLog, Sends};
pub use pace::Pacing;
pub use schedule::{Arrivals, Stage, Stages};
pub use search::{execute, Execution, Mode, Outcome};

use crate::checks::Checks;
use crate::driver::Polling;
use crate::endpoint::Endpoint;
use crate::env::Environment;
use crate::intervals::IntervalLog;
use crate::record::Span;
use crate::report::{LoadReport, ProtocolResults, SCHEMA};
use crate::{LoadError, Progress};
use serde::Serialize;
use std::time::{Duration, Instant, SystemTime};

/// One protocol's load: everything the harness cannot know.
pub trait Protocol: Serialize + Sync {
    /// As `serverlab load` spells it, and the results' tag.
    const NAME: &'static str;
    /// Operation names, in recorder order (an [`Exchange`]'s op indexes it).
    const OPS: &'static [&'static str];
    /// What the setup prepares and the clients share (board: the mirror
    /// of acknowledged posts; kv: the key picker).
    type Shared: Sync;
    /// One client.
    type Exchange<'a>: Exchange + Send
    where
        Self: 'a;

    /// Operation names, in recorder order: [`Protocol::OPS`], unless the
    /// settings add their own (RESP's `--command`s).
    fn ops(&self) -> Vec<&str> {
        Self::OPS.to_vec()
    }

    /// How the run is bounded and connections are used.
    fn plan(&self) -> Plan;

    /// Before the window: read the state to check against, preload. An
    /// `Err` means the run cannot start; descriptions pushed to `errors`
    /// fail the run without starting the load.
    fn setup(&self, errors: &mut Vec<String>) -> Result<Self::Shared, LoadError>;

    /// The run's clients, one per slot (its concurrency).
    fn exchanges<'a>(&'a self, shared: &'a Self::Shared) -> Vec<Self::Exchange<'a>>;

    /// After the window: the final checks, and the protocol's own results.
    fn finish<'a>(
        &'a self,
        shared: &'a Self::Shared,
        done: Finish<'_, Self::Exchange<'a>>,
    ) -> ProtocolResults;

    /// What a split load divides among its agents besides its requests,
    /// by name and whole-run count (board: its connections and topics):
    /// an agent whose share of one is zero cannot run.
    fn shares(&self) -> Vec<(&'static str, usize)> {
        Vec::new()
    }

    /// These settings for a run the harness times itself (each step of a
    /// capacity search or a scan), where the load would otherwise stop on
    /// a count of its own (kv's sessions). None, the default: nothing to
    /// lift.
    fn timed(&self) -> Option<Self>
    where
        Self: Sized,
    {
        None
    }
}

/// How a run is bounded and how its clients use connections.
#[derive(Debug, Clone)]
pub struct Plan {
    pub addr: Endpoint,
    pub window: Window,
    pub connections: Connections,
    pub pacing: Pacing,
    pub verify: bool,
    pub timeouts: Timeouts,
    /// How this load uses connections, said after the load model
    /// ("keep-alive"), if worth saying.
    pub model_note: Option<&'static str>,
    /// Seeds an open loop's Poisson gaps (the load's `--seed`).
    pub seed: u64,
    /// Which share of a split load this process runs ([`Agent::SOLO`]:
    /// all of it).
    pub agent: Agent,
    /// When the window starts, by the wall clock, once every persistent
    /// connection is open (None: at once). Agents given one instant start
    /// together.
    pub start_at: Option<SystemTime>,
    /// Whether the loops may poll without sleeping while replies are due
    /// (`--poll`).
    pub poll: Polling,
}

/// How a run given a count or a time ends (`--requests` or `--duration`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// After this many seconds; replies later than that are not counted.
    DurationS(f64),
    /// After this many requests over all connections, answered
    /// (redis-benchmark's `-n`); the time they took is the window.
    Requests(u64),
}

impl Stop {
    /// The measured window this ending makes.
    pub fn window(self) -> Window {
        match self {
            Stop::DurationS(s) => Window::Duration(Duration::from_secs_f64(s)),
            Stop::Requests(n) => Window::Requests(n),
        }
    }
}

/// A [`Plan`] from the load's own fields of the same names (`addr`,
/// `pacing`, `verify`, `seed`, `agent`) and the three a protocol chooses;
/// no start instant and the default polling, which the caller sets.
macro_rules! plan {
    ($load:expr, $window:expr, $connections:expr, $timeouts:expr, $note:expr $(,)?) => {
        $crate::harness::Plan {
            addr: $load.addr.clone(),
            window: $window,
            connections: $connections,
            pacing: $load.pacing.clone(),
            verify: $load.verify,
            timeouts: $timeouts,
            model_note: $note,
            seed: $load.seed,
            agent: $load.agent,
            start_at: None,
            poll: Default::default(),
        }
    };
}
pub(crate) use plan;

/// When a run ends, and what its measured window is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Window {
    /// Replies count when they arrive within this long of the start
    /// (taken once every persistent connection is open) and the warm-up
    /// ([`Pacing::warmup_s`]) after it; nothing is sent after it, and
    /// replies still in flight are collected, not counted. Replies in the
    /// warm-up are checked, not counted.
    Duration(Duration),
    /// This many requests in all, over every client; every reply counts
    /// and the window runs to the last one (no warm-up: a count is a
    /// count).
    Requests(u64),
    /// Until every client has done its own work (kv's sessions); every
    /// reply counts and the window runs to the last one.
    Work,
}

impl Window {
    pub fn duration(self) -> Option<Duration> {
        match self {
            Window::Duration(d) => Some(d),
            _ => None,
        }
    }
}

/// How a client uses connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connections {
    /// One, opened before the window opens and kept for the whole run.
    Persistent,
    /// A new one for every request, opened when the request is due: the
    /// connection is part of the request (its latency starts there).
    PerRequest,
    /// One after another, each carrying up to `requests` requests (None:
    /// until the client has nothing more for it), like kv's sessions.
    Series { requests: Option<usize> },
}

/// How long anything may take.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub connect: Duration,
    /// A connection with requests in flight fails when nothing arrives
    /// for this long (None: it may wait for ever).
    pub reply: Option<Duration>,
    /// How long after a timed window closes replies in flight may take.
    pub drain: Option<Duration>,
    /// The longest reply a connection may hold (see
    /// [`crate::driver::Options::max_reply`]).
    pub max_reply: usize,
}

impl Timeouts {
    /// A load that waits at most `reply` for each reply, and as long again
    /// for the replies in flight when its window closes.
    pub fn replies_within(connect: Duration, reply: Duration, max_reply: usize) -> Timeouts {
        Timeouts {
            connect,
            reply: Some(reply),
            drain: Some(reply),
            max_reply,
        }
    }
}

/// What a protocol's `finish` gets: its clients back, the run's figures,
/// and the merged checks and errors to add its final checks to.
pub struct Finish<'r, E> {
    pub exchanges: Vec<E>,
    pub measured: Measured,
    pub environment: &'r Environment,
    pub checks: &'r mut Checks,
    pub errors: &'r mut Vec<String>,
}

/// Run `p`'s load once, as its plan says, and gather its report.
pub fn run<P: Protocol>(p: &P, progress: &Progress) -> Result<LoadReport, LoadError> {
    let outcome = execute(p, &Execution::default(), progress, &mut |_| {})?;
    Ok(outcome.report)
}

/// Where a run's per-second histograms go, when an HDR log is kept: its
/// interval timestamps count from `origin` (the log's base).
pub struct LogTo<'a> {
    pub log: &'a mut IntervalLog,
    pub origin: Instant,
}

/// One run of `p` under `plan` (a protocol's own, or a search step's).
pub(crate) fn once<P: Protocol>(
    p: &P,
    plan: &Plan,
    progress: &Progress,
    log: Option<LogTo<'_>>,
) -> Result<LoadReport, LoadError> {
    let environment = Environment::capture();
    let mut errors = Vec::new();
    let shared = p.setup(&mut errors)?;
    let exchanges = if errors.is_empty() {
        p.exchanges(&shared)
    } else {
        Vec::new()
    };
    let ops = p.ops();
    if let Some(live) = progress.live() {
        live.begin(&ops, plan.pacing.is_open());
    }
    let run = run_clients(plan, ops.len(), exchanges, progress)?;
    let gathered = gather::gather(run, &ops, plan, &mut errors, log);
    let mut checks = gathered.checks;
    let protocol = p.finish(
        &shared,
        Finish {
            exchanges: gathered.exchanges,
            measured: gathered.measured,
            environment: &environment,
            checks: &mut checks,
            errors: &mut errors,
        },
    );
    debug_assert_eq!(
        protocol.name(),
        P::NAME,
        "a protocol's results carry its name"
    );
    let mut results = gathered.results;
    results.errors = errors;
    results.verification = checks.into_verification();
    results.protocol = Some(protocol);
    Ok(LoadReport {
        schema: SCHEMA.into(),
        protocol: P::NAME.into(),
        load_model: plan.load_model(),
        config: serde_json::to_value(p).expect("a configuration serializes"),
        environment,
        results,
        search: None,
        scan: None,
    })
}

impl Plan {
    /// The load model as results name it.
    pub fn load_model(&self) -> String {
        let model = self.pacing.model();
        match self.model_note {
            Some(note) => format!("{model}, {note}"),
            None => model.into(),
        }
    }

    /// The measured window of a run that starts at `start`: after the
    /// warm-up, for as long as the window says (a count: until the end).
    pub fn span(&self, start: Instant) -> Span {
        match self.window {
            Window::Duration(d) => {
                let open = start + self.pacing.warmup();
                Span {
                    start: open,
                    end: Some(open + d),
                }
            }
            Window::Requests(_) | Window::Work => Span { start, end: None },
        }
    }
}

#[cfg(test)]
mod tests;
