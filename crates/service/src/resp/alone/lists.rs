//! The list commands beyond the fast path, as Redis 7.0 serves them:
//! LMOVE, RPOPLPUSH, LREM, LPOS, LMPOP, LSET, LTRIM, LINSERT, LPUSHX,
//! RPUSHX, and the blocking pops' single tries (BLPOP, BRPOP, BLMOVE,
//! BRPOPLPUSH, BLMPOP).
//!
//! A command that changes a list takes it out of the store, changes it
//! and puts it back (a list left empty is gone, as Redis deletes it).
//! Arguments are checked in Redis's order, so that a command with two
//! things wrong names the one Redis names.
//!
//! A blocking pop with something to pop pops it and is logged as the
//! command Redis propagates for it: `BLPOP k1 k2 0` that popped from
//! `k2` as `LPOP k2`, BLMPOP as `LPOP k n` (or RPOP) with the number it
//! popped, BLMOVE as LMOVE and BRPOPLPUSH as RPOPLPUSH. With nothing to
//! pop it asks to wait ([`Running::would_block`]) while it may
//! ([`Running::trying`]); otherwise it answers as a timeout does.

use super::Running;
use crate::resp::{blocking, Args};
use serverlab_proto::resp::number::parse_i64;
use serverlab_proto::resp::reply::{NOT_INTEGER, NO_SUCH_KEY, SYNTAX};
use serverlab_proto::resp::{reply, End, Name};
use serverlab_store::resp::{Held, Value};
use std::collections::VecDeque;

type List = VecDeque<Box<[u8]>>;

/// Serves `name`.
pub(crate) fn run(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    match name {
        Name::LPushX => pushx(End::Left, a, cx, out),
        Name::RPushX => pushx(End::Right, a, cx, out),
        Name::LInsert => linsert(a, cx, out),
        Name::LSet => lset(a, cx, out),
        Name::LTrim => ltrim(a, cx, out),
        Name::LRem => lrem(a, cx, out),
        Name::LPos => lpos(a, cx, out),
        Name::LMove | Name::RPopLPush | Name::BLMove | Name::BRPopLPush => lmove(name, a, cx, out),
        Name::LMPop | Name::BLMPop => lmpop(name, a, cx, out),
        Name::BLPop | Name::BRPop => bpop(name, a, cx, out),
        _ => unreachable!("{name:?} is not a list command"),
    }
}

/// What a key holds, as far as a list command cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Absent,
    List,
    Other,
}

fn kind(cx: &Running, key: &[u8]) -> Kind {
    let mut list = false;
    if !cx
        .store()
        .peek(key, &mut |h| list = matches!(h, Held::List(_)))
    {
        Kind::Absent
    } else if list {
        Kind::List
    } else {
        Kind::Other
    }
}

/// The list under `key`, taken out of the store (the caller checked
/// that it holds one).
fn take(cx: &Running, key: &[u8]) -> List {
    match cx.store().take(key) {
        Some(Value::List(l)) => l,
        other => unreachable!("{key:?} held a list, not {other:?}"),
    }
}

/// Puts `list` back under `key` (gone if empty).
fn put(cx: &Running, key: &[u8], list: List) {
    cx.store().put(key, Value::List(list));
}

/// Shows `f` the list under `key` (without taking it out).
fn with_list<R>(cx: &Running, key: &[u8], f: impl FnOnce(&List) -> R) -> Option<R> {
    let mut f = Some(f);
    let mut r = None;
    cx.store().peek(key, &mut |h| {
        if let (Held::List(l), Some(f)) = (h, f.take()) {
            r = Some(f(l));
        }
    });
    r
}

/// Records, under a log that takes writes back, a step that pushes
/// `items`, in turn, onto the `e` end of `key`'s list (what takes back a
/// pop of them: given the last popped first).
fn undo_push(cx: &mut Running, key: &[u8], e: End, items: Vec<Box<[u8]>>) {
    if !cx.keeps() {
        return;
    }
    let d = cx.here().clone();
    let key: Box<[u8]> = key.into();
    cx.undo(move |_| {
        let _ = d.store.push(&key, e, &mut items.iter().map(|i| &**i));
    });
}

/// LEFT or RIGHT, in any case.
fn end(arg: &[u8]) -> Option<End> {
    if arg.eq_ignore_ascii_case(b"left") {
        Some(End::Left)
    } else if arg.eq_ignore_ascii_case(b"right") {
        Some(End::Right)
    } else {
        None
    }
}

fn end_word(e: End) -> &'static [u8] {
    match e {
        End::Left => b"LEFT",
        End::Right => b"RIGHT",
    }
}

fn pop_end(list: &mut List, e: End) -> Option<Box<[u8]>> {
    match e {
        End::Left => list.pop_front(),
        End::Right => list.pop_back(),
    }
}

fn push_end(list: &mut List, e: End, v: Box<[u8]>) {
    match e {
        End::Left => list.push_front(v),
        End::Right => list.push_back(v),
    }
}

/// Why a blocking pop's timeout (in seconds) is refused, in Redis's
/// words; `None` if it is one. As Redis, the seconds are made whole
/// milliseconds (rounded up) in a 64-bit integer: one that does not fit
/// is "negative" there too.
pub(super) fn timeout_error(arg: &[u8]) -> Option<&'static str> {
    let secs = std::str::from_utf8(arg)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| !s.is_nan());
    let Some(secs) = secs else {
        return Some(reply::TIMEOUT_NOT_FLOAT);
    };
    let ms = (secs * 1000.0).ceil();
    // i64::MAX as f64 is 2^63, the first value past the range.
    if !(ms >= 0.0 && ms < i64::MAX as f64) {
        return Some(reply::TIMEOUT_NEGATIVE);
    }
    None
}

/// A blocking pop with nothing to pop: it waits if it may, else answers
/// as a timeout does.
pub(super) fn nothing_to_pop(name: Name, cx: &mut Running, out: &mut Vec<u8>) {
    if cx.trying {
        cx.would_block = true;
    } else {
        blocking::timed_out(name, out)
    }
}

/// LPUSHX / RPUSHX key element…: only onto a list that exists.
fn pushx(e: End, a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let key = a.arg(1);
    match kind(cx, key) {
        Kind::Absent => reply::int(out, 0),
        Kind::Other => cx.wrongtype(out),
        Kind::List => {
            let mut list = take(cx, key);
            for v in a.from(2) {
                push_end(&mut list, e, v.into());
            }
            let n = list.len();
            put(cx, key, list);
            cx.log_input();
            let (d, pushed) = (cx.here().clone(), a.count() - 2);
            let key: Box<[u8]> = key.into();
            cx.undo(move |_| {
                let _ = d.store.pop(&key, e, pushed);
            });
            reply::int(out, n as i64)
        }
    }
}

/// LINSERT key BEFORE|AFTER pivot element: the new length, -1 without
/// the pivot, 0 without the key.
fn linsert(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let after = match a.arg(2) {
        w if w.eq_ignore_ascii_case(b"after") => true,
        w if w.eq_ignore_ascii_case(b"before") => false,
        _ => return cx.error(out, SYNTAX),
    };
    let (key, pivot, elem) = (a.arg(1), a.arg(3), a.arg(4));
    match kind(cx, key) {
        Kind::Absent => return reply::int(out, 0),
        Kind::Other => return cx.wrongtype(out),
        Kind::List => {}
    }
    let Some(Some(at)) = with_list(cx, key, |l| l.iter().position(|e| **e == *pivot)) else {
        return reply::int(out, -1);
    };
    let mut list = take(cx, key);
    let at = at + usize::from(after);
    list.insert(at, elem.into());
    let n = list.len();
    put(cx, key, list);
    cx.log_input();
    undo_list(cx, key, move |l| {
        l.remove(at);
    });
    reply::int(out, n as i64)
}

/// Records, under a log that takes writes back, a step that runs `f` on
/// the list under `key` (an empty one if the key is gone) and puts it
/// back (gone if left empty).
fn undo_list(cx: &mut Running, key: &[u8], f: impl FnOnce(&mut List) + Send + 'static) {
    if !cx.keeps() {
        return;
    }
    let d = cx.here().clone();
    let key: Box<[u8]> = key.into();
    cx.undo(move |_| {
        let mut l = match d.store.take(&key) {
            Some(Value::List(l)) => l,
            Some(other) => return d.store.put(&key, other),
            None => List::new(),
        };
        f(&mut l);
        d.store.put(&key, Value::List(l));
    });
}

/// LSET key index element.
fn lset(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let key = a.arg(1);
    match kind(cx, key) {
        Kind::Absent => return cx.error(out, NO_SUCH_KEY),
        Kind::Other => return cx.wrongtype(out),
        Kind::List => {}
    }
    let Some(index) = parse_i64(a.arg(2)) else {
        return cx.error(out, NOT_INTEGER);
    };
    let len = with_list(cx, key, List::len).unwrap_or(0);
    let Some(at) = position(len, index) else {
        return cx.error(out, "ERR index out of range");
    };
    let mut list = take(cx, key);
    let old = std::mem::replace(&mut list[at], a.arg(3).into());
    put(cx, key, list);
    cx.log_input();
    let d = cx.here().clone();
    let key: Box<[u8]> = key.into();
    cx.undo(move |_| {
        if let Some(Value::List(mut l)) = d.store.take(&key) {
            l[at] = old;
            d.store.put(&key, Value::List(l));
        }
    });
    reply::ok(out)
}

/// Index `index` (negative: from the end) of a list of `len`, if in it.
fn position(len: usize, index: i64) -> Option<usize> {
    let i = if index < 0 {
        (len as i64).checked_add(index)?
    } else {
        index
    };
    usize::try_from(i).ok().filter(|&i| i < len)
}

/// LTRIM key start stop.
fn ltrim(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let (Some(start), Some(stop)) = (parse_i64(a.arg(2)), parse_i64(a.arg(3))) else {
        return cx.error(out, NOT_INTEGER);
    };
    let key = a.arg(1);
    match kind(cx, key) {
        Kind::Absent => return reply::ok(out),
        Kind::Other => return cx.wrongtype(out),
        Kind::List => {}
    }
    let len = with_list(cx, key, List::len).unwrap_or(0);
    let (left, right) = trim(len, start, stop);
    if left + right > 0 {
        let mut list = take(cx, key);
        if !cx.keeps() {
            // Nothing takes it back: the trimmed ends are dropped, not
            // gathered.
            list.truncate(len - right);
            list.drain(..left);
            put(cx, key, list);
            cx.log_input();
            return reply::ok(out);
        }
        let tail: Vec<Box<[u8]>> = list.drain(len - right..).collect();
        let head: Vec<Box<[u8]>> = list.drain(..left).collect();
        put(cx, key, list);
        cx.log_input();
        // The trimmed ends, back on their ends.
        undo_list(cx, key, move |l| {
            head.into_iter().rev().for_each(|e| l.push_front(e));
            l.extend(tail);
        });
    }
    reply::ok(out)
}

/// How many elements LTRIM removes from the left and from the right of
/// a list of `len` to keep `start..=stop` (negative: from the end).
fn trim(len: usize, start: i64, stop: i64) -> (usize, usize) {
    let n = len as i64;
    let start = if start < 0 { (n + start).max(0) } else { start };
    let stop = if stop < 0 { n + stop } else { stop };
    if start > stop || start >= n {
        return (len, 0);
    }
    let stop = stop.min(n - 1);
    (start as usize, (n - stop - 1) as usize)
}

/// LREM key count element.
fn lrem(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let Some(count) = parse_i64(a.arg(2)) else {
        return cx.error(out, NOT_INTEGER);
    };
    let (key, elem) = (a.arg(1), a.arg(3));
    match kind(cx, key) {
        Kind::Absent => return reply::int(out, 0),
        Kind::Other => return cx.wrongtype(out),
        Kind::List => {}
    }
    let mut list = take(cx, key);
    if !cx.keeps() {
        // Nothing takes it back: where each was is not gathered.
        let n = remove_counted(&mut list, elem, count);
        put(cx, key, list);
        if n > 0 {
            cx.log_input();
        }
        return reply::int(out, n as i64);
    }
    let removed = remove(&mut list, elem, count);
    put(cx, key, list);
    let n = removed.len();
    if n > 0 {
        cx.log_input();
        let elem: Box<[u8]> = elem.into();
        undo_list(cx, key, move |l| {
            *l = reinsert(std::mem::take(l), &removed, &elem)
        });
    }
    reply::int(out, n as i64)
}

/// Removes up to |count| elements equal to `elem` (all if 0), from the
/// head (count > 0) or the tail (count < 0); where each was, ascending.
fn remove(list: &mut List, elem: &[u8], count: i64) -> Vec<usize> {
    let limit = match count {
        0 => usize::MAX,
        n => usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX),
    };
    let matches = |(_, e): &(usize, &[u8])| *e == elem;
    let each = list.iter().map(|e| &**e).enumerate();
    let mut at: Vec<usize> = if count < 0 {
        let found = each.rev().filter(matches);
        found.take(limit).map(|(i, _)| i).collect()
    } else {
        let found = each.filter(matches);
        found.take(limit).map(|(i, _)| i).collect()
    };
    at.sort_unstable();
    let mut next = at.iter().peekable();
    let mut i = 0;
    list.retain(|_| {
        let gone = next.next_if(|&&p| p == i).is_some();
        i += 1;
        !gone
    });
    at
}

/// As [`remove`], gathering nothing: how many were removed.
fn remove_counted(list: &mut List, elem: &[u8], count: i64) -> usize {
    let limit = match count {
        0 => usize::MAX,
        n => usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX),
    };
    // From the tail: the matches before the last `limit` stay.
    let skip = if count < 0 {
        let all = list.iter().filter(|e| ***e == *elem).count();
        all.saturating_sub(limit)
    } else {
        0
    };
    let (mut seen, mut gone) = (0, 0);
    list.retain(|e| {
        if **e != *elem || gone == limit {
            return true;
        }
        seen += 1;
        if seen <= skip {
            return true;
        }
        gone += 1;
        false
    });
    gone
}

/// `list` with `elem` put back at each of the places `at` (ascending, as
/// they were before LREM removed them).
fn reinsert(list: List, at: &[usize], elem: &[u8]) -> List {
    let total = list.len() + at.len();
    let mut back = List::with_capacity(total);
    let mut rest = list.into_iter();
    let mut next = at.iter().peekable();
    while back.len() < total {
        if next.next_if(|&&p| p == back.len()).is_some() {
            back.push_back(elem.into());
        } else if let Some(e) = rest.next() {
            back.push_back(e);
        } else {
            break;
        }
    }
    back
}

/// LPOS's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Lpos {
    rank: i64,
    /// `None`: no COUNT (one position or nil); `Some(0)`: every match.
    count: Option<i64>,
    /// 0: the whole list.
    maxlen: i64,
}

/// LPOS's options as Redis reads them, or its error.
fn lpos_options(a: &Args) -> Result<Lpos, &'static str> {
    let mut o = Lpos {
        rank: 1,
        count: None,
        maxlen: 0,
    };
    let mut j = 3;
    while j < a.count() {
        let opt = a.arg(j);
        let more = j + 1 < a.count();
        if opt.eq_ignore_ascii_case(b"rank") && more {
            j += 1;
            o.rank = parse_i64(a.arg(j)).ok_or(NOT_INTEGER)?;
            if o.rank == 0 {
                return Err("ERR RANK can't be zero: use 1 to start from the first match, \
                            2 from the second ... or use negative to start from the end of the list");
            }
        } else if opt.eq_ignore_ascii_case(b"count") && more {
            j += 1;
            let n = parse_i64(a.arg(j)).filter(|&n| n >= 0);
            o.count = Some(n.ok_or("ERR COUNT can't be negative")?);
        } else if opt.eq_ignore_ascii_case(b"maxlen") && more {
            j += 1;
            let n = parse_i64(a.arg(j)).filter(|&n| n >= 0);
            o.maxlen = n.ok_or("ERR MAXLEN can't be negative")?;
        } else {
            return Err(SYNTAX);
        }
        j += 1;
    }
    Ok(o)
}

/// LPOS key element [RANK rank] [COUNT num] [MAXLEN len].
fn lpos(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let o = match lpos_options(a) {
        Ok(o) => o,
        Err(e) => return cx.error(out, e),
    };
    let (key, elem) = (a.arg(1), a.arg(2));
    let found = match kind(cx, key) {
        Kind::Other => return cx.wrongtype(out),
        Kind::Absent => Vec::new(),
        Kind::List => with_list(cx, key, |l| {
            positions(l, elem, o.rank, o.count.unwrap_or(1), o.maxlen)
        })
        .unwrap_or_default(),
    };
    match (o.count, found.first()) {
        (Some(_), _) => {
            reply::array(out, found.len());
            found.iter().for_each(|&i| reply::int(out, i as i64));
        }
        (None, Some(&i)) => reply::int(out, i as i64),
        (None, None) => reply::null(out),
    }
}

/// The indexes of the matches of `elem` LPOS reports: from the `rank`th
/// match (negative: counting from the tail), at most `count` (0: all),
/// looking at no more than `maxlen` elements (0: all). As Redis's loop,
/// wrapping where its arithmetic would (a rank of i64::MIN).
fn positions(list: &List, elem: &[u8], rank: i64, count: i64, maxlen: i64) -> Vec<usize> {
    let (from_tail, rank) = if rank < 0 {
        (true, rank.wrapping_neg())
    } else {
        (false, rank)
    };
    let len = list.len();
    let mut found = Vec::new();
    let mut matches: i64 = 0;
    for seen in 0..len {
        if maxlen != 0 && seen as i64 >= maxlen {
            break;
        }
        let i = if from_tail { len - 1 - seen } else { seen };
        if *list[i] != *elem {
            continue;
        }
        matches += 1;
        if matches >= rank {
            found.push(i);
            if count != 0 && matches.wrapping_sub(rank).wrapping_add(1) >= count {
                break;
            }
        }
    }
    found
}

/// LMOVE, RPOPLPUSH and their blocking forms.
fn lmove(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let (from, to) = match name {
        Name::LMove | Name::BLMove => match (end(a.arg(3)), end(a.arg(4))) {
            (Some(f), Some(t)) => (f, t),
            _ => return cx.error(out, SYNTAX),
        },
        _ => (End::Right, End::Left),
    };
    let blocks = matches!(name, Name::BLMove | Name::BRPopLPush);
    if blocks {
        if let Some(e) = timeout_error(a.arg(a.count() - 1)) {
            return cx.error(out, e);
        }
    }
    let (src, dst) = (a.arg(1), a.arg(2));
    match kind(cx, src) {
        Kind::Other => return cx.wrongtype(out),
        Kind::Absent if blocks => return nothing_to_pop(name, cx, out),
        Kind::Absent => return reply::null(out),
        Kind::List => {}
    }
    if src != dst && kind(cx, dst) == Kind::Other {
        return cx.wrongtype(out);
    }
    let mut list = take(cx, src);
    let v = pop_end(&mut list, from).expect("a list is never empty");
    reply::bulk(out, &v);
    if src == dst {
        push_end(&mut list, to, v);
        put(cx, src, list);
    } else {
        put(cx, src, list);
        let mut dest = match kind(cx, dst) {
            Kind::List => take(cx, dst),
            _ => List::new(),
        };
        push_end(&mut dest, to, v);
        put(cx, dst, dest);
    }
    match name {
        Name::BLMove => cx.log(&[b"LMOVE", src, dst, end_word(from), end_word(to)]),
        Name::BRPopLPush => cx.log(&[b"RPOPLPUSH", src, dst]),
        _ => cx.log_input(),
    }
    // Taken back by the move back: off `dst`'s `to` end, onto `src`'s
    // `from` end.
    let d = cx.here().clone();
    let (src, dst): (Box<[u8]>, Box<[u8]>) = (src.into(), dst.into());
    cx.undo(move |_| {
        if let Ok(Some(v)) = d.store.pop(&dst, to, 1) {
            let _ = d.store.push(&src, from, &mut v.iter().map(|i| &**i));
        }
    });
}

/// LMPOP's and BLMPOP's arguments past the timeout.
struct Mpop<'a> {
    keys: Vec<&'a [u8]>,
    end: End,
    count: usize,
}

/// Reads `numkeys key… LEFT|RIGHT [COUNT n]` from argument `at`, in
/// Redis's order, or says what is wrong.
fn mpop_args<'a>(a: &Args<'a>, at: usize) -> Result<Mpop<'a>, &'static str> {
    let argc = a.count();
    let numkeys = parse_i64(a.arg(at))
        .filter(|&n| n >= 1)
        .ok_or("ERR numkeys should be greater than 0")?;
    let where_at = usize::try_from(numkeys)
        .ok()
        .and_then(|n| n.checked_add(at + 1))
        .filter(|&w| w < argc)
        .ok_or(SYNTAX)?;
    let e = end(a.arg(where_at)).ok_or(SYNTAX)?;
    let mut count = None;
    let mut j = where_at + 1;
    while j < argc {
        if count.is_none() && a.arg(j).eq_ignore_ascii_case(b"count") && j + 1 < argc {
            j += 1;
            let n = parse_i64(a.arg(j))
                .filter(|&n| n >= 1)
                .ok_or("ERR count should be greater than 0")?;
            count = Some(usize::try_from(n).unwrap_or(usize::MAX));
        } else {
            return Err(SYNTAX);
        }
        j += 1;
    }
    Ok(Mpop {
        keys: a.from(at + 1).take(where_at - at - 1).collect(),
        end: e,
        count: count.unwrap_or(1),
    })
}

/// LMPOP numkeys key… LEFT|RIGHT [COUNT n] and BLMPOP timeout numkeys ….
fn lmpop(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let blocks = name == Name::BLMPop;
    let m = match mpop_args(a, if blocks { 2 } else { 1 }) {
        Ok(m) => m,
        Err(e) => return cx.error(out, e),
    };
    if blocks {
        if let Some(e) = timeout_error(a.arg(1)) {
            return cx.error(out, e);
        }
    }
    for &key in &m.keys {
        match kind(cx, key) {
            Kind::Absent => continue,
            Kind::Other => return cx.wrongtype(out),
            Kind::List => {}
        }
        let mut list = take(cx, key);
        let n = m.count.min(list.len());
        reply::array(out, 2);
        reply::bulk(out, key);
        reply::array(out, n);
        let mut popped = Vec::with_capacity(n);
        for _ in 0..n {
            let v = pop_end(&mut list, m.end).expect("counted");
            reply::bulk(out, &v);
            popped.push(v);
        }
        put(cx, key, list);
        popped.reverse();
        undo_push(cx, key, m.end, popped);
        let pop: &[u8] = match m.end {
            End::Left => b"LPOP",
            End::Right => b"RPOP",
        };
        cx.log(&[pop, key, n.to_string().as_bytes()]);
        return;
    }
    if blocks {
        nothing_to_pop(name, cx, out)
    } else {
        reply::null_array(out)
    }
}

/// BLPOP / BRPOP key… timeout.
fn bpop(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let last = a.count() - 1;
    if let Some(e) = timeout_error(a.arg(last)) {
        return cx.error(out, e);
    }
    let (e, pop): (End, &[u8]) = match name {
        Name::BLPop => (End::Left, b"LPOP"),
        _ => (End::Right, b"RPOP"),
    };
    for i in 1..last {
        let key = a.arg(i);
        match kind(cx, key) {
            Kind::Absent => continue,
            Kind::Other => return cx.wrongtype(out),
            Kind::List => {}
        }
        let mut list = take(cx, key);
        let v = pop_end(&mut list, e).expect("a list is never empty");
        put(cx, key, list);
        reply::array(out, 2);
        reply::bulk(out, key);
        reply::bulk(out, &v);
        cx.log(&[pop, key]);
        undo_push(cx, key, e, vec![v]);
        return;
    }
    nothing_to_pop(name, cx, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> List {
        items.iter().map(|s| s.as_bytes().into()).collect()
    }

    fn strs(l: &List) -> Vec<String> {
        l.iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect()
    }

    #[test]
    fn timeouts_as_redis_reads_them() {
        for ok in ["0", "1", "0.1", ".5", "+1", "1e3", "-0.0001", "1e-400"] {
            assert_eq!(timeout_error(ok.as_bytes()), None, "{ok}");
        }
        for bad in ["abc", "", " 1", "1 ", "nan", "1s"] {
            assert_eq!(
                timeout_error(bad.as_bytes()),
                Some("ERR timeout is not a float or out of range"),
                "{bad}"
            );
        }
        // Redis's milliseconds are a 64-bit integer: what does not fit
        // comes out negative there.
        for neg in ["-1", "-0.002", "inf", "-inf", "1e30", "9.3e15"] {
            assert_eq!(
                timeout_error(neg.as_bytes()),
                Some("ERR timeout is negative"),
                "{neg}"
            );
        }
    }

    #[test]
    fn trim_keeps_the_range() {
        assert_eq!(trim(5, 0, -1), (0, 0));
        assert_eq!(trim(5, 1, 2), (1, 2));
        assert_eq!(trim(5, -2, -1), (3, 0));
        assert_eq!(trim(5, -100, 100), (0, 0));
        assert_eq!(trim(5, 3, 1), (5, 0));
        assert_eq!(trim(5, 5, 10), (5, 0));
        assert_eq!(trim(5, 0, -6), (5, 0));
        assert_eq!(trim(5, i64::MIN, i64::MAX), (0, 0));
    }

    #[test]
    fn remove_from_either_end_and_put_back() {
        let all = ["a", "b", "a", "c", "a"];
        let mut l = list(&all);
        let at = remove(&mut l, b"a", 2);
        assert_eq!(at, [0, 2]);
        assert_eq!(strs(&l), ["b", "c", "a"]);
        assert_eq!(strs(&reinsert(l, &at, b"a")), all);
        let mut l = list(&all);
        let at = remove(&mut l, b"a", -2);
        assert_eq!(at, [2, 4]);
        assert_eq!(strs(&l), ["a", "b", "c"]);
        assert_eq!(strs(&reinsert(l, &at, b"a")), all);
        let mut l = list(&["a", "b", "a"]);
        let at = remove(&mut l, b"a", 0);
        assert_eq!(at, [0, 2]);
        assert_eq!(strs(&l), ["b"]);
        assert_eq!(remove(&mut l, b"a", i64::MIN), Vec::<usize>::new());
        assert_eq!(strs(&reinsert(l, &at, b"a")), ["a", "b", "a"]);
        assert_eq!(strs(&reinsert(List::new(), &[0, 1], b"x")), ["x", "x"]);
    }

    /// Without a log, LREM removes what it would with one, gathering
    /// nothing.
    #[test]
    fn remove_counted_removes_as_remove_does() {
        let all = ["a", "b", "a", "c", "a", "a"];
        for count in [0, 1, 2, 3, 4, 9, -1, -2, -3, -4, -9, i64::MIN, i64::MAX] {
            for elem in [&b"a"[..], b"c", b"x"] {
                let (mut l, mut m) = (list(&all), list(&all));
                let n = remove(&mut l, elem, count).len();
                assert_eq!(remove_counted(&mut m, elem, count), n, "{count}");
                assert_eq!(strs(&l), strs(&m), "{count}");
            }
        }
    }

    #[test]
    fn positions_by_rank_count_and_maxlen() {
        let l = list(&["a", "b", "c", "1", "2", "3", "c", "c"]);
        assert_eq!(positions(&l, b"c", 1, 1, 0), [2]);
        assert_eq!(positions(&l, b"c", 2, 1, 0), [6]);
        assert_eq!(positions(&l, b"c", -1, 1, 0), [7]);
        assert_eq!(positions(&l, b"c", -2, 1, 0), [6]);
        assert_eq!(positions(&l, b"c", 1, 0, 0), [2, 6, 7]);
        assert_eq!(positions(&l, b"c", 2, 0, 0), [6, 7]);
        assert_eq!(positions(&l, b"c", -1, 2, 0), [7, 6]);
        assert_eq!(positions(&l, b"c", 1, 0, 7), [2, 6]);
        assert_eq!(positions(&l, b"c", -1, 0, 2), [7, 6]);
        assert_eq!(positions(&l, b"x", 1, 0, 0), Vec::<usize>::new());
        assert_eq!(positions(&l, b"c", 4, 1, 0), Vec::<usize>::new());
    }

    #[test]
    fn positions_in_a_list() {
        assert_eq!(position(3, 0), Some(0));
        assert_eq!(position(3, -1), Some(2));
        assert_eq!(position(3, -3), Some(0));
        assert_eq!(position(3, -4), None);
        assert_eq!(position(3, 3), None);
        assert_eq!(position(3, i64::MIN), None);
        assert_eq!(end(b"LeFt"), Some(End::Left));
        assert_eq!(end(b"up"), None);
    }
}
