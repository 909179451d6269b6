//! The set algebra: SINTER, SINTERCARD, SINTERSTORE, SUNION,
//! SUNIONSTORE, SDIFF, SDIFFSTORE, as Redis 7.0 answers them.
//!
//! Every key named is looked at before anything is computed: one of
//! another type is WRONGTYPE (wherever it is among them), a missing one
//! an empty set. The sets are moved out of the store while the result is
//! computed and put back as they were (a key named twice is moved once).
//! A STORE puts the result under its destination as a set, replacing
//! whatever was there and its deadline (an empty result deletes it), and
//! is logged as it arrived when it changed anything.

use super::sets::members;
use super::{bulks, take, Done, Fail, Set};
use crate::resp::alone::Running;
use crate::resp::Args;
use serverlab_proto::resp::number::parse_i64;
use serverlab_proto::resp::{reply, Name};
use std::collections::HashSet;

/// What a command computes of its sets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Inter,
    Union,
    Diff,
    /// An empty result (a difference with its first set among the
    /// others), once the keys' types are checked.
    Nothing,
}

pub(super) fn run(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let keys = |from: usize| a.from(from).collect::<Vec<_>>();
    let (op, store) = match name {
        Name::SInter => (Op::Inter, false),
        Name::SInterStore => (Op::Inter, true),
        Name::SUnion => (Op::Union, false),
        Name::SUnionStore => (Op::Union, true),
        Name::SDiff => (Op::Diff, false),
        Name::SDiffStore => (Op::Diff, true),
        Name::SInterCard => return sintercard(a, cx, out),
        _ => unreachable!("{name:?} is not a set operation"),
    };
    let keys = keys(if store { 2 } else { 1 });
    // SDIFF of a set less itself is empty, as Redis's `sameset`.
    let op = match op {
        Op::Diff if keys[1..].contains(&keys[0]) => Op::Nothing,
        op => op,
    };
    if store {
        let result = with_sets(cx, &keys, |sets| compute(op, sets))?;
        let n = result.len();
        super::stored(cx, a.arg(1), result, n, out);
    } else {
        with_sets(cx, &keys, |sets| {
            let result = compute(op, sets);
            bulks(out, members(&result).into_iter());
        })?;
    }
    Ok(())
}

/// SINTERCARD numkeys key… [LIMIT limit]: the size of the intersection,
/// counted up to `limit` (0: no limit).
fn sintercard(a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let numkeys = parse_i64(a.arg(1))
        .filter(|n| *n >= 1)
        .ok_or(Fail::Err("ERR numkeys should be greater than 0"))? as usize;
    if numkeys > a.count() - 2 {
        return Err(Fail::Err(
            "ERR Number of keys can't be greater than number of args",
        ));
    }
    let mut limit = 0usize;
    let mut j = 2 + numkeys;
    while j < a.count() {
        if a.arg(j).eq_ignore_ascii_case(b"LIMIT") && j + 1 < a.count() {
            limit = parse_i64(a.arg(j + 1))
                .and_then(|n| usize::try_from(n).ok())
                .ok_or(Fail::Err("ERR LIMIT can't be negative"))?;
            j += 2;
        } else {
            return Err(Fail::Err(super::SYNTAX));
        }
    }
    let keys: Vec<&[u8]> = a.from(2).take(numkeys).collect();
    let n = with_sets(cx, &keys, |sets| {
        let Some(sets) = present(sets) else {
            return 0;
        };
        let (first, rest) = sets.split_first().expect("a key");
        let mut n = 0;
        for m in first.iter() {
            if rest.iter().all(|s| s.contains(m)) {
                n += 1;
                if n == limit {
                    break;
                }
            }
        }
        n
    })?;
    reply::int(out, n as i64);
    Ok(())
}

/// `f` of the sets under `keys` (`None`: no such key), each key once, in
/// the order each first appears. They are moved out of the store for it
/// and put back after, unchanged; a key of another type is WRONGTYPE, and
/// nothing is computed.
fn with_sets<R>(
    cx: &Running,
    keys: &[&[u8]],
    f: impl FnOnce(&[Option<&Set>]) -> R,
) -> Result<R, Fail> {
    // Each key once, found by hash: a request may name a million keys.
    let mut seen: HashSet<&[u8]> = HashSet::with_capacity(keys.len());
    let mut taken: Vec<(&[u8], Option<Set>)> = Vec::new();
    let mut wrong = false;
    for k in keys {
        if !seen.insert(k) {
            continue;
        }
        match take::<Set>(cx, k) {
            Ok(s) => taken.push((k, s)),
            Err(_) => {
                wrong = true;
                break;
            }
        }
    }
    let result = (!wrong).then(|| {
        let sets: Vec<Option<&Set>> = taken.iter().map(|(_, s)| s.as_ref()).collect();
        f(&sets)
    });
    for (k, s) in taken {
        if let Some(s) = s {
            super::put(cx, k, s);
        }
    }
    result.ok_or(Fail::WrongType)
}

/// The sets, smallest first, if every one is there (an intersection with
/// a missing one is empty).
fn present<'s>(sets: &[Option<&'s Set>]) -> Option<Vec<&'s Set>> {
    let mut all: Vec<&Set> = sets.iter().copied().collect::<Option<_>>()?;
    all.sort_by_key(|s| s.len());
    Some(all)
}

/// The intersection, union or difference (the first set less the others)
/// of `sets` (`None`: an empty set).
fn compute(op: Op, sets: &[Option<&Set>]) -> Set {
    match op {
        Op::Inter => {
            let Some(sets) = present(sets) else {
                return Set::new();
            };
            let (first, rest) = sets.split_first().expect("a key");
            first
                .iter()
                .filter(|m| rest.iter().all(|s| s.contains(*m)))
                .cloned()
                .collect()
        }
        Op::Union => {
            let mut all = Set::new();
            for s in sets.iter().flatten() {
                all.extend(s.iter().cloned());
            }
            all
        }
        Op::Diff => {
            let Some(first) = sets[0] else {
                return Set::new();
            };
            let rest: Vec<&Set> = sets[1..].iter().flatten().copied().collect();
            // Redis's choice of algorithm: each of the first set's members
            // looked up in the others, or the others' members taken out
            // of a copy of it, whichever visits fewer (the first given an
            // advantage of 2).
            let lookups = first.len() * (rest.len() + 1) / 2;
            let visits = first.len() + rest.iter().map(|s| s.len()).sum::<usize>();
            if lookups <= visits {
                first
                    .iter()
                    .filter(|m| !rest.iter().any(|s| s.contains(*m)))
                    .cloned()
                    .collect()
            } else {
                let mut left = first.clone();
                for s in rest {
                    s.iter().for_each(|m| {
                        left.remove(m);
                    });
                    if left.is_empty() {
                        break;
                    }
                }
                left
            }
        }
        Op::Nothing => Set::new(),
    }
}
