//! [`Committer::Leader`](super::Committer::Leader): `always` with no log
//! thread. The writer that must wait for its ticket commits the pending
//! records itself when no commit is in flight (it *leads*), on its own
//! thread; when one is in flight it registers its waker, as it would for
//! the log thread, and the leader's `fsync` (or the next one) releases it.
//!
//! # The invariant: no record is stranded
//!
//! A waited-for ticket always has someone bound to commit it. Three rules
//! make it so:
//!
//! 1. **A waiter tries to lead first.** It takes `syncing` with
//!    `try_lock`; holding it, it takes every pending batch, writes,
//!    `fdatasync`s and raises the watermark (waking the wakers it covers).
//!    A record appended before the waiter took the lock is then committed
//!    (it was in the batch taken, or an earlier holder, already finished,
//!    took it) or the log has failed.
//! 2. **A waiter that finds a commit in flight registers, then tries
//!    again.** Registered, it retries the `try_lock` once: if that
//!    succeeds it leads (rule 1); if it fails, a holder of `syncing`
//!    exists whose release comes after the registration, so that holder's
//!    rule 3 sees it.
//! 3. **A leader that releases `syncing` with records still pending hands
//!    the lead on.** Records appended while it synced wait in the queue;
//!    it wakes the registered waiter with the lowest ticket (every
//!    registered ticket is above the watermark: the watermark's rise
//!    removes the ones it covers). That waiter, woken without its ticket
//!    committed, runs the protocol again from rule 1: it leads, or finds a
//!    newer holder of `syncing`, which took the pending records (it took
//!    the lock after they were queued) or inherits rule 3.
//!
//! So every record waited for is taken by a holder of `syncing`, and
//! every holder raises the watermark over what it took, or fails the log,
//! which wakes every waiter: each ticket settles. A record no one waits
//! for goes with the next commit (or the drop of the `Wal`).
//!
//! The hand-off (rule 3) relies on the woken waiter running again: a
//! connection's thread, task or event-loop slot that waits for a commit
//! lives until its waker is called, which every strategy keeps. A leader
//! commits once per call and then hands on, rather than committing again
//! while others append: its own reply would wait behind theirs.
//!
//! Each registration is woken exactly once (its ticket committed, the
//! log failed, or the lead handed to it), as with the log thread, so an
//! event loop that counts its wakes stays in step.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, MutexGuard, TryLockError};
use std::task::{Wake, Waker};
use std::thread::Thread;

use super::{commit_held, Shared};
use crate::commit::Ticket;
use crate::Error;

/// Leads if no commit is in flight: commits every pending record in this
/// thread, then hands the lead on if records were queued meanwhile
/// (rule 3). False: a commit is in flight; nothing was done.
fn try_lead(s: &Shared) -> bool {
    let held = match s.syncing.try_lock() {
        Ok(g) => g,
        Err(TryLockError::Poisoned(p)) => p.into_inner(),
        Err(TryLockError::WouldBlock) => return false,
    };
    let _ = commit_held(s);
    release(s, held);
    true
}

/// A leader lets go of `syncing` (rule 3): if records were queued while
/// it synced, it wakes the lowest registered waiter to lead them.
fn release(s: &Shared, held: MutexGuard<'_, ()>) {
    drop(held);
    if !s.lock().queue.is_empty() {
        s.commits.hand_off();
    }
}

/// The waiter's side (rules 1 and 2): false when `t` is settled and
/// `waker` was not registered (it will not be called); true when it was
/// registered and will be woken once: `t` committed, the log failed, or
/// the lead handed to it (then ask again).
pub(super) fn register(s: &Shared, t: Ticket, waker: &Waker) -> bool {
    if s.commits.settled(t).is_some() || try_lead(s) && s.commits.settled(t).is_some() {
        return false;
    }
    if !s.commits.register(t, waker) {
        return false;
    }
    // A holder that released before the registration may have missed it:
    // lead now if no one holds the lock. That commit covers `t` and so
    // wakes the waker just registered.
    try_lead(s);
    true
}

/// Blocks until `t` is settled, leading whenever the lead is free.
pub(super) fn wait(s: &Shared, t: Ticket) -> Result<(), Error> {
    let me = Arc::new(Parked {
        thread: std::thread::current(),
        woken: AtomicBool::new(false),
    });
    let waker = Waker::from(Arc::clone(&me));
    loop {
        if let Some(settled) = s.commits.settled(t) {
            return settled;
        }
        if register(s, t, &waker) {
            // One wake per registration; a stray unpark is ignored.
            while !me.woken.swap(false, Ordering::Acquire) {
                std::thread::park();
            }
        }
    }
}

/// A blocked thread's waker.
struct Parked {
    thread: Thread,
    woken: AtomicBool,
}

impl Wake for Parked {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;
    use crate::{Committer, Durability, Options, Wal};

    /// Rule 3, step by step: a record queued behind a commit in flight,
    /// its writer registered; the leader finishes without it and hands
    /// the lead to that writer, which commits it in its own thread.
    /// Without the hand-off no one would: there is no log thread.
    #[test]
    fn a_record_queued_behind_a_commit_is_handed_to_its_waiter() {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            committer: Committer::Leader,
            ..Options::new(Durability::Always)
        };
        let wal = Arc::new(Wal::open(dir.path(), opts, |_| Ok(())).unwrap());
        let s = Arc::clone(wal.shared());
        // A leader in flight: it took the lock and the queue (one record).
        let first = wal.append(b"first").unwrap();
        let held = s.syncing.lock().unwrap();
        commit_held(&s).unwrap();
        assert!(wal.is_committed(first));
        // Queued while it "syncs": its writer cannot lead, so registers.
        let second = wal.append(b"second").unwrap();
        let (tx, rx) = mpsc::channel();
        let (done, result) = mpsc::channel();
        let w = Arc::clone(&wal);
        std::thread::spawn(move || {
            let flag = Arc::new(Parked {
                thread: std::thread::current(),
                woken: AtomicBool::new(false),
            });
            let waker = Waker::from(Arc::clone(&flag));
            tx.send(w.register(second, &waker)).unwrap();
            while !flag.woken.swap(false, Ordering::Acquire) {
                std::thread::park();
            }
            let pending_at_wake = !w.is_committed(second);
            // Woken to lead: it asks again, and leads.
            let registered = w.register(second, &waker);
            let _ = done.send((pending_at_wake, registered, w.is_committed(second)));
        });
        let limit = Duration::from_secs(60);
        assert!(rx.recv_timeout(limit).unwrap(), "it registered");
        assert!(!wal.is_committed(second));
        release(&s, held);
        let (pending_at_wake, registered, committed) = result
            .recv_timeout(limit)
            .expect("the writer settled (a hang guard)");
        assert!(pending_at_wake, "woken to lead, not by its commit");
        assert!(!registered && committed, "it led its own commit");
        assert_eq!(wal.stats().fsyncs, 2);
    }
}
