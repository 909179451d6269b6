//! A key's value as an owned whole: what the commands beyond the fast
//! path (APPEND, LINSERT, SADD, RENAME, …) work on. Such a command runs
//! alone (the service holds every other command back while it runs), so
//! it may take a key's value out of the store, change it and put it back
//! ([`RespStore::take`](super::RespStore::take), [`put`](super::RespStore::put)):
//! a list or a collection moves, it is not copied.
//!
//! Sets, hashes and sorted sets ([`Coll`]) are kept whole in every store;
//! the fast path's commands only see that such a key is of another type.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

/// What a key holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(Vec<u8>),
    List(VecDeque<Box<[u8]>>),
    Coll(Coll),
}

/// A set, a hash or a sorted set.
#[derive(Debug, Clone, PartialEq)]
pub enum Coll {
    Set(HashSet<Box<[u8]>>),
    Hash(HashMap<Box<[u8]>, Box<[u8]>>),
    ZSet(ZSet),
}

impl Value {
    /// TYPE's word for it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Coll(Coll::Set(_)) => "set",
            Value::Coll(Coll::Hash(_)) => "hash",
            Value::Coll(Coll::ZSet(_)) => "zset",
        }
    }

    /// An empty list or collection: Redis removes the key.
    pub fn is_empty(&self) -> bool {
        match self {
            Value::Str(_) => false,
            Value::List(l) => l.is_empty(),
            Value::Coll(c) => c.len() == 0,
        }
    }
}

impl Coll {
    pub fn len(&self) -> usize {
        match self {
            Coll::Set(s) => s.len(),
            Coll::Hash(h) => h.len(),
            Coll::ZSet(z) => z.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A score, ordered as Redis orders them (no NaN is ever stored).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score(pub f64);

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A sorted set: members by score (then by member, bytewise), and each
/// member's score.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ZSet {
    scores: HashMap<Box<[u8]>, f64>,
    order: BTreeSet<(Score, Box<[u8]>)>,
}

impl ZSet {
    pub fn len(&self) -> usize {
        self.scores.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    pub fn score(&self, member: &[u8]) -> Option<f64> {
        self.scores.get(member).copied()
    }

    /// Sets `member`'s score; whether it is new.
    pub fn insert(&mut self, member: &[u8], score: f64) -> bool {
        let new = match self.scores.insert(member.into(), score) {
            Some(old) => {
                self.order.remove(&(Score(old), member.into()));
                false
            }
            None => true,
        };
        self.order.insert((Score(score), member.into()));
        new
    }

    /// Removes `member`; whether it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self.scores.remove(member) {
            Some(s) => {
                self.order.remove(&(Score(s), member.into()));
                true
            }
            None => false,
        }
    }

    /// Members and scores from the lowest score.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&[u8], f64)> + ExactSizeIterator {
        self.order.iter().map(|(s, m)| (&**m, s.0))
    }

    /// Takes the member with the lowest score.
    pub fn pop_min(&mut self) -> Option<(Box<[u8]>, f64)> {
        let (s, m) = self.order.pop_first()?;
        self.scores.remove(&m);
        Some((m, s.0))
    }

    /// Takes the member with the highest score.
    pub fn pop_max(&mut self) -> Option<(Box<[u8]>, f64)> {
        let (s, m) = self.order.pop_last()?;
        self.scores.remove(&m);
        Some((m, s.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sorted_set_orders_by_score_then_member_and_rescores() {
        let mut z = ZSet::default();
        assert!(z.insert(b"b", 2.0));
        assert!(z.insert(b"a", 2.0));
        assert!(z.insert(b"c", -1.5));
        assert!(!z.insert(b"c", 3.0), "an update is not new");
        let order: Vec<_> = z.iter().map(|(m, s)| (m.to_vec(), s)).collect();
        assert_eq!(
            order,
            vec![(b"a".to_vec(), 2.0), (b"b".to_vec(), 2.0), (b"c".to_vec(), 3.0)]
        );
        assert_eq!(z.pop_min(), Some((b"a".to_vec().into(), 2.0)));
        assert_eq!(z.pop_max(), Some((b"c".to_vec().into(), 3.0)));
        assert!(z.remove(b"b") && !z.remove(b"b"));
        assert!(z.is_empty() && z.pop_min().is_none());
    }
}
