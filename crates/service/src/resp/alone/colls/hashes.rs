//! Hashes: HSET, HMSET, HSETNX, HGET, HMGET, HGETALL, HKEYS, HVALS, HDEL,
//! HLEN, HSTRLEN, HINCRBY, HINCRBYFLOAT, HEXISTS, HRANDFIELD. HGETALL,
//! HKEYS and HVALS answer in the order the table keeps (Redis answers a
//! small hash in the order its fields were first set).

use super::{integer, put, read, take, undo, Done, Fail, Hash, SYNTAX};
use crate::resp::alone::strings::float80;
use crate::resp::alone::Running;
use crate::resp::Args;
use serverlab_proto::resp::number::{parse_i64, push_i64};
use serverlab_proto::resp::{reply, Name};

/// Fields as they were, in the order they were changed (`None`: absent).
type Fields = Vec<(Box<[u8]>, Option<Box<[u8]>>)>;

pub(super) fn run(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let key = a.arg(1);
    match name {
        Name::HSet | Name::HMSet => hset(name, a, cx, out),
        Name::HGet => Ok(read(cx, key, |h: Option<&Hash>| {
            match h.and_then(|h| h.get(a.arg(2))) {
                Some(v) => reply::bulk(out, v),
                None => reply::null(out),
            }
        })?),
        Name::HMGet => {
            let (from, bound) = (out.len(), cx.svc.limits.max_query);
            Ok(read(cx, key, |h: Option<&Hash>| {
                reply::array(out, a.count() - 2);
                for f in a.from(2) {
                    match h.and_then(|h| h.get(f)) {
                        Some(v) => reply::bulk(out, v),
                        None => reply::null(out),
                    }
                    if crate::resp::past(out, from, bound) {
                        return;
                    }
                }
            })?)
        }
        Name::HGetAll | Name::HKeys | Name::HVals => every(name, a, cx, out),
        Name::HStrLen => {
            let n = read(cx, key, |h: Option<&Hash>| {
                h.and_then(|h| h.get(a.arg(2))).map_or(0, |v| v.len())
            })?;
            reply::int(out, n as i64);
            Ok(())
        }
        Name::HSetNx => hsetnx(a, cx, out),
        Name::HIncrByFloat => hincrbyfloat(a, cx, out),
        Name::HRandField => hrandfield(a, cx, out),
        Name::HDel => hdel(a, cx, out),
        Name::HLen => {
            let n = read(cx, key, |h: Option<&Hash>| h.map_or(0, Hash::len))?;
            reply::int(out, n as i64);
            Ok(())
        }
        Name::HIncrBy => hincrby(a, cx, out),
        Name::HExists => {
            let has = read(cx, key, |h: Option<&Hash>| {
                h.is_some_and(|h| h.contains_key(a.arg(2)))
            })?;
            reply::int(out, i64::from(has));
            Ok(())
        }
        _ => unreachable!("{name:?} is not a hash command"),
    }
}

/// HSET (the number of new fields) and HMSET (OK): field value pairs.
fn hset(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    if a.count() % 2 == 1 {
        return Err(Fail::Said(reply::wrong_arity(name.facts().name)));
    }
    let key = a.arg(1);
    let mut h = take::<Hash>(cx, key)?.unwrap_or_default();
    let mut created = 0;
    // Each field as it was, in order (a field set twice is put back by
    // its first).
    let mut was: Fields = Vec::new();
    let mut args = a.from(2);
    while let (Some(f), Some(v)) = (args.next(), args.next()) {
        let old = match h.get_mut(f) {
            Some(old) => Some(std::mem::replace(old, v.into())),
            None => {
                h.insert(f.into(), v.into());
                created += 1;
                None
            }
        };
        if cx.keeps() {
            was.push((f.into(), old));
        }
    }
    put(cx, key, h);
    cx.log_input();
    undo(cx, key, move |h: &mut Hash| put_back(h, was));
    match name {
        Name::HSet => reply::int(out, created),
        _ => reply::ok(out),
    }
    Ok(())
}

fn hdel(a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let key = a.arg(1);
    let Some(mut h) = take::<Hash>(cx, key)? else {
        reply::int(out, 0);
        return Ok(());
    };
    let deleted: Fields = a
        .from(2)
        .filter_map(|f| h.remove_entry(f).map(|(f, v)| (f, Some(v))))
        .collect();
    put(cx, key, h);
    let n = deleted.len();
    if n > 0 {
        cx.log_input();
        undo(cx, key, move |h: &mut Hash| put_back(h, deleted));
    }
    reply::int(out, n as i64);
    Ok(())
}

/// HINCRBY key field increment: the field's integer plus the increment
/// (an absent field is 0).
fn hincrby(a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let by = integer(a.arg(3))?;
    let (key, field) = (a.arg(1), a.arg(2));
    let mut h = take::<Hash>(cx, key)?.unwrap_or_default();
    let sum = match h.get(field).map(|v| parse_i64(v)) {
        None => Ok(by),
        Some(None) => Err(Fail::Err("ERR hash value is not an integer")),
        Some(Some(old)) => old.checked_add(by).ok_or(Fail::Err(reply::OVERFLOW)),
    };
    let sum = match sum {
        Ok(sum) => sum,
        Err(e) => {
            put(cx, key, h);
            return Err(e);
        }
    };
    let mut text = Vec::new();
    push_i64(&mut text, sum);
    let old = h.insert(field.into(), text.into());
    put(cx, key, h);
    cx.log_input();
    let field: Box<[u8]> = field.into();
    undo(cx, key, move |h: &mut Hash| put_back(h, vec![(field, old)]));
    reply::int(out, sum);
    Ok(())
}

/// HGETALL (every field and its value), HKEYS (every field) or HVALS
/// (every value), in the table's order.
fn every(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    Ok(read(cx, a.arg(1), |h: Option<&Hash>| {
        let Some(h) = h else {
            return reply::array(out, 0);
        };
        let both = name == Name::HGetAll;
        reply::array(out, if both { h.len() * 2 } else { h.len() });
        for (f, v) in h {
            if name != Name::HVals {
                reply::bulk(out, f);
            }
            if name != Name::HKeys {
                reply::bulk(out, v);
            }
        }
    })?)
}

/// HSETNX key field value: 1 when the field was absent (and is now set),
/// else 0.
fn hsetnx(a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let (key, field) = (a.arg(1), a.arg(2));
    let mut h = take::<Hash>(cx, key)?.unwrap_or_default();
    let new = !h.contains_key(field);
    if new {
        h.insert(field.into(), a.arg(3).into());
    }
    put(cx, key, h);
    if new {
        cx.log_input();
        let field: Box<[u8]> = field.into();
        undo(cx, key, move |h: &mut Hash| {
            put_back(h, vec![(field, None)])
        });
    }
    reply::int(out, i64::from(new));
    Ok(())
}

/// HINCRBYFLOAT key field increment: the field's number plus the
/// increment in 80-bit long double, as INCRBYFLOAT adds (an absent field
/// is 0); logged as the HSET of the sum, as Redis propagates it.
fn hincrbyfloat(a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let by = float80::parse(a.arg(3)).ok_or(Fail::Err(reply::NOT_FLOAT))?;
    if !by.is_finite() {
        return Err(Fail::Err("ERR value is NaN or Infinity"));
    }
    let (key, field) = (a.arg(1), a.arg(2));
    let mut h = take::<Hash>(cx, key)?.unwrap_or_default();
    let sum = match h.get(field).map(|v| float80::parse(v)) {
        None => Ok(by),
        Some(None) => Err(Fail::Err("ERR hash value is not a float")),
        Some(Some(old)) => Ok(float80::add(old, by)),
    };
    let text = match sum {
        Ok(sum) if sum.is_finite() => float80::human(sum),
        failed => {
            put(cx, key, h);
            return Err(failed
                .err()
                .unwrap_or(Fail::Err("ERR increment would produce NaN or Infinity")));
        }
    };
    let old = h.insert(field.into(), text.as_bytes().into());
    put(cx, key, h);
    cx.log(&[b"HSET", key, field, text.as_bytes()]);
    let field: Box<[u8]> = field.into();
    undo(cx, key, move |h: &mut Hash| put_back(h, vec![(field, old)]));
    reply::bulk(out, text.as_bytes());
    Ok(())
}

/// Each pick's reply is at least this long (`$0\r\n\r\n`).
const LEAST_BULK: usize = 6;

/// HRANDFIELD key [count [WITHVALUES]]: a field at random (`$-1` for no
/// such key); with a count, that many distinct fields (the whole hash if
/// it has no more), or `-count` picks that may repeat, each followed by
/// its value WITHVALUES.
fn hrandfield(a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    if a.count() == 2 {
        return Ok(read(cx, a.arg(1), |h: Option<&Hash>| match h {
            Some(h) => reply::bulk(out, any(h).0),
            None => reply::null(out),
        })?);
    }
    let l = super::random_count(a.arg(2))?;
    let withvalues = a.count() == 4;
    if a.count() > 4 || (withvalues && !super::is(a, 3, "withvalues")) {
        return Err(Fail::Err(SYNTAX));
    }
    if withvalues && !(-i64::MAX / 2..=i64::MAX / 2).contains(&l) {
        return Err(Fail::Err("ERR value is out of range"));
    }
    let count = usize::try_from(l.unsigned_abs()).unwrap_or(usize::MAX);
    let bound = cx.svc.limits.max_query;
    Ok(read(cx, a.arg(1), |h: Option<&Hash>| {
        let Some(h) = h.filter(|_| count > 0) else {
            return reply::array(out, 0);
        };
        let pairs: Vec<(&[u8], &[u8])> = if l < 0 || count == 1 {
            return picks(h, count, withvalues, bound, out);
        } else if count >= h.len() {
            h.iter().map(|(f, v)| (&**f, &**v)).collect()
        } else {
            let mut picked = fastrand::choose_multiple(h.iter(), count);
            fastrand::shuffle(&mut picked);
            picked.into_iter().map(|(f, v)| (&**f, &**v)).collect()
        };
        reply::array(out, pairs.len() * if withvalues { 2 } else { 1 });
        for (f, v) in pairs {
            reply::bulk(out, f);
            if withvalues {
                reply::bulk(out, v);
            }
        }
    })?)
}

/// A field and its value at random (the hash is not empty: an empty hash
/// is no key).
fn any(h: &Hash) -> (&[u8], &[u8]) {
    let (f, v) = h.iter().nth(fastrand::usize(..h.len())).expect("a field");
    (f, v)
}

/// HRANDFIELD's `count` picks that may repeat: bounded as SRANDMEMBER's
/// are (docs/protocols/resp.md): a reply that would pass `bound`
/// (`--max-query`) bytes is an error instead.
fn picks(h: &Hash, count: usize, withvalues: bool, bound: usize, out: &mut Vec<u8>) {
    let each = if withvalues { 2 } else { 1 };
    if count > bound / (LEAST_BULK * each) {
        return crate::resp::too_large(out, bound);
    }
    let all: Vec<(&[u8], &[u8])> = h.iter().map(|(f, v)| (&**f, &**v)).collect();
    let from = out.len();
    reply::array(out, count * each);
    for _ in 0..count {
        let (f, v) = all[fastrand::usize(..all.len())];
        reply::bulk(out, f);
        if withvalues {
            reply::bulk(out, v);
        }
        if crate::resp::past(out, from, bound) {
            return;
        }
    }
}

/// Puts fields back as they were (`None`: absent), the last first, so
/// that a field changed twice ends as it was before the first change.
fn put_back(h: &mut Hash, was: Fields) {
    for (f, v) in was.into_iter().rev() {
        match v {
            Some(v) => h.insert(f, v),
            None => h.remove(&f),
        };
    }
}
