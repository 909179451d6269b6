//! The keyspace and its deadlines beyond the fast path, as Redis 7.0.15
//! answers them: KEYS, SCAN, RENAME, RENAMENX, COPY, MOVE, RANDOMKEY,
//! TYPE, TOUCH, UNLINK; EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (with NX,
//! XX, GT and LT), TTL, PTTL, EXPIRETIME, PEXPIRETIME and PERSIST.
//!
//! Each runs alone (see [`super`]), after every key past its deadline
//! has been deleted, so none of them ever sees or lists such a key. A
//! deadline travels with its value: RENAME and MOVE carry it, COPY copies
//! it, and a destination that is replaced loses its own.
//!
//! What is logged: a relative deadline as an absolute one (`EXPIRE k 10`
//! as `PEXPIREAT k <ms>`), a deadline already past as the `DEL` it comes
//! to, and every other change as it arrived; a command that changed
//! nothing logs nothing. While the log is replayed no key expires (as
//! Redis loads its AOF): a `PEXPIREAT` whose moment has passed sets the
//! deadline, and the key goes once the replay is done, unless a later
//! record (a `PERSIST`, a `SET`) saved it.
//!
//! KEYS lists the matching keys in byte order (Redis's order is its hash
//! table's); KEYS and SCAN's MATCH count case, as Redis's do.
//!
//! SCAN's cursor: each key has a fixed place in its store's scan order,
//! a 64-bit hash of its name, and each store keeps its keys' places
//! sorted ([`RespStore::scan`](serverlab_store::resp::RespStore::scan)). A call takes the keys at the COUNT
//! lowest places at or after the cursor (and any other key sharing the
//! last one), and answers as the next cursor the place just after the
//! last one taken, or 0 when no key is left. The calls of one scan so
//! cover consecutive ranges of places from 0 to the end, each range
//! once: a key present for the whole scan is in one range and returned
//! by that range's call, exactly once; a key added or deleted during the
//! scan may or may not be. MATCH and TYPE then filter what the call
//! took, as Redis's do, so a call may return fewer than COUNT keys, or
//! none, before the end. A call costs about COUNT (times the stripes of
//! the sharded store), whatever the number of keys, as Redis's visits
//! about COUNT buckets; the places are the store's own hash, so a cursor
//! means nothing to another database or after a restart.

use super::Running;
use crate::resp::keyspace::replace;
use crate::resp::{c_str, one_line, Args};
use serverlab_proto::resp::number::parse_i64;
use serverlab_proto::resp::{glob, reply, Name};
use serverlab_store::resp::{Coll, Held};
use std::hash::BuildHasher;

const SAME_OBJECT: &str = "ERR source and destination objects are the same";

/// Serves `name`.
pub(crate) fn run(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    match name {
        Name::Keys => keys(a, cx, out),
        Name::Scan => scan(a, cx, out),
        Name::Rename | Name::RenameNx => rename(name == Name::RenameNx, a, cx, out),
        Name::Copy => copy(a, cx, out),
        Name::Move => move_key(a, cx, out),
        Name::RandomKey => random_key(cx, out),
        Name::Type => {
            let mut t = "none";
            cx.store().peek(a.arg(1), &mut |h| t = type_name(h));
            reply::simple(out, t.as_bytes())
        }
        Name::Touch => {
            let n = a.from(1).filter(|k| cx.store().exists(k)).count();
            reply::int(out, n as i64)
        }
        Name::Unlink => {
            let n = a.from(1).filter(|k| replace(cx, k, None)).count();
            if n > 0 {
                cx.log_input();
            }
            reply::int(out, n as i64)
        }
        Name::Expire | Name::PExpire | Name::ExpireAt | Name::PExpireAt => expire(name, a, cx, out),
        Name::Ttl | Name::PTtl | Name::ExpireTime | Name::PExpireTime => ttl(name, a, cx, out),
        Name::Persist => {
            let key = a.arg(1);
            let had = cx.store().exists(key) && cx.here().expires.remove(key).is_some();
            if had {
                cx.log_input();
            }
            reply::int(out, i64::from(had))
        }
        _ => unreachable!("{name:?} is not a keyspace command"),
    }
}

/// TYPE's word for what a key holds.
fn type_name(h: Held) -> &'static str {
    match h {
        Held::Str(_) => "string",
        Held::List(_) => "list",
        Held::Coll(Coll::Set(_)) => "set",
        Held::Coll(Coll::Hash(_)) => "hash",
        Held::Coll(Coll::ZSet(_)) => "zset",
    }
}

/// A database number as MOVE and COPY read it (an `int`, then in range).
fn db_arg(arg: &[u8]) -> Result<usize, &'static str> {
    let n = parse_i64(arg).ok_or(reply::NOT_INTEGER)?;
    let n = i32::try_from(n)
        .map_err(|_| "ERR value is out of range, value must between -2147483648 and 2147483647")?;
    usize::try_from(n)
        .ok()
        .filter(|&n| n < serverlab_proto::resp::command::DATABASES)
        .ok_or(reply::DB_INDEX)
}

fn keys(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let pattern = a.arg(1);
    let all = pattern == b"*";
    let mut found: Vec<Box<[u8]>> = Vec::new();
    cx.store().for_each(&mut |k, _| {
        if all || glob::matches_exact(pattern, k) {
            found.push(k.into());
        }
    });
    found.sort_unstable();
    reply::array(out, found.len());
    found.iter().for_each(|k| reply::bulk(out, k));
}

fn random_key(cx: &mut Running, out: &mut Vec<u8>) {
    let store = cx.store();
    let len = store.len();
    if len == 0 {
        return reply::null(out);
    }
    let pick = std::collections::hash_map::RandomState::new().hash_one(cx.now) as usize % len;
    let (mut i, mut chosen) = (0, None);
    store.for_each(&mut |k, _| {
        if i <= pick {
            chosen = Some(k.to_vec());
        }
        i += 1;
    });
    match chosen {
        Some(k) => reply::bulk(out, &k),
        None => reply::null(out),
    }
}

/// SCAN's cursor as Redis reads it (`strtoul`: an optional sign, a
/// negative one wrapping; no spaces; nothing at all reads as 0).
pub(super) fn parse_cursor(arg: &[u8]) -> Option<u64> {
    let (neg, digits) = match arg.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, arg),
    };
    if digits.is_empty() {
        return arg.is_empty().then_some(0);
    }
    let mut v: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(if neg { v.wrapping_neg() } else { v })
}

/// SCAN's options (SSCAN's, HSCAN's, ZSCAN's but TYPE).
pub(super) struct ScanOptions<'a> {
    pub count: usize,
    pub pattern: Option<&'a [u8]>,
    kind: Option<&'a [u8]>,
}

/// The options from argument `from` (SCAN's 2, a collection's 3, where
/// TYPE is no option).
pub(super) fn scan_options<'a>(
    a: &Args<'a>,
    from: usize,
) -> Result<ScanOptions<'a>, &'static [u8]> {
    let mut o = ScanOptions {
        count: 10,
        pattern: None,
        kind: None,
    };
    let mut i = from;
    while i < a.count() {
        let word = a.arg(i).to_ascii_lowercase();
        let value = a.try_arg(i + 1).ok_or(reply::SYNTAX.as_bytes())?;
        match &word[..] {
            b"count" => {
                let n = parse_i64(value).ok_or(reply::NOT_INTEGER.as_bytes())?;
                if n < 1 {
                    return Err(reply::SYNTAX.as_bytes());
                }
                o.count = usize::try_from(n).unwrap_or(usize::MAX);
            }
            b"match" => o.pattern = (value != b"*").then_some(value),
            b"type" if from == 2 => o.kind = Some(value),
            _ => return Err(reply::SYNTAX.as_bytes()),
        }
        i += 2;
    }
    Ok(o)
}

fn scan(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let Some(cursor) = parse_cursor(a.arg(1)) else {
        return cx.error(out, "ERR invalid cursor");
    };
    let o = match scan_options(a, 2) {
        Ok(o) => o,
        Err(e) => return reply::error(out, e),
    };
    let store = cx.store();
    let step = store.scan(cursor, o.count);
    let taken: Vec<&[u8]> = step
        .keys
        .iter()
        .map(|k| &k[..])
        .filter(|k| o.pattern.is_none_or(|p| glob::matches_exact(p, k)))
        .filter(|k| {
            o.kind.is_none_or(|t| {
                let mut same = false;
                store.peek(k, &mut |h| {
                    same = t.eq_ignore_ascii_case(type_name(h).as_bytes())
                });
                same
            })
        })
        .collect();
    reply::array(out, 2);
    reply::bulk(out, step.next.to_string().as_bytes());
    reply::array(out, taken.len());
    taken.iter().for_each(|k| reply::bulk(out, k));
}

fn rename(nx: bool, a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let (src, dst) = (a.arg(1), a.arg(2));
    let d = cx.here().clone();
    if !d.store.exists(src) {
        return cx.error(out, reply::NO_SUCH_KEY);
    }
    let done = |out: &mut Vec<u8>| {
        if nx {
            reply::int(out, 1)
        } else {
            reply::ok(out)
        }
    };
    if src == dst {
        return if nx {
            reply::int(out, 0)
        } else {
            reply::ok(out)
        };
    }
    if nx && d.store.exists(dst) {
        return reply::int(out, 0);
    }
    let value = d.store.take(src).expect("the key exists");
    let deadline = d.expires.remove(src);
    // The destination's value is taken out, not dropped, when a log may
    // need it back (the deadlines were kept before the command ran).
    let replaced = if cx.keeps() { d.store.take(dst) } else { None };
    d.store.put(dst, value);
    set_deadline(&d.expires, dst, deadline);
    cx.log_input();
    let (src, dst): (Box<[u8]>, Box<[u8]>) = (src.into(), dst.into());
    cx.undo(move |_| {
        if let Some(v) = d.store.take(&dst) {
            d.store.put(&src, v);
        }
        if let Some(v) = replaced {
            d.store.put(&dst, v);
        }
    });
    done(out)
}

fn set_deadline(expires: &crate::resp::expires::Expires, key: &[u8], when: Option<i64>) {
    match when {
        Some(w) => expires.set(key, w),
        None => {
            expires.remove(key);
        }
    }
}

/// COPY's options: the destination's database, and REPLACE.
struct CopyOptions {
    db: usize,
    replace: bool,
}

fn copy_options(a: &Args, db: usize) -> Result<CopyOptions, &'static str> {
    let mut o = CopyOptions { db, replace: false };
    let mut i = 3;
    while i < a.count() {
        let word = a.arg(i).to_ascii_lowercase();
        match &word[..] {
            b"replace" => o.replace = true,
            b"db" if i + 1 < a.count() => {
                o.db = db_arg(a.arg(i + 1))?;
                i += 1;
            }
            _ => return Err(reply::SYNTAX),
        }
        i += 1;
    }
    Ok(o)
}

fn copy(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let (src, dst) = (a.arg(1), a.arg(2));
    let o = match copy_options(a, cx.db) {
        Ok(o) => o,
        Err(e) => return cx.error(out, e),
    };
    if o.db == cx.db && src == dst {
        return cx.error(out, SAME_OBJECT);
    }
    let Some(value) = cx.store().cloned(src) else {
        return reply::int(out, 0);
    };
    let deadline = cx.here().expires.get(src);
    let to = &cx.ks.dbs[o.db];
    if !o.replace && to.store.exists(dst) {
        return reply::int(out, 0);
    }
    // What it replaces is what takes it back (the source is unchanged).
    cx.keep(o.db, dst);
    let to = &cx.ks.dbs[o.db];
    to.store.put(dst, value);
    set_deadline(&to.expires, dst, deadline);
    if o.db != cx.db {
        cx.svc.watches.touch(o.db, dst);
    }
    cx.log_input();
    reply::int(out, 1)
}

fn move_key(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let key = a.arg(1);
    let n = match db_arg(a.arg(2)) {
        Ok(n) => n,
        Err(e) => return cx.error(out, e),
    };
    if n == cx.db {
        return cx.error(out, SAME_OBJECT);
    }
    let (from, to) = (cx.here(), &cx.ks.dbs[n]);
    if !from.store.exists(key) || to.store.exists(key) {
        return reply::int(out, 0);
    }
    // Taken back by the move back (the deadline here was kept before
    // the command ran; the other database's is kept now).
    cx.keep_deadline(n, key);
    let (from, to) = (cx.here().clone(), cx.ks.dbs[n].clone());
    let value = from.store.take(key).expect("the key exists");
    let deadline = from.expires.remove(key);
    to.store.put(key, value);
    set_deadline(&to.expires, key, deadline);
    cx.svc.watches.touch(n, key);
    cx.log_input();
    let key: Box<[u8]> = key.into();
    cx.undo(move |_| {
        if let Some(v) = to.store.take(&key) {
            from.store.put(&key, v);
        }
    });
    reply::int(out, 1)
}

/// EXPIRE's condition (NX, XX, GT, LT; at most one of NX and the others,
/// not GT with LT).
#[derive(Default)]
struct Cond {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

impl Cond {
    fn parse(a: &Args) -> Result<Cond, String> {
        let mut c = Cond::default();
        for opt in a.from(3) {
            match &opt.to_ascii_lowercase()[..] {
                b"nx" => c.nx = true,
                b"xx" => c.xx = true,
                b"gt" => c.gt = true,
                b"lt" => c.lt = true,
                _ => return Err(format!("ERR Unsupported option {}", c_str(opt, opt.len()))),
            }
        }
        if c.nx && (c.xx || c.gt || c.lt) {
            return Err(
                "ERR NX and XX, GT or LT options at the same time are not compatible".into(),
            );
        }
        if c.gt && c.lt {
            return Err("ERR GT and LT options at the same time are not compatible".into());
        }
        Ok(c)
    }

    /// Whether a deadline `when` may replace `current` (`None`: none,
    /// an infinite one).
    fn allows(&self, current: Option<i64>, when: i64) -> bool {
        !(self.nx && current.is_some()
            || self.xx && current.is_none()
            || self.gt && current.is_none_or(|c| when <= c)
            || self.lt && current.is_some_and(|c| when >= c))
    }
}

/// The deadline EXPIRE's family asks for, in milliseconds since the
/// epoch; the error when it overflows.
fn deadline_of(name: Name, n: i64, now: i64) -> Option<i64> {
    let (seconds, relative) = match name {
        Name::Expire => (true, true),
        Name::PExpire => (false, true),
        Name::ExpireAt => (true, false),
        _ => (false, false),
    };
    let ms = if seconds { n.checked_mul(1000)? } else { n };
    if relative {
        ms.checked_add(now)
    } else {
        Some(ms)
    }
}

fn expire(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let cond = match Cond::parse(a) {
        Ok(c) => c,
        Err(e) => return cx.error(out, &one_line(&e)),
    };
    let Some(n) = parse_i64(a.arg(2)) else {
        return reply::error(out, reply::NOT_INTEGER);
    };
    let Some(when) = deadline_of(name, n, cx.now) else {
        return cx.error(out, &reply::invalid_expire(name.facts().name));
    };
    let key = a.arg(1);
    if !cx.store().exists(key) || !cond.allows(cx.here().expires.get(key), when) {
        return reply::int(out, 0);
    }
    if when <= cx.now && !cx.svc.replaying() {
        if cx.keeps() {
            // Taken out, to be put back if the log refuses (its deadline
            // was kept before the command ran).
            let d = cx.here().clone();
            let value = d.store.take(key);
            let key: Box<[u8]> = key.into();
            cx.undo(move |_| {
                if let Some(v) = value {
                    d.store.put(&key, v);
                }
            });
        } else {
            cx.store().del(key);
        }
        cx.here().expires.remove(key);
        cx.log(&[b"DEL", key]);
    } else {
        cx.here().expires.set(key, when);
        if crate::sim::planted(crate::sim::Mutant::RelativeDeadline) {
            cx.log(&[b"PEXPIRE", key, (when - cx.now).to_string().as_bytes()]);
        } else {
            cx.log(&[b"PEXPIREAT", key, when.to_string().as_bytes()]);
        }
    }
    reply::int(out, 1)
}

fn ttl(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let key = a.arg(1);
    if !cx.store().exists(key) {
        return reply::int(out, -2);
    }
    let Some(when) = cx.here().expires.get(key) else {
        return reply::int(out, -1);
    };
    let ms = match name {
        Name::Ttl | Name::PTtl => (when - cx.now).max(0),
        _ => when.max(0),
    };
    let n = match name {
        Name::Ttl | Name::ExpireTime => (ms + 500) / 1000,
        _ => ms,
    };
    reply::int(out, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_read_as_strtoul_reads_them() {
        assert_eq!(parse_cursor(b"0"), Some(0));
        assert_eq!(parse_cursor(b"123"), Some(123));
        assert_eq!(parse_cursor(b"+7"), Some(7));
        assert_eq!(parse_cursor(b"-1"), Some(u64::MAX));
        assert_eq!(parse_cursor(b""), Some(0));
        assert_eq!(parse_cursor(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_cursor(b"18446744073709551616"), None);
        assert_eq!(parse_cursor(b" 1"), None);
        assert_eq!(parse_cursor(b"1x"), None);
        assert_eq!(parse_cursor(b"-"), None);
    }

    #[test]
    fn database_numbers_are_ints_then_in_range() {
        assert_eq!(db_arg(b"3"), Ok(3));
        assert_eq!(db_arg(b"16"), Err(reply::DB_INDEX));
        assert_eq!(db_arg(b"-1"), Err(reply::DB_INDEX));
        assert!(db_arg(b"x").unwrap_err().contains("not an integer"));
        assert!(db_arg(b"4294967296").unwrap_err().contains("must between"));
    }

    #[test]
    fn expire_conditions_follow_redis_7() {
        let c = |nx, xx, gt, lt| Cond { nx, xx, gt, lt };
        assert!(c(true, false, false, false).allows(None, 5));
        assert!(!c(true, false, false, false).allows(Some(1), 5));
        assert!(!c(false, true, false, false).allows(None, 5));
        assert!(c(false, true, false, false).allows(Some(1), 5));
        // GT against no deadline (infinite) always fails; LT always passes.
        assert!(!c(false, false, true, false).allows(None, 5));
        assert!(c(false, false, true, false).allows(Some(4), 5));
        assert!(!c(false, false, true, false).allows(Some(5), 5));
        assert!(c(false, false, false, true).allows(None, 5));
        assert!(!c(false, false, false, true).allows(Some(5), 5));
        assert!(c(false, false, false, true).allows(Some(6), 5));
    }

    #[test]
    fn deadlines_overflow_as_redis_checks_them() {
        assert_eq!(deadline_of(Name::Expire, 10, 1_000), Some(11_000));
        assert_eq!(deadline_of(Name::PExpire, 10, 1_000), Some(1_010));
        assert_eq!(deadline_of(Name::ExpireAt, 10, 1_000), Some(10_000));
        assert_eq!(deadline_of(Name::PExpireAt, 10, 1_000), Some(10));
        assert_eq!(deadline_of(Name::Expire, i64::MAX / 1000 + 1, 0), None);
        assert_eq!(deadline_of(Name::PExpire, i64::MAX, 1), None);
        assert_eq!(deadline_of(Name::ExpireAt, i64::MIN / 1000 - 1, 0), None);
        assert_eq!(deadline_of(Name::PExpire, -5, 1_000), Some(995));
    }

    #[test]
    fn keys_match_with_case_counting() {
        assert!(glob::matches_exact(b"k*", b"key"));
        assert!(!glob::matches_exact(b"K*", b"key"));
        assert!(glob::matches_exact(b"[a-c]x", b"bx"));
        assert!(!glob::matches_exact(b"[A-C]x", b"bx"));
    }

    /// Every key present for a whole scan is returned exactly once, however
    /// the keys around it change between the calls.
    #[test]
    fn a_scan_returns_every_key_present_throughout_once() {
        use serverlab_proto::resp::SetCond;
        let store = serverlab_store::resp::new(serverlab_store::StoreKind::Sharded).unwrap();
        for i in 0..500 {
            store.set(format!("k{i}").as_bytes(), b"v", SetCond::Always);
        }
        let (mut cursor, mut seen, mut calls) = (0, Vec::new(), 0);
        loop {
            let step = store.scan(cursor, 7);
            seen.extend(step.keys.iter().map(|k| k.to_vec()));
            let next = step.next;
            // Churn: delete a key of the first hundred, add a new one.
            store.del(format!("k{calls}").as_bytes());
            store.set(format!("new{calls}").as_bytes(), b"v", SetCond::Always);
            calls += 1;
            if next == 0 {
                break;
            }
            assert!(next > cursor);
            cursor = next;
        }
        assert!(calls > 500 / 7 / 2, "{calls} calls");
        for i in calls..500 {
            let k = format!("k{i}").into_bytes();
            assert_eq!(seen.iter().filter(|s| **s == k).count(), 1, "k{i}");
        }
        let mut dedup = seen.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), seen.len(), "no key twice");
    }
}
