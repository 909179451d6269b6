//! Atomics and spinning, from std normally and from loom under `--cfg serverlab_loom`,
//! so the lock-free structures can be model-checked unchanged.

#[cfg(serverlab_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
#[cfg(not(serverlab_loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};

/// Wait politely for another thread to finish a short step.
pub(crate) struct Spin(#[cfg(not(serverlab_loom))] crossbeam_utils::Backoff);

impl Spin {
    pub(crate) fn new() -> Self {
        #[cfg(not(serverlab_loom))]
        return Spin(crossbeam_utils::Backoff::new());
        #[cfg(serverlab_loom)]
        return Spin();
    }

    pub(crate) fn wait(&self) {
        #[cfg(not(serverlab_loom))]
        self.0.snooze();
        #[cfg(serverlab_loom)]
        loom::thread::yield_now();
    }
}
