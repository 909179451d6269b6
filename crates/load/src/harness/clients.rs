//! The run's clients on the event-loop driver: each protocol's exchange
//! metered ([`Metered`]) in a slot, persistent connections opened before
//! the window, the loops run to the end, and the clients handed back with
//! what they measured and the CPU the client used.

use super::metered::{Metered, Sends};
use super::{Connections, ErrorLog, Exchange, Plan, Window};
use crate::checks::Checks;
use crate::driver::{self, Conversation, LoopsDone, Slot};
use crate::env::CpuTicks;
use crate::record::{Recorder, Span};
use crate::report::{ClientCpu, PollUse};
use crate::{LoadError, Progress};
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant, SystemTime};

/// The clients after a run, in the order given, with the run's timing.
pub struct CompletedRun<E> {
    pub clients: Vec<CompletedClient<E>>,
    /// Each event loop's recorder.
    pub recorders: Vec<Recorder>,
    /// When the run started (every persistent connection open), by the
    /// monotonic clock and the wall clock.
    pub start: Instant,
    pub started: SystemTime,
    /// With a wall-clock start ([`Plan::start_at`]): how long after it
    /// the run actually started, in seconds (negative: early, if the
    /// clock stepped).
    pub start_lag_s: Option<f64>,
    /// The share of the whole run's clients this process ran (1 unless
    /// it is one agent of a split load): of an open loop's rate too.
    pub share: f64,
    /// The measured window (after the warm-up).
    pub span: Span,
    /// From the start until the last client finished.
    pub wall: Duration,
    pub client_cpu: ClientCpu,
    /// When the window closed early, the run interrupted (Ctrl-C).
    pub interrupted_at: Option<Instant>,
}

/// One client after the run.
pub struct CompletedClient<E> {
    pub exchange: E,
    /// Requests it sent, in the warm-up and in the window.
    pub sent: Sends,
    /// Replies it had recorded, in all and per second of the window.
    pub total: u64,
    pub per_second: Vec<u64>,
    pub checks: Checks,
    pub errors: ErrorLog,
    /// From the window's start until it stopped sending (the window
    /// closed) or finished its work.
    pub runtime: Duration,
    /// When it stopped sending because the window closed.
    pub stopped_at: Option<Instant>,
    pub last_reply: Option<Instant>,
    /// When its last reply counted in the window came.
    pub last_counted: Option<Instant>,
}

/// Run `exchanges` under `plan` on the event-loop driver (one loop per
/// CPU the client may use) and hand them back with what they measured.
/// `exchanges` are the whole run's clients: a split load's agent runs its
/// part of them ([`Plan::agent`]), each in its place in the whole run's
/// schedule. The kv preload runs its unmeasured clients this way too.
pub fn run_clients<E: Exchange + Send>(
    plan: &Plan,
    ops: usize,
    exchanges: Vec<E>,
    progress: &Progress,
) -> Result<CompletedRun<E>, LoadError> {
    let budget = match plan.window {
        Window::Requests(n) => Some(AtomicU64::new(plan.agent.share_u64(n))),
        _ => None,
    };
    let start = Instant::now();
    let whole = exchanges.len();
    let mut slots = slots(plan, exchanges, budget.as_ref(), start)?;
    let share = if whole == 0 {
        1.0
    } else {
        slots.len() as f64 / whole as f64
    };
    // Connecting took time: the run starts now (or at the instant given),
    // for every client.
    let start_lag_s = plan.start_at.map(wait_until);
    let (start, started) = (Instant::now(), SystemTime::now());
    for s in &mut slots {
        s.client.restart(start);
    }
    let span = plan.span(start);
    let opts = driver::Options {
        addr: plan.addr.clone(),
        connect_timeout: plan.timeouts.connect,
        reply_timeout: plan.timeouts.reply,
        deadline: span.end,
        drain_timeout: plan.timeouts.drain,
        max_reply: plan.timeouts.max_reply,
        poll: plan.poll,
        depth: plan.pacing.pipeline,
    };
    let open = plan.pacing.is_open();
    let cpus = crate::env::allowed_cpus();
    let ticks = CpuTicks::of(&cpus);
    if let Some(live) = progress.live() {
        let length = span.end.map(|e| (e - span.start).as_secs_f64());
        let rate = plan.pacing.asked_rps(length.unwrap_or(0.0));
        live.window(span.start, length, rate.map(|r| r * share));
    }
    let watcher = progress.live().cloned();
    let new_recorder = || Recorder::new(ops, span, open).watched(watcher.clone());
    let mut done = driver::run_loops(slots, &opts, progress, &new_recorder);
    // Each loop's last second, and what its clients did since they last
    // noted it (the first loop's recorder takes that).
    if let Some(first) = done.sinks.first_mut() {
        done.slots.iter_mut().for_each(|s| s.client.note(first));
    }
    done.sinks.iter_mut().for_each(Recorder::hand_over);
    let wall = start.elapsed();
    let busy = ticks
        .zip(CpuTicks::of(&cpus))
        .and_then(|(a, b)| a.busy_share(b));
    let mut run = completed(done, start, started, span, wall, busy);
    run.start_lag_s = start_lag_s;
    run.share = share;
    if progress.interrupted() {
        // The loops closed the window as each saw the interrupt: the
        // first of them says when.
        let stops = run.clients.iter().filter_map(|c| c.stopped_at);
        run.interrupted_at = Some(stops.min().unwrap_or(start + wall));
    }
    Ok(run)
}

/// One slot per exchange, each metered under `plan`; persistent
/// connections opened now.
fn slots<'r, E: Exchange>(
    plan: &'r Plan,
    exchanges: Vec<E>,
    budget: Option<&'r AtomicU64>,
    start: Instant,
) -> Result<Vec<Slot<Metered<'r, E>>>, LoadError> {
    let clients = exchanges.len();
    let metered = plan
        .agent
        .part(exchanges)
        .into_iter()
        .map(|(k, e)| Metered::new(e, plan, budget, (k, clients), start));
    if plan.connections == Connections::Persistent {
        metered.map(|m| open(plan, m, start)).collect()
    } else {
        Ok(metered.map(Slot::new).collect())
    }
}

/// The run as the loops left it: each client's figures, the recorders,
/// the client's CPU.
fn completed<E: Exchange>(
    done: LoopsDone<Metered<'_, E>>,
    start: Instant,
    started: SystemTime,
    span: Span,
    wall: Duration,
    cores_busy: Option<f64>,
) -> CompletedRun<E> {
    let wall_s = wall.as_secs_f64();
    let cores = crate::env::allowed_cpus().len();
    let mut client_cpu =
        ClientCpu::measure(done.cpu, done.idle_poll_s, wall_s, cores).on_cores(cores_busy);
    client_cpu.poll = Some(PollUse {
        mode: done.poll.mode.to_string(),
        resolved: Some(done.poll.resolved().into()),
        spin_share: done.poll.spin_share,
        why: done.poll.why(),
    });
    let clients = done
        .slots
        .into_iter()
        .map(|s| {
            let until = s.stopped_at.or(s.finished_at).unwrap_or(start + wall);
            let m = s.client;
            CompletedClient {
                runtime: until.saturating_duration_since(span.start),
                stopped_at: s.stopped_at,
                exchange: m.exchange,
                sent: m.sent,
                total: m.total,
                per_second: m.per_second,
                checks: m.checks,
                errors: m.errors,
                last_reply: m.last_reply,
                last_counted: m.last_counted,
            }
        })
        .collect();
    CompletedRun {
        clients,
        recorders: done.sinks,
        start,
        started,
        start_lag_s: None,
        share: 1.0,
        span,
        wall,
        client_cpu,
        interrupted_at: None,
    }
}

/// A persistent client's connection, opened now (before the window).
fn open<'r, E: Exchange>(
    plan: &Plan,
    mut metered: Metered<'r, E>,
    now: Instant,
) -> Result<Slot<Metered<'r, E>>, LoadError> {
    if !metered.connect(now) {
        return Ok(Slot::new(metered));
    }
    Slot::connected(&plan.addr, plan.timeouts.connect, metered)
        .map_err(LoadError::connecting(&plan.addr))
}

/// Sleep until the wall clock reads `at`; how late it is then, in
/// seconds (an instant already past when the connections were open is
/// late by as much).
fn wait_until(at: SystemTime) -> f64 {
    if let Ok(ahead) = at.duration_since(SystemTime::now()) {
        // Most of the wait asleep, the last stretch spinning on the clock:
        // a sleep may overshoot by a scheduler tick.
        let spin = Duration::from_millis(2);
        if ahead > spin {
            std::thread::sleep(ahead - spin);
        }
        while SystemTime::now() < at {
            std::hint::spin_loop();
        }
    }
    match SystemTime::now().duration_since(at) {
        Ok(late) => late.as_secs_f64(),
        Err(early) => -early.duration().as_secs_f64(),
    }
}
