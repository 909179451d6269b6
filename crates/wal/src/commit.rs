//! Tickets and how a caller learns that its record is durable.
//!
//! Every appended record gets the next log sequence number; its [`Ticket`]
//! is that number. The log keeps one watermark, the highest number whose
//! record has met the mode's promise, and it only rises, so a ticket is
//! committed exactly when the watermark has reached it. A caller waits in
//! whichever way its thread can:
//!
//! - a thread per connection blocks in [`Wal::wait`](crate::Wal::wait);
//! - tokio awaits [`Wal::commit`](crate::Wal::commit), a future;
//! - an event loop (mio, io_uring) registers a [`std::task::Waker`] with
//!   [`Wal::register`](crate::Wal::register) that writes its eventfd or
//!   calls `mio::Waker::wake`, then checks
//!   [`Wal::is_committed`](crate::Wal::is_committed) for its waiting
//!   connections when it wakes.
//!
//! `std::task::Waker` is the one notification all three share (a waker can
//! unpark a thread, poll a task, or write an eventfd), which is why it is
//! the registration type. One `fsync` commits many tickets; the log thread
//! wakes each distinct waker once per commit (`Waker::will_wake`), so an
//! event loop that registers one waker for all its connections is woken
//! once, not once per connection.

use std::collections::BinaryHeap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll, Waker};

use crate::Error;

/// One appended record's place in the log: committed once the log's
/// watermark reaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticket(pub(crate) u64);

impl Ticket {
    /// The record's log sequence number (1 for the first append after open).
    pub fn lsn(self) -> u64 {
        self.0
    }
}

struct Waiting {
    lsn: u64,
    waker: Waker,
}

impl PartialEq for Waiting {
    fn eq(&self, other: &Self) -> bool {
        self.lsn == other.lsn
    }
}
impl Eq for Waiting {}
impl PartialOrd for Waiting {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Waiting {
    // Reversed: the heap's top is the lowest sequence number.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.lsn.cmp(&self.lsn)
    }
}

/// The watermark, the failure (if any), and who waits for what.
pub(crate) struct Commits {
    committed: AtomicU64,
    failed: OnceLock<Arc<io::Error>>,
    waiting: Mutex<BinaryHeap<Waiting>>,
    changed: Condvar,
}

impl Commits {
    pub(crate) fn new() -> Commits {
        Commits {
            committed: AtomicU64::new(0),
            failed: OnceLock::new(),
            waiting: Mutex::new(BinaryHeap::new()),
            changed: Condvar::new(),
        }
    }

    pub(crate) fn is_committed(&self, t: Ticket) -> bool {
        self.committed.load(Ordering::Acquire) >= t.0
    }

    pub(crate) fn failure(&self) -> Option<Error> {
        self.failed.get().map(|e| Error::Failed(Arc::clone(e)))
    }

    /// Raises the watermark to `lsn` and wakes whoever waited for it.
    pub(crate) fn advance(&self, lsn: u64) {
        self.committed.fetch_max(lsn, Ordering::AcqRel);
        let mut due: Vec<Waker> = Vec::new();
        {
            // Taking the lock after the store means a blocked `wait` that
            // saw the old watermark is already asleep on the condvar.
            let mut waiting = self.lock();
            while waiting.peek().is_some_and(|w| w.lsn <= lsn) {
                let w = waiting.pop().expect("peeked");
                if !due.iter().any(|d| d.will_wake(&w.waker)) {
                    due.push(w.waker);
                }
            }
        }
        // Wakers first, outside the lock; then the blocked threads.
        due.into_iter().for_each(Waker::wake);
        self.changed.notify_all();
    }

    /// Marks the log failed and wakes every waiter, whose tickets will
    /// never commit.
    pub(crate) fn fail(&self, e: io::Error) {
        let _ = self.failed.set(Arc::new(e));
        let all = std::mem::take(&mut *self.lock());
        self.changed.notify_all();
        all.into_iter().for_each(|w| w.waker.wake());
    }

    /// False when `t` is already settled (committed, or the log failed):
    /// the waker will not be called, look now instead.
    pub(crate) fn register(&self, t: Ticket, waker: &Waker) -> bool {
        let mut waiting = self.lock();
        if self.is_committed(t) || self.failed.get().is_some() {
            return false;
        }
        waiting.push(Waiting {
            lsn: t.0,
            waker: waker.clone(),
        });
        true
    }

    pub(crate) fn wait(&self, t: Ticket) -> Result<(), Error> {
        let mut waiting = self.lock();
        loop {
            if self.is_committed(t) {
                return Ok(());
            }
            if let Some(e) = self.failure() {
                return Err(e);
            }
            waiting = self
                .changed
                .wait(waiting)
                .unwrap_or_else(|e| e.into_inner());
        }
    }

    pub(crate) fn settled(&self, t: Ticket) -> Option<Result<(), Error>> {
        if self.is_committed(t) {
            Some(Ok(()))
        } else {
            self.failure().map(Err)
        }
    }

    fn lock(&self) -> MutexGuard<'_, BinaryHeap<Waiting>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A future that is ready when its ticket is committed (or the log has
/// failed). Made by [`Wal::commit`](crate::Wal::commit).
pub struct Commit {
    pub(crate) commits: Arc<Commits>,
    pub(crate) ticket: Ticket,
}

impl Future for Commit {
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(done) = self.commits.settled(self.ticket) {
            return Poll::Ready(done);
        }
        if self.commits.register(self.ticket, cx.waker()) {
            Poll::Pending
        } else {
            Poll::Ready(self.commits.settled(self.ticket).expect("settled"))
        }
    }
}
