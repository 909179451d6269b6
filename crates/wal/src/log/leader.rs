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
//! An event loop's waiter (a waker: [`Wal::register`](crate::Wal::register),
//! [`Wal::commit`](crate::Wal::commit)) that finds no commit in flight
//! first **yields once**: it wakes its own waker and returns, so that the
//! other connections ready in the same pass of its loop apply their
//! requests and append before it leads; then one `fsync` carries the
//! pass, as Redis's does. Without it a loop with one thread (tokio with
//! one worker, a pool of one) leads for its first waiter at once, blocks,
//! and no other record can join: one record per `fsync`. Each ticket
//! yields at most once (`yielded` records the last record appended when
//! one did, and a waiter at or below it leads at once); a blocked thread
//! never yields (the others append on their own threads meanwhile). The
//! record stays queued while its waiter yields, and its waiter comes back
//! to it, so the rules below hold as they are.
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

/// [`register`] for an event loop: first yields once per ticket when no
/// commit is in flight (see the module's doc): `waker` is woken at once
/// and true returned, so the loop runs its other ready connections before
/// this one leads.
pub(super) fn register_yielding(s: &Shared, t: Ticket, waker: &Waker) -> bool {
    if s.commits.settled(t).is_some() {
        return false;
    }
    if t.lsn() > s.yielded.load(Ordering::Acquire) && !in_flight(s) {
        let last = s.lock().last_lsn();
        s.yielded.fetch_max(last, Ordering::AcqRel);
        waker.wake_by_ref();
        return true;
    }
    register(s, t, waker)
}

/// Whether a leader holds `syncing` now.
fn in_flight(s: &Shared) -> bool {
    matches!(s.syncing.try_lock(), Err(TryLockError::WouldBlock))
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
            // Woken to lead: it asks again (yields once, as an event
            // loop's waiter does), and leads.
            // Registrations that returned true (woken later), the first
            // one, made while the commit was in flight, included.
            let mut asked = 1;
            while w.register(second, &waker) {
                while !flag.woken.swap(false, Ordering::Acquire) {
                    std::thread::park();
                }
                asked += 1;
            }
            let _ = done.send((pending_at_wake, asked, w.is_committed(second)));
        });
        let limit = Duration::from_secs(60);
        assert!(rx.recv_timeout(limit).unwrap(), "it registered");
        assert!(!wal.is_committed(second));
        release(&s, held);
        let (pending_at_wake, asked, committed) = result
            .recv_timeout(limit)
            .expect("the writer settled (a hang guard)");
        assert!(pending_at_wake, "woken to lead, not by its commit");
        assert!(committed, "it led its own commit");
        assert_eq!(asked, 2, "registered; woken, yielded once; then led");
        assert_eq!(wal.stats().fsyncs, 2);
    }
}

#[cfg(test)]
mod yields {
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::{Committer, Durability, Options, Wal};

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// One pass of an event loop on one thread: three connections apply
    /// their writes, then ask for their commits in turn. The first yields
    /// (woken at once, nothing synced); the second leads for all three;
    /// one `fsync` carries the pass. A blocked thread's wait never yields.
    #[test]
    fn an_event_loops_pass_shares_one_fsync() {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            committer: Committer::Leader,
            ..Options::new(Durability::Always)
        };
        let wal = Wal::open(dir.path(), opts, |_| Ok(())).unwrap();
        let woken = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(Arc::clone(&woken));
        let pass: Vec<Ticket> = (0..3).map(|i| wal.append(&[i]).unwrap()).collect();
        assert!(wal.register(pass[0], &waker), "the first yields");
        assert_eq!(woken.0.load(Ordering::SeqCst), 1, "woken at once");
        assert_eq!(wal.stats().fsyncs, 0, "nothing synced yet");
        assert!(!wal.register(pass[1], &waker), "the second leads");
        assert!(pass.iter().all(|t| wal.is_committed(*t)));
        assert!(!wal.register(pass[0], &waker), "the first finds it done");
        assert_eq!(wal.stats().fsyncs, 1, "one fsync for the pass");
        // A blocked thread leads at once.
        let t = wal.append(b"alone").unwrap();
        wal.wait(t).unwrap();
        assert_eq!(wal.stats().fsyncs, 2);
        assert_eq!(woken.0.load(Ordering::SeqCst), 1);
    }
}
