//! Sets: SADD, SREM, SISMEMBER, SMISMEMBER, SMEMBERS, SCARD, SPOP,
//! SRANDMEMBER, SMOVE (the set algebra is in `setops`).

use super::{bulks, positive, put, read, take, undo, Done, Fail, Set, SYNTAX};
use crate::resp::alone::Running;
use crate::resp::Args;
use serverlab_proto::resp::number::parse_i64;
use serverlab_proto::resp::{reply, Name};

/// Redis keeps a set of at most this many integers as an intset, whose
/// members it answers in ascending order (`set-max-intset-entries`).
const INTSET_MAX: usize = 512;

/// Members per `SREM` in what SPOP logs.
const SREM_CHUNK: usize = 1024;

pub(super) fn run(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let key = a.arg(1);
    match name {
        Name::SAdd => sadd(a, cx, out),
        Name::SRem => srem(a, cx, out),
        Name::SIsMember => {
            let member = a.arg(2);
            let has = read(cx, key, |s: Option<&Set>| {
                s.is_some_and(|s| s.contains(member))
            })?;
            reply::int(out, i64::from(has));
            Ok(())
        }
        Name::SMIsMember => Ok(read(cx, key, |s: Option<&Set>| {
            reply::array(out, a.count() - 2);
            for m in a.from(2) {
                reply::int(out, i64::from(s.is_some_and(|s| s.contains(m))));
            }
        })?),
        Name::SMove => smove(a, cx, out),
        Name::SMembers => Ok(read(cx, key, |s: Option<&Set>| match s {
            Some(s) => bulks(out, members(s).into_iter()),
            None => reply::array(out, 0),
        })?),
        Name::SCard => {
            let n = read(cx, key, |s: Option<&Set>| s.map_or(0, Set::len))?;
            reply::int(out, n as i64);
            Ok(())
        }
        Name::SPop => match a.count() {
            3 => spop_count(a, cx, out),
            n if n > 3 => Err(Fail::Err(SYNTAX)),
            _ => spop(a, cx, out),
        },
        Name::SRandMember => match a.count() {
            3 => srandmember_count(a, cx, out),
            n if n > 3 => Err(Fail::Err(SYNTAX)),
            _ => Ok(read(cx, key, |s: Option<&Set>| match s {
                Some(s) => reply::bulk(out, any(s)),
                None => reply::null(out),
            })?),
        },
        _ => unreachable!("{name:?} is not a set command"),
    }
}

/// A set's members in the order Redis 7.0 answers them: at most 512
/// integers (an intset there) ascending, any other set as it is kept.
pub(super) fn members(s: &Set) -> Vec<&[u8]> {
    let all: Vec<&[u8]> = s.iter().map(|m| &**m).collect();
    if all.len() > INTSET_MAX {
        return all;
    }
    let numbers: Option<Vec<i64>> = all.iter().map(|m| parse_i64(m)).collect();
    match numbers {
        Some(numbers) => {
            let mut pairs: Vec<(i64, &[u8])> = numbers.into_iter().zip(all).collect();
            pairs.sort_unstable_by_key(|p| p.0);
            pairs.into_iter().map(|p| p.1).collect()
        }
        None => all,
    }
}

/// A member picked at random (the set is not empty: an empty set is no
/// key).
fn any(s: &Set) -> &[u8] {
    s.iter().nth(fastrand::usize(..s.len())).expect("a member")
}

fn sadd(a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let key = a.arg(1);
    let mut s = take::<Set>(cx, key)?.unwrap_or_default();
    let mut added: Vec<Box<[u8]>> = Vec::new();
    let mut n = 0;
    for m in a.from(2) {
        if !s.contains(m) {
            s.insert(m.into());
            n += 1;
            if cx.keeps() {
                added.push(m.into());
            }
        }
    }
    put(cx, key, s);
    if n > 0 {
        cx.log_input();
        let planted = crate::sim::planted(crate::sim::Mutant::SkipSetUndo);
        undo(cx, key, move |s: &mut Set| {
            if planted {
                return;
            }
            added.iter().for_each(|m| {
                s.remove(m);
            })
        });
    }
    let added = n;
    reply::int(out, added);
    Ok(())
}

fn srem(a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let key = a.arg(1);
    let Some(mut s) = take::<Set>(cx, key)? else {
        reply::int(out, 0);
        return Ok(());
    };
    let removed: Vec<Box<[u8]>> = a.from(2).filter_map(|m| s.take(m)).collect();
    put(cx, key, s);
    let n = removed.len();
    if n > 0 {
        cx.log_input();
        undo(cx, key, move |s: &mut Set| s.extend(removed));
    }
    reply::int(out, n as i64);
    Ok(())
}

/// SMOVE source destination member: 1 when the member was in the source
/// (then in the destination, made if absent), else 0. A missing source
/// is 0 whatever the destination holds; either key of another type is
/// WRONGTYPE; a set moved to itself is left as it was (1 if the member is
/// in it), as Redis's.
fn smove(a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let (src, dst, m) = (a.arg(1), a.arg(2), a.arg(3));
    let Some(mut from) = take::<Set>(cx, src)? else {
        reply::int(out, 0);
        return Ok(());
    };
    let wrong_dst = read(cx, dst, |_: Option<&Set>| ()).is_err();
    if wrong_dst || src == dst || !from.contains(m) {
        let has = from.contains(m) && !wrong_dst;
        put(cx, src, from);
        if wrong_dst {
            return Err(Fail::WrongType);
        }
        reply::int(out, i64::from(has));
        return Ok(());
    }
    from.remove(m);
    put(cx, src, from);
    let member: Box<[u8]> = m.into();
    let back = member.clone();
    undo(cx, src, move |s: &mut Set| {
        s.insert(back);
    });
    let mut to = take::<Set>(cx, dst)?.unwrap_or_default();
    if to.insert(member.clone()) {
        undo(cx, dst, move |s: &mut Set| {
            s.remove(&member);
        });
    } else {
        cx.spare(dst);
    }
    put(cx, dst, to);
    cx.log_input();
    reply::int(out, 1);
    Ok(())
}

/// SPOP key: one random member, logged as its SREM.
fn spop(a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let key = a.arg(1);
    let Some(mut s) = take::<Set>(cx, key)? else {
        reply::null(out);
        return Ok(());
    };
    let m: Box<[u8]> = any(&s).into();
    s.remove(&m);
    put(cx, key, s);
    cx.log(&[b"SREM", key, &m]);
    reply::bulk(out, &m);
    undo(cx, key, move |s: &mut Set| {
        s.insert(m);
    });
    Ok(())
}

/// SPOP key count: that many distinct members at random (the whole set
/// if it has no more, logged as DEL), else logged as their SREMs.
fn spop_count(a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let count = positive(a.arg(2))?;
    let key = a.arg(1);
    let Some(mut s) = take::<Set>(cx, key)? else {
        reply::array(out, 0);
        return Ok(());
    };
    if count == 0 {
        put(cx, key, s);
        reply::array(out, 0);
        return Ok(());
    }
    if count >= s.len() {
        // The key is gone: `s` is not put back.
        bulks(out, members(&s).into_iter());
        cx.log(&[b"DEL", key]);
        undo(cx, key, move |was: &mut Set| *was = s);
        return Ok(());
    }
    let mut popped: Vec<Box<[u8]>> = fastrand::choose_multiple(s.iter(), count)
        .into_iter()
        .cloned()
        .collect();
    fastrand::shuffle(&mut popped);
    for m in &popped {
        s.remove(m);
    }
    put(cx, key, s);
    for chunk in popped.chunks(SREM_CHUNK) {
        let mut args: Vec<&[u8]> = vec![b"SREM", key];
        args.extend(chunk.iter().map(|m| &**m));
        cx.log(&args);
    }
    bulks(out, popped.iter().map(|m| &**m));
    undo(cx, key, move |s: &mut Set| s.extend(popped));
    Ok(())
}

/// SRANDMEMBER key count: distinct members (count > 0), or `-count`
/// picks that may repeat.
fn srandmember_count(a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let l = super::random_count(a.arg(2))?;
    let count = usize::try_from(l.unsigned_abs()).unwrap_or(usize::MAX);
    let unique = l > 0;
    let bound = cx.svc.limits.max_query;
    Ok(read(cx, a.arg(1), |s: Option<&Set>| {
        let Some(s) = s.filter(|_| count > 0) else {
            return reply::array(out, 0);
        };
        if !unique || count == 1 {
            picks(s, count, bound, out);
        } else if count >= s.len() {
            bulks(out, members(s).into_iter());
        } else {
            let mut picked = fastrand::choose_multiple(s.iter().map(|m| &**m), count);
            fastrand::shuffle(&mut picked);
            bulks(out, picked.into_iter());
        }
    })?)
}

/// Each pick's reply is at least this long (`$0\r\n\r\n`).
const LEAST_BULK: usize = 6;

/// SRANDMEMBER's `count` picks that may repeat: a reply the count sizes,
/// not the set, so it is bounded (docs/protocols/resp.md): one that
/// would pass `bound` (`--max-query`) bytes is refused with an error
/// instead, before it is made when the count alone passes it, or as
/// soon as it does (what was made is dropped).
fn picks(s: &Set, count: usize, bound: usize, out: &mut Vec<u8>) {
    if count > bound / LEAST_BULK {
        return crate::resp::too_large(out, bound);
    }
    let all: Vec<&[u8]> = s.iter().map(|m| &**m).collect();
    let from = out.len();
    reply::array(out, count);
    for _ in 0..count {
        reply::bulk(out, all[fastrand::usize(..all.len())]);
        if crate::resp::past(out, from, bound) {
            return;
        }
    }
}
