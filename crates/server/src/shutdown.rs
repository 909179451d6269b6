//! The graceful-stop signal shared by a server's threads.
//!
//! Anything may trigger it (EXIT, SIGINT/SIGTERM, a test); each strategy
//! registers a way to wake its blocked threads. Triggering is idempotent.
//! A stop has two phases: draining (connections answer what they have
//! already received, then close) and, past the drain limit, aborting
//! (connections still open are reset at their next step).

use parking_lot::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// Called with each phase the stop moves to.
type Wake = Box<dyn Fn(Phase) + Send + Sync>;

/// Where a server is in stopping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    Running,
    /// Stopping gracefully: answer what has arrived, then close.
    Draining,
    /// The drain limit passed: reset whatever is still open.
    Aborting,
}

#[derive(Clone, Default)]
pub struct Shutdown(Arc<Inner>);

#[derive(Default)]
struct Inner {
    // A `Phase` as u8; it only moves forward. Release on each move /
    // Acquire on each check: whoever sees a phase also sees everything the
    // thread that moved to it did before.
    phase: AtomicU8,
    wakers: Mutex<Vec<Wake>>,
}

const RUNNING: u8 = 0;
const DRAINING: u8 = 1;
const ABORTING: u8 = 2;

impl Shutdown {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn phase(&self) -> Phase {
        match self.0.phase.load(Ordering::Acquire) {
            RUNNING => Phase::Running,
            DRAINING => Phase::Draining,
            _ => Phase::Aborting,
        }
    }

    pub fn is_triggered(&self) -> bool {
        self.phase() != Phase::Running
    }

    /// Start the graceful stop and wake every registered waiter.
    pub fn trigger(&self) {
        self.advance(DRAINING, Phase::Draining);
    }

    /// The drain limit passed: connections still open are to be reset.
    /// Strategies call it themselves; waiters registered with
    /// [`Shutdown::on_phase`] are woken again.
    pub(crate) fn abort(&self) {
        self.trigger();
        self.advance(ABORTING, Phase::Aborting);
    }

    /// Move forward to `to` (never back) and, if this moved it, wake.
    fn advance(&self, to: u8, phase: Phase) {
        // Under the wakers' lock, so a waiter registering meanwhile either
        // is woken here or sees the new phase itself.
        let wakers = self.0.wakers.lock();
        let was = self.0.phase.fetch_max(to, Ordering::AcqRel);
        if was < to {
            for wake in wakers.iter() {
                wake(phase);
            }
        }
    }

    /// Call `wake` when the stop is triggered (at once if it already was).
    pub fn on_trigger(&self, wake: impl Fn() + Send + Sync + 'static) {
        self.on_phase(move |p| {
            if p == Phase::Draining {
                wake();
            }
        });
    }

    /// Call `wake` with every phase the stop moves to: draining when it is
    /// triggered, aborting past the drain limit (at once with the current
    /// phase, and each one it has passed, if it already moved).
    pub fn on_phase(&self, wake: impl Fn(Phase) + Send + Sync + 'static) {
        let mut wakers = self.0.wakers.lock();
        let now = self.phase();
        for passed in [Phase::Draining, Phase::Aborting] {
            if passed <= now {
                wake(passed);
            }
        }
        wakers.push(Box::new(wake));
    }
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn phases_move_forward_and_wake_once() {
        let s = Shutdown::new();
        let woken = Arc::new(AtomicUsize::new(0));
        let w = woken.clone();
        s.on_trigger(move || {
            w.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(s.phase(), Phase::Running);
        s.trigger();
        s.trigger();
        assert_eq!(s.phase(), Phase::Draining);
        s.abort();
        assert_eq!(s.phase(), Phase::Aborting);
        s.trigger();
        assert_eq!(s.phase(), Phase::Aborting, "never back");
        assert_eq!(woken.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn phase_waiters_see_each_phase_once() {
        let s = Shutdown::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let v = seen.clone();
        s.on_phase(move |p| v.lock().push(p));
        s.trigger();
        s.trigger();
        s.abort();
        s.abort();
        assert_eq!(*seen.lock(), [Phase::Draining, Phase::Aborting]);
        // Registered late: told what it missed, at once.
        let late = Arc::new(Mutex::new(Vec::new()));
        let v = late.clone();
        s.on_phase(move |p| v.lock().push(p));
        assert_eq!(*late.lock(), [Phase::Draining, Phase::Aborting]);
        let woken = Arc::new(AtomicUsize::new(0));
        let w = woken.clone();
        s.on_trigger(move || {
            w.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(woken.load(Ordering::Relaxed), 1);
    }
}
