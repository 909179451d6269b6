//! The set of operations a search has placed (or left out), and its
//! compact form as a memo key.
//!
//! Operations are numbered in the order they were sent, and a search
//! places them roughly in that order, so the set is almost always "every
//! operation below p, and a few just above". The key stores p's word
//! index and only the words from there to the last set bit: a few words
//! per entry however long the history, where a full bitset would cost
//! n/8 bytes per entry and n²/8 for the whole memo.

/// A bitset over operation numbers that tracks its first clear bit.
#[derive(Debug, Clone)]
pub struct Done {
    words: Vec<u64>,
    /// Every bit below `prefix` is set; bit `prefix` is clear.
    prefix: usize,
    /// One past the highest word that may hold a set bit.
    high: usize,
}

/// A `Done` set in compact form: equal sets give equal keys.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DoneKey {
    first_word: u32,
    words: Box<[u64]>,
}

impl Done {
    pub fn new(n: usize) -> Done {
        Done {
            words: vec![0; n.div_ceil(64) + 1],
            prefix: 0,
            high: 0,
        }
    }

    #[cfg(test)]
    fn contains(&self, i: usize) -> bool {
        self.words[i / 64] & (1 << (i % 64)) != 0
    }

    pub fn insert(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
        self.high = self.high.max(i / 64 + 1);
        if i == self.prefix {
            self.advance_prefix();
        }
    }

    pub fn remove(&mut self, i: usize) {
        self.words[i / 64] &= !(1 << (i % 64));
        self.prefix = self.prefix.min(i);
    }

    fn advance_prefix(&mut self) {
        let mut w = self.prefix / 64;
        // Ones below `prefix` in its word are set by definition.
        let mut bits = self.words[w] | ((1u64 << (self.prefix % 64)) - 1);
        while bits == u64::MAX {
            w += 1;
            bits = self.words[w];
        }
        self.prefix = w * 64 + bits.trailing_ones() as usize;
    }

    pub fn key(&self) -> DoneKey {
        let first = self.prefix / 64;
        let mut last = self.high.max(first + 1);
        while last > first + 1 && self.words[last - 1] == 0 {
            last -= 1;
        }
        DoneKey {
            first_word: first as u32,
            words: self.words[first..last].into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_sets_equal_keys_whatever_the_path() {
        let mut a = Done::new(300);
        let mut b = Done::new(300);
        for i in [0, 1, 2, 70, 3, 200] {
            a.insert(i);
        }
        for i in [200, 3, 70, 2, 1, 0, 150] {
            b.insert(i);
        }
        assert_ne!(a.key(), b.key());
        b.remove(150);
        assert_eq!(a.key(), b.key());
        assert_eq!(a.prefix, 4);
        for i in 0..300 {
            a.insert(i);
        }
        assert_eq!(a.prefix, 300);
        a.remove(64);
        assert_eq!(a.prefix, 64);
        assert!(!a.contains(64) && a.contains(65));
    }

    #[test]
    fn a_long_settled_prefix_costs_one_word() {
        let mut d = Done::new(100_000);
        for i in 0..99_990 {
            d.insert(i);
        }
        d.insert(99_995);
        assert!(d.key().words.len() <= 2);
    }
}
