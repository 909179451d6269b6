//! The graceful-stop signal shared by a server's threads.
//!
//! Anything may trigger it (EXIT, SIGINT/SIGTERM, a test); each strategy
//! registers a way to wake its blocked threads. Triggering is idempotent.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

type Wake = Box<dyn Fn() + Send + Sync>;

#[derive(Clone, Default)]
pub struct Shutdown(Arc<Inner>);

#[derive(Default)]
struct Inner {
    // Release on trigger / Acquire on check: whoever sees the flag also
    // sees everything the triggering thread did before it.
    stopping: AtomicBool,
    wakers: Mutex<Vec<Wake>>,
}

impl Shutdown {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_triggered(&self) -> bool {
        self.0.stopping.load(Ordering::Acquire)
    }

    /// Start the graceful stop and wake every registered waiter.
    pub fn trigger(&self) {
        if self.0.stopping.swap(true, Ordering::AcqRel) {
            return;
        }
        for wake in self.0.wakers.lock().iter() {
            wake();
        }
    }

    /// Call `wake` when the stop is triggered (at once if it already was).
    pub fn on_trigger(&self, wake: impl Fn() + Send + Sync + 'static) {
        let mut wakers = self.0.wakers.lock();
        if self.is_triggered() {
            drop(wakers);
            wake();
            return;
        }
        wakers.push(Box::new(wake));
    }
}
