//! A lock-free table of keys on `papaya::HashMap`: GET, EXISTS and a SET
//! of a string are single atomic steps on an entry (readers never wait;
//! writers wait only while the table migrates a bucket as it grows, as
//! kv's lock-free store explains), INCR is a compare-and-swap loop. A
//! list is a cell with its own mutex: only commands on the same list wait
//! for each other, and never for commands on other keys.
//!
//! A list cell can leave the table (DEL, SET over it, the last element
//! popped, FLUSHALL) while a command that found it a moment before is
//! about to lock it. A command that locks a dead cell looks the key up
//! again, so a push never lands in a list nobody can see. Popping the last
//! element marks the cell dead under its lock before taking it out (a push
//! after that pop must make a new list, or it would be lost). DEL, SET
//! over a list and FLUSHALL take the cell out first and mark it just
//! after: a command that found it before is linearized before the
//! removal, which it overlapped.
//!
//! A string of [`RAW`] bytes or more, or one edited in place (APPEND,
//! SETRANGE, SETBIT), is a cell of its own too, as a list is: edited
//! under its mutex, where it is, and moved out whole when taken (a short
//! string is copied, fewer than [`RAW`] bytes). A set, hash or sorted set
//! is a value behind its own mutex: the commands that change one run
//! alone, so it is never contended, and it moves out when taken instead
//! of being copied (papaya hands back only a shared reference to what it
//! removes).

use super::db::{Popped, RAW};
use super::value::{Coll, Value};
use super::{Held, IncrError, Ranged, Scanned, WrongType};
use papaya::{Compute, HashMap, Operation};
use parking_lot::Mutex;
use serverlab_proto::resp::number::{parse_i64, push_i64};
use serverlab_proto::resp::{End, SetCond};
use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::sync::Arc;

enum Entry {
    /// A string shorter than [`RAW`], never edited in place.
    Str(Box<[u8]>),
    /// A longer string, or one edited in place.
    Raw(Arc<RawCell>),
    List(Arc<Cell>),
    /// A set, hash or sorted set: changed only by commands that run alone
    /// (a take and a put); the mutex lets a take move it out.
    Coll(Box<Mutex<Coll>>),
}

/// A string apart from the table, and whether it has left it (as a list
/// [`Cell`]).
struct RawCell(Mutex<RawState>);

struct RawState {
    dead: bool,
    value: Vec<u8>,
}

impl RawCell {
    fn new(value: Vec<u8>) -> Arc<RawCell> {
        Arc::new(RawCell(Mutex::new(RawState { dead: false, value })))
    }
}

/// The entry for a string: short and boxed, or long and apart.
fn str_entry(value: Vec<u8>) -> Entry {
    if value.len() >= RAW {
        Entry::Raw(RawCell::new(value))
    } else {
        Entry::Str(value.into_boxed_slice())
    }
}

/// A string argument's entry (copied: the request's bytes).
fn str_of(value: &[u8]) -> Entry {
    if value.len() >= RAW {
        Entry::Raw(RawCell::new(value.to_vec()))
    } else {
        Entry::Str(value.into())
    }
}

/// An empty collection, to leave behind in a cell whose value moved out.
fn no_coll() -> Coll {
    Coll::Set(Default::default())
}

/// A list and whether it has left the table.
struct Cell(Mutex<ListState>);

struct ListState {
    dead: bool,
    items: VecDeque<Box<[u8]>>,
}

#[derive(Default)]
pub struct LockFreeResp(HashMap<Box<[u8]>, Entry>, Order);

/// Ranges of SCAN's order (places' top bits).
const RANGES: usize = 64;

/// SCAN's order: every key by its place (a hash of its name), in
/// [`RANGES`] ranges of places, each a sorted map behind a mutex. A write
/// that makes a key counts it here after its step on the table, one that
/// removes a key discounts it: two writes of one key may count out of
/// order for a moment (a count of −1, or 2), but once no write is under
/// way (SCAN runs alone) each key present counts 1 and no other key
/// counts. Only writes that make or remove a key take a range's lock.
struct Order {
    hasher: foldhash::fast::RandomState,
    ranges: Box<[Mutex<Places>]>,
}

/// One range of SCAN's order: (place, key) and how many times it counts.
type Places = BTreeMap<(u64, Box<[u8]>), i32>;

impl Default for Order {
    fn default() -> Self {
        Order {
            hasher: Default::default(),
            ranges: (0..RANGES).map(|_| Mutex::default()).collect(),
        }
    }
}

impl Order {
    fn place(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    fn range(at: u64) -> usize {
        (at >> (64 - RANGES.trailing_zeros())) as usize
    }

    /// A key made (`by` 1) or removed (−1).
    fn count(&self, key: &[u8], by: i32) {
        let at = self.place(key);
        let mut r = self.ranges[Self::range(at)].lock();
        let n = r.entry((at, key.into())).or_insert(0);
        *n += by;
        if *n == 0 {
            r.remove(&(at, key.into()));
        }
    }

    fn made(&self, key: &[u8]) {
        self.count(key, 1)
    }

    fn removed(&self, key: &[u8]) {
        self.count(key, -1)
    }

    fn clear(&self) {
        for r in self.ranges.iter() {
            r.lock().clear();
        }
    }

    /// The keys at the first `count + 1` places at or after `cursor`
    /// (or all there are), the ranges in order.
    fn scan(&self, cursor: u64, count: usize) -> Scanned {
        let mut found = Vec::new();
        let (mut places, mut last) = (0usize, None);
        let from = (cursor, Box::<[u8]>::from(&[][..]));
        'ranges: for r in &self.ranges[Self::range(cursor)..] {
            for ((at, k), _) in r.lock().range(&from..).filter(|(_, n)| **n > 0) {
                if last != Some(*at) {
                    if places > count {
                        break 'ranges;
                    }
                    places += 1;
                    last = Some(*at);
                }
                found.push((*at, k.clone()));
            }
        }
        Scanned::of(found, count)
    }
}

/// An entry taken out of the table: if a cell, no command may use it now.
fn retire(e: &Entry) {
    match e {
        Entry::List(c) => c.0.lock().dead = true,
        Entry::Raw(c) => c.0.lock().dead = true,
        Entry::Str(_) | Entry::Coll(_) => {}
    }
}

/// An entry taken out of the table, as a value: moved out of its cell
/// (which is dead), a short string copied.
fn into_value(e: &Entry) -> Value {
    match e {
        Entry::Str(v) => Value::Str(v.to_vec()),
        Entry::Raw(c) => {
            let mut st = c.0.lock();
            st.dead = true;
            Value::Str(std::mem::take(&mut st.value))
        }
        Entry::List(c) => {
            let mut st = c.0.lock();
            st.dead = true;
            Value::List(std::mem::take(&mut st.items))
        }
        Entry::Coll(c) => Value::Coll(std::mem::replace(&mut *c.lock(), no_coll())),
    }
}

/// INCRBY's sum on a string.
fn add(v: &[u8], by: i64) -> Result<i64, IncrError> {
    let old = parse_i64(v).ok_or(IncrError::NotInteger)?;
    old.checked_add(by).ok_or(IncrError::Overflow)
}

fn int(n: i64) -> Box<[u8]> {
    let mut v = Vec::with_capacity(20);
    push_i64(&mut v, n);
    v.into_boxed_slice()
}

impl LockFreeResp {
    /// Run `f` on `key`'s list, locked and live (looking again past a
    /// dead one), or on what the key holds instead.
    fn with_list<R>(&self, key: &[u8], mut f: impl FnMut(Option<&mut ListState>, bool) -> R) -> R {
        let m = self.0.pin();
        loop {
            let cell = match m.get(key) {
                None => return f(None, false),
                Some(Entry::Str(_) | Entry::Raw(_) | Entry::Coll(_)) => return f(None, true),
                Some(Entry::List(c)) => c.clone(),
            };
            let mut st = cell.0.lock();
            if !st.dead {
                return f(Some(&mut st), false);
            }
        }
    }
}

impl LockFreeResp {
    /// SET: `gone` gets what the key held, if it wrote over something.
    fn set_with(
        &self,
        key: &[u8],
        value: &[u8],
        cond: SetCond,
        gone: &mut dyn FnMut(&Entry),
    ) -> bool {
        let m = self.0.pin();
        match cond {
            SetCond::Always => {
                match m.insert(key.into(), str_of(value)) {
                    Some(old) => gone(old),
                    None => self.1.made(key),
                }
                true
            }
            SetCond::Absent => {
                let made = m.try_insert(key.into(), str_of(value)).is_ok();
                if made {
                    self.1.made(key);
                }
                made
            }
            SetCond::Present => {
                let r = m.compute(key.into(), |e| match e {
                    Some(_) => Operation::Insert(str_of(value)),
                    None => Operation::Abort(()),
                });
                match r {
                    Compute::Updated { old, .. } => {
                        gone(old.1);
                        true
                    }
                    _ => false,
                }
            }
        }
    }

    /// The key's string cell, made from a short string (or, with
    /// `create`, an empty one) if the key holds none yet; `Ok(None)`: the
    /// key is absent and not to be made.
    fn raw_cell(&self, key: &[u8], create: bool) -> Result<Option<Arc<RawCell>>, WrongType> {
        let m = self.0.pin();
        loop {
            match m.get(key) {
                Some(Entry::List(_) | Entry::Coll(_)) => return Err(WrongType),
                Some(Entry::Raw(c)) => return Ok(Some(c.clone())),
                Some(Entry::Str(v)) => {
                    let cell = RawCell::new(v.to_vec());
                    // In place of this very entry, unless it changed.
                    let r = m.compute(key.into(), |e| match e {
                        Some((_, Entry::Str(now))) if std::ptr::eq(now.as_ptr(), v.as_ptr()) => {
                            Operation::Insert(Entry::Raw(cell.clone()))
                        }
                        _ => Operation::Abort(()),
                    });
                    if let Compute::Updated { .. } = r {
                        return Ok(Some(cell));
                    }
                }
                None if !create => return Ok(None),
                None => {
                    let cell = RawCell::new(Vec::new());
                    if m.try_insert(key.into(), Entry::Raw(cell.clone())).is_ok() {
                        self.1.made(key);
                        return Ok(Some(cell));
                    }
                }
            }
        }
    }
}

impl super::RespStore for LockFreeResp {
    fn get(&self, key: &[u8], found: &mut dyn FnMut(&[u8])) -> Result<bool, WrongType> {
        let m = self.0.pin();
        loop {
            return match m.get(key) {
                Some(Entry::Str(v)) => {
                    found(v);
                    Ok(true)
                }
                Some(Entry::Raw(c)) => {
                    let st = c.0.lock();
                    if st.dead {
                        continue;
                    }
                    found(&st.value);
                    Ok(true)
                }
                Some(Entry::List(_) | Entry::Coll(_)) => Err(WrongType),
                None => Ok(false),
            };
        }
    }

    fn set(&self, key: &[u8], value: &[u8], cond: SetCond) -> bool {
        self.set_with(key, value, cond, &mut retire)
    }

    fn replace(&self, key: &[u8], value: &[u8], cond: SetCond) -> (bool, Option<Value>) {
        let mut old = None;
        let wrote = self.set_with(key, value, cond, &mut |e| old = Some(into_value(e)));
        (wrote, old)
    }

    fn edit(
        &self,
        key: &[u8],
        create: bool,
        edit: &mut dyn FnMut(&mut Vec<u8>),
    ) -> Result<bool, WrongType> {
        loop {
            let Some(cell) = self.raw_cell(key, create)? else {
                return Ok(false);
            };
            let mut st = cell.0.lock();
            if !st.dead {
                edit(&mut st.value);
                return Ok(true);
            }
        }
    }

    fn del(&self, key: &[u8]) -> bool {
        match self.0.pin().remove(key) {
            Some(old) => {
                retire(old);
                self.1.removed(key);
                true
            }
            None => false,
        }
    }

    fn exists(&self, key: &[u8]) -> bool {
        self.0.pin().get(key).is_some()
    }

    fn incr_by(&self, key: &[u8], by: i64) -> Result<i64, IncrError> {
        let mut new = by;
        let m = self.0.pin();
        let r = m.compute(key.into(), |e| match e {
            None => {
                new = by;
                Operation::Insert(Entry::Str(int(by)))
            }
            Some((_, Entry::List(_) | Entry::Coll(_))) => Operation::Abort(IncrError::WrongType),
            // A string cell becomes a short string again (its number).
            Some((_, Entry::Raw(c))) => match add(&c.0.lock().value, by) {
                Err(e) => Operation::Abort(e),
                Ok(n) => {
                    new = n;
                    Operation::Insert(Entry::Str(int(n)))
                }
            },
            Some((_, Entry::Str(v))) => match parse_i64(v) {
                None => Operation::Abort(IncrError::NotInteger),
                Some(old) => match old.checked_add(by) {
                    None => Operation::Abort(IncrError::Overflow),
                    Some(n) => {
                        new = n;
                        Operation::Insert(Entry::Str(int(n)))
                    }
                },
            },
        });
        match r {
            Compute::Aborted(e) => Err(e),
            Compute::Inserted(..) => {
                self.1.made(key);
                Ok(new)
            }
            Compute::Updated { old, .. } => {
                retire(old.1);
                Ok(new)
            }
            _ => Ok(new),
        }
    }

    fn push(
        &self,
        key: &[u8],
        end: End,
        values: &mut dyn Iterator<Item = &[u8]>,
    ) -> Result<usize, WrongType> {
        let mut pending: Vec<Box<[u8]>> = values.map(Box::from).collect();
        let m = self.0.pin();
        loop {
            let add = |st: &mut ListState, pending: &mut Vec<Box<[u8]>>| {
                for v in pending.drain(..) {
                    match end {
                        End::Left => st.items.push_front(v),
                        End::Right => st.items.push_back(v),
                    }
                }
                st.items.len()
            };
            let cell = match m.get(key) {
                Some(Entry::Str(_) | Entry::Raw(_) | Entry::Coll(_)) => return Err(WrongType),
                Some(Entry::List(c)) => c.clone(),
                None => {
                    let mut st = ListState {
                        dead: false,
                        items: VecDeque::with_capacity(pending.len()),
                    };
                    let n = add(&mut st, &mut pending);
                    let cell = Arc::new(Cell(Mutex::new(st)));
                    match m.try_insert(key.into(), Entry::List(cell)) {
                        Ok(_) => {
                            self.1.made(key);
                            return Ok(n);
                        }
                        Err(e) => {
                            // Someone made the key first: take the values back.
                            if let Entry::List(c) = e.not_inserted {
                                let mut st = c.0.lock();
                                pending = st.items.drain(..).collect();
                                if end == End::Left {
                                    pending.reverse();
                                }
                            }
                            continue;
                        }
                    }
                }
            };
            let mut st = cell.0.lock();
            if !st.dead {
                return Ok(add(&mut st, &mut pending));
            }
        }
    }

    fn pop(&self, key: &[u8], end: End, count: usize) -> Result<Popped, WrongType> {
        let m = self.0.pin();
        loop {
            let cell = match m.get(key) {
                None => return Ok(None),
                Some(Entry::Str(_) | Entry::Raw(_) | Entry::Coll(_)) => return Err(WrongType),
                Some(Entry::List(c)) => c.clone(),
            };
            let mut st = cell.0.lock();
            if st.dead {
                continue;
            }
            let n = count.min(st.items.len());
            let popped: Vec<Box<[u8]>> = match end {
                End::Left => st.items.drain(..n).collect(),
                End::Right => {
                    let len = st.items.len();
                    st.items.drain(len - n..).rev().collect()
                }
            };
            if st.items.is_empty() {
                // Dead first, then out of the table, under the lock: a push
                // that found this cell looks again and makes a new list.
                st.dead = true;
                let gone = m.remove_if(
                    key,
                    |_, e| matches!(e, Entry::List(c) if Arc::ptr_eq(c, &cell)),
                );
                if matches!(gone, Ok(Some(_))) {
                    self.1.removed(key);
                }
            }
            return Ok(Some(popped));
        }
    }

    fn llen(&self, key: &[u8]) -> Result<usize, WrongType> {
        self.with_list(key, |l, s| match (l, s) {
            (_, true) => Err(WrongType),
            (l, false) => Ok(l.map_or(0, |l| l.items.len())),
        })
    }

    fn lindex(
        &self,
        key: &[u8],
        index: i64,
        found: &mut dyn FnMut(&[u8]),
    ) -> Result<bool, WrongType> {
        self.with_list(key, |l, s| {
            if s {
                return Err(WrongType);
            }
            let Some(l) = l else { return Ok(false) };
            let i = if index < 0 {
                l.items.len() as i64 + index
            } else {
                index
            };
            match usize::try_from(i).ok().and_then(|i| l.items.get(i)) {
                Some(v) => {
                    found(v);
                    Ok(true)
                }
                None => Ok(false),
            }
        })
    }

    fn lrange(&self, key: &[u8], start: i64, stop: i64, out: &mut Ranged) -> Result<(), WrongType> {
        self.with_list(key, |l, s| {
            if s {
                return Err(WrongType);
            }
            match l {
                None => out(0, &mut std::iter::empty()),
                Some(l) => {
                    let (from, to) = super::range(l.items.len(), start, stop);
                    out(to - from, &mut l.items.range(from..to).map(|b| &**b));
                }
            }
            Ok(())
        })
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn for_each(&self, visit: &mut dyn FnMut(&[u8], Held<'_>)) {
        let m = self.0.pin();
        for (k, e) in m.iter() {
            match e {
                Entry::Str(v) => visit(k, Held::Str(v)),
                Entry::Raw(c) => {
                    let st = c.0.lock();
                    if !st.dead {
                        visit(k, Held::Str(&st.value));
                    }
                }
                Entry::List(c) => {
                    let l = c.0.lock();
                    if !l.dead {
                        visit(k, Held::List(&l.items));
                    }
                }
                Entry::Coll(c) => visit(k, Held::Coll(&c.lock())),
            }
        }
    }

    fn clear(&self) {
        let m = self.0.pin();
        for (_, e) in m.iter() {
            retire(e);
        }
        m.clear();
        // FLUSHALL runs alone: no write is under way.
        self.1.clear();
    }

    fn peek(&self, key: &[u8], seen: &mut dyn FnMut(Held<'_>)) -> bool {
        match self.0.pin().get(key) {
            None => false,
            Some(Entry::Str(v)) => {
                seen(Held::Str(v));
                true
            }
            Some(Entry::Raw(_)) => {
                let mut found = |v: &[u8]| seen(Held::Str(v));
                matches!(self.get(key, &mut found), Ok(true))
            }
            Some(Entry::Coll(c)) => {
                seen(Held::Coll(&c.lock()));
                true
            }
            Some(Entry::List(_)) => self.with_list(key, |l, _| match l {
                Some(l) => {
                    seen(Held::List(&l.items));
                    true
                }
                None => false,
            }),
        }
    }

    fn take(&self, key: &[u8]) -> Option<Value> {
        let m = self.0.pin();
        let old = m.remove(key)?;
        self.1.removed(key);
        Some(into_value(old))
    }

    fn put(&self, key: &[u8], value: Value) {
        let m = self.0.pin();
        if value.is_empty() {
            if let Some(old) = m.remove(key) {
                retire(old);
                self.1.removed(key);
            }
            return;
        }
        let entry = match value {
            Value::Str(v) => str_entry(v),
            Value::List(items) => {
                Entry::List(Arc::new(Cell(Mutex::new(ListState { dead: false, items }))))
            }
            Value::Coll(c) => Entry::Coll(Box::new(Mutex::new(c))),
        };
        match m.insert(key.into(), entry) {
            Some(old) => retire(old),
            None => self.1.made(key),
        }
    }

    fn scan(&self, cursor: u64, count: usize) -> Scanned {
        self.1.scan(cursor, count)
    }
}
