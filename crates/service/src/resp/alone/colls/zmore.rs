//! The rest of the sorted-set commands on one key: ZCOUNT, ZLEXCOUNT,
//! ZRANK, ZREVRANK, ZMSCORE, ZRANDMEMBER, ZREMRANGEBYRANK,
//! ZREMRANGEBYSCORE, ZREMRANGEBYLEX; ZMPOP and the blocking pops
//! (BZPOPMIN, BZPOPMAX, BZMPOP: a try, which waits as the list pops wait,
//! see [`crate::resp::blocking`]); and the end every ZSTORE
//! shares (ZRANGESTORE, ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE), as Redis
//! 7.0.15 answers them. Arguments are read, and their errors answered,
//! before the key is looked at, in Redis's order.

use super::zsets::{
    by_lex, by_rank, by_score, lex_range, put_back, score_range, window, Items, Scores,
};
use super::{bulk_double, integer, is, put, read, take, undo, Done, Fail, SYNTAX};
use crate::resp::alone::lists::{nothing_to_pop, timeout_error};
use crate::resp::alone::Running;
use crate::resp::Args;
use serverlab_proto::resp::number::parse_i64;
use serverlab_proto::resp::{reply, Name};
use serverlab_store::resp::ZSet;

pub(super) fn run(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let key = a.arg(1);
    match name {
        Name::ZCount => {
            let (min, max) = score_range(a.arg(2), a.arg(3))?;
            count(cx, key, out, |z| by_score(z, min, max, false).count())
        }
        Name::ZLexCount => {
            let (min, max) = lex_range(a.arg(2), a.arg(3))?;
            count(cx, key, out, |z| by_lex(z, min, max, false).count())
        }
        Name::ZRank | Name::ZRevRank => Ok(read(cx, key, |z: Option<&ZSet>| {
            let m = a.arg(2);
            let rank = z.and_then(|z| {
                z.score(m)?;
                let r = z.iter().position(|(x, _)| x == m).expect("a member");
                Some(if name == Name::ZRank {
                    r
                } else {
                    z.len() - 1 - r
                })
            });
            match rank {
                Some(r) => reply::int(out, r as i64),
                None => reply::null(out),
            }
        })?),
        Name::ZMScore => Ok(read(cx, key, |z: Option<&ZSet>| {
            reply::array(out, a.count() - 2);
            for m in a.from(2) {
                match z.and_then(|z| z.score(m)) {
                    Some(s) => bulk_double(out, s),
                    None => reply::null(out),
                }
            }
        })?),
        Name::ZRandMember => zrandmember(a, cx, out),
        Name::ZRemRangeByRank | Name::ZRemRangeByScore | Name::ZRemRangeByLex => {
            zremrange(name, a, cx, out)
        }
        Name::ZMPop => zmpop(a, cx, out, 1),
        Name::BZMPop => zmpop(a, cx, out, 2),
        Name::BZPopMin | Name::BZPopMax => bzpop(name, a, cx, out),
        _ => super::zsetops::run(name, a, cx, out),
    }
}

/// How many members of the key's sorted set `f` counts (0: no key).
fn count(cx: &Running, key: &[u8], out: &mut Vec<u8>, f: impl FnOnce(&ZSet) -> usize) -> Done {
    let n = read(cx, key, |z: Option<&ZSet>| z.map_or(0, f))?;
    reply::int(out, n as i64);
    Ok(())
}

/// ZREMRANGEBYRANK key start stop, ZREMRANGEBYSCORE key min max,
/// ZREMRANGEBYLEX key min max: the members in range removed, counted.
fn zremrange(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let key = a.arg(1);
    let (lo, hi) = (a.arg(2), a.arg(3));
    // The range read first, as Redis reads it.
    enum R<'a> {
        Rank(i64, i64),
        Score(super::zsets::ScoreEnd, super::zsets::ScoreEnd),
        Lex(super::zsets::LexEnd<'a>, super::zsets::LexEnd<'a>),
    }
    let range = match name {
        Name::ZRemRangeByRank => R::Rank(integer(lo)?, integer(hi)?),
        Name::ZRemRangeByScore => {
            let (min, max) = score_range(lo, hi)?;
            R::Score(min, max)
        }
        _ => {
            let (min, max) = lex_range(lo, hi)?;
            R::Lex(min, max)
        }
    };
    let Some(mut z) = take::<ZSet>(cx, key)? else {
        reply::int(out, 0);
        return Ok(());
    };
    let gone: Vec<(Box<[u8]>, f64)> = {
        let items: Items = match range {
            R::Rank(start, end) => by_rank(&z, start, end, false),
            R::Score(min, max) => window(by_score(&z, min, max, false), 0, -1),
            R::Lex(min, max) => window(by_lex(&z, min, max, false), 0, -1),
        };
        items.into_iter().map(|(m, s)| (m.into(), s)).collect()
    };
    for (m, _) in &gone {
        z.remove(m);
    }
    put(cx, key, z);
    let n = gone.len();
    if n > 0 {
        cx.log_input();
        let was: Scores = gone.into_iter().map(|(m, s)| (m, Some(s))).collect();
        undo(cx, key, move |z: &mut ZSet| put_back(z, was));
    }
    reply::int(out, n as i64);
    Ok(())
}

/// Redis's `getRangeLongFromObjectOrReply` with a message: `arg` as a
/// number from 1 up, or the error `msg` (for one that is no number, too).
fn at_least_one(arg: &[u8], msg: &'static str) -> Result<usize, Fail> {
    parse_i64(arg)
        .filter(|n| *n >= 1)
        .map(|n| n as usize)
        .ok_or(Fail::Err(msg))
}

/// ZMPOP numkeys key… MIN|MAX [COUNT count] (BZMPOP timeout numkeys
/// …: `at`, where numkeys is, 2): up to `count` members from the first
/// of the keys that holds a sorted set, as `[key, [[member, score]…]]`
/// (a null array when none does, or BZMPOP waits). Logged as the
/// ZPOPMIN or ZPOPMAX it came to, as Redis propagates it.
fn zmpop(a: &Args, cx: &mut Running, out: &mut Vec<u8>, at: usize) -> Done {
    let numkeys = at_least_one(a.arg(at), "ERR numkeys should be greater than 0")?;
    let w = numkeys.saturating_add(at + 1);
    if w >= a.count() {
        return Err(Fail::Err(SYNTAX));
    }
    let max = if is(a, w, "max") {
        true
    } else if is(a, w, "min") {
        false
    } else {
        return Err(Fail::Err(SYNTAX));
    };
    let mut count = None;
    let mut j = w + 1;
    while j < a.count() {
        if count.is_none() && is(a, j, "count") && j + 1 < a.count() {
            count = Some(at_least_one(
                a.arg(j + 1),
                "ERR count should be greater than 0",
            )?);
            j += 2;
        } else {
            return Err(Fail::Err(SYNTAX));
        }
    }
    let blocks = at == 2;
    if blocks {
        if let Some(e) = timeout_error(a.arg(1)) {
            return Err(Fail::Err(e));
        }
    }
    let keys: Vec<&[u8]> = a.from(at + 1).take(numkeys).collect();
    match first_zset(cx, &keys)? {
        Some((key, z)) => {
            reply::array(out, 2);
            reply::bulk(out, key);
            pop(cx, key, z, max, Some(count.unwrap_or(1)), true, out);
        }
        None if blocks => nothing_to_pop(Name::BZMPop, cx, out),
        None => reply::null_array(out),
    }
    Ok(())
}

/// BZPOPMIN key… timeout (BZPOPMAX): the lowest (highest) member of the
/// first key that holds a sorted set, as `[key, member, score]`; else it
/// waits. Logged as the ZPOPMIN (ZPOPMAX) it came to.
fn bzpop(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    if let Some(e) = timeout_error(a.arg(a.count() - 1)) {
        return Err(Fail::Err(e));
    }
    let keys: Vec<&[u8]> = a.from(1).take(a.count() - 2).collect();
    match first_zset(cx, &keys)? {
        Some((key, z)) => {
            reply::array(out, 3);
            reply::bulk(out, key);
            pop(cx, key, z, name == Name::BZPopMax, None, false, out);
        }
        None => nothing_to_pop(name, cx, out),
    }
    Ok(())
}

/// The first of `keys` that holds a sorted set, taken out; WRONGTYPE for
/// a key of another type before it (as Redis looks, in order).
fn first_zset<'k>(cx: &Running, keys: &[&'k [u8]]) -> Result<Option<(&'k [u8], ZSet)>, Fail> {
    for key in keys {
        if let Some(z) = take::<ZSet>(cx, key)? {
            return Ok(Some((key, z)));
        }
    }
    Ok(None)
}

/// Pops from `z` (put back under `key` after): `count` members (`None`:
/// one, its member and score answered flat), as `[member, score]` pairs
/// (`nested`) or flat; logged as ZPOPMIN/ZPOPMAX key [count].
fn pop(
    cx: &mut Running,
    key: &[u8],
    mut z: ZSet,
    max: bool,
    count: Option<usize>,
    nested: bool,
    out: &mut Vec<u8>,
) {
    let n = count.unwrap_or(1).min(z.len());
    if count.is_some() {
        reply::array(out, n);
    }
    let mut popped: Scores = Vec::with_capacity(n);
    for _ in 0..n {
        let (m, s) = if max { z.pop_max() } else { z.pop_min() }.expect("within the count");
        if nested {
            reply::array(out, 2);
        }
        reply::bulk(out, &m);
        bulk_double(out, s);
        popped.push((m, Some(s)));
    }
    put(cx, key, z);
    let name: &[u8] = if max { b"ZPOPMAX" } else { b"ZPOPMIN" };
    match count {
        Some(_) => cx.log(&[name, key, n.to_string().as_bytes()]),
        None => cx.log(&[name, key]),
    }
    undo(cx, key, move |z: &mut ZSet| put_back(z, popped));
}

/// ZRANDMEMBER key [count [WITHSCORES]], as HRANDFIELD's counts (a
/// negative count may repeat, bounded as SRANDMEMBER's).
fn zrandmember(a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    if a.count() == 2 {
        return Ok(read(cx, a.arg(1), |z: Option<&ZSet>| match z {
            Some(z) => reply::bulk(
                out,
                z.iter()
                    .nth(fastrand::usize(..z.len()))
                    .expect("a member")
                    .0,
            ),
            None => reply::null(out),
        })?);
    }
    let l = super::random_count(a.arg(2))?;
    let withscores = a.count() == 4;
    if a.count() > 4 || (withscores && !is(a, 3, "withscores")) {
        return Err(Fail::Err(SYNTAX));
    }
    if withscores && !(-i64::MAX / 2..=i64::MAX / 2).contains(&l) {
        return Err(Fail::Err("ERR value is out of range"));
    }
    let count = usize::try_from(l.unsigned_abs()).unwrap_or(usize::MAX);
    let bound = cx.svc.limits.max_query;
    Ok(read(cx, a.arg(1), |z: Option<&ZSet>| {
        let Some(z) = z.filter(|_| count > 0) else {
            return reply::array(out, 0);
        };
        let all: Items = z.iter().collect();
        if l < 0 {
            return picks(&all, count, withscores, bound, out);
        }
        let items: Items = if count >= all.len() {
            all
        } else {
            let mut picked = fastrand::choose_multiple(all, count);
            fastrand::shuffle(&mut picked);
            picked
        };
        each(out, &items, withscores);
    })?)
}

/// The least bytes one member takes in a reply (`$0\r\n\r\n`).
const LEAST_BULK: usize = 6;

/// `count` picks that may repeat; a reply that would pass `bound`
/// (`--max-query`) bytes is an error instead (docs/protocols/resp.md).
fn picks(all: &Items, count: usize, withscores: bool, bound: usize, out: &mut Vec<u8>) {
    let per = if withscores { 2 } else { 1 };
    if count > bound / (LEAST_BULK * per) {
        return crate::resp::too_large(out, bound);
    }
    let from = out.len();
    reply::array(out, count * per);
    for _ in 0..count {
        let (m, s) = all[fastrand::usize(..all.len())];
        reply::bulk(out, m);
        if withscores {
            bulk_double(out, s);
        }
        if crate::resp::past(out, from, bound) {
            return;
        }
    }
}

/// `items` as an array of members (and their scores).
fn each(out: &mut Vec<u8>, items: &Items, withscores: bool) {
    reply::array(out, items.len() * if withscores { 2 } else { 1 });
    for (m, s) in items {
        reply::bulk(out, m);
        if withscores {
            bulk_double(out, *s);
        }
    }
}

/// A ZSTORE's end: [`super::stored`].
pub(super) fn stored(cx: &mut Running, dst: &[u8], result: ZSet, out: &mut Vec<u8>) {
    let n = result.len();
    super::stored(cx, dst, result, n, out);
}
