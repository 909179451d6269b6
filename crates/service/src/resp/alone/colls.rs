//! Sets, hashes and sorted sets, as Redis 7.0 serves them: SADD, SREM,
//! SISMEMBER, SMISMEMBER, SMEMBERS, SCARD, SPOP, SRANDMEMBER, SMOVE, and
//! the set algebra (SINTER, SINTERCARD, SUNION, SDIFF and their STOREs);
//! HSET, HMSET, HSETNX, HGET,
//! HMGET, HGETALL, HKEYS, HVALS, HDEL, HLEN, HSTRLEN, HINCRBY,
//! HINCRBYFLOAT, HEXISTS, HRANDFIELD; ZADD, ZINCRBY, ZREM, ZSCORE,
//! ZMSCORE, ZCARD, ZCOUNT, ZLEXCOUNT, ZRANK, ZREVRANK, ZRANDMEMBER, ZRANGE
//! and its other forms (ZREVRANGE, Z[REV]RANGEBYSCORE, Z[REV]RANGEBYLEX,
//! ZRANGESTORE), ZPOPMIN, ZPOPMAX, ZMPOP, ZREMRANGEBYRANK/SCORE/LEX, and
//! the sorted-set algebra (ZUNION, ZINTER, ZDIFF, their STOREs,
//! ZINTERCARD); SSCAN, HSCAN, ZSCAN; GEOADD (a sorted set of
//! geohashes).
//!
//! A write takes the key's collection out of the store, changes it and
//! puts it back (an emptied one leaves the key absent, as Redis deletes
//! it); a read looks at it in place. A key of another type answers
//! WRONGTYPE and stays as it was. Arguments are read, and their errors
//! answered, before the key is looked at, in Redis's order.
//!
//! Logged: the command as it arrived when it changed anything, but SPOP,
//! whose pick is random: it is logged as the `SREM` of what it popped
//! (as `DEL` when it popped the whole set, as Redis propagates it); and
//! ZMPOP, logged as the ZPOPMIN or ZPOPMAX it came to; and GEOADD,
//! logged as the ZADD it came to.

pub(crate) mod float;
mod geo;
mod hashes;
mod scans;
mod setops;
mod sets;
mod zmore;
mod zsetops;
mod zsets;

use super::Running;
use crate::resp::Args;
use serverlab_proto::resp::number::parse_i64;
use serverlab_proto::resp::reply::{NOT_INTEGER, NOT_POSITIVE, SYNTAX};
use serverlab_proto::resp::{reply, Name};
use serverlab_store::resp::{Coll, Held, Value, WrongType, ZSet};
use std::collections::{HashMap, HashSet};

type Set = HashSet<Box<[u8]>>;
type Hash = HashMap<Box<[u8]>, Box<[u8]>>;

/// Serves `name`.
pub(crate) fn run(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    use Name::*;
    let done = match name {
        SAdd | SRem | SIsMember | SMIsMember | SMembers | SCard | SPop | SRandMember | SMove => {
            sets::run(name, a, cx, out)
        }
        SInter | SInterCard | SInterStore | SUnion | SUnionStore | SDiff | SDiffStore => {
            setops::run(name, a, cx, out)
        }
        HSet | HMSet | HGet | HMGet | HGetAll | HDel | HLen | HIncrBy | HExists | HSetNx
        | HStrLen | HIncrByFloat | HKeys | HVals | HRandField => hashes::run(name, a, cx, out),
        ZAdd | ZRem | ZScore | ZCard | ZRange | ZPopMin | ZPopMax | ZIncrBy | ZRevRange
        | ZRangeByScore | ZRevRangeByScore | ZRangeByLex | ZRevRangeByLex | ZRangeStore
        | ZCount | ZLexCount | ZRank | ZRevRank | ZMScore | ZRandMember | ZRemRangeByScore
        | ZRemRangeByRank | ZRemRangeByLex | ZMPop | ZUnion | ZInter | ZDiff | ZInterCard
        | ZUnionStore | ZInterStore | ZDiffStore | BZPopMin | BZPopMax | BZMPop => {
            zsets::run(name, a, cx, out)
        }
        SScan | HScan | ZScan => scans::run(name, a, cx, out),
        GeoAdd => zsets::geoadd(a, cx, out),
        _ => unreachable!("{name:?} is not a collection command"),
    };
    match done {
        Ok(()) => {}
        Err(Fail::WrongType) => cx.wrongtype(out),
        Err(Fail::Err(msg)) => cx.error(out, msg),
        Err(Fail::Said(msg)) => cx.error(out, &msg),
    }
}

/// Why a command answers an error (and nothing else: a command that
/// fails has written no reply and changed nothing).
enum Fail {
    WrongType,
    Err(&'static str),
    Said(String),
}

impl From<WrongType> for Fail {
    fn from(_: WrongType) -> Fail {
        Fail::WrongType
    }
}

type Done = Result<(), Fail>;

/// One of the collection types, as a key's value.
trait Kind: Sized {
    fn of(c: &Coll) -> Option<&Self>;
    fn from_value(v: Value) -> Result<Self, Value>;
    fn into_value(self) -> Value;
}

impl Kind for Set {
    fn of(c: &Coll) -> Option<&Self> {
        match c {
            Coll::Set(s) => Some(s),
            _ => None,
        }
    }
    fn from_value(v: Value) -> Result<Self, Value> {
        match v {
            Value::Coll(Coll::Set(s)) => Ok(s),
            v => Err(v),
        }
    }
    fn into_value(self) -> Value {
        Value::Coll(Coll::Set(self))
    }
}

impl Kind for Hash {
    fn of(c: &Coll) -> Option<&Self> {
        match c {
            Coll::Hash(h) => Some(h),
            _ => None,
        }
    }
    fn from_value(v: Value) -> Result<Self, Value> {
        match v {
            Value::Coll(Coll::Hash(h)) => Ok(h),
            v => Err(v),
        }
    }
    fn into_value(self) -> Value {
        Value::Coll(Coll::Hash(self))
    }
}

impl Kind for ZSet {
    fn of(c: &Coll) -> Option<&Self> {
        match c {
            Coll::ZSet(z) => Some(z),
            _ => None,
        }
    }
    fn from_value(v: Value) -> Result<Self, Value> {
        match v {
            Value::Coll(Coll::ZSet(z)) => Ok(z),
            v => Err(v),
        }
    }
    fn into_value(self) -> Value {
        Value::Coll(Coll::ZSet(self))
    }
}

/// `f` of the key's `T` in place (`None`: no such key).
fn read<T: Kind, R>(
    cx: &Running,
    key: &[u8],
    f: impl FnOnce(Option<&T>) -> R,
) -> Result<R, WrongType> {
    let mut f = Some(f);
    let mut got = None;
    let mut wrong = false;
    cx.store().peek(key, &mut |held| match held {
        Held::Coll(c) if T::of(c).is_some() => {
            let f = f.take().expect("seen once");
            got = Some(f(T::of(c)));
        }
        _ => wrong = true,
    });
    if wrong {
        return Err(WrongType);
    }
    Ok(match got {
        Some(r) => r,
        None => (f.take().expect("not seen"))(None),
    })
}

/// The key's `T`, taken out (`None`: no such key); a key of another type
/// is left as it was.
fn take<T: Kind>(cx: &Running, key: &[u8]) -> Result<Option<T>, WrongType> {
    match cx.store().take(key) {
        None => Ok(None),
        Some(v) => match T::from_value(v) {
            Ok(t) => Ok(Some(t)),
            Err(v) => {
                cx.store().put(key, v);
                Err(WrongType)
            }
        },
    }
}

/// Puts `t` back under the key (an empty one leaves it absent).
fn put<T: Kind>(cx: &Running, key: &[u8], t: T) {
    cx.store().put(key, t.into_value());
}

/// Records, under a log that takes writes back, a step that runs `f` on
/// the key's `T` (an empty one if the key is gone) and puts it back (gone
/// if left empty): what takes back a change of some members or fields.
fn undo<T: Kind + Default + 'static>(
    cx: &mut Running,
    key: &[u8],
    f: impl FnOnce(&mut T) + Send + 'static,
) {
    if !cx.keeps() {
        return;
    }
    let d = cx.here().clone();
    let key: Box<[u8]> = key.into();
    cx.undo(move |_| {
        let mut t = match d.store.take(&key).map(T::from_value) {
            None => T::default(),
            Some(Ok(t)) => t,
            Some(Err(other)) => return d.store.put(&key, other),
        };
        f(&mut t);
        d.store.put(&key, t.into_value());
    });
}

/// A STORE's end (SINTERSTORE, ZUNIONSTORE …): `result`, of `n`
/// members, under `dst` (its deadline dropped), or `dst` deleted for an
/// empty one; its size answered; logged as it arrived if anything
/// changed. What it replaced (moved out) takes it back.
fn stored<T: Kind>(cx: &mut Running, dst: &[u8], result: T, n: usize, out: &mut Vec<u8>) {
    let had = cx.store().exists(dst);
    cx.keep(cx.db, dst);
    if n > 0 {
        put(cx, dst, result);
    } else {
        cx.store().del(dst);
    }
    if n > 0 || had {
        cx.here().expires.remove(dst);
        cx.log_input();
    }
    reply::int(out, n as i64);
}

/// The count of SRANDMEMBER, HRANDFIELD and ZRANDMEMBER: any integer but
/// the one whose negation overflows.
fn random_count(arg: &[u8]) -> Result<i64, Fail> {
    let l = integer(arg)?;
    if l == i64::MIN {
        return Err(Fail::Said(format!(
            "ERR value is out of range, value must between {} and {}",
            -i64::MAX,
            i64::MAX
        )));
    }
    Ok(l)
}

/// An integer argument (Redis's `getLongLongFromObjectOrReply`).
fn integer(arg: &[u8]) -> Result<i64, Fail> {
    parse_i64(arg).ok_or(Fail::Err(NOT_INTEGER))
}

/// A count of 0 or more (`getPositiveLongFromObjectOrReply`: one error
/// for a negative count and for one that is no integer).
fn positive(arg: &[u8]) -> Result<usize, Fail> {
    parse_i64(arg)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or(Fail::Err(NOT_POSITIVE))
}

/// Argument `i` is the word `w`, in any case.
fn is(a: &Args, i: usize, w: &str) -> bool {
    a.arg(i).eq_ignore_ascii_case(w.as_bytes())
}

/// A double as Redis answers it: a bulk string, `%.17g`.
fn bulk_double(out: &mut Vec<u8>, d: f64) {
    reply::bulk(out, float::format(d).as_bytes())
}

/// An array of bulk strings.
fn bulks<'b>(out: &mut Vec<u8>, items: impl ExactSizeIterator<Item = &'b [u8]>) {
    reply::array(out, items.len());
    items.for_each(|b| reply::bulk(out, b));
}
