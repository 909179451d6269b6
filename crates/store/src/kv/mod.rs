//! The key-value store behind the kv protocol: opaque byte keys, each
//! holding a value and its digest (the caller computes the digest before
//! the write, outside any lock).
//!
//! Values are shared as `Arc<Value>`: a lock is held only to find or swap
//! a pointer, never to copy or free a value's bytes, so even a 1 MiB value
//! costs a locked store no more time under its lock than a small one.
//! Every implementation is linearizable: once `put` has returned, every
//! later `get` sees that value (or a later one).

mod lockfree;
mod mutex;
mod rwlock;
mod sharded;

pub use lockfree::LockFreeKv;
pub use mutex::MutexKv;
pub use rwlock::RwLockKv;
pub use sharded::ShardedKv;

use crate::guarded::Guarded;
use crate::StoreKind;
use std::sync::Arc;

/// A stored value and its digest (the kv protocol's MD5, for the ETag).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value {
    pub bytes: Box<[u8]>,
    pub digest: [u8; 16],
}

/// What a `put` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Put {
    /// The key had no value.
    Created,
    /// The key's value was replaced.
    Replaced,
}

/// The kv operations. Keys are opaque bytes.
pub trait KvStore: Send + Sync + 'static {
    /// The value of `key`, if any.
    fn get(&self, key: &[u8]) -> Option<Arc<Value>>;
    /// Store `value` under `key`.
    fn put(&self, key: &[u8], value: Arc<Value>) -> Put;
    /// Remove `key`; false when it had no value.
    fn delete(&self, key: &[u8]) -> bool;
    /// How many keys hold a value (a snapshot; exact when quiescent).
    fn len(&self) -> usize;
    /// Calls `f` with every key and its value: a lock at a time for the
    /// locked stores (so `f` should be quick), papaya's iteration for the
    /// lock-free one. Writes meanwhile may or may not be seen (a
    /// compaction's snapshot, which the log's later records complete).
    fn for_each(&self, f: &mut dyn FnMut(&[u8], &Arc<Value>));

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A kv store of the given kind.
/// The store a kv server gets when it names none: sharded, the best or
/// within noise of it at 1 and 8 cores, and unlike a single lock it does
/// not collapse when writes dominate (docs/strategies.md, "Many cores").
pub const DEFAULT: StoreKind = StoreKind::Sharded;

pub fn new(kind: StoreKind) -> Arc<dyn KvStore> {
    match kind {
        StoreKind::Mutex => Arc::new(MutexKv::default()),
        StoreKind::RwLock => Arc::new(RwLockKv::default()),
        StoreKind::Sharded => Arc::new(ShardedKv::default()),
        StoreKind::LockFree => Arc::new(LockFreeKv::default()),
    }
}

/// The plain map the locked stores guard.
type Map = std::collections::HashMap<Box<[u8]>, Arc<Value>>;

/// Every operation, written once for the stores made of [`Map`]s behind
/// locks (`mutex`, `rwlock`, `sharded`). Values are found or swapped
/// under the lock; an old value is dropped after it (freeing a large value
/// is not locked work).
impl<G: Guarded<State = Map>> KvStore for G {
    fn get(&self, key: &[u8]) -> Option<Arc<Value>> {
        self.read(self.hash(key), |map| map.get(key).cloned())
    }

    fn put(&self, key: &[u8], value: Arc<Value>) -> Put {
        let (put, old) = self.write(self.hash(key), |map| put_in(map, key, value));
        drop(old);
        put
    }

    fn delete(&self, key: &[u8]) -> bool {
        let old = self.write(self.hash(key), |map| map.remove(key));
        old.is_some()
    }

    fn len(&self) -> usize {
        let mut n = 0;
        self.each(&mut |map| n += map.len());
        n
    }

    fn for_each(&self, f: &mut dyn FnMut(&[u8], &Arc<Value>)) {
        self.each(&mut |map| map.iter().for_each(|(k, v)| f(k, v)));
    }
}

/// Insert or replace in a plain map, handing back the old value so the
/// caller can drop it after releasing its lock.
fn put_in(map: &mut Map, key: &[u8], value: Arc<Value>) -> (Put, Option<Arc<Value>>) {
    match map.get_mut(key) {
        Some(slot) => (Put::Replaced, Some(std::mem::replace(slot, value))),
        None => {
            map.insert(key.into(), value);
            (Put::Created, None)
        }
    }
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests;
