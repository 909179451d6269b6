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

use super::expires::Expires;
use serverlab_proto::resp::command::DATABASES;
use serverlab_store::resp::{self as stores, RespStore, Value};
use serverlab_store::StoreKind;
use std::sync::Arc;

/// One database.
pub(crate) struct Db {
    pub store: Arc<dyn RespStore>,
    pub expires: Arc<Expires>,
}

pub(crate) struct Keyspace {
    pub dbs: Vec<Db>,
}

impl Keyspace {
    /// Sixteen empty databases of the locking scheme `kind`; `None` for
    /// a scheme RESP's store does not offer.
    pub(crate) fn new(kind: StoreKind) -> Option<Keyspace> {
        let dbs = (0..DATABASES)
            .map(|_| {
                Some(Db {
                    store: stores::new(kind)?,
                    expires: Arc::default(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Keyspace { dbs })
    }

    /// Keys in every database.
    pub(crate) fn keys(&self) -> usize {
        self.dbs.iter().map(|d| d.store.len()).sum()
    }

    /// Deletes every key past its deadline, in every database.
    pub(crate) fn expire_due(&self, now: i64) -> usize {
        self.dbs
            .iter()
            .map(|d| d.expires.active(&*d.store, now))
            .sum()
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
    pub(crate) fn of(d: &Db, key: &[u8]) -> Kept {
        Kept {
            store: Arc::clone(&d.store),
            expires: Arc::clone(&d.expires),
            key: key.into(),
            value: d.store.cloned(key),
            deadline: d.expires.get(key),
        }
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

/// Every database as it was.
pub(crate) struct Everything {
    dbs: Vec<(Arc<dyn RespStore>, Arc<Expires>)>,
    keys: Vec<Kept>,
}

impl Everything {
    pub(crate) fn of(ks: &Keyspace) -> Everything {
        let mut keys = Vec::new();
        for d in &ks.dbs {
            let mut names: Vec<Box<[u8]>> = Vec::new();
            d.store.for_each(&mut |k, _| names.push(k.into()));
            keys.extend(names.iter().map(|k| Kept::of(d, k)));
        }
        let dbs = ks
            .dbs
            .iter()
            .map(|d| (Arc::clone(&d.store), Arc::clone(&d.expires)))
            .collect();
        Everything { dbs, keys }
    }

    /// Empties every database and puts every key back.
    pub(crate) fn restore(self) {
        for (store, expires) in &self.dbs {
            store.clear();
            expires.clear();
        }
        self.keys.into_iter().for_each(Kept::restore);
    }
}
