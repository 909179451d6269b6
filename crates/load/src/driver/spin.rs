//! Polling for replies before sleeping, and the account of the CPU time
//! it takes in vain.
//!
//! A sleeping CPU (above all a virtual one, which the hypervisor parks)
//! can take milliseconds to wake: a client that sleeps between replies
//! measures its own wake-ups, not the server. So while replies are due
//! the loop polls without sleeping, for up to [`SPIN`] after the last
//! event, where its [`Rule`] allows it (`--poll`, [`super::poll`]). The
//! time spent polling in vain is reported apart from real work, as CPU
//! time (the thread's own clock): wall time would also count the time the
//! client was not running at all — on a CPU it shares with the server,
//! the time the server ran — and could exceed the client's whole CPU
//! time.

use super::poll::Rule;
use nix::time::{clock_gettime, ClockId};
use std::time::{Duration, Instant};

/// How long to busy-poll for replies before sleeping in the kernel.
pub(super) const SPIN: Duration = Duration::from_millis(1);

/// One loop's polling: whether it may spin, since when it has been
/// quiet, and the CPU time it has spent polling in vain.
#[derive(Debug)]
pub(super) struct Spin {
    rule: Rule,
    began: Instant,
    quiet_since: Option<Instant>,
    /// Empty polls in the current run of them.
    empties: u32,
    /// The thread's CPU clock at the current run's second empty poll.
    cpu_since: Option<Duration>,
    spun: Duration,
}

/// What one loop's polling came to.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Spun {
    /// CPU time spent polling in vain.
    pub cpu: Duration,
    /// How long the loop ran, and of that how long it was allowed to
    /// spin.
    pub ran: Duration,
    pub allowed: Duration,
    /// How many times auto stopped spinning.
    pub stops: u32,
}

impl Spin {
    /// A loop's polling from `now`, under `rule`.
    pub(super) fn new(rule: Rule, now: Instant) -> Spin {
        Spin {
            rule,
            began: now,
            quiet_since: None,
            empties: 0,
            cpu_since: None,
            spun: Duration::ZERO,
        }
    }

    /// Whether to poll without sleeping at `now`: replies are due, the
    /// rule allows it, and the loop has not been quiet for [`SPIN`]. A
    /// loop that is to sleep ends its run of empty polls first.
    pub(super) fn polling(&mut self, replies_due: bool, now: Instant) -> bool {
        let polling =
            replies_due && self.rule.allows(now) && self.quiet_since.is_none_or(|t| now - t < SPIN);
        if !polling {
            self.account();
        }
        polling
    }

    /// A poll that began at `before` returned nothing; `polling`: it did
    /// not sleep.
    pub(super) fn empty(&mut self, polling: bool, before: Instant) {
        if !polling {
            return;
        }
        self.quiet_since.get_or_insert(before);
        self.empties = self.empties.saturating_add(1);
        // The clock is read from the second empty poll on: a reply that
        // comes right after one costs no clock reads (a system call each),
        // and a run of one poll is too short to matter.
        if self.empties == 2 {
            self.cpu_since = thread_cpu();
        }
    }

    /// A poll returned events: the loop is no longer quiet.
    pub(super) fn events(&mut self) {
        self.quiet_since = None;
        self.account();
    }

    /// What the loop's polling came to by `now`, the run of empty polls
    /// under way included.
    pub(super) fn spun(&mut self, now: Instant) -> Spun {
        self.account();
        let ran = now.saturating_duration_since(self.began);
        let (allowed, stops) = self.rule.allowed(ran, now);
        Spun {
            cpu: self.spun,
            ran,
            allowed,
            stops,
        }
    }

    /// End a run of empty polls: add the CPU time it took.
    fn account(&mut self) {
        self.empties = 0;
        let Some(since) = self.cpu_since.take() else {
            return;
        };
        if let Some(now) = thread_cpu() {
            self.spun += now.saturating_sub(since);
        }
    }
}

/// The calling thread's CPU time so far (user and system), by the
/// kernel's scheduler clock.
fn thread_cpu() -> Option<Duration> {
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .ok()
        .map(Duration::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread that is not running accrues no polling time, however
    /// long it waits between polls: the account is CPU time, not wall.
    #[test]
    fn waiting_off_the_cpu_is_not_polling() {
        let t0 = Instant::now();
        let mut spin = Spin::new(Rule::Always, t0);
        assert!(spin.polling(true, t0));
        spin.empty(true, t0);
        spin.empty(true, t0);
        std::thread::sleep(Duration::from_millis(50));
        spin.events();
        let cpu = spin.spun(Instant::now()).cpu;
        assert!(cpu < Duration::from_millis(10), "{cpu:?}");
        // Spinning on the CPU is counted.
        spin.empty(true, Instant::now());
        spin.empty(true, Instant::now());
        let c0 = thread_cpu().unwrap();
        while thread_cpu().unwrap() - c0 < Duration::from_millis(10) {}
        let spun = spin.spun(Instant::now()).cpu - cpu;
        assert!(spun >= Duration::from_millis(10), "{spun:?}");
    }

    #[test]
    fn a_loop_that_may_not_spin_sleeps_and_says_so() {
        let t0 = Instant::now();
        let mut spin = Spin::new(Rule::Never, t0);
        assert!(!spin.polling(true, t0));
        let done = spin.spun(t0 + Duration::from_secs(2));
        assert_eq!(done.allowed, Duration::ZERO);
        assert_eq!(done.ran, Duration::from_secs(2));
        let mut always = Spin::new(Rule::Always, t0);
        assert!(always.polling(true, t0));
        assert!(!always.polling(false, t0), "nothing due: it sleeps");
        assert_eq!(
            always.spun(t0 + Duration::from_secs(2)).allowed,
            Duration::from_secs(2)
        );
    }
}
