//! Who runs a connection next: the event loop or the worker already on it.
//!
//! A connection is in exactly one place at a time: idle (waiting for an
//! event), scheduled (in the work queue), running (a worker holds it), or
//! closed. An event for a running connection is remembered (`NOTIFIED`), so
//! the worker runs it again instead of parking it: with edge-triggered
//! polling an event that found nobody waiting would be lost for good.
//!
//! Orderings: every transition is an `AcqRel` read-modify-write — even a
//! notify that finds the connection already scheduled rewrites the same
//! state. A plain load there would let the scheduled run start without
//! synchronising with the notifier, and so possibly miss what the event
//! announced (the loom model below found exactly that). With a
//! read-modify-write, whichever of the two comes second in the state's
//! modification order sees the other. The connection's buffers are
//! additionally behind their own mutex.

#[cfg(serverlab_loom)]
use loom::sync::atomic::{AtomicU8, Ordering};
#[cfg(not(serverlab_loom))]
use std::sync::atomic::{AtomicU8, Ordering};

const IDLE: u8 = 0;
const SCHEDULED: u8 = 1;
const RUNNING: u8 = 2;
const NOTIFIED: u8 = 3;
const CLOSED: u8 = 4;

pub(crate) struct Readiness(AtomicU8);

impl Readiness {
    pub(crate) fn idle() -> Self {
        Readiness(AtomicU8::new(IDLE))
    }

    #[cfg(all(test, serverlab_loom))]
    fn scheduled() -> Self {
        Readiness(AtomicU8::new(SCHEDULED))
    }

    /// Something happened on the connection. True: the caller must queue it.
    /// Always a compare-and-swap (even when the state stays the same): a
    /// plain load may return a stale state, and an event judged "already
    /// scheduled" on a stale value would be lost.
    pub(crate) fn notify(&self) -> bool {
        let mut s = self.0.load(Ordering::Acquire);
        loop {
            let next = match s {
                IDLE => SCHEDULED,
                RUNNING => NOTIFIED,
                SCHEDULED | NOTIFIED => s,
                _ => return false,
            };
            match self
                .0
                .compare_exchange_weak(s, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return s == IDLE,
                Err(now) => s = now,
            }
        }
    }

    /// A worker took the connection from the queue.
    pub(crate) fn start(&self) {
        let was = self.0.swap(RUNNING, Ordering::AcqRel);
        debug_assert_eq!(was, SCHEDULED);
    }

    /// The worker is done for now. `more`: it stopped with work left (its
    /// budget ran out). True: the worker must queue it again.
    pub(crate) fn finish(&self, more: bool) -> bool {
        if more {
            self.0.swap(SCHEDULED, Ordering::AcqRel);
            return true;
        }
        match self
            .0
            .compare_exchange(RUNNING, IDLE, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => false,
            Err(_notified) => {
                self.0.swap(SCHEDULED, Ordering::AcqRel);
                true
            }
        }
    }

    /// The connection is closed; events for it are ignored.
    pub(crate) fn close(&self) {
        self.0.store(CLOSED, Ordering::Release);
    }
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests {
    use super::*;

    #[test]
    fn transitions() {
        let r = Readiness::idle();
        assert!(r.notify());
        assert!(!r.notify(), "already scheduled");
        r.start();
        assert!(!r.notify(), "running: remembered, not queued");
        assert!(r.finish(false), "the remembered event requeues it");
        r.start();
        assert!(!r.finish(false));
        assert!(r.notify());
        r.start();
        assert!(r.finish(true));
        r.start();
        r.close();
        assert!(!r.notify());
    }
}

#[cfg(all(test, serverlab_loom))]
mod loom_tests {
    use super::*;
    use loom::sync::atomic::AtomicUsize;
    use loom::sync::Arc;

    /// An event that races a worker finishing is never lost: some run of
    /// the connection starts after the event happened and sees it.
    #[test]
    fn no_lost_wakeup() {
        loom::model(|| {
            let ready = Arc::new(Readiness::scheduled());
            let data = Arc::new(AtomicUsize::new(0));
            let queued = Arc::new(AtomicUsize::new(0));
            let notifier = {
                let (ready, data, queued) = (ready.clone(), data.clone(), queued.clone());
                loom::thread::spawn(move || {
                    data.store(1, Ordering::Release);
                    if ready.notify() {
                        queued.fetch_add(1, Ordering::AcqRel);
                    }
                })
            };
            let mut seen = 0;
            loop {
                ready.start();
                seen = seen.max(data.load(Ordering::Acquire));
                if !ready.finish(false) {
                    break;
                }
            }
            notifier.join().unwrap();
            if queued.load(Ordering::Acquire) == 1 {
                ready.start();
                seen = seen.max(data.load(Ordering::Acquire));
                assert!(!ready.finish(false));
            }
            assert_eq!(seen, 1, "the event was never seen by a run");
        });
    }
}
