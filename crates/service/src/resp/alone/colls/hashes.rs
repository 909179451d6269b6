//! Hashes: HSET, HMSET, HGET, HMGET, HGETALL, HDEL, HLEN, HINCRBY,
//! HEXISTS. HGETALL answers in the order the table keeps (Redis answers
//! a small hash in the order its fields were first set).

use super::{integer, put, read, take, undo, Done, Fail, Hash};
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
        Name::HGetAll => Ok(read(cx, key, |h: Option<&Hash>| {
            let Some(h) = h else {
                return reply::array(out, 0);
            };
            reply::array(out, h.len() * 2);
            for (f, v) in h {
                reply::bulk(out, f);
                reply::bulk(out, v);
            }
        })?),
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
