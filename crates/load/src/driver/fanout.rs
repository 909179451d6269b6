//! The fan-out: the run's slots spread over one event loop per CPU the
//! client may use, each on its own thread with its own sink, then
//! gathered back in order, with the CPU their threads used and how they
//! polled.

use super::conversation::Conversation;
use super::event_loop::run_on_this_thread;
use super::poll::{self, PollMode, PollStats, Rule};
use super::slot::Slot;
use super::spin::Spun;
use super::Options;
use crate::Progress;
use std::time::{Duration, Instant};

/// The slots after the run, with the CPU their loops used.
pub struct LoopsDone<C: Conversation> {
    /// In the order they were given.
    pub slots: Vec<Slot<C>>,
    /// Each event loop's sink.
    pub sinks: Vec<C::Sink>,
    /// CPU time of the loops' threads: (user, system) seconds.
    pub cpu: (f64, f64),
    /// Of that, seconds spent polling for replies that had not come.
    pub idle_poll_s: f64,
    /// How the loops polled.
    pub poll: PollStats,
}

/// One loop's slots (each with its place in the run's order), and what
/// the loop gives back.
type Group<C> = Vec<(usize, Slot<C>)>;
struct LoopDone<C: Conversation> {
    slots: Group<C>,
    sink: C::Sink,
    cpu: (f64, f64),
    spun: Spun,
}

/// Run `slots` to the end: spread over one event loop per CPU the client
/// may use (each on its own thread, with its own sink from `sink`), then
/// gathered back in order.
pub fn run_loops<C>(
    slots: Vec<Slot<C>>,
    opts: &Options,
    progress: &Progress,
    sink: &(dyn Fn() -> C::Sink + Sync),
) -> LoopsDone<C>
where
    C: Conversation + Send,
    C::Sink: Send,
{
    let cpus = crate::env::allowed_cpus().len();
    let loops = cpus.clamp(1, slots.len().max(1));
    let alone = poll::alone(opts.poll.pinned, cpus, poll::cpus_online());
    // The most replies one loop may have due at once.
    let due = slots.len().div_ceil(loops) * opts.depth.max(1);
    let place = poll::Place { alone, due };
    let mut groups: Vec<Group<C>> = (0..loops).map(|_| Vec::new()).collect();
    for (k, slot) in slots.into_iter().enumerate() {
        groups[k % loops].push((k, slot));
    }
    let done: Vec<LoopDone<C>> = std::thread::scope(|s| {
        let handles: Vec<_> = groups
            .into_iter()
            .map(|group| s.spawn(move || one_loop(group, opts, place, progress, sink)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("load driver panicked"))
            .collect()
    });
    gather(done, opts.poll.mode, place)
}

/// One loop's slots run on this thread, with the CPU it used; `place`:
/// where the loops run and what they carry.
fn one_loop<C: Conversation>(
    group: Group<C>,
    opts: &Options,
    place: poll::Place,
    progress: &Progress,
    sink: &(dyn Fn() -> C::Sink + Sync),
) -> LoopDone<C> {
    let (order, mut slots): (Vec<usize>, Vec<Slot<C>>) = group.into_iter().unzip();
    let mut sink = sink();
    let cpu0 = crate::env::thread_cpu_time();
    let rule = Rule::new(opts.poll, place, Instant::now());
    let spun = run_on_this_thread(&mut slots, opts, progress, &mut sink, rule);
    let cpu1 = crate::env::thread_cpu_time();
    LoopDone {
        slots: order.into_iter().zip(slots).collect(),
        sink,
        cpu: (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1),
        spun,
    }
}

/// Every loop's slots back in the run's order, their sinks, the CPU the
/// loops used together and how they polled (in `mode`, at `place`).
fn gather<C: Conversation>(
    done: Vec<LoopDone<C>>,
    mode: PollMode,
    place: poll::Place,
) -> LoopsDone<C> {
    let mut all = Vec::new();
    let mut sinks = Vec::new();
    let (mut cpu, mut spun) = ((0.0, 0.0), Spun::default());
    for d in done {
        all.extend(d.slots);
        sinks.push(d.sink);
        cpu = (cpu.0 + d.cpu.0, cpu.1 + d.cpu.1);
        spun.cpu += d.spun.cpu;
        spun.ran += d.spun.ran;
        spun.allowed += d.spun.allowed;
        spun.stops += d.spun.stops;
    }
    all.sort_by_key(|(k, _)| *k);
    LoopsDone {
        slots: all.into_iter().map(|(_, s)| s).collect(),
        sinks,
        cpu,
        idle_poll_s: spun.cpu.as_secs_f64(),
        poll: PollStats {
            mode,
            place,
            spin_share: share(spun.allowed, spun.ran),
            stops: spun.stops,
        },
    }
}

/// `part` over `whole` (0 when the whole is nothing).
fn share(part: Duration, whole: Duration) -> f64 {
    if whole.is_zero() {
        0.0
    } else {
        (part.as_secs_f64() / whole.as_secs_f64()).clamp(0.0, 1.0)
    }
}
