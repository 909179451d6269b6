//! The keyspace: sixteen databases (SELECT 0 to 15), each a store of the
//! server's locking scheme and its keys' deadlines, behind one gate.
//!
//! The gate is a reader/writer lock sharded by thread
//! (`crossbeam_utils::sync::ShardedLock`): a command on the fast path
//! (GET, SET, INCR, the pushes and pops, …) takes it to read, which
//! touches only its own thread's shard, and then relies on the store's
//! own locking, as before; a command beyond it (APPEND, LINSERT, RENAME,
//! EXPIRE, SADD, an EXEC, …) takes it to write, and so runs alone, as
//! every command runs in Redis: what it reads and writes, over any number
//! of keys and databases, is one step. SWAPDB swaps two databases under
//! it.

use super::alone::Running;
use super::expires::Expires;
use serverlab_proto::resp::command::DATABASES;
use serverlab_store::resp::{self as stores, RespStore, Value};
use serverlab_store::StoreKind;
use std::sync::Arc;

/// One database (cloned: the same store and deadlines, shared).
#[derive(Clone)]
pub(crate) struct Database {
    pub store: Arc<dyn RespStore>,
    pub expires: Arc<Expires>,
}

pub(crate) struct Keyspace {
    pub dbs: Vec<Database>,
    /// The locking scheme of every store (a flushed database gets a fresh
    /// one under a log: the old one is kept to be put back).
    kind: StoreKind,
}

impl Keyspace {
    /// Sixteen empty databases of the locking scheme `kind`; `None` for
    /// a scheme RESP's store does not offer.
    pub(crate) fn new(kind: StoreKind) -> Option<Keyspace> {
        let dbs = (0..DATABASES)
            .map(|_| {
                Some(Database {
                    store: stores::new(kind)?,
                    expires: Arc::default(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Keyspace { dbs, kind })
    }

    /// An empty database of the same scheme.
    pub(crate) fn fresh(&self) -> Database {
        Database {
            store: stores::new(self.kind).expect("a scheme RESP offers"),
            expires: Arc::default(),
        }
    }

    /// Keys in every database.
    pub(crate) fn keys(&self) -> usize {
        self.dbs.iter().map(|d| d.store.len()).sum()
    }

    /// Deletes every key past its deadline, in every database: each
    /// `expired` ([`super::notify`]).
    pub(crate) fn expire_due(&self, now: i64, pubsub: &super::pubsub::PubSub) -> usize {
        let mut n = 0;
        for (i, d) in self.dbs.iter().enumerate() {
            let mut gone: Vec<Box<[u8]>> = Vec::new();
            n += d
                .expires
                .active(&*d.store, now, &mut |k| gone.push(k.into()));
            pubsub.expired(i, gone.iter().map(|k| &k[..]));
        }
        n
    }
}

/// A key as it was: its value (if any) and deadline (if any), with the
/// database it is in (the objects, not the number: an undo taken before a
/// SWAPDB puts it back where it was taken).
pub(crate) struct Kept {
    store: Arc<dyn RespStore>,
    expires: Arc<Expires>,
    key: Box<[u8]>,
    value: Option<Value>,
    deadline: Option<i64>,
}

impl Kept {
    pub(crate) fn of(d: &Database, key: &[u8]) -> Kept {
        Kept::holding(d, key, d.store.cloned(key))
    }

    /// The key of `d` with `value` (what it held) and its deadline now.
    fn holding(d: &Database, key: &[u8], value: Option<Value>) -> Kept {
        Kept {
            store: Arc::clone(&d.store),
            expires: Arc::clone(&d.expires),
            key: key.into(),
            value,
            deadline: d.expires.get(key),
        }
    }

    /// Takes the key's value out of the store (moved, not copied: a
    /// string shorter than a few hundred bytes excepted), keeping it and
    /// the key's deadline to be put back: what takes back a write that
    /// replaces or removes the value.
    pub(crate) fn take(d: &Database, key: &[u8]) -> Kept {
        Kept::holding(d, key, d.store.take(key))
    }

    /// Whether the key held anything.
    pub(crate) fn held(&self) -> bool {
        self.value.is_some()
    }

    /// Puts the key back as it was.
    pub(crate) fn restore(self) {
        match self.value {
            Some(v) => self.store.put(&self.key, v),
            None => {
                self.store.del(&self.key);
            }
        }
        match self.deadline {
            Some(w) => self.expires.set(&self.key, w),
            None => {
                self.expires.remove(&self.key);
            }
        }
    }
}

/// Puts `value` under `key` of the command's database (`None`: removes
/// the key), what it held moved out, not copied, and kept to be put back
/// if the write is taken back (`always`); whether it held anything. The
/// key's deadline is the caller's.
pub(crate) fn replace(cx: &mut Running, key: &[u8], value: Option<Value>) -> bool {
    if !cx.keeps() {
        let store = cx.store();
        return match value {
            Some(v) => {
                let had = store.exists(key);
                store.put(key, v);
                had
            }
            None => store.del(key),
        };
    }
    let kept = Kept::take(cx.here(), key);
    let had = kept.held();
    if let Some(v) = value {
        cx.store().put(key, v);
    }
    cx.undo(move |_| kept.restore());
    had
}

/// A key's deadline as it was (EXPIRE, PERSIST and the writes that
/// drop a deadline change only that), in the database it is in.
pub(crate) struct Deadline {
    expires: Arc<Expires>,
    key: Box<[u8]>,
    deadline: Option<i64>,
}

impl Deadline {
    pub(crate) fn of(d: &Database, key: &[u8]) -> Deadline {
        Deadline {
            expires: Arc::clone(&d.expires),
            key: key.into(),
            deadline: d.expires.get(key),
        }
    }

    pub(crate) fn restore(self) {
        match self.deadline {
            Some(w) => self.expires.set(&self.key, w),
            None => {
                self.expires.remove(&self.key);
            }
        }
    }
}

/// One step that takes back part of a write: run with the keyspace held
/// alone, after every step of every later write has run.
pub(crate) type Step = Box<dyn FnOnce(&mut Keyspace) + Send>;

/// What takes back a write, or a group of writes run alone together:
/// the steps each change recorded as it was made, run newest first.
/// Each step costs what its change changed (the members SADD added, the
/// element LMOVE moved, the old field values HSET replaced, the store
/// objects FLUSHALL replaced), never a copy of what the write left alone.
#[derive(Default)]
pub(crate) struct Journal {
    steps: Vec<Step>,
}

impl Journal {
    pub(crate) fn push(&mut self, step: impl FnOnce(&mut Keyspace) + Send + 'static) {
        self.steps.push(Box::new(step));
    }

    /// Puts `kept` back.
    pub(crate) fn keep(&mut self, kept: Kept) {
        self.push(move |_| kept.restore());
    }

    /// Puts the deadline back.
    pub(crate) fn deadline(&mut self, d: Deadline) {
        self.push(move |_| d.restore());
    }

    /// Puts every database back where it was (FLUSHALL, FLUSHDB, SWAPDB:
    /// the store objects, not their contents, so this is sixteen pointers).
    pub(crate) fn databases(&mut self, ks: &Keyspace) {
        let dbs = ks.dbs.clone();
        self.push(move |ks| ks.dbs = dbs);
    }

    /// Another journal's steps, after this one's.
    pub(crate) fn append(&mut self, mut later: Journal) {
        self.steps.append(&mut later.steps);
    }

    pub(crate) fn len(&self) -> usize {
        self.steps.len()
    }

    /// Runs every step, newest first.
    pub(crate) fn undo(self, ks: &mut Keyspace) {
        self.steps.into_iter().rev().for_each(|s| s(ks));
    }
}
