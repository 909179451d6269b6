//! Whether a loop may poll without sleeping while replies are due
//! (`--poll`): always (spin), never (sleep), or only where it takes no
//! other task's CPU (auto, the default).
//!
//! Spinning keeps the client's own wake-ups out of the latency it
//! measures ([`super::spin`]), but a spinning thread is a runnable one:
//! on CPUs it shares with the server, or with other agents of the same
//! load, it takes the time they need, and the load measures a server it
//! starved. `auto` sleeps where a loop has more than [`LOCK_STEP`]
//! replies due at once (its connections × their pipeline depth: each
//! wake-up finds replies waiting, and spinning cost throughput there),
//! and otherwise spins
//! - always, where the load was given CPUs of its own: `--cpus` names
//!   CPUs and leaves some of the machine's out (the server, or the other
//!   agents, pinned to those);
//! - elsewhere, while no other task wants the CPU the loop spins on: the
//!   kernel counts the times a thread was made to give up its CPU to
//!   another (involuntary context switches, `getrusage`). A loop that
//!   allows itself to spin looks at its count every [`CHECK`]; more than
//!   [`PREEMPTED`] since the last look and it stops spinning for a hold
//!   ([`MIN_HOLD`], doubled at each stop up to [`MAX_HOLD`], back to
//!   [`MIN_HOLD`] after [`CALM`] of spinning undisturbed), then tries
//!   again. On a machine with idle CPUs the scheduler puts the others'
//!   work there and the loop is left alone: it spins. Where there are
//!   none it sleeps, and costs the others at most one [`CHECK`] of
//!   contention per hold.
//!
//! The rule ([`AutoState::checked`]) is a pure function of what was seen,
//! tested without clocks; [`Rule`] applies it to one loop.

use nix::sys::resource::{getrusage, UsageWho};
use serverlab_util::Named;
use std::time::{Duration, Instant};

/// How a load's loops wait for replies that are due.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PollMode {
    /// Poll without sleeping, for up to 1 ms after the last event.
    Spin,
    /// Never poll without sleeping: block in the kernel until an event or
    /// the next send.
    Sleep,
    /// Spin only where it takes no other task's CPU.
    #[default]
    Auto,
}

impl Named for PollMode {
    const WHAT: &'static str = "poll mode";
    const ALL: &'static [Self] = &[PollMode::Auto, PollMode::Spin, PollMode::Sleep];

    fn name(self) -> &'static str {
        match self {
            PollMode::Spin => "spin",
            PollMode::Sleep => "sleep",
            PollMode::Auto => "auto",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            PollMode::Spin => {
                "poll without sleeping while replies are due (up to 1 ms after the last event)"
            }
            PollMode::Sleep => {
                "block in the kernel until a reply or the next send: takes no CPU in vain"
            }
            PollMode::Auto => {
                "sleep where a loop has more than 4 replies due at once; else spin on CPUs given \
                 with --cpus that leave some out, elsewhere only while no other task wants the CPU"
            }
        }
    }
}

serverlab_util::named_enum_impls!(PollMode);

/// The run's polling: the mode asked for, and whether the load was
/// pinned (`--cpus`) before its loops started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Polling {
    pub mode: PollMode,
    pub pinned: bool,
}

/// How often a loop allowed to spin under auto looks at its count of
/// involuntary context switches (a system call).
pub(super) const CHECK: Duration = Duration::from_millis(10);
/// More involuntary switches than this in one [`CHECK`]: another task
/// wanted the loop's CPU (one alone may be a kernel thread passing by).
pub(super) const PREEMPTED: u64 = 1;
/// The first hold after a stop, and the longest.
pub(super) const MIN_HOLD: Duration = Duration::from_millis(100);
pub(super) const MAX_HOLD: Duration = Duration::from_millis(3200);
/// Spinning this long undisturbed brings the hold back to [`MIN_HOLD`].
pub(super) const CALM: Duration = Duration::from_secs(1);

/// Where a run's loops poll: whether the load has CPUs of its own
/// ([`alone`]), and the most replies one loop may have due at once (its
/// connections × their pipeline depth).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub alone: bool,
    pub due: usize,
}

impl Place {
    /// Whether auto leaves the loops asleep whatever the CPUs: more
    /// replies due than [`LOCK_STEP`].
    pub fn busy(&self) -> bool {
        self.due > LOCK_STEP
    }
}

/// The most replies a loop may have due at once for `--poll auto` to
/// spin. Spinning buys a reply that comes without a wake-up; lock-step,
/// with a few connections, each reply waits on that wake-up. Past this
/// a loop is rarely idle, each wake-up finds replies waiting and is paid
/// once for them all, and spinning buys nothing while it still costs
/// what a CPU that never rests costs: against redis-server at 50
/// connections × 16 a spinning client measured a fifth to a third less
/// than a sleeping one, the server reading 16 commands a call either
/// way; at 1 and 4 connections lock-step it measured more
/// (docs/measuring.md).
pub const LOCK_STEP: usize = 4;

/// Whether the load has CPUs of its own: pinned (`--cpus`) to fewer CPUs
/// than the machine has online.
pub(super) fn alone(pinned: bool, allowed: usize, online: usize) -> bool {
    pinned && allowed < online
}

/// The CPUs online (1 where it cannot be read).
pub(super) fn cpus_online() -> usize {
    nix::unistd::sysconf(nix::unistd::SysconfVar::_NPROCESSORS_ONLN)
        .ok()
        .flatten()
        .map_or(1, |n| n.max(1) as usize)
}

/// Where auto stands: spinning, or holding off until `resume_at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct AutoState {
    pub spinning: bool,
    pub resume_at: Option<Instant>,
    /// The next stop's hold.
    pub hold: Duration,
    /// Spinning undisturbed since the last stop, or the last reset.
    pub calm: Duration,
}

impl AutoState {
    /// A loop starts spinning.
    pub(super) fn start() -> AutoState {
        AutoState {
            spinning: true,
            resume_at: None,
            hold: MIN_HOLD,
            calm: Duration::ZERO,
        }
    }

    /// The state after a look at `now`, `since` after the last one;
    /// `switches`: the involuntary context switches in between.
    pub(super) fn checked(self, now: Instant, since: Duration, switches: u64) -> AutoState {
        if !self.spinning {
            let resume = self.resume_at.is_none_or(|t| now >= t);
            return if resume {
                AutoState {
                    hold: self.hold,
                    ..AutoState::start()
                }
            } else {
                self
            };
        }
        if switches > PREEMPTED {
            return AutoState {
                spinning: false,
                resume_at: Some(now + self.hold),
                hold: (self.hold * 2).min(MAX_HOLD),
                calm: Duration::ZERO,
            };
        }
        let calm = self.calm + since;
        let hold = if calm >= CALM { MIN_HOLD } else { self.hold };
        AutoState { calm, hold, ..self }
    }

    /// When to look next.
    pub(super) fn next_check(&self, now: Instant) -> Instant {
        match self.resume_at {
            Some(at) if !self.spinning => at,
            _ => now + CHECK,
        }
    }
}

/// One loop's rule, and the account of the time it allowed spinning.
#[derive(Debug)]
pub(super) enum Rule {
    Always,
    Never,
    Auto(Auto),
}

/// Auto, on one loop's thread.
#[derive(Debug)]
pub(super) struct Auto {
    state: AutoState,
    checked_at: Instant,
    next_check: Instant,
    /// The thread's involuntary context switches at the last look.
    switches: u64,
    /// Since when spinning has been allowed, and for how long in all
    /// before that.
    allowed_since: Option<Instant>,
    allowed: Duration,
    stops: u32,
}

impl Rule {
    /// The rule of a loop of a run polling as `polling` says, at
    /// `place`.
    pub(super) fn new(polling: Polling, place: Place, now: Instant) -> Rule {
        match polling.mode {
            PollMode::Spin => Rule::Always,
            PollMode::Sleep => Rule::Never,
            PollMode::Auto if place.busy() => Rule::Never,
            PollMode::Auto if place.alone => Rule::Always,
            PollMode::Auto => Rule::Auto(Auto {
                state: AutoState::start(),
                checked_at: now,
                next_check: now + CHECK,
                switches: involuntary_switches(),
                allowed_since: Some(now),
                allowed: Duration::ZERO,
                stops: 0,
            }),
        }
    }

    /// Whether the loop may spin at `now` (auto looks, when it is time).
    pub(super) fn allows(&mut self, now: Instant) -> bool {
        match self {
            Rule::Always => true,
            Rule::Never => false,
            Rule::Auto(a) => a.allows(now),
        }
    }

    /// How long of `ran` the loop was allowed to spin, and how many times
    /// auto stopped.
    pub(super) fn allowed(&self, ran: Duration, now: Instant) -> (Duration, u32) {
        match self {
            Rule::Always => (ran, 0),
            Rule::Never => (Duration::ZERO, 0),
            Rule::Auto(a) => {
                let current = a.allowed_since.map_or(Duration::ZERO, |t| now - t);
                ((a.allowed + current).min(ran), a.stops)
            }
        }
    }
}

impl Auto {
    fn allows(&mut self, now: Instant) -> bool {
        if now >= self.next_check {
            self.look(now);
        }
        self.state.spinning
    }

    /// Look at the thread's switches and apply the rule.
    fn look(&mut self, now: Instant) {
        let switches = involuntary_switches();
        let was = self.state;
        let seen = switches.saturating_sub(self.switches);
        self.state = was.checked(now, now - self.checked_at, seen);
        (self.switches, self.checked_at) = (switches, now);
        self.next_check = self.state.next_check(now);
        match (was.spinning, self.state.spinning) {
            (true, false) => {
                self.stops += 1;
                if let Some(t) = self.allowed_since.take() {
                    self.allowed += now - t;
                }
            }
            (false, true) => self.allowed_since = Some(now),
            _ => {}
        }
    }
}

/// The calling thread's involuntary context switches so far (0 where
/// they cannot be read: auto then spins, as a loop always did).
fn involuntary_switches() -> u64 {
    getrusage(UsageWho::RUSAGE_THREAD).map_or(0, |u| {
        u64::try_from(u.involuntary_context_switches()).unwrap_or(0)
    })
}

/// What the loops of a run did: the mode, where they ran, the share of
/// the loops' time spinning was allowed and how many times auto stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PollStats {
    pub mode: PollMode,
    pub place: Place,
    pub spin_share: f64,
    pub stops: u32,
}

impl PollStats {
    /// What the loops did, as the results name it: `spin`, `sleep`, or
    /// `spin-uncontended` (auto without CPUs of its own).
    pub fn resolved(&self) -> &'static str {
        match (self.mode, self.place.busy(), self.place.alone) {
            (PollMode::Spin, ..) => "spin",
            (PollMode::Sleep, ..) | (PollMode::Auto, true, _) => "sleep",
            (PollMode::Auto, false, true) => "spin",
            (PollMode::Auto, false, false) => "spin-uncontended",
        }
    }

    /// Why the loops polled as they did, in one line.
    pub fn why(&self) -> String {
        match (self.mode, self.place.busy(), self.place.alone) {
            (PollMode::Spin, ..) => "asked: polls without sleeping while replies are due".into(),
            (PollMode::Sleep, ..) => "asked: sleeps in the kernel while replies are due".into(),
            (PollMode::Auto, true, _) => format!(
                "up to {} due at once on each event loop (connections × pipeline, over {LOCK_STEP}): \
                 each wake-up finds replies waiting, so it sleeps (spinning there cost throughput)",
                serverlab_util::plural(self.place.due as u64, "reply", "replies")
            ),
            (PollMode::Auto, false, true) => {
                "pinned with --cpus to CPUs of its own (not every CPU online), and lock-step: \
                 spins there"
                    .into()
            }
            (PollMode::Auto, false, false) => format!(
                "no CPUs of its own (--cpus not given, or every CPU online): spins while no other \
                 task wants its CPU; stopped {} when one did",
                serverlab_util::plural(u64::from(self.stops), "time", "times")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_has_cpus_of_its_own_only_when_pinned_to_some_of_them() {
        assert!(alone(true, 2, 8));
        assert!(!alone(true, 8, 8), "pinned to every CPU: shares them");
        assert!(
            !alone(false, 2, 8),
            "a mask it was not given (taskset, cgroup) is not a promise"
        );
    }

    #[test]
    fn the_modes_map_to_rules() {
        let now = Instant::now();
        let at = |alone, due| Place { alone, due };
        let spin = Polling {
            mode: PollMode::Spin,
            pinned: false,
        };
        assert!(matches!(Rule::new(spin, at(false, 800), now), Rule::Always));
        let sleep = Polling {
            mode: PollMode::Sleep,
            pinned: true,
        };
        assert!(matches!(Rule::new(sleep, at(true, 1), now), Rule::Never));
        let auto = Polling::default();
        assert_eq!(auto.mode, PollMode::Auto);
        assert!(matches!(Rule::new(auto, at(true, 1), now), Rule::Always));
        assert!(matches!(Rule::new(auto, at(false, 1), now), Rule::Auto(_)));
        // Many replies due on one loop: auto sleeps, CPUs of its own or not.
        let busy = at(true, LOCK_STEP + 1);
        assert!(matches!(Rule::new(auto, busy, now), Rule::Never));
        assert!(matches!(Rule::new(auto, at(false, 800), now), Rule::Never));
        assert!(matches!(
            Rule::new(auto, at(true, LOCK_STEP), now),
            Rule::Always
        ));
    }

    #[test]
    fn auto_stops_when_another_task_takes_its_cpu_and_holds_longer_each_time() {
        let t0 = Instant::now();
        let s = AutoState::start();
        // A kernel thread passing by is not contention.
        let s = s.checked(t0 + CHECK, CHECK, 1);
        assert!(s.spinning);
        let s = s.checked(t0 + 2 * CHECK, CHECK, 5);
        assert!(!s.spinning);
        assert_eq!(s.resume_at, Some(t0 + 2 * CHECK + MIN_HOLD));
        assert_eq!(s.next_check(t0 + 2 * CHECK), t0 + 2 * CHECK + MIN_HOLD);
        // Held until then, whatever the count says.
        let held = s.checked(t0 + 3 * CHECK, CHECK, 0);
        assert_eq!(held, s);
        // Then tries again, and stops again for twice as long.
        let back = s.checked(t0 + 2 * CHECK + MIN_HOLD, MIN_HOLD, 0);
        assert!(back.spinning);
        let at = t0 + 3 * CHECK + MIN_HOLD;
        let again = back.checked(at, CHECK, 3);
        assert_eq!(again.resume_at, Some(at + 2 * MIN_HOLD));
    }

    #[test]
    fn the_hold_is_bounded_and_a_calm_second_resets_it() {
        let t0 = Instant::now();
        let mut s = AutoState::start();
        for k in 0..10 {
            let now = t0 + Duration::from_secs(10 * k);
            s = s.checked(now, CHECK, 0); // resume
            s = s.checked(now, CHECK, 9); // stop
        }
        assert_eq!(s.hold, MAX_HOLD);
        let now = t0 + Duration::from_secs(1000);
        s = s.checked(now, CHECK, 0);
        assert!(s.spinning);
        let mut at = now;
        while s.hold != MIN_HOLD {
            at += CHECK;
            s = s.checked(at, CHECK, 0);
            assert!(at - now <= CALM, "not reset after {:?}", at - now);
        }
        assert_eq!(at - now, CALM);
    }

    #[test]
    fn why_says_what_auto_decided_on() {
        let stats = |mode, alone, stops| PollStats {
            mode,
            place: Place { alone, due: 1 },
            spin_share: 0.5,
            stops,
        };
        assert!(stats(PollMode::Auto, true, 0).why().contains("pinned"));
        assert_eq!(stats(PollMode::Auto, true, 0).resolved(), "spin");
        let loose = stats(PollMode::Auto, false, 3).why();
        assert!(loose.contains("stopped 3 times"), "{loose}");
        assert_eq!(
            stats(PollMode::Auto, false, 3).resolved(),
            "spin-uncontended"
        );
        assert!(stats(PollMode::Sleep, false, 0).why().starts_with("asked"));
        let busy = PollStats {
            place: Place {
                alone: true,
                due: 800,
            },
            ..stats(PollMode::Auto, true, 0)
        };
        assert!(
            busy.why().contains("up to 800 replies due"),
            "{}",
            busy.why()
        );
        assert_eq!(busy.resolved(), "sleep");
        let help = PollMode::Auto.describe();
        assert!(
            help.contains(&format!("more than {LOCK_STEP} replies")),
            "{help}"
        );
    }
}
