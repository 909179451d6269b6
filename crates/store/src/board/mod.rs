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

use crate::guarded::Guarded;
use crate::StoreKind;
use std::sync::Arc;
use table::Table;

/// The board's operations. Bytes are opaque: topics and messages need not be
/// UTF-8.
///
/// Messages never change once posted, and topics are never removed or
/// renamed, so a large reply can be appended in parts (`read_part`,
/// `list_part`) as the connection's output drains and still be exactly the
/// reply appended at once: a message read in parts is that message, and a
/// LIST of the first `topics()` entries taken when it was asked for is that
/// LIST, whatever is posted meanwhile.
pub trait BoardStore: Send + Sync + 'static {
    /// Append `message` to `topic` (creating the topic) and return its id.
    fn post(&self, topic: &[u8], message: &[u8]) -> u64;
    /// Hand message `id` of `topic` to `found` (under the store's lock,
    /// where it has one); false, and `found` not called, when there is no
    /// such message.
    fn message(&self, topic: &[u8], id: u64, found: &mut dyn FnMut(&[u8])) -> bool;
    /// How many messages `topic` holds (0 for an unknown topic).
    fn count(&self, topic: &[u8]) -> u64;
    /// How many topics exist: the entries a LIST asked for now has.
    fn topics(&self) -> usize;
    /// Append LIST entries `from..end` in creation order, as `list` writes
    /// them (`#` before every entry but entry 0), as many as fit in `budget`
    /// bytes (at least one, however large); return the index of the first
    /// entry not appended, `end` when done. `end` is a `topics()` taken
    /// earlier.
    fn list_part(&self, from: usize, end: usize, budget: usize, out: &mut Vec<u8>) -> usize;

    /// Append at most `max` bytes of message `id` of `topic`, from its byte
    /// `from`, to `out`; return the message's whole length, or `None` (and
    /// nothing appended) when there is no such message.
    fn read_part(
        &self,
        topic: &[u8],
        id: u64,
        from: usize,
        max: usize,
        out: &mut Vec<u8>,
    ) -> Option<usize> {
        let mut len = None;
        self.message(topic, id, &mut |m| len = Some(push_part(m, from, max, out)));
        len
    }

    /// Append message `id` of `topic` to `out`; false (and nothing appended)
    /// when there is no such message.
    fn read(&self, topic: &[u8], id: u64, out: &mut Vec<u8>) -> bool {
        self.read_part(topic, id, 0, usize::MAX, out).is_some()
    }

    /// Append every topic in creation order, as the LIST reply writes them
    /// (`@a#@b`); nothing when there are no topics.
    fn list(&self, out: &mut Vec<u8>) {
        let end = self.topics();
        self.list_part(0, end, usize::MAX, out);
    }
}

/// Every operation, written once for the stores made of one [`Table`]
/// behind one lock (`mutex`, `rwlock`).
impl<G: Guarded<State = Table>> BoardStore for G {
    fn post(&self, topic: &[u8], message: &[u8]) -> u64 {
        self.write(0, |t| t.post(topic, message))
    }

    fn message(&self, topic: &[u8], id: u64, found: &mut dyn FnMut(&[u8])) -> bool {
        self.read(0, |t| t.message(topic, id).map(found).is_some())
    }

    fn count(&self, topic: &[u8]) -> u64 {
        self.read(0, |t| t.count(topic))
    }

    fn topics(&self) -> usize {
        self.read(0, Table::topics)
    }

    fn list_part(&self, from: usize, end: usize, budget: usize, out: &mut Vec<u8>) -> usize {
        self.read(0, |t| t.list_part(from, end, budget, out))
    }
}

/// A board store of the given kind.
/// The store a board server gets when it names none: lock-free, the one
/// under which every strategy scales with cores (the single-lock stores
/// peak at 2–4 cores; docs/strategies.md, "Many cores").
pub const DEFAULT: StoreKind = StoreKind::LockFree;

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

/// Append the LIST entries `names` (entries `from`, `from + 1`, …) while
/// they fit in `budget` bytes (the first always goes in); the index of the
/// first not appended.
pub(crate) fn push_entries<'a>(
    names: impl Iterator<Item = &'a [u8]>,
    from: usize,
    budget: usize,
    out: &mut Vec<u8>,
) -> usize {
    let start = out.len();
    let mut next = from;
    for name in names {
        let entry = name.len() + if next == 0 { 1 } else { 2 };
        if next > from && out.len() - start + entry > budget {
            break;
        }
        push_entry(out, next == 0, name);
        next += 1;
    }
    next
}

/// Append at most `max` bytes of `message` from byte `from`; its length.
pub(crate) fn push_part(message: &[u8], from: usize, max: usize, out: &mut Vec<u8>) -> usize {
    let start = from.min(message.len());
    let end = start.saturating_add(max).min(message.len());
    out.extend_from_slice(&message[start..end]);
    message.len()
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests;
