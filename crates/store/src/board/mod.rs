//! The message board's state: topics in creation order, each an append-only
//! list of messages with dense ids 0, 1, 2, …
//!
//! Every implementation keeps the protocol's invariants under any
//! concurrency: ids in a topic are handed out with no gap and no repeat; once
//! `post` has returned `k`, every later `read(t, k)` returns that message and
//! every later `count(t)` is > k; once a topic's first `post` has returned,
//! every later `list` shows it.

mod lockfree;
mod log;
mod messages;
mod mutex;
mod rwlock;
mod sharded;
mod table;
mod thin;

pub use lockfree::LockFreeBoard;
pub use mutex::MutexBoard;
pub use rwlock::RwLockBoard;
pub use sharded::ShardedBoard;

use crate::StoreKind;
use std::sync::Arc;

/// The board's operations. Bytes are opaque: topics and messages need not be
/// UTF-8.
pub trait BoardStore: Send + Sync + 'static {
    /// Append `message` to `topic` (creating the topic) and return its id.
    fn post(&self, topic: &[u8], message: &[u8]) -> u64;
    /// Append message `id` of `topic` to `out`; false (and nothing appended)
    /// when there is no such message.
    fn read(&self, topic: &[u8], id: u64, out: &mut Vec<u8>) -> bool;
    /// How many messages `topic` holds (0 for an unknown topic).
    fn count(&self, topic: &[u8]) -> u64;
    /// Append every topic in creation order, as the LIST reply writes them
    /// (`@a#@b`); nothing when there are no topics.
    fn list(&self, out: &mut Vec<u8>);
}

/// A board store of the given kind.
pub fn new(kind: StoreKind) -> Arc<dyn BoardStore> {
    match kind {
        StoreKind::Mutex => Arc::new(MutexBoard::default()),
        StoreKind::RwLock => Arc::new(RwLockBoard::default()),
        StoreKind::Sharded => Arc::new(ShardedBoard::default()),
        StoreKind::LockFree => Arc::new(LockFreeBoard::default()),
    }
}

/// Append one LIST entry (`@topic`, `#`-separated).
pub(crate) fn push_entry(out: &mut Vec<u8>, first: bool, topic: &[u8]) {
    if !first {
        out.push(b'#');
    }
    out.push(b'@');
    out.extend_from_slice(topic);
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests;
