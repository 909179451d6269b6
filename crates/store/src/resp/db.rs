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
//! A string of [`RAW`] bytes or more is kept apart from its key instead
//! (a [`Raw`]: its own `Vec`, as Redis keeps a string longer than 44
//! bytes apart from its object): it moves in and out of the store
//! without a copy, and APPEND, SETRANGE and SETBIT change it in place
//! ([`Db::edit`]), costing what they change. A short string that is
//! edited becomes a raw one (a copy of fewer than [`RAW`] bytes, once).
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

/// The length from which a string is kept apart from its key ([`Raw`]).
pub const RAW: usize = 512;

/// A string key and its value, apart: a long string, or one edited in
/// place.
pub(crate) struct Raw {
    key: Box<[u8]>,
    value: Vec<u8>,
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
    /// Strings kept apart from their keys (see [`RAW`]).
    raws: HashTable<Raw>,
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
            raws: HashTable::new(),
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
            || self.raws.find(h, |r| of(&r.key)).is_some()
            || self.lists.find(h, |l| of(&l.key)).is_some()
            || self.others.find(h, |o| of(&o.key)).is_some()
    }

    /// SCAN's step in this table: the keys of the first `n` hashes at or
    /// after `cursor`, with their hash, appended to `found`.
    pub(crate) fn scan(&self, cursor: u64, n: usize, found: &mut Vec<(u64, Box<[u8]>)>) {
        for &h in self.order.range(cursor..).take(n) {
            let of = |k: &[u8]| self.hasher.hash_one(k) == h;
            let strings = self.strings.iter_hash(h).map(Str::key);
            let raws = self.raws.iter_hash(h).map(|r| &*r.key);
            let lists = self.lists.iter_hash(h).map(|l| &*l.key);
            let others = self.others.iter_hash(h).map(|o| &*o.key);
            let all = strings.chain(raws).chain(lists).chain(others);
            for k in all.filter(|k| of(k)) {
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
        self.strings.find(h, |s| s.key() == key).is_some() || self.raw(h, key).is_some()
    }

    /// The key's string, if it is kept apart.
    fn raw(&self, h: u64, key: &[u8]) -> Option<&Raw> {
        if self.raws.is_empty() {
            return None;
        }
        self.raws.find(h, |r| &*r.key == key)
    }

    /// The key's string, short or kept apart.
    fn string(&self, h: u64, key: &[u8]) -> Option<&[u8]> {
        match self.strings.find(h, |s| s.key() == key) {
            Some(s) => Some(s.value()),
            None => self.raw(h, key).map(|r| &r.value[..]),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.strings.len() + self.raws.len() + self.lists.len() + self.others.len()
    }

    /// Every key and what it holds.
    pub(crate) fn for_each(&self, visit: &mut dyn FnMut(&[u8], Held<'_>)) {
        for s in &self.strings {
            visit(s.key(), Held::Str(s.value()));
        }
        for r in &self.raws {
            visit(&r.key, Held::Str(&r.value));
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
        if let Some(s) = self.string(h, key) {
            seen(Held::Str(s));
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
        self.del(h, key).map(Removed::into_value)
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
            Value::Str(v) if v.len() >= RAW => {
                let r = Raw {
                    key: key.into(),
                    value: v,
                };
                self.raws.insert_unique(h, r, |r| hasher.hash_one(&*r.key));
            }
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
        match self.string(h, key) {
            Some(s) => {
                found(s);
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
    /// outside the lock, or to keep for an undo).
    pub(crate) fn set(
        &mut self,
        h: u64,
        key: &[u8],
        value: &[u8],
        cond: SetCond,
    ) -> (bool, Option<Removed>) {
        let write = match cond {
            SetCond::Always => true,
            SetCond::Absent => !self.exists(h, key),
            SetCond::Present => self.exists(h, key),
        };
        if !write {
            return (false, None);
        }
        let hasher = self.hasher.clone();
        if value.len() >= RAW {
            let old = self.del(h, key);
            let r = Raw {
                key: key.into(),
                value: value.to_vec(),
            };
            self.raws.insert_unique(h, r, |r| hasher.hash_one(&*r.key));
            return (true, old);
        }
        // The key may hold something else: one lookup per kind there is.
        let apart = self.take_apart(h, key);
        let entry = self
            .strings
            .entry(h, |s| s.key() == key, |s| hasher.hash_one(s.key()));
        let old = match entry {
            Entry::Occupied(mut o) => Some(Removed::Str(std::mem::replace(
                o.get_mut(),
                Str::new(key, value),
            ))),
            Entry::Vacant(v) => {
                v.insert(Str::new(key, value));
                apart
            }
        };
        (true, old)
    }

    /// Takes out what the key holds other than a short string.
    fn take_apart(&mut self, h: u64, key: &[u8]) -> Option<Removed> {
        let mut old = None;
        if !self.raws.is_empty() {
            if let Ok(e) = self.raws.find_entry(h, |r| &*r.key == key) {
                old = Some(Removed::Raw(e.remove().0));
            }
        }
        if old.is_none() && !self.lists.is_empty() {
            if let Ok(e) = self.lists.find_entry(h, |l| &*l.key == key) {
                old = Some(Removed::List(e.remove().0));
            }
        }
        if old.is_none() && !self.others.is_empty() {
            if let Ok(e) = self.others.find_entry(h, |o| &*o.key == key) {
                old = Some(Removed::Other(e.remove().0));
            }
        }
        old
    }

    /// DEL of one key; returns what it removed (to free outside the lock).
    pub(crate) fn del(&mut self, h: u64, key: &[u8]) -> Option<Removed> {
        if let Ok(e) = self.strings.find_entry(h, |s| s.key() == key) {
            return Some(Removed::Str(e.remove().0));
        }
        self.take_apart(h, key)
    }

    pub(crate) fn incr_by(&mut self, h: u64, key: &[u8], by: i64) -> Result<i64, IncrError> {
        if self.has_list(h, key) || self.has_other(h, key) {
            return Err(IncrError::WrongType);
        }
        let add = |v: &[u8]| -> Result<i64, IncrError> {
            let old = serverlab_proto::resp::number::parse_i64(v).ok_or(IncrError::NotInteger)?;
            old.checked_add(by).ok_or(IncrError::Overflow)
        };
        if !self.raws.is_empty() {
            if let Some(r) = self.raws.find_mut(h, |r| &*r.key == key) {
                let new = add(&r.value)?;
                r.value.clear();
                serverlab_proto::resp::number::push_i64(&mut r.value, new);
                return Ok(new);
            }
        }
        let hasher = self.str_hasher_owned();
        match self.strings.entry(h, |s| s.key() == key, hasher) {
            Entry::Occupied(mut o) => {
                let new = add(o.get().value())?;
                *o.get_mut() = Str::new(key, &itoa(new));
                Ok(new)
            }
            Entry::Vacant(v) => {
                v.insert(Str::new(key, &itoa(by)));
                Ok(by)
            }
        }
    }

    /// Changes the key's string in place (see [`RespStore::edit`](super::RespStore::edit)):
    /// a short one is first kept apart (a copy of fewer than [`RAW`]
    /// bytes), one kept apart is changed where it is.
    pub(crate) fn edit(
        &mut self,
        h: u64,
        key: &[u8],
        create: bool,
        edit: &mut dyn FnMut(&mut Vec<u8>),
    ) -> Result<bool, WrongType> {
        if !self.raws.is_empty() {
            if let Some(r) = self.raws.find_mut(h, |r| &*r.key == key) {
                edit(&mut r.value);
                return Ok(true);
            }
        }
        if self.has_list(h, key) || self.has_other(h, key) {
            return Err(WrongType);
        }
        let value = match self.strings.find_entry(h, |s| s.key() == key) {
            Ok(e) => e.remove().0.value().to_vec(),
            Err(_) if create => Vec::new(),
            Err(_) => return Ok(false),
        };
        let mut r = Raw {
            key: key.into(),
            value,
        };
        edit(&mut r.value);
        let hasher = self.hasher.clone();
        self.raws.insert_unique(h, r, |r| hasher.hash_one(&*r.key));
        Ok(true)
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
    Raw(Raw),
    #[allow(dead_code)]
    List(List),
    #[allow(dead_code)]
    Other(Obj),
}

impl Removed {
    /// The value: moved, but a short string's (fewer than [`RAW`]
    /// bytes), copied from its key's allocation.
    pub(crate) fn into_value(self) -> Value {
        match self {
            Removed::Str(s) => Value::Str(s.value().to_vec()),
            Removed::Raw(r) => Value::Str(r.value),
            Removed::List(l) => Value::List(l.items),
            Removed::Other(o) => Value::Coll(o.coll),
        }
    }
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
