//! One table of keys, as the locked stores keep it (one behind a mutex or
//! a reader/writer lock, or one per stripe): strings, lists and the other
//! collections in three hash tables, a key in at most one of them.
//!
//! Memory per key is what RESP's memory target is about (at most 1.2×
//! redis-server's for a million 64-byte values), so a string is one
//! allocation: its key and value packed behind a 4-byte key length, in a
//! `Box<[u8]>` (16 bytes in the table, and one ctrl byte). A million
//! 16-byte keys with 64-byte values cost about 96 bytes each on the heap
//! (84 rounded up by malloc) plus 17 per table bucket.
//!
//! The caller hashes the key once (with [`Db::hasher`]'s state) and hands
//! the hash to every method; the table re-hashes only when it grows.

use foldhash::fast::RandomState;
use hashbrown::hash_table::Entry;
use hashbrown::HashTable;
use serverlab_proto::resp::{End, SetCond};
use std::collections::{BTreeSet, VecDeque};
use std::hash::BuildHasher;

use super::value::{Coll, Value};
use super::{Held, IncrError, Ranged, WrongType};

/// A string key and its value in one allocation: `[key length as u32
/// LE][key][value]`.
pub(crate) struct Str(Box<[u8]>);

impl Str {
    fn new(key: &[u8], value: &[u8]) -> Str {
        let mut v = Vec::with_capacity(4 + key.len() + value.len());
        v.extend_from_slice(&(key.len() as u32).to_le_bytes());
        v.extend_from_slice(key);
        v.extend_from_slice(value);
        Str(v.into_boxed_slice())
    }

    fn key_len(&self) -> usize {
        u32::from_le_bytes(self.0[..4].try_into().expect("4 bytes")) as usize
    }

    fn key(&self) -> &[u8] {
        &self.0[4..4 + self.key_len()]
    }

    fn value(&self) -> &[u8] {
        &self.0[4 + self.key_len()..]
    }
}

/// A list key and its elements.
pub(crate) struct List {
    key: Box<[u8]>,
    items: VecDeque<Box<[u8]>>,
}

/// A set, hash or sorted set key and its value.
pub(crate) struct Obj {
    key: Box<[u8]>,
    coll: Coll,
}

/// Strings, lists and the other collections; a key is in at most one.
pub(crate) struct Db {
    hasher: RandomState,
    strings: HashTable<Str>,
    lists: HashTable<List>,
    others: HashTable<Obj>,
    /// SCAN's order: the hash of every key, sorted (a hash shared by two
    /// keys once). See [`RespStore::scan`](super::RespStore::scan).
    order: BTreeSet<u64>,
}

/// The hash state every table of one store shares (so a key's hash,
/// computed once, fits any of its stripes).
pub(crate) fn hasher() -> RandomState {
    RandomState::default()
}

/// What a list pop took.
pub type Popped = Option<Vec<Box<[u8]>>>;

impl Db {
    pub(crate) fn new(hasher: RandomState) -> Db {
        Db {
            hasher,
            strings: HashTable::new(),
            lists: HashTable::new(),
            others: HashTable::new(),
            order: BTreeSet::new(),
        }
    }

    /// Runs `write` on the key of hash `h` (one key: a write of the
    /// store's), keeping SCAN's order in step: a key it made is added,
    /// one it removed goes (unless another key has the same hash).
    pub(crate) fn keyed<R>(&mut self, h: u64, write: impl FnOnce(&mut Db) -> R) -> R {
        let before = self.len();
        let r = write(self);
        match self.len().cmp(&before) {
            std::cmp::Ordering::Greater => {
                self.order.insert(h);
            }
            std::cmp::Ordering::Less if !self.holds_hash(h) => {
                self.order.remove(&h);
            }
            _ => {}
        }
        r
    }

    /// Some key's full hash is `h`.
    fn holds_hash(&self, h: u64) -> bool {
        let of = |k: &[u8]| self.hasher.hash_one(k) == h;
        self.strings.find(h, |s| of(s.key())).is_some()
            || self.lists.find(h, |l| of(&l.key)).is_some()
            || self.others.find(h, |o| of(&o.key)).is_some()
    }

    /// SCAN's step in this table: the keys of the first `n` hashes at or
    /// after `cursor`, with their hash, appended to `found`.
    pub(crate) fn scan(&self, cursor: u64, n: usize, found: &mut Vec<(u64, Box<[u8]>)>) {
        for &h in self.order.range(cursor..).take(n) {
            let of = |k: &[u8]| self.hasher.hash_one(k) == h;
            let strings = self.strings.iter_hash(h).map(Str::key);
            let lists = self.lists.iter_hash(h).map(|l| &*l.key);
            let others = self.others.iter_hash(h).map(|o| &*o.key);
            for k in strings.chain(lists).chain(others).filter(|k| of(k)) {
                found.push((h, k.into()));
            }
        }
    }

    fn has_list(&self, h: u64, key: &[u8]) -> bool {
        !self.lists.is_empty() && self.lists.find(h, |l| &*l.key == key).is_some()
    }

    /// The key holds a set, a hash or a sorted set.
    fn has_other(&self, h: u64, key: &[u8]) -> bool {
        !self.others.is_empty() && self.others.find(h, |o| &*o.key == key).is_some()
    }

    /// The key holds something that is neither a string nor a list.
    fn has_other_than_list(&self, h: u64, key: &[u8]) -> bool {
        self.has_string(h, key) || self.has_other(h, key)
    }

    fn has_string(&self, h: u64, key: &[u8]) -> bool {
        self.strings.find(h, |s| s.key() == key).is_some()
    }

    pub(crate) fn len(&self) -> usize {
        self.strings.len() + self.lists.len() + self.others.len()
    }

    /// Every key and what it holds.
    pub(crate) fn for_each(&self, visit: &mut dyn FnMut(&[u8], Held<'_>)) {
        for s in &self.strings {
            visit(s.key(), Held::Str(s.value()));
        }
        for l in &self.lists {
            visit(&l.key, Held::List(&l.items));
        }
        for o in &self.others {
            visit(&o.key, Held::Coll(&o.coll));
        }
    }

    /// Shows `seen` what the key holds.
    pub(crate) fn peek(&self, h: u64, key: &[u8], seen: &mut dyn FnMut(Held<'_>)) -> bool {
        if let Some(s) = self.strings.find(h, |s| s.key() == key) {
            seen(Held::Str(s.value()));
        } else if let Some(l) = self.lists.find(h, |l| &*l.key == key) {
            seen(Held::List(&l.items));
        } else if let Some(o) = self.others.find(h, |o| &*o.key == key) {
            seen(Held::Coll(&o.coll));
        } else {
            return false;
        }
        true
    }

    /// Takes the key's value out of the tables.
    pub(crate) fn take(&mut self, h: u64, key: &[u8]) -> Option<Value> {
        Some(match self.del(h, key)? {
            Removed::Str(s) => Value::Str(s.value().to_vec()),
            Removed::List(l) => Value::List(l.items),
            Removed::Other(o) => Value::Coll(o.coll),
        })
    }

    /// Puts `value` under the key (absent), unless it is an empty list
    /// or collection.
    pub(crate) fn put(&mut self, h: u64, key: &[u8], value: Value) -> Option<Removed> {
        let old = self.del(h, key);
        if value.is_empty() {
            return old;
        }
        let hasher = self.hasher.clone();
        match value {
            Value::Str(v) => {
                self.strings
                    .insert_unique(h, Str::new(key, &v), |s| hasher.hash_one(s.key()));
            }
            Value::List(items) => {
                let l = List {
                    key: key.into(),
                    items,
                };
                self.lists.insert_unique(h, l, |l| hasher.hash_one(&*l.key));
            }
            Value::Coll(coll) => {
                let o = Obj {
                    key: key.into(),
                    coll,
                };
                self.others
                    .insert_unique(h, o, |o| hasher.hash_one(&*o.key));
            }
        }
        old
    }

    /// Empty the tables, handing back what they held (to be freed
    /// outside any lock).
    pub(crate) fn take_all(&mut self) -> Db {
        std::mem::replace(self, Db::new(self.hasher.clone()))
    }

    pub(crate) fn get(
        &self,
        h: u64,
        key: &[u8],
        found: &mut dyn FnMut(&[u8]),
    ) -> Result<bool, WrongType> {
        match self.strings.find(h, |s| s.key() == key) {
            Some(s) => {
                found(s.value());
                Ok(true)
            }
            None if self.has_list(h, key) || self.has_other(h, key) => Err(WrongType),
            None => Ok(false),
        }
    }

    pub(crate) fn exists(&self, h: u64, key: &[u8]) -> bool {
        self.has_string(h, key) || self.has_list(h, key) || self.has_other(h, key)
    }

    /// SET; returns whether it wrote, and what it replaced (to free
    /// outside the lock).
    pub(crate) fn set(
        &mut self,
        h: u64,
        key: &[u8],
        value: &[u8],
        cond: SetCond,
    ) -> (bool, Option<Removed>) {
        let list = if self.lists.is_empty() {
            None
        } else {
            self.lists
                .find_entry(h, |l| &*l.key == key)
                .ok()
                .map(|e| e.remove().0)
        };
        let other = if self.others.is_empty() {
            None
        } else {
            self.others
                .find_entry(h, |o| &*o.key == key)
                .ok()
                .map(|e| e.remove().0)
        };
        let hasher = self.hasher.clone();
        let entry = self
            .strings
            .entry(h, |s| s.key() == key, |s| hasher.hash_one(s.key()));
        let exists = list.is_some() || other.is_some() || matches!(entry, Entry::Occupied(_));
        let write = match cond {
            SetCond::Always => true,
            SetCond::Absent => !exists,
            SetCond::Present => exists,
        };
        if !write {
            if let Some(l) = list {
                // Put it back: NX refused, XX cannot see a list here (SET
                // over a list with XX writes).
                let hasher = self.hasher.clone();
                self.lists.insert_unique(h, l, |l| hasher.hash_one(&*l.key));
            }
            if let Some(o) = other {
                let hasher = self.hasher.clone();
                self.others
                    .insert_unique(h, o, |o| hasher.hash_one(&*o.key));
            }
            return (false, None);
        }
        let old = match entry {
            Entry::Occupied(mut o) => Some(Removed::Str(std::mem::replace(
                o.get_mut(),
                Str::new(key, value),
            ))),
            Entry::Vacant(v) => {
                v.insert(Str::new(key, value));
                list.map(Removed::List).or(other.map(Removed::Other))
            }
        };
        (true, old)
    }

    /// DEL of one key; returns what it removed (to free outside the lock).
    pub(crate) fn del(&mut self, h: u64, key: &[u8]) -> Option<Removed> {
        if let Ok(e) = self.strings.find_entry(h, |s| s.key() == key) {
            return Some(Removed::Str(e.remove().0));
        }
        if !self.lists.is_empty() {
            if let Ok(e) = self.lists.find_entry(h, |l| &*l.key == key) {
                return Some(Removed::List(e.remove().0));
            }
        }
        if self.others.is_empty() {
            return None;
        }
        self.others
            .find_entry(h, |o| &*o.key == key)
            .ok()
            .map(|e| Removed::Other(e.remove().0))
    }

    pub(crate) fn incr_by(&mut self, h: u64, key: &[u8], by: i64) -> Result<i64, IncrError> {
        if self.has_list(h, key) || self.has_other(h, key) {
            return Err(IncrError::WrongType);
        }
        let hasher = self.str_hasher_owned();
        match self.strings.entry(h, |s| s.key() == key, hasher) {
            Entry::Occupied(mut o) => {
                let old = serverlab_proto::resp::number::parse_i64(o.get().value())
                    .ok_or(IncrError::NotInteger)?;
                let new = old.checked_add(by).ok_or(IncrError::Overflow)?;
                *o.get_mut() = Str::new(key, &itoa(new));
                Ok(new)
            }
            Entry::Vacant(v) => {
                v.insert(Str::new(key, &itoa(by)));
                Ok(by)
            }
        }
    }

    fn str_hasher_owned(&self) -> impl Fn(&Str) -> u64 {
        let hasher = self.hasher.clone();
        move |s: &Str| hasher.hash_one(s.key())
    }

    pub(crate) fn push(
        &mut self,
        h: u64,
        key: &[u8],
        end: End,
        values: &mut dyn Iterator<Item = &[u8]>,
    ) -> Result<usize, WrongType> {
        if self.has_other_than_list(h, key) {
            return Err(WrongType);
        }
        let hasher = self.hasher.clone();
        let list = self
            .lists
            .entry(h, |l| &*l.key == key, |l| hasher.hash_one(&*l.key))
            .or_insert_with(|| List {
                key: key.into(),
                items: VecDeque::new(),
            })
            .into_mut();
        for v in values {
            match end {
                End::Left => list.items.push_front(v.into()),
                End::Right => list.items.push_back(v.into()),
            }
        }
        Ok(list.items.len())
    }

    /// Up to `count` elements from `end`; `None` when the key is absent.
    /// A list left empty is removed, as Redis removes it.
    pub(crate) fn pop(
        &mut self,
        h: u64,
        key: &[u8],
        end: End,
        count: usize,
    ) -> Result<Popped, WrongType> {
        let Ok(mut e) = self.lists.find_entry(h, |l| &*l.key == key) else {
            return if self.has_other_than_list(h, key) {
                Err(WrongType)
            } else {
                Ok(None)
            };
        };
        let items = &mut e.get_mut().items;
        let n = count.min(items.len());
        let popped: Vec<Box<[u8]>> = match end {
            End::Left => items.drain(..n).collect(),
            End::Right => items.drain(items.len() - n..).rev().collect(),
        };
        if items.is_empty() {
            e.remove();
        }
        Ok(Some(popped))
    }

    fn list(&self, h: u64, key: &[u8]) -> Result<Option<&VecDeque<Box<[u8]>>>, WrongType> {
        match self.lists.find(h, |l| &*l.key == key) {
            Some(l) => Ok(Some(&l.items)),
            None if self.has_other_than_list(h, key) => Err(WrongType),
            None => Ok(None),
        }
    }

    pub(crate) fn llen(&self, h: u64, key: &[u8]) -> Result<usize, WrongType> {
        Ok(self.list(h, key)?.map_or(0, VecDeque::len))
    }

    pub(crate) fn lindex(
        &self,
        h: u64,
        key: &[u8],
        index: i64,
        found: &mut dyn FnMut(&[u8]),
    ) -> Result<bool, WrongType> {
        let Some(items) = self.list(h, key)? else {
            return Ok(false);
        };
        let i = if index < 0 {
            items.len() as i64 + index
        } else {
            index
        };
        match usize::try_from(i).ok().and_then(|i| items.get(i)) {
            Some(v) => {
                found(v);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    pub(crate) fn lrange(
        &self,
        h: u64,
        key: &[u8],
        start: i64,
        stop: i64,
        out: &mut Ranged,
    ) -> Result<(), WrongType> {
        let Some(items) = self.list(h, key)? else {
            out(0, &mut std::iter::empty());
            return Ok(());
        };
        let (from, to) = range(items.len(), start, stop);
        out(to - from, &mut items.range(from..to).map(|b| &**b));
        Ok(())
    }
}

/// What DEL removed.
pub(crate) enum Removed {
    #[allow(dead_code)] // held only to be dropped outside the lock
    Str(Str),
    #[allow(dead_code)]
    List(List),
    #[allow(dead_code)]
    Other(Obj),
}

/// LRANGE's start and stop (inclusive, negative from the end) as a
/// half-open range within `len`, as Redis clamps them.
pub fn range(len: usize, start: i64, stop: i64) -> (usize, usize) {
    let len = len as i64;
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let stop = if stop < 0 {
        len + stop
    } else {
        stop.min(len - 1)
    };
    if start > stop || start >= len {
        return (0, 0);
    }
    (start as usize, stop as usize + 1)
}

fn itoa(n: i64) -> Vec<u8> {
    let mut v = Vec::with_capacity(20);
    serverlab_proto::resp::number::push_i64(&mut v, n);
    v
}
