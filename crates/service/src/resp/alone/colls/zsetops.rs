//! The sorted-set algebra: ZUNION, ZINTER, ZDIFF, their STOREs and
//! ZINTERCARD, as Redis 7.0.15's `zunionInterDiffGenericCommand` answers
//! them: `numkeys key… [WEIGHTS w…] [AGGREGATE SUM|MIN|MAX]
//! [WITHSCORES]` (WEIGHTS and AGGREGATE not for ZDIFF, WITHSCORES not
//! for a STORE; ZINTERCARD takes `[LIMIT n]` alone).
//!
//! A source may be a sorted set or a set (each member scored 1); a key
//! of any other type is WRONGTYPE before the options are read, as
//! Redis checks it. The sources are moved out of the store while the
//! result is computed and put back as they were (a key named twice is
//! moved once). Scores are combined in Redis's order (the sources from
//! the smallest, a NaN sum or product counting 0), so they come out to
//! the same doubles.

use super::zmore::stored;
use super::{bulk_double, float, integer, is, Done, Fail, Set, SYNTAX};
use crate::resp::alone::Running;
use crate::resp::Args;
use serverlab_proto::resp::{reply, Name};
use serverlab_store::resp::{Coll, Value, ZSet};
use std::collections::HashMap;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Union,
    Inter,
    Diff,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

impl Aggregate {
    /// Redis's `zunionInterAggregate`.
    fn add(self, target: &mut f64, v: f64) {
        match self {
            Aggregate::Sum => {
                *target += v;
                if target.is_nan() {
                    *target = 0.0;
                }
            }
            // As Redis compares (a NaN, or -0 against 0, keeps the
            // target).
            Aggregate::Min => *target = if v < *target { v } else { *target },
            Aggregate::Max => *target = if v > *target { v } else { *target },
        }
    }
}

/// One source, as taken out of the store.
enum Src {
    Z(ZSet),
    S(Set),
    None,
}

impl Src {
    fn len(&self) -> usize {
        match self {
            Src::Z(z) => z.len(),
            Src::S(s) => s.len(),
            Src::None => 0,
        }
    }

    fn score(&self, m: &[u8]) -> Option<f64> {
        match self {
            Src::Z(z) => z.score(m),
            Src::S(s) => s.contains(m).then_some(1.0),
            Src::None => None,
        }
    }

    fn each(&self) -> Box<dyn Iterator<Item = (&[u8], f64)> + '_> {
        match self {
            Src::Z(z) => Box::new(z.iter()),
            Src::S(s) => Box::new(s.iter().map(|m| (&**m, 1.0))),
            Src::None => Box::new(std::iter::empty()),
        }
    }
}

/// The sources taken out, each under its key.
type Taken = Vec<(Box<[u8]>, Src)>;

/// What the options say.
struct Opts {
    weights: Vec<f64>,
    aggregate: Aggregate,
    withscores: bool,
    limit: usize,
}

pub(super) fn run(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let (op, store, card) = match name {
        Name::ZUnion => (Op::Union, false, false),
        Name::ZInter => (Op::Inter, false, false),
        Name::ZDiff => (Op::Diff, false, false),
        Name::ZUnionStore => (Op::Union, true, false),
        Name::ZInterStore => (Op::Inter, true, false),
        Name::ZDiffStore => (Op::Diff, true, false),
        Name::ZInterCard => (Op::Inter, false, true),
        _ => unreachable!("{name:?} is not a sorted-set command"),
    };
    let at = if store { 2 } else { 1 };
    let n = integer(a.arg(at))?;
    if n < 1 {
        return Err(Fail::Said(format!(
            "ERR at least 1 input key is needed for '{}' command",
            name.facts().name
        )));
    }
    if n > (a.count() - at - 1) as i64 {
        return Err(Fail::Err(SYNTAX));
    }
    let n = n as usize;
    let keys: Vec<&[u8]> = a.from(at + 1).take(n).collect();
    let srcs = take_all(cx, &keys)?;
    let result = options(a, at + 1 + n, n, op, store, card).map(|o| {
        let ordered = in_order(&srcs, &keys, &o.weights, op);
        (compute(op, &ordered, o.aggregate, card, o.limit), o)
    });
    // The sources go back before anything is stored or answered.
    let done = match result {
        Err(e) => Err(e),
        Ok((Computed::Count(c), _)) => {
            reply::int(out, c as i64);
            Ok(())
        }
        Ok((Computed::Set(z), o)) if !store => {
            reply::array(out, z.len() * if o.withscores { 2 } else { 1 });
            for (m, s) in z.iter() {
                reply::bulk(out, m);
                if o.withscores {
                    bulk_double(out, s);
                }
            }
            Ok(())
        }
        Ok((Computed::Set(z), _)) => {
            put_all(cx, srcs);
            stored(cx, a.arg(1), kept_zeros(z), out);
            return Ok(());
        }
    };
    put_all(cx, srcs);
    done
}

/// The options from argument `j`, as Redis reads them.
fn options(
    a: &Args,
    mut j: usize,
    n: usize,
    op: Op,
    store: bool,
    card: bool,
) -> Result<Opts, Fail> {
    let mut o = Opts {
        weights: vec![1.0; n],
        aggregate: Aggregate::Sum,
        withscores: false,
        limit: 0,
    };
    let weighs = op != Op::Diff && !card;
    while j < a.count() {
        let left = a.count() - j;
        if weighs && left > n && is(a, j, "weights") {
            for (i, w) in a.from(j + 1).take(n).enumerate() {
                o.weights[i] =
                    float::string2d(w).ok_or(Fail::Err("ERR weight value is not a float"))?;
            }
            j += 1 + n;
        } else if weighs && left >= 2 && is(a, j, "aggregate") {
            o.aggregate = match a.arg(j + 1).to_ascii_lowercase().as_slice() {
                b"sum" => Aggregate::Sum,
                b"min" => Aggregate::Min,
                b"max" => Aggregate::Max,
                _ => return Err(Fail::Err(SYNTAX)),
            };
            j += 2;
        } else if !store && !card && is(a, j, "withscores") {
            o.withscores = true;
            j += 1;
        } else if card && left >= 2 && is(a, j, "limit") {
            o.limit = serverlab_proto::resp::number::parse_i64(a.arg(j + 1))
                .and_then(|l| usize::try_from(l).ok())
                .ok_or(Fail::Err("ERR LIMIT can't be negative"))?;
            j += 2;
        } else {
            return Err(Fail::Err(SYNTAX));
        }
    }
    Ok(o)
}

/// The sources under `keys`, each key taken once (the first time it is
/// named); a key of another type puts back what was taken and is
/// WRONGTYPE.
fn take_all(cx: &Running, keys: &[&[u8]]) -> Result<Taken, Fail> {
    let mut taken: Taken = Vec::new();
    let mut seen: HashMap<&[u8], ()> = HashMap::with_capacity(keys.len());
    for k in keys {
        if seen.insert(k, ()).is_some() {
            continue;
        }
        let src = match cx.store().take(k) {
            None => Src::None,
            Some(Value::Coll(Coll::ZSet(z))) => Src::Z(z),
            Some(Value::Coll(Coll::Set(s))) => Src::S(s),
            Some(other) => {
                cx.store().put(k, other);
                put_all(cx, taken);
                return Err(Fail::WrongType);
            }
        };
        taken.push(((*k).into(), src));
    }
    Ok(taken)
}

/// Puts the sources back as they were.
fn put_all(cx: &Running, taken: Taken) {
    for (k, src) in taken {
        match src {
            Src::Z(z) => cx.store().put(&k, Value::Coll(Coll::ZSet(z))),
            Src::S(s) => cx.store().put(&k, Value::Coll(Coll::Set(s))),
            Src::None => {}
        }
    }
}

/// Each named source with its weight, in the order Redis combines them:
/// by size from the smallest (ZDIFF: the first, then the others).
fn in_order<'s>(
    srcs: &'s [(Box<[u8]>, Src)],
    keys: &[&[u8]],
    weights: &[f64],
    op: Op,
) -> Vec<(&'s Src, f64)> {
    let by_key: HashMap<&[u8], &Src> = srcs.iter().map(|(k, s)| (&**k, s)).collect();
    let mut all: Vec<(&Src, f64)> = keys
        .iter()
        .zip(weights)
        .map(|(k, w)| (by_key[k], *w))
        .collect();
    match op {
        Op::Diff => all[1..].sort_by_key(|(s, _)| std::cmp::Reverse(s.len())),
        _ => all.sort_by_key(|(s, _)| s.len()),
    }
    all
}

enum Computed {
    Set(ZSet),
    Count(usize),
}

/// A stored result's `-0` scores as `0`, as ZADD keeps them (see
/// `zsets::kept`: Redis's listpack reads `-0` back as `0`); answered,
/// not stored, they stay `-0`, as Redis answers them.
fn kept_zeros(z: ZSet) -> ZSet {
    let negative_zero = |s: f64| s == 0.0 && s.is_sign_negative();
    if !z.iter().any(|(_, s)| negative_zero(s)) {
        return z;
    }
    let mut out = ZSet::default();
    for (m, s) in z.iter() {
        out.insert(m, super::zsets::kept(s));
    }
    out
}

/// A weighted score as Redis takes it from a union's sources and an
/// intersection's first: a NaN product (0 × inf) is 0.
fn weighted(w: f64, s: f64) -> f64 {
    let v = w * s;
    if v.is_nan() {
        0.0
    } else {
        v
    }
}

/// The union, intersection or difference of `srcs` (in [`in_order`]'s
/// order); `card`: only the intersection's size, up to `limit` (0: none).
fn compute(op: Op, srcs: &[(&Src, f64)], agg: Aggregate, card: bool, limit: usize) -> Computed {
    let mut z = ZSet::default();
    let mut count = 0;
    match op {
        Op::Inter => {
            let (first, rest) = srcs.split_first().expect("a key");
            if rest.iter().any(|(s, _)| s.len() == 0) {
                return if card {
                    Computed::Count(0)
                } else {
                    Computed::Set(z)
                };
            }
            'each: for (m, s) in first.0.each() {
                let mut score = weighted(first.1, s);
                for (other, w) in rest {
                    let Some(o) = other.score(m) else {
                        continue 'each;
                    };
                    // Unlike the first's, these products are not made 0
                    // when NaN: a NaN sum is 0, a NaN is no MIN or MAX.
                    agg.add(&mut score, w * o);
                }
                if card {
                    count += 1;
                    if count == limit {
                        break;
                    }
                } else {
                    z.insert(m, score);
                }
            }
        }
        Op::Union => {
            let mut acc: HashMap<&[u8], f64> = HashMap::new();
            for (src, w) in srcs {
                for (m, s) in src.each() {
                    let v = weighted(*w, s);
                    acc.entry(m).and_modify(|t| agg.add(t, v)).or_insert(v);
                }
            }
            for (m, s) in acc {
                z.insert(m, s);
            }
        }
        Op::Diff => {
            let (first, rest) = srcs.split_first().expect("a key");
            for (m, s) in first.0.each() {
                if rest.iter().all(|(o, _)| o.score(m).is_none()) {
                    z.insert(m, s);
                }
            }
        }
    }
    if card {
        Computed::Count(count)
    } else {
        Computed::Set(z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zset(items: &[(&str, f64)]) -> Src {
        let mut z = ZSet::default();
        for (m, s) in items {
            z.insert(m.as_bytes(), *s);
        }
        Src::Z(z)
    }

    fn set(items: &[&str]) -> Src {
        Src::S(items.iter().map(|m| m.as_bytes().into()).collect())
    }

    fn shown(c: Computed) -> String {
        match c {
            Computed::Count(n) => n.to_string(),
            Computed::Set(z) => z
                .iter()
                .map(|(m, s)| format!("{}={s}", std::str::from_utf8(m).unwrap()))
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    #[test]
    fn scores_combine_as_redis_combines_them() {
        let (a, b) = (
            zset(&[("x", 1.0), ("y", 2.0)]),
            zset(&[("y", 10.0), ("z", 3.0)]),
        );
        let s = set(&["x", "z"]);
        let both = [(&a, 1.0), (&b, 1.0)];
        assert_eq!(
            shown(compute(Op::Union, &both, Aggregate::Sum, false, 0)),
            "x=1,z=3,y=12"
        );
        assert_eq!(
            shown(compute(Op::Inter, &both, Aggregate::Max, false, 0)),
            "y=10"
        );
        assert_eq!(
            shown(compute(Op::Inter, &both, Aggregate::Min, false, 0)),
            "y=2"
        );
        assert_eq!(
            shown(compute(Op::Diff, &both, Aggregate::Sum, false, 0)),
            "x=1"
        );
        // A set's members score 1, weighted.
        let with_set = [(&a, 1.0), (&s, 5.0)];
        assert_eq!(
            shown(compute(Op::Union, &with_set, Aggregate::Sum, false, 0)),
            "y=2,z=5,x=6"
        );
        // inf × 0 is 0, inf + -inf is 0 (NaN counts 0).
        let inf = zset(&[("x", f64::INFINITY)]);
        assert_eq!(
            shown(compute(Op::Union, &[(&inf, 0.0)], Aggregate::Sum, false, 0)),
            "x=0"
        );
        let ninf = zset(&[("x", f64::NEG_INFINITY)]);
        let opposite = [(&inf, 1.0), (&ninf, 1.0)];
        assert_eq!(
            shown(compute(Op::Union, &opposite, Aggregate::Sum, false, 0)),
            "x=0"
        );
        // In an intersection, only the first source's NaN product is 0:
        // a later one makes a sum 0 and is no MIN.
        let one = zset(&[("x", 1.0)]);
        let nan_later = [(&one, 1.0), (&inf, 0.0)];
        assert_eq!(
            shown(compute(Op::Inter, &nan_later, Aggregate::Sum, false, 0)),
            "x=0"
        );
        assert_eq!(
            shown(compute(Op::Inter, &nan_later, Aggregate::Min, false, 0)),
            "x=1"
        );
        let nan_first = [(&inf, 0.0), (&one, 1.0)];
        assert_eq!(
            shown(compute(Op::Inter, &nan_first, Aggregate::Sum, false, 0)),
            "x=1"
        );
        // An empty (missing) source empties an intersection; ZINTERCARD
        // stops at its limit.
        let none = Src::None;
        assert_eq!(
            shown(compute(
                Op::Inter,
                &[(&a, 1.0), (&none, 1.0)],
                Aggregate::Sum,
                false,
                0
            )),
            ""
        );
        let same = [(&a, 1.0), (&a, 1.0)];
        assert_eq!(
            shown(compute(Op::Inter, &same, Aggregate::Sum, true, 0)),
            "2"
        );
        assert_eq!(
            shown(compute(Op::Inter, &same, Aggregate::Sum, true, 1)),
            "1"
        );
    }
}
