//! MEMORY USAGE's estimate: the bytes a key and its value take in
//! serverlab's own representation (the locked stores' table,
//! `crates/store/src/resp/db.rs`), each allocation counted as glibc's
//! malloc sizes it (the default build's allocator), as Redis counts its
//! own with jemalloc's sizes. docs/protocols/resp.md says what is
//! counted, and how it differs from Redis's figure.
//!
//! - The key's slot in its table: a string packed with its key 16 bytes,
//!   a long string 40, a list 48, a set, hash or sorted set 16 and its
//!   value's table header; and the slot's control byte.
//! - Its place in SCAN's order: [`ORDER_ENTRY`] bytes.
//! - A short string: one allocation of a 4-byte length, the key and the
//!   value. Otherwise the key's own allocation, and the value's: a long
//!   string's bytes; a list's deque of 16-byte pointers (its capacity) and
//!   each element's allocation; a set's or hash's table (its buckets, each
//!   a pointer per member, or per field and value, and a control byte) and
//!   each member's, or field's and value's, allocation; a sorted set's
//!   table of members to scores, its ordered tree of (score, member)
//!   entries and each member's two copies.
//!
//! As Redis does, the elements' own allocations are not all visited: the
//! first `samples` in the value's order (5 by default; 0: every one) are
//! measured and their mean counted for every element. The tables and
//! slots are counted whole.

use serverlab_store::resp::{Coll, Held};
use std::mem::size_of;

/// SCAN's order keeps each key's 8-byte hash in a B-tree: about 14 bytes
/// a key with its nodes (measured: docs/protocols/resp.md, 5.2).
pub(crate) const ORDER_ENTRY: usize = 14;

/// Redis's default `SAMPLES` (`OBJ_COMPUTE_SIZE_DEF_SAMPLES`).
pub(crate) const DEFAULT_SAMPLES: usize = 5;

/// A B-tree's entries take this share more than their own size in its
/// nodes (nodes are between half full and full: 3/2 of the entries'
/// bytes, as a mean).
const TREE_NUM: usize = 3;
const TREE_DEN: usize = 2;

/// The bytes glibc's malloc gives a request of `n` (none for 0: an empty
/// box allocates nothing): the request and an 8-byte header, rounded up
/// to 16, at least 32.
pub(crate) fn chunk(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    ((n + 8 + 15) & !15).max(32)
}

/// The buckets of a hashbrown table that holds `capacity` entries
/// without growing (what `capacity()` reports back: 7/8 of the buckets,
/// or one less than the buckets under 8).
fn buckets(capacity: usize) -> usize {
    match capacity {
        0 => 0,
        1..=3 => 4,
        4..=7 => 8,
        n => (n * 8).div_ceil(7).next_power_of_two(),
    }
}

/// The mean of `f` over the first `samples` of `items` (0: all), times
/// how many there are.
fn sampled<T>(
    items: impl ExactSizeIterator<Item = T>,
    samples: usize,
    f: impl Fn(T) -> usize,
) -> usize {
    let n = items.len();
    let take = if samples == 0 { n } else { samples.min(n) };
    if take == 0 {
        return 0;
    }
    let sum: usize = items.take(take).map(f).sum();
    sum * n / take
}

/// The estimate for `key` holding `held`, its elements sampled
/// `samples` at most (0: all).
pub(crate) fn estimate(key: &[u8], held: Held<'_>, samples: usize) -> usize {
    let fixed = 1 + ORDER_ENTRY;
    let boxed = size_of::<Box<[u8]>>();
    match held {
        Held::Str(v) if v.len() < serverlab_store::resp::RAW => {
            fixed + boxed + chunk(4 + key.len() + v.len())
        }
        Held::Str(v) => fixed + boxed + size_of::<Vec<u8>>() + chunk(key.len()) + chunk(v.len()),
        Held::List(l) => {
            let items =
                chunk(l.capacity() * boxed) + sampled(l.iter(), samples, |e| chunk(e.len()));
            fixed
                + boxed
                + size_of::<std::collections::VecDeque<Box<[u8]>>>()
                + chunk(key.len())
                + items
        }
        Held::Coll(c) => fixed + boxed + size_of::<Coll>() + chunk(key.len()) + coll(c, samples),
    }
}

/// A set's, hash's or sorted set's own bytes.
fn coll(c: &Coll, samples: usize) -> usize {
    let boxed = size_of::<Box<[u8]>>();
    match c {
        Coll::Set(s) => {
            buckets(s.capacity()) * (boxed + 1) + sampled(s.iter(), samples, |m| chunk(m.len()))
        }
        Coll::Hash(h) => {
            buckets(h.capacity()) * (2 * boxed + 1)
                + sampled(h.iter(), samples, |(f, v)| chunk(f.len()) + chunk(v.len()))
        }
        Coll::ZSet(z) => {
            let table = buckets(z.len()) * (boxed + size_of::<f64>() + 1);
            let tree = z.len() * (size_of::<f64>() + boxed) * TREE_NUM / TREE_DEN;
            table + tree + sampled(z.iter(), samples, |(m, _)| 2 * chunk(m.len()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverlab_store::resp::ZSet;
    use std::collections::{HashMap, HashSet, VecDeque};

    #[test]
    fn chunks_are_glibc_s() {
        assert_eq!(chunk(0), 0);
        assert_eq!(chunk(1), 32);
        assert_eq!(chunk(24), 32);
        assert_eq!(chunk(25), 48);
        assert_eq!(chunk(1000), 1008);
        assert_eq!(buckets(3), 4);
        assert_eq!(buckets(7), 8);
        assert_eq!(buckets(14), 16);
        assert_eq!(buckets(28), 32);
        assert_eq!(buckets(29), 64);
    }

    /// A short string is one allocation beside its slot; every kind grows
    /// with what it holds; sampling every element of equal elements gives
    /// what the default sample gives.
    #[test]
    fn estimates_follow_the_representation() {
        // A 16-byte slot, its control byte, its SCAN place, and one
        // 32-byte allocation for "k" and "v".
        assert_eq!(estimate(b"k", Held::Str(b"v"), 5), 16 + 1 + 14 + 32);
        let long = vec![b'x'; 1000];
        assert_eq!(
            estimate(b"k", Held::Str(&long), 5),
            15 + 16 + 24 + 32 + 1008
        );
        let list: VecDeque<Box<[u8]>> = (0..100)
            .map(|i| format!("e{i:03}").into_bytes().into())
            .collect();
        let small: VecDeque<Box<[u8]>> = list.iter().take(10).cloned().collect();
        assert!(estimate(b"l", Held::List(&list), 5) > estimate(b"l", Held::List(&small), 5));
        let set: HashSet<Box<[u8]>> = list.iter().cloned().collect();
        let one = estimate(b"s", Held::Coll(&Coll::Set(set.clone())), 5);
        assert_eq!(one, estimate(b"s", Held::Coll(&Coll::Set(set.clone())), 0));
        let hash: HashMap<Box<[u8]>, Box<[u8]>> =
            set.iter().map(|m| (m.clone(), m.clone())).collect();
        assert!(estimate(b"h", Held::Coll(&Coll::Hash(hash)), 5) > one);
        let mut z = ZSet::default();
        for (i, m) in list.iter().enumerate() {
            z.insert(m, i as f64);
        }
        assert!(estimate(b"z", Held::Coll(&Coll::ZSet(z)), 5) > one);
    }

    /// Samples are extrapolated: a set whose first members are long
    /// counts more with the default sample than with all of them, when
    /// the rest are short (and the same with all of them, whatever the
    /// sample, when all are alike).
    #[test]
    fn samples_extrapolate_from_the_first_elements() {
        let l: VecDeque<Box<[u8]>> = (0..50)
            .map(|i| {
                if i < 5 {
                    vec![b'x'; 500]
                } else {
                    vec![b'y'; 1]
                }
                .into()
            })
            .collect();
        let some = estimate(b"l", Held::List(&l), 5);
        let all = estimate(b"l", Held::List(&l), 0);
        assert!(some > all, "{some} {all}");
    }
}
