//! The bucket homework's state: N counters ("buckets"), each only ever
//! added to.
//!
//! Every implementation guarantees no lost update: each `add` is applied
//! exactly once, atomically, and returns the bucket's value right after it,
//! so the values returned for one bucket, in order, step by exactly the
//! amounts added. Buckets are independent; nothing orders one bucket's
//! adds against another's.

mod lockfree;
mod mutex;
mod sharded;

pub use lockfree::LockFreeBuckets;
pub use mutex::MutexBuckets;
pub use sharded::ShardedBuckets;

use crate::StoreKind;
use std::sync::Arc;

/// The buckets' one operation. Values wrap modulo 2^64 (reachable only
/// with delays far beyond the protocol's limits).
pub trait BucketStore: Send + Sync + 'static {
    /// Add `delta` to bucket `bucket` (which must be `< len()`) and return
    /// its new value. `add(b, 0)` reads bucket `b`.
    fn add(&self, bucket: usize, delta: u64) -> u64;
    /// How many buckets there are.
    fn len(&self) -> usize;
    /// Always false: a store has at least one bucket.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The locking schemes the bucket store offers (`--store`). A
/// reader/writer lock buys nothing here: every request but `0,b` writes.
/// The store a bucket server gets when it names none.
pub const DEFAULT: StoreKind = StoreKind::LockFree;

pub const KINDS: [StoreKind; 3] = [StoreKind::Mutex, StoreKind::Sharded, StoreKind::LockFree];

/// `buckets` zeroed buckets under the given scheme; `None` for a scheme
/// not in [`KINDS`]. `buckets` must be at least 1.
pub fn new(kind: StoreKind, buckets: usize) -> Option<Arc<dyn BucketStore>> {
    assert!(buckets >= 1, "a bucket store needs at least one bucket");
    Some(match kind {
        StoreKind::Mutex => Arc::new(MutexBuckets::new(buckets)),
        StoreKind::Sharded => Arc::new(ShardedBuckets::new(buckets)),
        StoreKind::LockFree => Arc::new(LockFreeBuckets::new(buckets)),
        StoreKind::RwLock => return None,
    })
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests;
