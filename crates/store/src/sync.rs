//! Atomics and spinning, from std normally and from loom under `--cfg loom`,
//! so the lock-free structures can be model-checked unchanged.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};

/// Wait politely for another thread to finish a short step.
pub(crate) struct Spin(#[cfg(not(loom))] crossbeam_utils::Backoff);

impl Spin {
    pub(crate) fn new() -> Self {
        #[cfg(not(loom))]
        return Spin(crossbeam_utils::Backoff::new());
        #[cfg(loom)]
        return Spin();
    }

    pub(crate) fn wait(&self) {
        #[cfg(not(loom))]
        self.0.snooze();
        #[cfg(loom)]
        loom::thread::yield_now();
    }
}
