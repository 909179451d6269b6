//! Polling for replies before sleeping, and the account of the CPU time
//! it takes in vain.
//!
//! A sleeping CPU (above all a virtual one, which the hypervisor parks)
//! can take milliseconds to wake: a client that sleeps between replies
//! measures its own wake-ups, not the server. So while replies are due
//! the loop polls without sleeping, for up to [`SPIN`] after the last
//! event. The time spent polling in vain is reported apart from real
//! work, as CPU time (the thread's own clock): wall time would also count
//! the time the client was not running at all — on a CPU it shares with
//! the server, the time the server ran — and could exceed the client's
//! whole CPU time.

use nix::time::{clock_gettime, ClockId};
use std::time::{Duration, Instant};

/// How long to busy-poll for replies before sleeping in the kernel.
pub(super) const SPIN: Duration = Duration::from_millis(1);

/// One loop's polling: since when it has been quiet, and the CPU time it
/// has spent polling in vain.
#[derive(Debug, Default)]
pub(super) struct Spin {
    quiet_since: Option<Instant>,
    /// Empty polls in the current run of them.
    empties: u32,
    /// The thread's CPU clock at the current run's second empty poll.
    cpu_since: Option<Duration>,
    spun: Duration,
}

impl Spin {
    /// Whether to poll without sleeping at `now`: replies are due and the
    /// loop has not been quiet for [`SPIN`]. A loop that is to sleep ends
    /// its run of empty polls first.
    pub(super) fn polling(&mut self, replies_due: bool, now: Instant) -> bool {
        let polling = replies_due && self.quiet_since.is_none_or(|t| now - t < SPIN);
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

    /// The CPU time spent polling in vain, the run of empty polls under
    /// way included.
    pub(super) fn spun(&mut self) -> Duration {
        self.account();
        self.spun
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
        let mut spin = Spin::default();
        let t0 = Instant::now();
        assert!(spin.polling(true, t0));
        spin.empty(true, t0);
        spin.empty(true, t0);
        std::thread::sleep(Duration::from_millis(50));
        spin.events();
        assert!(spin.spun() < Duration::from_millis(10), "{:?}", spin.spun);
        // Spinning on the CPU is counted.
        let before = spin.spun();
        spin.empty(true, Instant::now());
        spin.empty(true, Instant::now());
        let c0 = thread_cpu().unwrap();
        while thread_cpu().unwrap() - c0 < Duration::from_millis(10) {}
        let spun = spin.spun() - before;
        assert!(spun >= Duration::from_millis(10), "{spun:?}");
    }
}
