//! What takes a RESP write back out of the store when its record never
//! commits (a failed `fsync` under `always`; see [`crate::durable`]), and
//! the writes whose records have not committed yet.
//!
//! A fast-path write's undo is made under the lock that orders writes,
//! just before the write is applied, so it sees exactly the state the
//! write changes: SET, MSET and DEL keep each key's deadline (a SET
//! clears one) and whether it was absent, and move the value they
//! replace or remove out of the store as they apply ([`apply`]), so an
//! undo never copies a value; INCRBY keeps the key's old number (a few
//! bytes; nothing when it cannot change the key); a push keeps how many it
//! adds (and pops them back off); a pop keeps the elements it will take
//! (and pushes them back on). (The commands run alone record theirs as
//! they go: [`super::alone`].)
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

use super::keyspace::{Database, Deadline, Journal, Kept, Keyspace};
use super::{Args, RespService};
use crate::Durable;
use parking_lot::Mutex;
use serverlab_proto::resp::command::{Cmd, ListCmd, StrCmd};
use serverlab_proto::resp::{reply, End, SetCond};
use serverlab_store::resp::{Held, RespStore, Value};
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

/// How to take back `cmd`, about to be applied to database `db` (by
/// [`apply`], which hands back the values SET, MSET and DEL move out).
pub(super) fn of(db: &Database, cmd: &Cmd, a: &Args) -> Journal {
    let mut j = Journal::default();
    let keys: Vec<&[u8]> = match cmd {
        Cmd::Str(StrCmd::Set { key, .. }) => vec![a.get(*key)],
        Cmd::Str(StrCmd::Del) => a.from(1).collect(),
        Cmd::Str(StrCmd::MSet) => a.from(1).step_by(2).collect(),
        Cmd::Str(StrCmd::IncrBy { key, .. }) => {
            incr(&mut j, db, a.get(*key));
            return j;
        }
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
    keys.into_iter().for_each(|k| was(&mut j, db, k));
    j
}

/// What a SET, MSET or DEL keeps of `key` before it runs: its deadline,
/// and whether it was absent (to remove it again); the value it replaces
/// or removes is moved out by [`apply`], not copied here.
fn was(j: &mut Journal, db: &Database, key: &[u8]) {
    j.deadline(Deadline::of(db, key));
    if !db.store.exists(key) {
        let store = Arc::clone(&db.store);
        let key: Box<[u8]> = key.into();
        j.push(move |_| {
            store.del(&key);
        });
    }
}

/// An INCRBY keeps the key as it was only if it may change it: absent,
/// or a string short enough to be a 64-bit integer (a longer one, or a
/// key of another type, is refused and left as it was), so the copy is
/// of a few bytes at most.
fn incr(j: &mut Journal, db: &Database, key: &[u8]) {
    /// Longer than any 64-bit integer in Redis's form.
    const LONGEST: usize = 20;
    let mut may_change = true;
    db.store.peek(key, &mut |held| {
        may_change = matches!(held, Held::Str(v) if v.len() <= LONGEST)
    });
    if may_change {
        j.keep(Kept::of(db, key));
    }
}

/// The values a fast-path write moved out of the store, key by key in
/// the order it replaced or removed them.
pub(super) type Moved = Vec<(Box<[u8]>, Value)>;

/// Applies `cmd` as the fast path does ([`RespService::data`]), but a
/// SET, MSET or DEL moves what it replaces or removes out of the store
/// (instead of freeing it) and hands it back, so that its undo keeps the
/// old value without a copy of it.
pub(super) fn apply(
    svc: &RespService,
    ks: &Keyspace,
    n: usize,
    cmd: Cmd,
    a: &Args,
    out: &mut Vec<u8>,
) -> Moved {
    let mut moved = Vec::new();
    let store = &*ks.dbs[n].store;
    let mut keep = |k: &[u8], old: Option<Value>| {
        if let Some(v) = old {
            moved.push((k.into(), v));
        }
    };
    match cmd {
        Cmd::Str(StrCmd::Set { key, value, cond }) => {
            let (wrote, old) = store.replace(a.get(key), a.get(value), cond);
            keep(a.get(key), old);
            if wrote {
                reply::ok(out)
            } else {
                reply::null(out)
            }
        }
        Cmd::Str(StrCmd::Del) => {
            let mut n = 0;
            for k in a.from(1) {
                let old = store.take(k);
                n += usize::from(old.is_some());
                keep(k, old);
            }
            reply::int(out, n as i64)
        }
        Cmd::Str(StrCmd::MSet) => {
            let mut kv = a.from(1);
            while let (Some(k), Some(v)) = (kv.next(), kv.next()) {
                keep(k, store.replace(k, v, SetCond::Always).1);
            }
            reply::ok(out)
        }
        _ => svc.data(ks, n, cmd, a, out),
    }
    moved
}

/// Adds to `j` the step that puts back what [`apply`] moved out of
/// database `db`, the last moved first.
pub(super) fn moved_back(j: &mut Journal, db: &Database, moved: Moved) {
    if moved.is_empty() {
        return;
    }
    let store = Arc::clone(&db.store);
    j.push(move |_| {
        for (k, v) in moved.into_iter().rev() {
            store.put(&k, v);
        }
    });
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
