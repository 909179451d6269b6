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
use std::fmt;
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};
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

/// Why the log stopped accepting writes: the file, the call that failed
/// on it, the error, and how far the watermark had come. Once a log has
/// failed it never commits again: no `fsync` is retried (a retried `fsync`
/// can report success for pages the kernel has already dropped).
#[derive(Debug)]
pub struct Failure {
    /// The file the call was made on (a segment, a snapshot, the directory).
    pub path: PathBuf,
    /// The call that failed (`write`, `fdatasync`, or a compaction's step).
    pub call: &'static str,
    /// What the call returned.
    pub error: io::Error,
    /// The watermark when the log failed: every ticket up to it committed
    /// (and may have been acknowledged); none after it ever commits.
    pub committed: u64,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} failed: {}",
            self.call,
            self.path.display(),
            self.error
        )
    }
}

/// What a log calls once, on the thread that met the failure, when it
/// fails: to say so at once, or to stop the process
/// ([`Options::on_failure`](crate::Options::on_failure)). It must not
/// block on anything a writer may hold.
#[derive(Clone)]
pub struct FailureHook(pub Arc<dyn Fn(&Failure) + Send + Sync>);

impl fmt::Debug for FailureHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FailureHook")
    }
}

/// The watermark, the failure (if any), and who waits for what.
pub(crate) struct Commits {
    committed: AtomicU64,
    failed: OnceLock<Arc<Failure>>,
    waiting: Mutex<BinaryHeap<Waiting>>,
    changed: Condvar,
    hook: Option<FailureHook>,
}

impl Commits {
    pub(crate) fn new(hook: Option<FailureHook>) -> Commits {
        Commits {
            committed: AtomicU64::new(0),
            failed: OnceLock::new(),
            waiting: Mutex::new(BinaryHeap::new()),
            changed: Condvar::new(),
            hook,
        }
    }

    pub(crate) fn is_committed(&self, t: Ticket) -> bool {
        self.committed.load(Ordering::Acquire) >= t.0
    }

    pub(crate) fn failure(&self) -> Option<Error> {
        self.failed.get().map(|e| Error::Failed(Arc::clone(e)))
    }

    pub(crate) fn failed(&self) -> Option<&Arc<Failure>> {
        self.failed.get()
    }

    /// Raises the watermark to `lsn` and wakes whoever waited for it;
    /// nothing once the log has failed (a failure fixes the watermark).
    pub(crate) fn advance(&self, lsn: u64) {
        let mut due: Vec<Waker> = Vec::new();
        {
            // Under the lock, as `fail` is: a failure and a rise of the
            // watermark are ordered, so the failure's `committed` is final.
            // A blocked `wait` that saw the old watermark is asleep on the
            // condvar by the time this takes the lock.
            let mut waiting = self.lock();
            if self.failed.get().is_some() {
                return;
            }
            self.committed.fetch_max(lsn, Ordering::AcqRel);
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

    /// Marks the log failed (the first failure wins), fixes the watermark,
    /// wakes every waiter, whose tickets will never commit, and calls the
    /// hook once.
    pub(crate) fn fail(&self, path: &Path, call: &'static str, error: io::Error) {
        let (first, all) = {
            let mut waiting = self.lock();
            let mut first = false;
            self.failed.get_or_init(|| {
                first = true;
                Arc::new(Failure {
                    path: path.to_path_buf(),
                    call,
                    error,
                    committed: self.committed.load(Ordering::Acquire),
                })
            });
            (first, std::mem::take(&mut *waiting))
        };
        self.changed.notify_all();
        all.into_iter().for_each(|w| w.waker.wake());
        if let (true, Some(hook), Some(f)) = (first, &self.hook, self.failed.get()) {
            (hook.0)(f);
        }
    }

    /// Wakes the registered waiter with the lowest ticket, whose record is
    /// not yet committed, to take the lead (`Committer::Leader`'s hand-off,
    /// see `log::leader`). Nothing when none waits.
    pub(crate) fn hand_off(&self) {
        let first = self.lock().pop();
        if let Some(w) = first {
            w.waker.wake();
        }
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
    /// `Committer::Leader`: the log, to lead its commit when no commit is
    /// in flight (a weak reference: the future keeps no directory locked).
    pub(crate) lead: Option<Weak<crate::log::Shared>>,
}

impl Future for Commit {
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(done) = self.commits.settled(self.ticket) {
            return Poll::Ready(done);
        }
        let registered = match self.lead.as_ref().and_then(Weak::upgrade) {
            Some(log) => log.register_or_lead(self.ticket, cx.waker()),
            None => self.commits.register(self.ticket, cx.waker()),
        };
        if registered {
            Poll::Pending
        } else {
            Poll::Ready(self.commits.settled(self.ticket).expect("settled"))
        }
    }
}
