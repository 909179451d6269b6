//! The state behind RESP: byte-string keys, each holding a string, a list,
//! a set, a hash or a sorted set ([`Value`]).
//!
//! Every store is linearizable per key: each operation on a key is one
//! atomic step (a string is a register and a counter; a list a sequence).
//! Commands on several keys (MGET, MSET, DEL and EXISTS of many) are a
//! step per key, not one step for all of them, except where a store has
//! one lock for everything (`mutex`, `rwlock`). Readers get values through
//! a callback under the lock, so a reply is encoded straight from the
//! store into the connection's output, with no copy in between.

mod db;
mod lockfree;
mod mutex;
mod rwlock;
mod sharded;
mod value;

pub use db::{range, Popped, RAW};
pub use lockfree::LockFreeResp;
pub use mutex::MutexResp;
pub use rwlock::RwLockResp;
pub use sharded::ShardedResp;
pub use value::{Coll, Score, Value, ZSet};

use crate::guarded::Guarded;
use crate::StoreKind;
use db::Db;
use serverlab_proto::resp::{End, SetCond};
use std::collections::VecDeque;
use std::sync::Arc;

/// What LRANGE's caller is handed under the lock: the count, then the
/// elements.
pub type Ranged<'a> = dyn FnMut(usize, &mut dyn Iterator<Item = &[u8]>) + 'a;

/// What a key holds, as [`RespStore::for_each`] shows it.
#[derive(Debug, Clone, Copy)]
pub enum Held<'a> {
    Str(&'a [u8]),
    List(&'a VecDeque<Box<[u8]>>),
    Coll(&'a Coll),
}

/// The key holds the other kind of value (a list where a string is
/// wanted, or the reverse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrongType;

/// Why INCR could not add.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncrError {
    WrongType,
    /// The value is not a 64-bit integer in Redis's form.
    NotInteger,
    /// The sum leaves the 64-bit range.
    Overflow,
}

/// The RESP operations, one key each.
pub trait RespStore: Send + Sync + 'static {
    /// GET: `found` gets the value (under the lock) if the key holds a
    /// string; `Ok(false)` if the key is absent.
    fn get(&self, key: &[u8], found: &mut dyn FnMut(&[u8])) -> Result<bool, WrongType>;
    /// SET, unless `cond` says otherwise; whether it wrote. A list under
    /// the key is replaced, as Redis replaces it.
    fn set(&self, key: &[u8], value: &[u8], cond: SetCond) -> bool;
    /// SET as [`set`](Self::set), handing back what the key held, moved
    /// out (not copied, but for a string shorter than a few hundred
    /// bytes): for an undo to keep.
    fn replace(&self, key: &[u8], value: &[u8], cond: SetCond) -> (bool, Option<Value>);
    /// DEL of one key; whether it held anything.
    fn del(&self, key: &[u8]) -> bool;
    fn exists(&self, key: &[u8]) -> bool;
    /// INCRBY: the new value (an absent key counts as 0).
    fn incr_by(&self, key: &[u8], by: i64) -> Result<i64, IncrError>;
    /// LPUSH/RPUSH each value in turn; the list's new length.
    fn push(
        &self,
        key: &[u8],
        end: End,
        values: &mut dyn Iterator<Item = &[u8]>,
    ) -> Result<usize, WrongType>;
    /// LPOP/RPOP up to `count` elements, in pop order; `None` if the key
    /// is absent. A list popped empty is removed.
    fn pop(&self, key: &[u8], end: End, count: usize) -> Result<Popped, WrongType>;
    /// LLEN (0 if absent).
    fn llen(&self, key: &[u8]) -> Result<usize, WrongType>;
    /// LINDEX (negative from the end): `found` gets the element.
    fn lindex(
        &self,
        key: &[u8],
        index: i64,
        found: &mut dyn FnMut(&[u8]),
    ) -> Result<bool, WrongType>;
    /// LRANGE (inclusive, negative from the end): `out` gets the count
    /// and the elements, under the lock.
    fn lrange(&self, key: &[u8], start: i64, stop: i64, out: &mut Ranged) -> Result<(), WrongType>;
    /// DBSIZE: keys (a snapshot; exact when quiescent).
    fn len(&self) -> usize;
    /// Every key and what it holds, one lock (or, lock-free, one entry) at
    /// a time: with writes going on, a key changed during the walk may be
    /// seen before or after the change. A caller that needs one moment's
    /// state stops the writes first (a compaction's snapshot does).
    fn for_each(&self, visit: &mut dyn FnMut(&[u8], Held<'_>));
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// FLUSHALL.
    fn clear(&self);
    /// Takes the key's value out, whatever it is. For commands that run
    /// alone (see [`Value`]): with other commands going on, a take and
    /// the put after it are two steps, not one.
    fn take(&self, key: &[u8]) -> Option<Value>;
    /// Changes the key's string in place: `edit` gets its bytes (a new,
    /// empty string if the key is absent and `create`; if not, `edit` is
    /// not called and the answer is `Ok(false)`), and may change them,
    /// grow or shrink them. It costs what `edit` does, not the string's
    /// length (past its first edit, which may keep a short string apart
    /// from its key: a copy of it). APPEND, SETRANGE and SETBIT, and
    /// their undos: commands that run alone (under `lockfree`, a key it
    /// makes is an empty string for a moment before `edit` runs).
    fn edit(
        &self,
        key: &[u8],
        create: bool,
        edit: &mut dyn FnMut(&mut Vec<u8>),
    ) -> Result<bool, WrongType>;
    /// Puts `value` under the key, replacing what it held; an empty list
    /// or collection leaves the key absent. As [`take`](Self::take), for
    /// commands that run alone.
    fn put(&self, key: &[u8], value: Value);
    /// Shows `seen` what the key holds, under its lock; whether it holds
    /// anything.
    fn peek(&self, key: &[u8], seen: &mut dyn FnMut(Held<'_>)) -> bool;
    /// SCAN's step: the keys at the `count` lowest places at or after
    /// `cursor` in the store's scan order (every key at the last of
    /// them), in that order, and the place after the last (0: none is
    /// left). A key's place is a 64-bit hash of its name, fixed for the
    /// store's life, so the calls of one scan (each starting where the
    /// last ended) cover every place from 0 to the end once: a key
    /// present for the whole scan is returned exactly once. Each store
    /// keeps its keys' places sorted, so a call costs about `count`
    /// (times the stripes, for the sharded store), whatever the number
    /// of keys. Exact while no write is under way (a command alone).
    fn scan(&self, cursor: u64, count: usize) -> Scanned;
    /// A copy of the key's value.
    fn cloned(&self, key: &[u8]) -> Option<Value> {
        let mut v = None;
        self.peek(key, &mut |held| v = Some(held.to_value()));
        v
    }
}

/// What a SCAN step found: the keys, in scan order, and the next cursor
/// (0: the end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scanned {
    pub keys: Vec<Box<[u8]>>,
    pub next: u64,
}

impl Scanned {
    /// From the keys found at or after the cursor, with their places (at
    /// least the first `count + 1` places of the store, or all there
    /// are): the first `count` places' keys, and the place after them.
    fn of(mut found: Vec<(u64, Box<[u8]>)>, count: usize) -> Scanned {
        found.sort_unstable();
        let mut places = 0;
        let mut last = None;
        let mut end = found.len();
        for (i, (at, _)) in found.iter().enumerate() {
            if last != Some(*at) {
                if places == count {
                    end = i;
                    break;
                }
                places += 1;
                last = Some(*at);
            }
        }
        let next = match (end < found.len(), last) {
            // A place after the last taken: not u64::MAX, so no wrap.
            (true, Some(l)) => l + 1,
            _ => 0,
        };
        found.truncate(end);
        Scanned {
            keys: found.into_iter().map(|(_, k)| k).collect(),
            next,
        }
    }
}

impl Held<'_> {
    /// An owned copy.
    pub fn to_value(&self) -> Value {
        match *self {
            Held::Str(v) => Value::Str(v.to_vec()),
            Held::List(items) => Value::List(items.clone()),
            Held::Coll(c) => Value::Coll(c.clone()),
        }
    }
}

/// The locking schemes RESP's store offers (`--store`): every one.
/// The store a RESP server gets when it names none: sharded, as kv's.
pub const DEFAULT: StoreKind = StoreKind::Sharded;

pub const KINDS: [StoreKind; 4] = [
    StoreKind::Mutex,
    StoreKind::RwLock,
    StoreKind::Sharded,
    StoreKind::LockFree,
];

/// A store of the given kind; `None` for a scheme not in [`KINDS`].
pub fn new(kind: StoreKind) -> Option<Arc<dyn RespStore>> {
    Some(match kind {
        StoreKind::Mutex => Arc::new(MutexResp::default()),
        StoreKind::RwLock => Arc::new(RwLockResp::default()),
        StoreKind::Sharded => Arc::new(ShardedResp::default()),
        StoreKind::LockFree => Arc::new(LockFreeResp::default()),
    })
}

/// Every operation, written once for the stores made of [`Db`]s behind
/// locks (`mutex`, `rwlock`, `sharded`).
impl<G: Guarded<State = Db>> RespStore for G {
    fn get(&self, key: &[u8], found: &mut dyn FnMut(&[u8])) -> Result<bool, WrongType> {
        let h = self.hash(key);
        self.read(h, |db| db.get(h, key, found))
    }

    fn set(&self, key: &[u8], value: &[u8], cond: SetCond) -> bool {
        let h = self.hash(key);
        let (wrote, old) = self.write(h, |db| db.keyed(h, |db| db.set(h, key, value, cond)));
        drop(old); // after the lock: freeing is not locked work
        wrote
    }

    fn replace(&self, key: &[u8], value: &[u8], cond: SetCond) -> (bool, Option<Value>) {
        let h = self.hash(key);
        let (wrote, old) = self.write(h, |db| db.keyed(h, |db| db.set(h, key, value, cond)));
        (wrote, old.map(db::Removed::into_value))
    }

    fn edit(
        &self,
        key: &[u8],
        create: bool,
        edit: &mut dyn FnMut(&mut Vec<u8>),
    ) -> Result<bool, WrongType> {
        let h = self.hash(key);
        self.write(h, |db| db.keyed(h, |db| db.edit(h, key, create, edit)))
    }

    fn del(&self, key: &[u8]) -> bool {
        let h = self.hash(key);
        let old = self.write(h, |db| db.keyed(h, |db| db.del(h, key)));
        old.is_some()
    }

    fn exists(&self, key: &[u8]) -> bool {
        let h = self.hash(key);
        self.read(h, |db| db.exists(h, key))
    }

    fn incr_by(&self, key: &[u8], by: i64) -> Result<i64, IncrError> {
        let h = self.hash(key);
        self.write(h, |db| db.keyed(h, |db| db.incr_by(h, key, by)))
    }

    fn push(
        &self,
        key: &[u8],
        end: End,
        values: &mut dyn Iterator<Item = &[u8]>,
    ) -> Result<usize, WrongType> {
        let h = self.hash(key);
        self.write(h, |db| db.keyed(h, |db| db.push(h, key, end, values)))
    }

    fn pop(&self, key: &[u8], end: End, count: usize) -> Result<Popped, WrongType> {
        let h = self.hash(key);
        self.write(h, |db| db.keyed(h, |db| db.pop(h, key, end, count)))
    }

    fn llen(&self, key: &[u8]) -> Result<usize, WrongType> {
        let h = self.hash(key);
        self.read(h, |db| db.llen(h, key))
    }

    fn lindex(
        &self,
        key: &[u8],
        index: i64,
        found: &mut dyn FnMut(&[u8]),
    ) -> Result<bool, WrongType> {
        let h = self.hash(key);
        self.read(h, |db| db.lindex(h, key, index, found))
    }

    fn lrange(&self, key: &[u8], start: i64, stop: i64, out: &mut Ranged) -> Result<(), WrongType> {
        let h = self.hash(key);
        self.read(h, |db| db.lrange(h, key, start, stop, out))
    }

    fn len(&self) -> usize {
        let mut n = 0;
        self.each(&mut |db| n += db.len());
        n
    }

    fn for_each(&self, visit: &mut dyn FnMut(&[u8], Held<'_>)) {
        self.each(&mut |db| db.for_each(visit));
    }

    fn scan(&self, cursor: u64, count: usize) -> Scanned {
        let mut found = Vec::new();
        // Each table's first `count + 1` places: the first `count` of
        // all, and whether any is left after them.
        self.each(&mut |db| db.scan(cursor, count.saturating_add(1), &mut found));
        Scanned::of(found, count)
    }

    fn clear(&self) {
        let mut old = Vec::new();
        self.each(&mut |db| old.push(db.take_all()));
        drop(old); // after the locks
    }

    fn take(&self, key: &[u8]) -> Option<Value> {
        let h = self.hash(key);
        self.write(h, |db| db.keyed(h, |db| db.take(h, key)))
    }

    fn peek(&self, key: &[u8], seen: &mut dyn FnMut(Held<'_>)) -> bool {
        let h = self.hash(key);
        self.read(h, |db| db.peek(h, key, seen))
    }

    fn put(&self, key: &[u8], value: Value) {
        let h = self.hash(key);
        let old = self.write(h, |db| db.keyed(h, |db| db.put(h, key, value)));
        drop(old);
    }
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests;
