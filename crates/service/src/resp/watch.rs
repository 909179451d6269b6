//! WATCH's bookkeeping: which connections watch which keys, and a flag
//! per connection that any write to one of its keys sets (Redis's
//! `CLIENT_DIRTY_CAS`), checked by its EXEC.
//!
//! While nobody watches anything, a write pays one atomic load. WATCH and
//! EXEC run alone (they take the keyspace's gate to write), so a write
//! either ran before a WATCH (and the WATCH saw its result) or runs after
//! it, sees the watch and sets the flag.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// A connection's flag: set when a key it watches is written.
pub(crate) type Dirty = Arc<AtomicBool>;

/// A watched key: its database and name.
type Watched = (usize, Box<[u8]>);

#[derive(Default)]
pub(crate) struct Watches {
    by_key: Mutex<HashMap<Watched, Vec<Dirty>>>,
    /// Watched (database, key) pairs.
    count: AtomicUsize,
}

impl Watches {
    /// Whether anybody watches anything.
    pub(crate) fn any(&self) -> bool {
        self.count.load(Ordering::Acquire) > 0
    }

    pub(crate) fn watch(&self, db: usize, key: &[u8], dirty: &Dirty) {
        let mut m = self.by_key.lock();
        let e = m.entry((db, key.into())).or_default();
        if e.is_empty() {
            self.count.fetch_add(1, Ordering::AcqRel);
        }
        if !e.iter().any(|d| Arc::ptr_eq(d, dirty)) {
            e.push(Arc::clone(dirty));
        }
    }

    /// Forgets `dirty`'s watches of `keys`.
    pub(crate) fn unwatch(&self, keys: &[Watched], dirty: &Dirty) {
        let mut m = self.by_key.lock();
        for k in keys {
            if let Some(e) = m.get_mut(k) {
                e.retain(|d| !Arc::ptr_eq(d, dirty));
                if e.is_empty() {
                    m.remove(k);
                    self.count.fetch_sub(1, Ordering::AcqRel);
                }
            }
        }
    }

    /// `key` of database `db` was written.
    pub(crate) fn touch(&self, db: usize, key: &[u8]) {
        if !self.any() {
            return;
        }
        let m = self.by_key.lock();
        if let Some(e) = m.get(&(db, key.into())) {
            e.iter().for_each(|d| d.store(true, Ordering::Release));
        }
    }

    /// Every key of database `db` (or of all, `None`) is about to be
    /// written (FLUSHDB, FLUSHALL, SWAPDB): the watched ones for which
    /// `changes` (database, key) holds are touched. As Redis's
    /// `touchAllWatchedKeysInDb`, a flush touches only the watched keys
    /// that exist (a watched key that is absent stays absent), a swap
    /// those that exist on either side.
    pub(crate) fn touch_db(&self, db: Option<usize>, changes: impl Fn(usize, &[u8]) -> bool) {
        if !self.any() {
            return;
        }
        let m = self.by_key.lock();
        for ((d, k), e) in m.iter() {
            if db.is_none_or(|db| db == *d) && changes(*d, k) {
                e.iter().for_each(|d| d.store(true, Ordering::Release));
            }
        }
    }
}
