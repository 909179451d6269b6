//! What takes a RESP write back out of the store when its record never
//! commits (a failed `fsync` under `always`; see [`crate::durable`]), and
//! the writes whose records have not committed yet.
//!
//! A fast-path write's undo is made under the lock that orders writes,
//! just before the write is applied, so it sees exactly the state the
//! write changes: SET, MSET, DEL and INCRBY keep what each key held (its
//! value and its deadline: a SET clears one); a push keeps how many it
//! adds (and pops them back off); a pop keeps the elements it will take
//! (and pushes them back on). (The commands run alone record theirs as
//! they go: [`super::ext`].)
//!
//! **The order.** Every write is applied before its record commits (a
//! fast-path write logs then applies under the lock that orders writes;
//! a group run alone applies then logs, with nothing else running). The
//! undos are kept here, by ticket, not in the log's own list, because
//! some need the keyspace held alone (FLUSHALL puts its store objects
//! back). Once the log fails they are run ([`InFlight::settle`]), newest
//! first, by the first command to take the keyspace's gate alone after
//! the failure, before it reads anything: a command on the fast path
//! that finds the log failed takes the gate alone first; one already
//! past that check when the log fails waits, as any reply does, for the
//! marks of what it read, whose commit never comes. A refused group run
//! alone runs its own undo first, then settles: no refused write ever
//! brings back an older one that never committed.

use super::keyspace::{Db, Deadline, Journal, Kept, Keyspace};
use super::Args;
use crate::Durable;
use parking_lot::Mutex;
use serverlab_proto::resp::command::{Cmd, ListCmd, StrCmd};
use serverlab_proto::resp::End;
use serverlab_store::resp::RespStore;
use serverlab_wal::{Ticket, Wal};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The writes applied under `always` whose commit has not been seen yet,
/// with what takes each back.
#[derive(Default)]
pub(crate) struct InFlight {
    writes: Mutex<VecDeque<(Ticket, Journal)>>,
    /// The log failed and its uncommitted writes have been taken back.
    settled: AtomicBool,
}

impl InFlight {
    /// Keeps `journal` until `ticket` commits (and forgets those before
    /// it that have).
    pub(crate) fn push(&self, wal: &Wal, ticket: Ticket, journal: Journal) {
        let mut done = Vec::new();
        let mut w = self.writes.lock();
        while w.front().is_some_and(|(t, _)| wal.is_committed(*t)) {
            done.extend(w.pop_front());
        }
        w.push_back((ticket, journal));
        drop(w);
        // Freed outside the lock: a FLUSHALL's journal holds the old
        // databases whole, and every other writer waits for this lock.
        drop(done);
    }

    /// Whether the log has failed and its uncommitted writes may still be
    /// in the store.
    pub(crate) fn unsettled(&self, log: &Durable) -> bool {
        log.failure().is_some() && !self.settled.load(Ordering::Acquire)
    }

    /// With the keyspace held alone, once the log has failed: takes back
    /// every write whose record did not commit, newest first; once.
    pub(crate) fn settle(&self, log: &Durable, ks: &mut Keyspace) {
        let Some(f) = log.failure() else { return };
        if self.settled.load(Ordering::Acquire) {
            return;
        }
        let mut writes = std::mem::take(&mut *self.writes.lock());
        // Pushed after their tickets were taken, so nearly in order.
        writes.make_contiguous().sort_by_key(|(t, _)| t.lsn());
        use crate::sim::{planted, Mutant};
        let oldest_first = planted(Mutant::RollbackOldestFirst);
        while let Some((t, journal)) = if oldest_first {
            writes.pop_front()
        } else {
            writes.pop_back()
        } {
            if t.lsn() > f.committed && !planted(Mutant::NoRollback) {
                journal.undo(ks);
            }
        }
        self.settled.store(true, Ordering::Release);
    }
}

/// Puts `journal` in `slot`, and gives the log's own list an undo that
/// does nothing (RESP keeps its undos in [`InFlight`]).
pub(super) fn into(slot: &mut Option<Journal>, journal: Journal) -> crate::durable::Undo {
    *slot = Some(journal);
    Box::new(|| {})
}

/// How to take back `cmd`, about to be applied to database `db`.
pub(super) fn of(db: &Db, cmd: &Cmd, a: &Args) -> Journal {
    let mut j = Journal::default();
    let keys: Vec<&[u8]> = match cmd {
        Cmd::Str(StrCmd::Set { key, .. } | StrCmd::IncrBy { key, .. }) => vec![a.get(*key)],
        Cmd::Str(StrCmd::Del) => a.from(1).collect(),
        Cmd::Str(StrCmd::MSet) => a.from(1).step_by(2).collect(),
        Cmd::List(ListCmd::Push { end, key }) => {
            j.deadline(Deadline::of(db, a.get(*key)));
            push(&mut j, &db.store, *end, a.get(*key), a.count() - 2);
            return j;
        }
        Cmd::List(ListCmd::Pop { end, key, count }) => {
            j.deadline(Deadline::of(db, a.get(*key)));
            pop(&mut j, &db.store, *end, a.get(*key), count.unwrap_or(1));
            return j;
        }
        _ => Vec::new(),
    };
    keys.into_iter().for_each(|k| j.keep(Kept::of(db, k)));
    j
}

/// A push of `n` values: pop `n` back off the same end (nothing, if the
/// key holds a string and the push will fail).
fn push(j: &mut Journal, store: &Arc<dyn RespStore>, end: End, key: &[u8], n: usize) {
    let store = Arc::clone(store);
    if store.llen(key).is_err() {
        return;
    }
    let key: Box<[u8]> = key.into();
    j.push(move |_| {
        let _ = store.pop(&key, end, n);
    });
}

/// A pop of up to `count`: the elements it will take, pushed back on the
/// same end in the order that restores the list.
fn pop(j: &mut Journal, store: &Arc<dyn RespStore>, end: End, key: &[u8], count: usize) {
    if count == 0 {
        // `LPOP key 0` takes nothing (and the range below would be all).
        return;
    }
    let n = i64::try_from(count).unwrap_or(i64::MAX);
    let (start, stop) = match end {
        End::Left => (0, n.saturating_sub(1)),
        End::Right => (n.saturating_neg(), -1),
    };
    let mut taken: Vec<Box<[u8]>> = Vec::new();
    let _ = store.lrange(key, start, stop, &mut |_, it| {
        taken.extend(it.map(Box::from))
    });
    if taken.is_empty() {
        return;
    }
    if end == End::Left {
        // LPUSH puts each in turn at the head: the last taken goes first.
        taken.reverse();
    }
    let store = Arc::clone(store);
    let key: Box<[u8]> = key.into();
    j.push(move |_| {
        let _ = store.push(&key, end, &mut taken.iter().map(|i| &**i));
    });
}
