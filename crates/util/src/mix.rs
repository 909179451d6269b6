//! Weighted operation mixes (`get=80,put=15,delete=5`): parsed against a
//! [`Named`] operation type, drawn from with a seeded generator, and
//! written back in the same form.

use crate::Named;
use std::fmt;

/// A weight for each operation of `T`, in `T::ALL` order; at least one
/// is positive and they add up to at most `u32::MAX`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mix<T: Named> {
    weights: Vec<(T, u32)>,
    total: u32,
}

impl<T: Named> Mix<T> {
    /// From `(operation, weight)` pairs; operations not named weigh 0.
    pub fn of(pairs: &[(T, u32)]) -> Result<Self, String> {
        let mut weights: Vec<(T, u32)> = T::ALL.iter().map(|&t| (t, 0)).collect();
        for &(op, w) in pairs {
            if let Some(slot) = weights.iter_mut().find(|(t, _)| *t == op) {
                slot.1 = w;
            }
        }
        let total: u64 = weights.iter().map(|&(_, w)| u64::from(w)).sum();
        if total == 0 {
            return Err("the weights add up to 0".into());
        }
        let total = u32::try_from(total).map_err(|_| "the weights are too large".to_string())?;
        Ok(Mix { weights, total })
    }

    /// Only `op`.
    pub fn only(op: T) -> Self {
        Mix::of(&[(op, 1)]).expect("a positive weight")
    }

    pub fn weight(&self, op: T) -> u32 {
        self.weights
            .iter()
            .find(|(t, _)| *t == op)
            .map_or(0, |&(_, w)| w)
    }

    /// Operations with a positive weight, in `T::ALL` order.
    pub fn ops(&self) -> impl Iterator<Item = T> + '_ {
        self.weights.iter().filter(|(_, w)| *w > 0).map(|&(t, _)| t)
    }

    /// Draw an operation with probability proportional to its weight.
    pub fn pick(&self, rng: &mut fastrand::Rng) -> T {
        let mut r = rng.u32(0..self.total);
        for &(op, w) in &self.weights {
            if r < w {
                return op;
            }
            r -= w;
        }
        unreachable!("r < total, the sum of the weights")
    }

    /// Parse `name=weight,…`; the names are `T`'s.
    pub fn parse(s: &str) -> Result<Self, String> {
        let example = T::ALL
            .iter()
            .map(|t| format!("{}=1", t.name()))
            .collect::<Vec<_>>()
            .join(",");
        let mut pairs = Vec::new();
        for part in s.split(',') {
            let (name, weight) = part
                .split_once('=')
                .ok_or_else(|| format!("'{part}' is not name=weight (example: {example})"))?;
            let op: T = crate::named::parse(name.trim())?;
            let weight: u32 = weight
                .trim()
                .parse()
                .map_err(|_| format!("'{weight}' is not a whole-number weight"))?;
            if pairs.iter().any(|&(t, _)| t == op) {
                return Err(format!("'{}' is given twice", op.name()));
            }
            pairs.push((op, weight));
        }
        Mix::of(&pairs)
    }
}

/// The operations with a positive weight, as they parse: `get=80,put=15`.
impl<T: Named> fmt::Display for Mix<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .weights
            .iter()
            .filter(|(_, w)| *w > 0)
            .map(|(op, w)| format!("{}={w}", op.name()))
            .collect();
        f.write_str(&parts.join(","))
    }
}

impl<T: Named> std::str::FromStr for Mix<T> {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Mix::parse(s)
    }
}

/// As an object of weights by name, every operation included.
impl<T: Named> serde::Serialize for Mix<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.weights.len()))?;
        for (op, w) in &self.weights {
            map.serialize_entry(op.name(), w)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Op {
        Get,
        Put,
        Delete,
    }

    impl Named for Op {
        const WHAT: &'static str = "operation";
        const ALL: &'static [Self] = &[Op::Get, Op::Put, Op::Delete];
        fn name(self) -> &'static str {
            match self {
                Op::Get => "get",
                Op::Put => "put",
                Op::Delete => "delete",
            }
        }
    }

    #[test]
    fn parses_and_prints() {
        let m: Mix<Op> = "put=15, get=80".parse().unwrap();
        assert_eq!(
            (m.weight(Op::Get), m.weight(Op::Put), m.weight(Op::Delete)),
            (80, 15, 0)
        );
        assert_eq!(m.to_string(), "get=80,put=15");
        assert_eq!(m.to_string().parse(), Ok(m.clone()));
        assert_eq!(m.ops().collect::<Vec<_>>(), [Op::Get, Op::Put]);
        for bad in [
            "",
            "get",
            "get=-1",
            "get=0",
            "post=1",
            "get=1,get=2",
            "get=4294967295,put=1",
        ] {
            assert!(bad.parse::<Mix<Op>>().is_err(), "{bad}");
        }
        assert!("post=1"
            .parse::<Mix<Op>>()
            .unwrap_err()
            .contains("get, put, delete"));
    }

    #[test]
    fn picks_by_weight() {
        let m: Mix<Op> = "get=3,delete=1".parse().unwrap();
        let mut rng = fastrand::Rng::with_seed(7);
        let n = 40_000;
        let gets = (0..n).filter(|_| m.pick(&mut rng) == Op::Get).count();
        let share = gets as f64 / n as f64;
        assert!((share - 0.75).abs() < 0.02, "{share}");
        assert!((0..1000).all(|_| m.pick(&mut rng) != Op::Put));
    }
}
