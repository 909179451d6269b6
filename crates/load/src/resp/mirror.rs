//! What one connection's own keys hold, when verifying: only that
//! connection writes them and its replies come in order, so the reply
//! each request must get is known when the request is made, pipelined or
//! not. Shared keys hold what the setup wrote and are only read.

use super::workload::{write_key, Space, RANGE};
use crate::keyspace::ValueSize;
use crate::kv::workload::write_value;
use serverlab_proto::resp::reply;
use std::collections::{HashMap, VecDeque};

/// The value of shared key `i`, and of a preloaded string `i`: its nonce.
pub fn preload_nonce(seed: u64, i: usize) -> u64 {
    seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// One connection's keys (by index in their space) and their contents:
/// values as the nonces they were made from.
#[derive(Debug)]
pub struct Mirror {
    strings: HashMap<usize, u64>,
    counters: HashMap<usize, i64>,
    lists: HashMap<usize, VecDeque<u64>>,
    value_size: ValueSize,
    seed: u64,
    /// Shared read-only keys (written before the run).
    shared: usize,
    key: Vec<u8>,
    value: Vec<u8>,
}

impl Mirror {
    /// Keys `owned` start absent, or (strings, `preloaded`) holding their
    /// preload value.
    pub fn new(
        owned: impl Iterator<Item = usize>,
        preloaded: bool,
        value_size: ValueSize,
        seed: u64,
        shared: usize,
    ) -> Self {
        let strings = if preloaded {
            owned.map(|i| (i, preload_nonce(seed, i))).collect()
        } else {
            HashMap::new()
        };
        Mirror {
            strings,
            counters: HashMap::new(),
            lists: HashMap::new(),
            value_size,
            seed,
            shared,
            key: Vec::new(),
            value: Vec::new(),
        }
    }

    /// Append the bulk reply holding value `nonce` of key `i` in `space`.
    fn bulk(&mut self, out: &mut Vec<u8>, space: Space, i: usize, nonce: u64) {
        write_key(&mut self.key, space, i);
        let size = self.value_size.for_nonce(nonce);
        write_value(&mut self.value, &self.key, nonce, size);
        reply::bulk(out, &self.value);
    }

    /// GET of string `i` (or of shared key `i`).
    pub fn get(&mut self, out: &mut Vec<u8>, space: Space, i: usize) {
        match space {
            Space::Shared => self.bulk(out, space, i, preload_nonce(self.seed, i)),
            _ => match self.strings.get(&i).copied() {
                Some(n) => self.bulk(out, space, i, n),
                None => reply::null(out),
            },
        }
    }

    pub fn set(&mut self, out: &mut Vec<u8>, i: usize, nonce: u64) {
        self.strings.insert(i, nonce);
        reply::ok(out);
    }

    pub fn del(&mut self, out: &mut Vec<u8>, i: usize) {
        reply::int(out, i64::from(self.strings.remove(&i).is_some()));
    }

    pub fn exists(&mut self, out: &mut Vec<u8>, space: Space, i: usize) {
        let there = space == Space::Shared && i < self.shared || self.strings.contains_key(&i);
        reply::int(out, i64::from(there));
    }

    pub fn incr(&mut self, out: &mut Vec<u8>, i: usize) {
        let n = self.counters.entry(i).or_insert(0);
        *n += 1;
        reply::int(out, *n);
    }

    pub fn push(&mut self, out: &mut Vec<u8>, i: usize, left: bool, nonce: u64) {
        let l = self.lists.entry(i).or_default();
        if left {
            l.push_front(nonce);
        } else {
            l.push_back(nonce);
        }
        reply::int(out, l.len() as i64);
    }

    pub fn pop(&mut self, out: &mut Vec<u8>, i: usize, left: bool) {
        let Some(l) = self.lists.get_mut(&i) else {
            return reply::null(out);
        };
        let n =
            if left { l.pop_front() } else { l.pop_back() }.expect("lists are never empty here");
        if l.is_empty() {
            self.lists.remove(&i);
        }
        self.bulk(out, Space::List, i, n);
    }

    /// The length of list `i`.
    pub fn len(&self, i: usize) -> usize {
        self.lists.get(&i).map_or(0, VecDeque::len)
    }

    pub fn llen(&mut self, out: &mut Vec<u8>, i: usize) {
        reply::int(out, self.len(i) as i64);
    }

    pub fn lindex(&mut self, out: &mut Vec<u8>, i: usize, at: usize) {
        match self.lists.get(&i).and_then(|l| l.get(at)).copied() {
            Some(n) => self.bulk(out, Space::List, i, n),
            None => reply::null(out),
        }
    }

    /// LRANGE 0 RANGE-1.
    pub fn lrange(&mut self, out: &mut Vec<u8>, i: usize) {
        let items: Vec<u64> = self
            .lists
            .get(&i)
            .map(|l| l.iter().take(RANGE as usize).copied().collect())
            .unwrap_or_default();
        reply::array(out, items.len());
        for n in items {
            self.bulk(out, Space::List, i, n);
        }
    }
}
