//! The string commands beyond the fast path, as Redis 7.0.15 serves
//! them: SET with its options (NX, XX, GET, EX, PX, EXAT, PXAT, KEEPTTL),
//! GETEX, GETDEL, GETSET, SETNX, SETEX, PSETEX, MSETNX, SETRANGE,
//! GETRANGE (SUBSTR), STRLEN, APPEND, INCRBYFLOAT, SETBIT, GETBIT and LCS.
//!
//! Deadlines are kept absolute and logged absolute: `SET k v EX 10` is
//! logged as `SET k v PXAT ms` (as are SETEX and PSETEX), GETEX's new
//! deadline as `PEXPIREAT k ms`, INCRBYFLOAT as the `SET k sum KEEPTTL`
//! it came to (Redis propagates them so). A deadline already past
//! deletes the key. Where Redis bounds a string by `proto-max-bulk-len`
//! (SETRANGE, APPEND, SETBIT, LCS's table), the bound is the server's
//! `--max-bulk`: a string never grows past what one SET can carry, as a
//! compaction writes it.
//!
//! APPEND, SETRANGE and SETBIT change the string where it is in the store
//! ([`RespStore::edit`](serverlab_store::resp::RespStore::edit)), so they
//! cost what they change, not the string's length; under `always` each
//! keeps what takes it back, the old length and the bytes it overwrote.
//! A write that replaces or removes a string (SET, GETSET, GETDEL,
//! INCRBYFLOAT, …) keeps the old value, moved out of the store, not
//! copied ([`replace`]).

pub(crate) mod float80;

use super::Running;
use crate::resp::keyspace::replace;
use crate::resp::Args;
use float80::Ld;
use serverlab_proto::resp::number::parse_i64;
use serverlab_proto::resp::reply::{NOT_FLOAT, SYNTAX};
use serverlab_proto::resp::{reply, Name};
use serverlab_store::resp::{Held, Value};

const TOO_BIG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
const BIT_OFFSET: &str = "ERR bit offset is not an integer or out of range";
const BIT_VALUE: &str = "ERR bit is not an integer or out of range";

/// Serves `name`.
pub(crate) fn run(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    match name {
        Name::Set => set(a, cx, out),
        Name::SetNx => setnx(a, cx, out),
        Name::SetEx | Name::PSetEx => setex(name, a, cx, out),
        Name::GetEx => getex(a, cx, out),
        Name::GetDel => getdel(a, cx, out),
        Name::GetSet => getset(a, cx, out),
        Name::MSetNx => msetnx(a, cx, out),
        Name::SetRange => setrange(a, cx, out),
        Name::GetRange | Name::Substr => getrange(a, cx, out),
        Name::StrLen => match read(cx, a.arg(1), |v| v.len()) {
            Ok(n) => reply::int(out, n.unwrap_or(0) as i64),
            Err(WrongType) => cx.wrongtype(out),
        },
        Name::Append => append(a, cx, out),
        Name::IncrByFloat => incrbyfloat(a, cx, out),
        Name::SetBit => setbit(a, cx, out),
        Name::GetBit => getbit(a, cx, out),
        Name::Lcs => lcs(a, cx, out),
        _ => unreachable!("{name:?} is not a string command"),
    }
}

/// The key holds something other than a string.
struct WrongType;

/// `f` of the key's string (under the store's lock), `None` if the key
/// is absent.
fn read<R>(cx: &Running, key: &[u8], f: impl FnOnce(&[u8]) -> R) -> Result<Option<R>, WrongType> {
    let mut f = Some(f);
    let mut got = None;
    let mut wrong = false;
    cx.store().peek(key, &mut |held| match held {
        Held::Str(v) => got = f.take().map(|f| f(v)),
        _ => wrong = true,
    });
    if wrong {
        Err(WrongType)
    } else {
        Ok(got)
    }
}

/// The key's string as GET replies it (a bulk string), `None` if the key
/// is absent.
fn bulk_of(cx: &Running, key: &[u8]) -> Result<Option<Vec<u8>>, WrongType> {
    read(cx, key, |v| {
        let mut r = Vec::new();
        reply::bulk(&mut r, v);
        r
    })
}

/// GET's reply: the bulk string, or nil.
fn get_reply(cx: &Running, key: &[u8]) -> Result<Vec<u8>, WrongType> {
    Ok(bulk_of(cx, key)?.unwrap_or_else(|| b"$-1\r\n".to_vec()))
}

/// Redis's bound on a string's length (`proto-max-bulk-len`).
fn max_len(cx: &Running) -> usize {
    cx.svc.limits.max_bulk
}

/// An integer argument, or Redis's error for one that is not.
fn int_arg(a: &Args, i: usize, out: &mut Vec<u8>) -> Option<i64> {
    let n = parse_i64(a.arg(i));
    if n.is_none() {
        reply::error(out, reply::NOT_INTEGER);
    }
    n
}

/// An argument as C reads it: up to its first NUL.
fn c_str(b: &[u8]) -> &[u8] {
    b.iter().position(|&c| c == 0).map_or(b, |i| &b[..i])
}

/// How an expiry option gives its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    /// EX: seconds from now.
    Ex,
    /// PX: milliseconds from now.
    Px,
    /// EXAT: seconds since the epoch.
    ExAt,
    /// PXAT: milliseconds since the epoch.
    PxAt,
}

/// SET's and GETEX's options (Redis's `parseExtendedStringArgumentsOrReply`).
#[derive(Default)]
struct Opts<'a> {
    nx: bool,
    xx: bool,
    get: bool,
    keepttl: bool,
    persist: bool,
    expire: Option<(Unit, &'a [u8])>,
}

/// Reads the options from argument `from` on (SET's: NX, XX, GET,
/// KEEPTTL and the expiries; GETEX's: PERSIST and the expiries), as Redis
/// accepts them: an option that conflicts with one before it, or an
/// expiry with no time after it, is a syntax error (`None`). The same
/// expiry twice is its last.
fn options<'a>(a: &Args<'a>, from: usize, set: bool) -> Option<Opts<'a>> {
    let mut o = Opts::default();
    let mut j = from;
    while j < a.count() {
        let opt = c_str(a.arg(j));
        let next = a.try_arg(j + 1);
        let is = |w: &str| opt.eq_ignore_ascii_case(w.as_bytes());
        let unit = [
            ("ex", Unit::Ex),
            ("px", Unit::Px),
            ("exat", Unit::ExAt),
            ("pxat", Unit::PxAt),
        ]
        .into_iter()
        .find(|(w, _)| is(w))
        .map(|(_, u)| u);
        if set && is("nx") && !o.xx {
            o.nx = true;
        } else if set && is("xx") && !o.nx {
            o.xx = true;
        } else if set && is("get") {
            o.get = true;
        } else if set && is("keepttl") && o.expire.is_none() {
            o.keepttl = true;
        } else if !set && is("persist") && o.expire.is_none() {
            o.persist = true;
        } else if let (Some(u), Some(t)) = (unit, next) {
            let same = o.expire.is_none_or(|(was, _)| was == u);
            if !same || o.keepttl || o.persist {
                return None;
            }
            o.expire = Some((u, t));
            j += 1;
        } else {
            return None;
        }
        j += 1;
    }
    Some(o)
}

/// The deadline an expiry option sets, in milliseconds since the epoch,
/// or Redis's error (`getExpireMillisecondsOrReply`; `cmd` names the
/// command in it). Its arithmetic wraps as Redis's does, so an overflow
/// is a deadline not after the epoch, and refused.
fn deadline(cx: &Running, unit: Unit, t: &[u8], cmd: &str) -> Result<i64, String> {
    let n = parse_i64(t).ok_or_else(|| reply::NOT_INTEGER.to_string())?;
    let invalid = || reply::invalid_expire(cmd);
    let seconds = matches!(unit, Unit::Ex | Unit::ExAt);
    if n <= 0 || (seconds && n > i64::MAX / 1000) {
        return Err(invalid());
    }
    let mut ms = if seconds { n * 1000 } else { n };
    if matches!(unit, Unit::Ex | Unit::Px) {
        ms = ms.wrapping_add(cx.now);
    }
    if ms <= 0 {
        return Err(invalid());
    }
    Ok(ms)
}

/// SET key value [NX|XX] [GET] [EX|PX|EXAT|PXAT time|KEEPTTL].
fn set(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let Some(o) = options(a, 3, true) else {
        return cx.error(out, SYNTAX);
    };
    let (key, value) = (a.arg(1), a.arg(2));
    let when = match o.expire.map(|(u, t)| deadline(cx, u, t, "set")).transpose() {
        Ok(w) => w,
        Err(e) => return cx.error(out, &e),
    };
    let old = if o.get {
        match get_reply(cx, key) {
            Ok(r) => Some(r),
            Err(WrongType) => return cx.wrongtype(out),
        }
    } else {
        None
    };
    let found = cx.store().exists(key);
    if (o.nx && found) || (o.xx && !found) {
        return out.extend_from_slice(old.as_deref().unwrap_or(b"$-1\r\n"));
    }
    store_str(cx, key, value.to_vec(), o.keepttl, when);
    match old {
        Some(r) => out.extend_from_slice(&r),
        None => reply::ok(out),
    }
    log_set(cx, key, value, o.keepttl, when);
}

/// Puts a string under `key`: its deadline kept (KEEPTTL), dropped, or
/// `when` (a deadline already past deletes the key, but not while the
/// log replays: a later record, a `PEXPIREAT` or a `PERSIST`, may have
/// saved it, and the key goes once the replay is done if none did).
fn store_str(cx: &mut Running, key: &[u8], value: Vec<u8>, keepttl: bool, when: Option<i64>) {
    replace(cx, key, Some(Value::Str(value)));
    let d = cx.here();
    match when {
        Some(w) if w <= cx.now && !cx.svc.replaying() => {
            d.store.del(key);
            d.expires.remove(key);
        }
        Some(w) => d.expires.set(key, w),
        None if keepttl => {}
        None => {
            d.expires.remove(key);
        }
    }
}

/// Logs a SET as it came to: `SET k v PXAT ms`, `SET k v KEEPTTL` or
/// `SET k v`; one whose deadline had passed, which only deleted the key,
/// as `DEL k` (a replay keeps a key past its deadline, which a later
/// record of the key, a `SET … NX`, would then find).
fn log_set(cx: &mut Running, key: &[u8], value: &[u8], keepttl: bool, when: Option<i64>) {
    match when {
        Some(w) if w <= cx.now && !cx.svc.replaying() => cx.log(&[b"DEL", key]),
        Some(w) => {
            let w = w.to_string();
            cx.log(&[b"SET", key, value, b"PXAT", w.as_bytes()]);
        }
        None if keepttl => cx.log(&[b"SET", key, value, b"KEEPTTL"]),
        None => cx.log(&[b"SET", key, value]),
    }
}

/// SETNX key value: 1 if it set, 0 if the key was there.
fn setnx(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let key = a.arg(1);
    if cx.store().exists(key) {
        return reply::int(out, 0);
    }
    store_str(cx, key, a.arg(2).to_vec(), false, None);
    cx.log_input();
    reply::int(out, 1)
}

/// SETEX key seconds value, PSETEX key milliseconds value.
fn setex(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let unit = if name == Name::SetEx {
        Unit::Ex
    } else {
        Unit::Px
    };
    let when = match deadline(cx, unit, a.arg(2), name.facts().name) {
        Ok(w) => w,
        Err(e) => return cx.error(out, &e),
    };
    let (key, value) = (a.arg(1), a.arg(3));
    store_str(cx, key, value.to_vec(), false, Some(when));
    log_set(cx, key, value, false, Some(when));
    reply::ok(out)
}

/// GETEX key [EX|PX|EXAT|PXAT time|PERSIST].
fn getex(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let Some(o) = options(a, 2, false) else {
        return cx.error(out, SYNTAX);
    };
    let key = a.arg(1);
    let value = match bulk_of(cx, key) {
        Ok(Some(r)) => r,
        Ok(None) => return reply::null(out),
        Err(WrongType) => return cx.wrongtype(out),
    };
    let when = match o
        .expire
        .map(|(u, t)| deadline(cx, u, t, "getex"))
        .transpose()
    {
        Ok(w) => w,
        Err(e) => return cx.error(out, &e),
    };
    out.extend_from_slice(&value);
    let d = cx.here();
    match when {
        Some(w) if w <= cx.now && !cx.svc.replaying() => {
            d.expires.remove(key);
            replace(cx, key, None);
            cx.log(&[b"DEL", key]);
        }
        Some(w) => {
            d.expires.set(key, w);
            cx.log(&[b"PEXPIREAT", key, w.to_string().as_bytes()]);
        }
        None if o.persist => {
            let had = d.expires.remove(key).is_some();
            if had {
                cx.log(&[b"PERSIST", key]);
            }
        }
        None => {}
    }
}

/// GETDEL key: the value, and the key deleted.
fn getdel(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let key = a.arg(1);
    match get_reply(cx, key) {
        Err(WrongType) => cx.wrongtype(out),
        Ok(r) => {
            out.extend_from_slice(&r);
            if replace(cx, key, None) {
                cx.here().expires.remove(key);
                cx.log(&[b"DEL", key]);
            }
        }
    }
}

/// GETSET key value: the old value; the new one set, its deadline gone.
fn getset(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let (key, value) = (a.arg(1), a.arg(2));
    match get_reply(cx, key) {
        Err(WrongType) => cx.wrongtype(out),
        Ok(r) => {
            out.extend_from_slice(&r);
            store_str(cx, key, value.to_vec(), false, None);
            cx.log(&[b"SET", key, value]);
        }
    }
}

/// MSETNX key value [key value …]: all set (1), or none if any key was
/// there (0).
fn msetnx(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    if a.count().is_multiple_of(2) {
        return cx.error(out, &reply::wrong_arity("msetnx"));
    }
    if a.from(1).step_by(2).any(|k| cx.store().exists(k)) {
        return reply::int(out, 0);
    }
    let mut kv = a.from(1);
    while let (Some(k), Some(v)) = (kv.next(), kv.next()) {
        store_str(cx, k, v.to_vec(), false, None);
    }
    cx.log_input();
    reply::int(out, 1)
}

/// Redis's `checkStringLength`: whether `len + more` bytes fit.
fn fits(cx: &Running, len: u64, more: u64, out: &mut Vec<u8>) -> bool {
    let ok = len
        .checked_add(more)
        .is_some_and(|t| t <= max_len(cx) as u64);
    if !ok {
        cx.error(out, TOO_BIG);
    }
    ok
}

/// SETRANGE key offset value: the string's new length.
fn setrange(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let (key, value) = (a.arg(1), a.arg(3));
    let Some(offset) = int_arg(a, 2, out) else {
        return;
    };
    if offset < 0 {
        return cx.error(out, "ERR offset is out of range");
    }
    let offset = offset as u64;
    let len = match read(cx, key, <[u8]>::len) {
        Ok(n) => n,
        Err(WrongType) => return cx.wrongtype(out),
    };
    if value.is_empty() {
        return reply::int(out, len.unwrap_or(0) as i64);
    }
    if !fits(cx, offset, value.len() as u64, out) {
        return;
    }
    let at = offset as usize;
    let n = overwrite(cx, key, (at, value.len()), len, |s| {
        let end = at + value.len();
        if s.len() < end {
            make_room(s, end, len);
            s.resize(end, 0);
        }
        s[at..end].copy_from_slice(value);
    });
    cx.log_input();
    reply::int(out, n as i64)
}

/// Changes the key's string in place (made if absent) with `change`,
/// which overwrites no byte but the `width` from `at` (`span`), and may
/// grow the string; under `always`, keeps what takes it back: the
/// string's old length (`len`, `None`: the key was absent, and is
/// removed) and the old bytes of the span. The new length.
fn overwrite(
    cx: &mut Running,
    key: &[u8],
    span: (usize, usize),
    len: Option<usize>,
    change: impl FnOnce(&mut Vec<u8>),
) -> usize {
    let (at, width) = span;
    let keeps = cx.keeps();
    let (mut change, mut was, mut n) = (Some(change), Vec::new(), 0);
    let _ = cx.store().edit(key, true, &mut |s| {
        let Some(change) = change.take() else { return };
        if keeps {
            let end = at.saturating_add(width).min(s.len());
            was = s.get(at..end).unwrap_or_default().to_vec();
        }
        change(s);
        n = s.len();
    });
    if keeps {
        let d = cx.here().clone();
        let key: Box<[u8]> = key.into();
        cx.undo(move |_| match len {
            None => {
                d.store.del(&key);
            }
            Some(len) => {
                let _ = d.store.edit(&key, false, &mut |s| {
                    if let Some(dst) = s.get_mut(at..at + was.len()) {
                        dst.copy_from_slice(&was);
                    }
                    s.truncate(len);
                    // What its growth reserved (more than as much
                    // again as it holds) goes back with it.
                    if s.capacity() > 2 * s.len() {
                        s.shrink_to_fit();
                    }
                });
            }
        });
    }
    n
}

/// The most a string grown in place reserves beyond what it needs.
const MAX_PREALLOC: usize = 1 << 20;

/// Makes room in `s` for `need` bytes in all, as Redis's
/// `sdsMakeRoomFor` does: what is needed and as much again, up to
/// [`MAX_PREALLOC`] more (a `Vec`'s own growth would double a string of
/// many megabytes for one byte appended). A string made here (`len`,
/// the old length, `None`: the key was absent) gets what it needs and
/// no more, as Redis makes a new one.
fn make_room(s: &mut Vec<u8>, need: usize, len: Option<usize>) {
    if len.is_none() {
        s.reserve_exact(need.saturating_sub(s.len()));
    } else if s.capacity() < need {
        let room = need.saturating_add(need.min(MAX_PREALLOC));
        s.reserve_exact(room - s.len());
    }
}

/// GETRANGE key start end (and SUBSTR): the bytes from `start` to `end`
/// inclusive, negative from the end, clamped.
fn getrange(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let Some(start) = int_arg(a, 2, out) else {
        return;
    };
    let Some(end) = int_arg(a, 3, out) else {
        return;
    };
    let found = read(cx, a.arg(1), |s| {
        let r = range(s.len() as i64, start, end);
        reply::bulk(out, r.map_or(&[][..], |(from, to)| &s[from..=to]));
    });
    match found {
        Ok(Some(())) => {}
        Ok(None) => reply::bulk(out, b""),
        Err(WrongType) => cx.wrongtype(out),
    }
}

/// GETRANGE's arithmetic on a string of `len` bytes: the inclusive byte
/// range, `None` for none.
fn range(len: i64, mut start: i64, mut end: i64) -> Option<(usize, usize)> {
    if start < 0 && end < 0 && start > end {
        return None;
    }
    if start < 0 {
        start += len;
    }
    if end < 0 {
        end += len;
    }
    start = start.max(0);
    end = end.max(0);
    if end >= len {
        end = len - 1;
    }
    if start > end || len == 0 {
        return None;
    }
    Some((start as usize, end as usize))
}

/// APPEND key value: the string's new length.
fn append(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let (key, value) = (a.arg(1), a.arg(2));
    let len = match read(cx, key, <[u8]>::len) {
        Ok(n) => n,
        Err(WrongType) => return cx.wrongtype(out),
    };
    let at = len.unwrap_or(0);
    if len.is_some() && !fits(cx, at as u64, value.len() as u64, out) {
        return;
    }
    let n = overwrite(cx, key, (at, 0), len, |s| {
        make_room(s, s.len() + value.len(), len);
        s.extend_from_slice(value)
    });
    cx.log_input();
    reply::int(out, n as i64)
}

/// INCRBYFLOAT key increment: the sum in Redis's long double and its
/// form, stored as text; logged as `SET key sum KEEPTTL`.
fn incrbyfloat(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let key = a.arg(1);
    let value = match read(cx, key, float80::parse) {
        Err(WrongType) => return cx.wrongtype(out),
        Ok(None) => Some(Ld::ZERO),
        Ok(Some(v)) => v,
    };
    let (Some(value), Some(by)) = (value, float80::parse(a.arg(2))) else {
        return cx.error(out, NOT_FLOAT);
    };
    let sum = float80::add(value, by);
    if !sum.is_finite() {
        return cx.error(out, "ERR increment would produce NaN or Infinity");
    }
    let text = float80::human(sum);
    replace(cx, key, Some(Value::Str(text.clone().into_bytes())));
    reply::bulk(out, text.as_bytes());
    cx.log(&[b"SET", key, text.as_bytes(), b"KEEPTTL"]);
}

/// A bit offset (Redis's `getBitOffsetFromArgument`): a non-negative
/// integer whose byte fits the string bound.
fn bit_offset(cx: &Running, a: &Args, out: &mut Vec<u8>) -> Option<u64> {
    match parse_i64(a.arg(2)) {
        Some(n) if n >= 0 && ((n >> 3) as u64) < max_len(cx) as u64 => Some(n as u64),
        _ => {
            cx.error(out, BIT_OFFSET);
            None
        }
    }
}

/// SETBIT key offset 0|1: the bit's old value; the string grown with
/// zeros to reach it.
fn setbit(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let Some(offset) = bit_offset(cx, a, out) else {
        return;
    };
    let on = match parse_i64(a.arg(3)) {
        Some(b @ (0 | 1)) => b as u8,
        _ => return cx.error(out, BIT_VALUE),
    };
    let key = a.arg(1);
    let (byte, bit) = ((offset >> 3) as usize, 7 - (offset & 7) as u8);
    let (len, was) = match read(cx, key, |s| {
        (s.len(), s.get(byte).map_or(0, |b| b >> bit & 1))
    }) {
        Ok(Some((len, was))) => (Some(len), was),
        Ok(None) => (None, 0),
        Err(WrongType) => return cx.wrongtype(out),
    };
    let grown = len.is_none_or(|n| n <= byte);
    if grown || was != on {
        overwrite(cx, key, (byte, 1), len, |s| {
            if s.len() <= byte {
                make_room(s, byte + 1, len);
                s.resize(byte + 1, 0);
            }
            s[byte] = s[byte] & !(1 << bit) | on << bit;
        });
        cx.log_input();
    }
    reply::int(out, i64::from(was))
}

/// GETBIT key offset: the bit, 0 past the end.
fn getbit(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let Some(offset) = bit_offset(cx, a, out) else {
        return;
    };
    let (byte, bit) = ((offset >> 3) as usize, 7 - (offset & 7) as u8);
    match read(cx, a.arg(1), |s| s.get(byte).map_or(0, |b| b >> bit & 1)) {
        Ok(b) => reply::int(out, i64::from(b.unwrap_or(0))),
        Err(WrongType) => cx.wrongtype(out),
    }
}

/// LCS's options.
#[derive(Default)]
struct LcsOpts {
    len: bool,
    idx: bool,
    withmatchlen: bool,
    minmatchlen: u64,
}

/// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN].
fn lcs(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let (x, y) = match (
        read(cx, a.arg(1), <[u8]>::to_vec),
        read(cx, a.arg(2), <[u8]>::to_vec),
    ) {
        (Ok(x), Ok(y)) => (x.unwrap_or_default(), y.unwrap_or_default()),
        _ => return cx.error(out, "ERR The specified keys must contain string values"),
    };
    let mut o = LcsOpts::default();
    let mut j = 3;
    while j < a.count() {
        let opt = c_str(a.arg(j));
        let is = |w: &str| opt.eq_ignore_ascii_case(w.as_bytes());
        if is("idx") {
            o.idx = true;
        } else if is("len") {
            o.len = true;
        } else if is("withmatchlen") {
            o.withmatchlen = true;
        } else if is("minmatchlen") && j + 1 < a.count() {
            let Some(n) = int_arg(a, j + 1, out) else {
                return;
            };
            o.minmatchlen = n.max(0) as u64;
            j += 1;
        } else {
            return cx.error(out, SYNTAX);
        }
        j += 1;
    }
    if o.len && o.idx {
        return cx.error(
            out,
            "ERR If you want both the length and indexes, please just use IDX.",
        );
    }
    if x.len() as u64 >= u64::from(u32::MAX) - 1 || y.len() as u64 >= u64::from(u32::MAX) - 1 {
        return cx.error(out, "ERR String too long for LCS");
    }
    let cells = (x.len() as u64 + 1) * (y.len() as u64 + 1);
    if cells.saturating_mul(4) > max_len(cx) as u64 {
        return cx.error(
            out,
            "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len",
        );
    }
    lcs_reply(&x, &y, &o, out)
}

/// A range both strings match: a's first and last byte, b's, its length.
type Match = [u64; 5];

/// LCS's reply: the common subsequence, its length, or its matching
/// ranges (last first) and length.
fn lcs_reply(a: &[u8], b: &[u8], o: &LcsOpts, out: &mut Vec<u8>) {
    let table = lcs_table(a, b);
    let total = table[table.len() - 1];
    if o.len && !o.idx {
        return reply::int(out, i64::from(total));
    }
    let (seq, matches) = lcs_walk(a, b, &table, o.minmatchlen);
    if !o.idx {
        return reply::bulk(out, &seq);
    }
    reply::array(out, 4);
    reply::bulk(out, b"matches");
    reply::array(out, matches.len());
    for m in &matches {
        reply::array(out, 2 + usize::from(o.withmatchlen));
        for pair in [[m[0], m[1]], [m[2], m[3]]] {
            reply::array(out, 2);
            pair.iter().for_each(|&n| reply::int(out, n as i64));
        }
        if o.withmatchlen {
            reply::int(out, m[4] as i64);
        }
    }
    reply::bulk(out, b"len");
    reply::int(out, i64::from(total));
}

/// LCS's table walked back from its end as Redis walks it: the common
/// subsequence, and the ranges matched (those of at least `min` bytes,
/// 0 for all), last first.
fn lcs_walk(a: &[u8], b: &[u8], table: &[u32], min: u64) -> (Vec<u8>, Vec<Match>) {
    let w = b.len() + 1;
    let at = |i: usize, j: usize| table[i * w + j];
    let mut seq = vec![0u8; at(a.len(), b.len()) as usize];
    let mut matches = Vec::new();
    let (mut i, mut j, mut k) = (a.len(), b.len(), seq.len());
    // The current range: a's start and end, b's start and end.
    let mut cur: Option<[usize; 4]> = None;
    while i > 0 && j > 0 {
        let mut emit = false;
        if a[i - 1] == b[j - 1] {
            seq[k - 1] = a[i - 1];
            match &mut cur {
                None => cur = Some([i - 1, i - 1, j - 1, j - 1]),
                Some(r) if r[0] == i && r[2] == j => {
                    r[0] -= 1;
                    r[2] -= 1;
                }
                Some(_) => emit = true,
            }
            emit |= cur.is_some_and(|r| r[0] == 0 || r[2] == 0);
            (i, j, k) = (i - 1, j - 1, k - 1);
        } else {
            if at(i - 1, j) > at(i, j - 1) {
                i -= 1;
            } else {
                j -= 1;
            }
            emit = cur.is_some();
        }
        if let Some(r) = cur.take_if(|_| emit) {
            let len = (r[1] - r[0] + 1) as u64;
            if min == 0 || len >= min {
                matches.push([r[0] as u64, r[1] as u64, r[2] as u64, r[3] as u64, len]);
            }
        }
    }
    (seq, matches)
}

/// The lengths of the longest common subsequences of every pair of
/// prefixes, row by row (`a.len() + 1` rows of `b.len() + 1`).
fn lcs_table(a: &[u8], b: &[u8]) -> Vec<u32> {
    let w = b.len() + 1;
    let mut t = vec![0u32; (a.len() + 1) * w];
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            t[i * w + j] = if a[i - 1] == b[j - 1] {
                t[(i - 1) * w + j - 1] + 1
            } else {
                t[(i - 1) * w + j].max(t[i * w + j - 1])
            };
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn getrange_clamps_as_redis() {
        let s = 11; // "Hello World"
        assert_eq!(range(s, 0, 3), Some((0, 3)));
        assert_eq!(range(s, 0, -1), Some((0, 10)));
        assert_eq!(range(s, -4, -1), Some((7, 10)));
        assert_eq!(range(s, 5, 3), None);
        assert_eq!(range(s, 5, 5000), Some((5, 10)));
        assert_eq!(range(s, -5000, 10000), Some((0, 10)));
        assert_eq!(range(s, -1, -5), None);
        assert_eq!(range(0, 0, -1), None);
        assert_eq!(range(3, 0, 4294967297), Some((0, 2)));
        assert_eq!(range(3, i64::MIN, i64::MAX), Some((0, 2)));
    }

    #[test]
    fn lcs_walks_back_as_redis() {
        let o = LcsOpts {
            idx: true,
            withmatchlen: true,
            ..LcsOpts::default()
        };
        let mut out = Vec::new();
        lcs_reply(b"ohmytext", b"mynewtext", &o, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "*4\r\n$7\r\nmatches\r\n*2\r\n\
             *3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n\
             *3\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n:2\r\n\
             $3\r\nlen\r\n:6\r\n"
        );
        let mut out = Vec::new();
        lcs_reply(b"ohmytext", b"mynewtext", &LcsOpts::default(), &mut out);
        assert_eq!(out, b"$6\r\nmytext\r\n");
    }
}
