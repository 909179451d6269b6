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
use std::ops::Bound;

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

/// A score, ordered as Redis orders them (no NaN is ever stored): by
/// value, so `-0` and `0` are equal (members of either sort bytewise
/// among themselves, as Redis compares scores with `<`).
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
        self.0
            .partial_cmp(&other.0)
            .unwrap_or_else(|| self.0.total_cmp(&other.0))
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

    /// Members and scores from `from` (a score and a member) on, upwards;
    /// or, `rev`, from `from` down (`Included`: at or below it,
    /// `Excluded`: below it). A range's other end is the caller's to find
    /// (`take_while`); the empty member sorts first among equal scores.
    pub fn iter_from<'s>(
        &'s self,
        from: Bound<(f64, &[u8])>,
        rev: bool,
    ) -> Box<dyn Iterator<Item = (&'s [u8], f64)> + 's> {
        let own = |(s, m): (f64, &[u8])| (Score(s), Box::<[u8]>::from(m));
        let from = match from {
            Bound::Included(k) => Bound::Included(own(k)),
            Bound::Excluded(k) => Bound::Excluded(own(k)),
            Bound::Unbounded => Bound::Unbounded,
        };
        let each = |(s, m): &'s (Score, Box<[u8]>)| (&**m, s.0);
        if rev {
            Box::new(self.order.range((Bound::Unbounded, from)).rev().map(each))
        } else {
            Box::new(self.order.range((from, Bound::Unbounded)).map(each))
        }
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
            vec![
                (b"a".to_vec(), 2.0),
                (b"b".to_vec(), 2.0),
                (b"c".to_vec(), 3.0)
            ]
        );
        assert_eq!(z.pop_min(), Some((b"a".to_vec().into(), 2.0)));
        assert_eq!(z.pop_max(), Some((b"c".to_vec().into(), 3.0)));
        assert!(z.remove(b"b") && !z.remove(b"b"));
        assert!(z.is_empty() && z.pop_min().is_none());
    }

    #[test]
    fn minus_zero_and_zero_are_one_score_and_members_sort_among_them() {
        let mut z = ZSet::default();
        z.insert(b"b", -0.0);
        z.insert(b"a", 0.0);
        z.insert(b"c", -1.0);
        let order: Vec<_> = z.iter().map(|(m, _)| m.to_vec()).collect();
        assert_eq!(order, vec![b"c".to_vec(), b"a".to_vec(), b"b".to_vec()]);
        // Rescoring finds the member under either zero.
        assert!(!z.insert(b"b", 2.0));
        assert!(z.remove(b"a") && z.len() == 2);
        assert_eq!(z.iter().last(), Some((&b"b"[..], 2.0)));
    }

    #[test]
    fn iter_from_starts_at_a_score_and_member_either_way() {
        let mut z = ZSet::default();
        for (m, s) in [(&b"a"[..], 1.0), (b"b", 2.0), (b"c", 2.0), (b"d", 3.0)] {
            z.insert(m, s);
        }
        let names = |it: Box<dyn Iterator<Item = (&[u8], f64)> + '_>| -> Vec<u8> {
            it.map(|(m, _)| m[0]).collect()
        };
        assert_eq!(
            names(z.iter_from(Bound::Included((2.0, b"")), false)),
            b"bcd"
        );
        assert_eq!(
            names(z.iter_from(Bound::Excluded((2.0, b"b")), false)),
            b"cd"
        );
        assert_eq!(
            names(z.iter_from(Bound::Included((2.0, b"b")), true)),
            b"ba"
        );
        assert_eq!(names(z.iter_from(Bound::Excluded((2.0, b"")), true)), b"a");
        assert_eq!(names(z.iter_from(Bound::Unbounded, true)), b"dcba");
        assert_eq!(names(z.iter_from(Bound::Included((9.0, b"")), false)), b"");
    }
}
