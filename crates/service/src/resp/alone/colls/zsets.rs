//! Sorted sets: ZADD, ZREM, ZSCORE, ZCARD, ZRANGE (by rank, BYSCORE or
//! BYLEX; REV, LIMIT, WITHSCORES) and ZPOPMIN. Scores are read as
//! Redis's `string2d` reads them and answered as `%.17g`.

use super::{bulk_double, float, integer, is, positive, put, read, take, undo, Done, Fail, SYNTAX};
use crate::resp::alone::Running;
use crate::resp::Args;
use serverlab_proto::resp::reply::NOT_FLOAT;
use serverlab_proto::resp::{reply, Name};
use serverlab_store::resp::ZSet;
use std::cmp::Ordering;
use std::ops::Bound;

pub(super) fn run(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let key = a.arg(1);
    match name {
        Name::ZAdd => zadd(a, cx, out, None),
        Name::ZRem => {
            let Some(mut z) = take::<ZSet>(cx, key)? else {
                reply::int(out, 0);
                return Ok(());
            };
            let removed: Scores = a
                .from(2)
                .filter_map(|m| {
                    let s = z.score(m)?;
                    z.remove(m);
                    Some((m.into(), Some(s)))
                })
                .collect();
            put(cx, key, z);
            let n = removed.len();
            if n > 0 {
                cx.log_input();
                undo(cx, key, move |z: &mut ZSet| put_back(z, removed));
            }
            reply::int(out, n as i64);
            Ok(())
        }
        Name::ZScore => Ok(read(cx, key, |z: Option<&ZSet>| {
            match z.and_then(|z| z.score(a.arg(2))) {
                Some(s) => bulk_double(out, s),
                None => reply::null(out),
            }
        })?),
        Name::ZCard => {
            let n = read(cx, key, |z: Option<&ZSet>| z.map_or(0, ZSet::len))?;
            reply::int(out, n as i64);
            Ok(())
        }
        Name::ZRange
        | Name::ZRevRange
        | Name::ZRangeByScore
        | Name::ZRevRangeByScore
        | Name::ZRangeByLex
        | Name::ZRevRangeByLex
        | Name::ZRangeStore => zrange(Form::of(name), a, cx, out),
        Name::ZPopMin => zpop(a, cx, out, false),
        Name::ZPopMax => zpop(a, cx, out, true),
        Name::ZIncrBy => zadd(a, cx, out, Some(2)),
        _ => super::zmore::run(name, a, cx, out),
    }
}

/// ZADD's options.
#[derive(Default)]
struct Opts {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

impl Opts {
    /// The options from argument 2 on; where the pairs begin.
    fn read(a: &Args) -> (Opts, usize) {
        let mut o = Opts::default();
        let mut i = 2;
        while i < a.count() {
            let flag = match a.arg(i).to_ascii_lowercase().as_slice() {
                b"nx" => &mut o.nx,
                b"xx" => &mut o.xx,
                b"ch" => &mut o.ch,
                b"incr" => &mut o.incr,
                b"gt" => &mut o.gt,
                b"lt" => &mut o.lt,
                _ => break,
            };
            *flag = true;
            i += 1;
        }
        (o, i)
    }

    /// Redis's checks, in its order, given the `args` after the options.
    fn check(&self, args: usize) -> Result<(), Fail> {
        if args % 2 == 1 || args == 0 {
            return Err(Fail::Err(SYNTAX));
        }
        if self.nx && self.xx {
            return Err(Fail::Err(
                "ERR XX and NX options at the same time are not compatible",
            ));
        }
        if ((self.gt || self.lt) && self.nx) || (self.gt && self.lt) {
            return Err(Fail::Err(
                "ERR GT, LT, and/or NX options at the same time are not compatible",
            ));
        }
        if self.incr && args > 2 {
            return Err(Fail::Err(
                "ERR INCR option supports a single increment-element pair",
            ));
        }
        Ok(())
    }
}

/// What adding one member did (Redis's `zsetAdd`).
enum Added {
    New(f64),
    Changed(f64),
    /// Already there with that score.
    Same(f64),
    /// Left alone (NX, XX, GT, LT).
    Nop,
}

/// `score` as kept: `-0` as `0`. Redis keeps a small sorted set (a
/// listpack: at most 128 members of at most 64 bytes) with its scores
/// as text, where `-0` reads back as `0`; only a larger one (a skiplist)
/// answers `-0`. That depends on the set's history, which a log compacted
/// into one ZADD per set does not keep: here it is `0` at any size, so a
/// replay gives back what was answered.
pub(super) fn kept(score: f64) -> f64 {
    if score == 0.0 {
        0.0
    } else {
        score
    }
}

/// Adds `member` at `score` (or by it, INCR) as the options allow;
/// `None`: the sum is NaN.
fn add(z: &mut ZSet, member: &[u8], score: f64, o: &Opts) -> Option<Added> {
    let Some(cur) = z.score(member) else {
        if o.xx {
            return Some(Added::Nop);
        }
        z.insert(member, kept(score));
        return Some(Added::New(score));
    };
    if o.nx {
        return Some(Added::Nop);
    }
    let score = if o.incr { score + cur } else { score };
    if score.is_nan() {
        return None;
    }
    if (o.lt && score >= cur) || (o.gt && score <= cur) {
        return Some(Added::Nop);
    }
    if score == cur {
        return Some(Added::Same(score));
    }
    z.insert(member, kept(score));
    Some(Added::Changed(score))
}

/// ZADD, or (`incr`: where its increment is) ZINCRBY key increment
/// member, which is ZADD's INCR as Redis serves it.
fn zadd(a: &Args, cx: &mut Running, out: &mut Vec<u8>, incr: Option<usize>) -> Done {
    let key = a.arg(1);
    let (o, at) = match incr {
        Some(at) => (
            Opts {
                incr: true,
                ..Opts::default()
            },
            at,
        ),
        None => Opts::read(a),
    };
    o.check(a.count() - at)?;
    let scores = a
        .from(at)
        .step_by(2)
        .map(|s| float::string2d(s).ok_or(Fail::Err(NOT_FLOAT)))
        .collect::<Result<Vec<f64>, Fail>>()?;
    let pairs = scores.into_iter().zip(a.from(at + 1).step_by(2));
    let (added, changed, done) = add_all(cx, key, &o, pairs)?;
    if added + changed > 0 {
        cx.log_input();
    }
    match (o.incr, done) {
        (true, Some(s)) => bulk_double(out, s),
        (true, None) => reply::null(out),
        (false, _) => reply::int(out, if o.ch { added + changed } else { added }),
    }
    Ok(())
}

/// Adds each (score, member) to `key`'s sorted set as ZADD's options
/// `o` say, recording what takes it back: how many members were added,
/// how many changed, and the last score set (ZADD … INCR's reply).
fn add_all<'a>(
    cx: &mut Running,
    key: &[u8],
    o: &Opts,
    pairs: impl Iterator<Item = (f64, &'a [u8])>,
) -> Result<(i64, i64, Option<f64>), Fail> {
    let z = take::<ZSet>(cx, key)?;
    let (mut added, mut changed, mut done) = (0, 0, None);
    // Each member's score before it changed (`None`: absent), in order.
    let mut was: Scores = Vec::new();
    if z.is_some() || !o.xx {
        let mut z = z.unwrap_or_default();
        for (score, member) in pairs {
            // Looked up only where an undo is kept.
            let old = if cx.keeps() { z.score(member) } else { None };
            let Some(what) = add(&mut z, member, score, o) else {
                put(cx, key, z);
                return Err(Fail::Err("ERR resulting score is not a number (NaN)"));
            };
            if cx.keeps() && matches!(what, Added::New(_) | Added::Changed(_)) {
                was.push((member.into(), old));
            }
            match what {
                Added::New(s) => (added, done) = (added + 1, Some(s)),
                Added::Changed(s) => (changed, done) = (changed + 1, Some(s)),
                Added::Same(s) => done = Some(s),
                Added::Nop => {}
            }
        }
        put(cx, key, z);
    }
    if added + changed > 0 {
        undo(cx, key, move |z: &mut ZSet| put_back(z, was));
    }
    Ok((added, changed, done))
}

/// GEOADD key [NX|XX] [CH] longitude latitude member …, as Redis 7.0
/// serves it: each position becomes its member's score (a 52-bit
/// geohash, [`super::geo::score`]) and the rest is ZADD's; logged as the
/// `ZADD` it came to, as Redis propagates it.
pub(super) fn geoadd(a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let key = a.arg(1);
    let mut o = Opts::default();
    let mut at = 2;
    while at < a.count() {
        match a.arg(at).to_ascii_lowercase().as_slice() {
            b"nx" => o.nx = true,
            b"xx" => o.xx = true,
            b"ch" => o.ch = true,
            _ => break,
        }
        at += 1;
    }
    if !(a.count() - at).is_multiple_of(3) || (o.nx && o.xx) {
        return Err(Fail::Err(SYNTAX));
    }
    let mut scores = Vec::new();
    let mut i = at;
    while i < a.count() {
        scores.push(super::geo::score(a.arg(i), a.arg(i + 1))?);
        i += 3;
    }
    o.check(scores.len() * 2)?;
    let members: Vec<&[u8]> = a.from(at + 2).step_by(3).collect();
    let (added, changed, _) = add_all(
        cx,
        key,
        &o,
        scores.iter().copied().zip(members.iter().copied()),
    )?;
    if added + changed > 0 {
        let texts: Vec<String> = scores.iter().map(|s| (*s as i64).to_string()).collect();
        let mut zadd: Vec<&[u8]> = vec![b"ZADD", key];
        zadd.extend(a.from(2).take(at - 2));
        for (score, member) in texts.iter().zip(&members) {
            zadd.push(score.as_bytes());
            zadd.push(member);
        }
        cx.log(&zadd);
    }
    reply::int(out, if o.ch { added + changed } else { added });
    Ok(())
}

/// ZPOPMIN key [count] (ZPOPMAX, `max`): members and scores from the
/// lowest (the highest).
fn zpop(a: &Args, cx: &mut Running, out: &mut Vec<u8>, max: bool) -> Done {
    if a.count() > 3 {
        return Err(Fail::Err(SYNTAX));
    }
    let count = match a.try_arg(2) {
        Some(c) => positive(c)?,
        None => 1,
    };
    let key = a.arg(1);
    let Some(mut z) = take::<ZSet>(cx, key)? else {
        reply::array(out, 0);
        return Ok(());
    };
    let n = count.min(z.len());
    reply::array(out, n * 2);
    let mut popped: Scores = Vec::with_capacity(n);
    for _ in 0..n {
        let (m, s) = if max { z.pop_max() } else { z.pop_min() }.expect("within the count");
        reply::bulk(out, &m);
        bulk_double(out, s);
        popped.push((m, Some(s)));
    }
    put(cx, key, z);
    if n > 0 {
        cx.log_input();
        undo(cx, key, move |z: &mut ZSet| put_back(z, popped));
    }
    Ok(())
}

/// Members and their scores as they were (`None`: absent), in the order
/// they were changed.
pub(super) type Scores = Vec<(Box<[u8]>, Option<f64>)>;

/// Puts members back as they were, the last changed first.
pub(super) fn put_back(z: &mut ZSet, was: Scores) {
    for (m, s) in was.into_iter().rev() {
        match s {
            Some(s) => z.insert(&m, s),
            None => z.remove(&m),
        };
    }
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum By {
    Rank,
    Score,
    Lex,
}

/// ZRANGE's range, read.
pub(super) enum Range<'a> {
    Rank(i64, i64),
    Score(ScoreEnd, ScoreEnd),
    Lex(LexEnd<'a>, LexEnd<'a>),
}

/// Which of ZRANGE's forms a command is (Redis's `zrangeGenericCommand`
/// arguments): where its source key is, the range kind and direction it
/// fixes (`None`: its options choose), and whether it stores.
#[derive(Clone, Copy)]
struct Form {
    key: usize,
    by: Option<By>,
    rev: Option<bool>,
    store: bool,
}

impl Form {
    fn of(name: Name) -> Form {
        let (key, by, rev, store) = match name {
            Name::ZRange => (1, None, None, false),
            Name::ZRangeStore => (2, None, None, true),
            Name::ZRevRange => (1, Some(By::Rank), Some(true), false),
            Name::ZRangeByScore => (1, Some(By::Score), Some(false), false),
            Name::ZRevRangeByScore => (1, Some(By::Score), Some(true), false),
            Name::ZRangeByLex => (1, Some(By::Lex), Some(false), false),
            _ => (1, Some(By::Lex), Some(true), false),
        };
        Form {
            key,
            by,
            rev,
            store,
        }
    }
}

/// ZRANGE's options after `key start stop`.
struct ZRangeOpts {
    by: By,
    rev: bool,
    withscores: bool,
    offset: i64,
    /// -1: no LIMIT (or LIMIT's count was -1, as Redis cannot tell).
    limit: i64,
}

impl ZRangeOpts {
    fn read(a: &Args, f: Form) -> Result<ZRangeOpts, Fail> {
        let mut o = ZRangeOpts {
            by: By::Rank,
            rev: false,
            withscores: false,
            offset: 0,
            limit: -1,
        };
        let (mut by, mut rev) = (f.by, f.rev);
        let argc = a.count();
        let mut j = f.key + 3;
        while j < argc {
            if !f.store && is(a, j, "withscores") {
                o.withscores = true;
            } else if is(a, j, "limit") && argc - j > 2 {
                o.offset = integer(a.arg(j + 1))?;
                o.limit = integer(a.arg(j + 2))?;
                j += 2;
            } else if rev.is_none() && is(a, j, "rev") {
                rev = Some(true);
            } else if by.is_none() && is(a, j, "bylex") {
                by = Some(By::Lex);
            } else if by.is_none() && is(a, j, "byscore") {
                by = Some(By::Score);
            } else {
                return Err(Fail::Err(SYNTAX));
            }
            j += 1;
        }
        o.by = by.unwrap_or(By::Rank);
        o.rev = rev.unwrap_or(false);
        if o.limit != -1 && o.by == By::Rank {
            return Err(Fail::Err(
                "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
            ));
        }
        if o.withscores && o.by == By::Lex {
            return Err(Fail::Err(
                "ERR syntax error, WITHSCORES not supported in combination with BYLEX",
            ));
        }
        Ok(o)
    }
}

/// A score range's two ends, or Redis's error for them.
pub(super) fn score_range(lo: &[u8], hi: &[u8]) -> Result<(ScoreEnd, ScoreEnd), Fail> {
    match (score_end(lo), score_end(hi)) {
        (Some(min), Some(max)) => Ok((min, max)),
        _ => Err(Fail::Err("ERR min or max is not a float")),
    }
}

/// A lex range's two ends, or Redis's error for them.
pub(super) fn lex_range<'a>(lo: &'a [u8], hi: &'a [u8]) -> Result<(LexEnd<'a>, LexEnd<'a>), Fail> {
    match (lex_end(lo), lex_end(hi)) {
        (Some(min), Some(max)) => Ok((min, max)),
        _ => Err(Fail::Err("ERR min or max not valid string range item")),
    }
}

/// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count]
/// [WITHSCORES], and the forms that fix some of it (ZREVRANGE,
/// Z[REV]RANGEBYSCORE, Z[REV]RANGEBYLEX) or store it (ZRANGESTORE
/// destination source …).
fn zrange(f: Form, a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let o = ZRangeOpts::read(a, f)?;
    // By score or lex, REV names the range from its top.
    let (lo, hi) = if o.rev && o.by != By::Rank {
        (a.arg(f.key + 2), a.arg(f.key + 1))
    } else {
        (a.arg(f.key + 1), a.arg(f.key + 2))
    };
    let range = match o.by {
        By::Rank => Range::Rank(integer(lo)?, integer(hi)?),
        By::Score => {
            let (min, max) = score_range(lo, hi)?;
            Range::Score(min, max)
        }
        By::Lex => {
            let (min, max) = lex_range(lo, hi)?;
            Range::Lex(min, max)
        }
    };
    let items = |z: &ZSet| -> Vec<(Box<[u8]>, f64)> {
        let items = match range {
            Range::Rank(start, end) => by_rank(z, start, end, o.rev),
            Range::Score(min, max) => window(by_score(z, min, max, o.rev), o.offset, o.limit),
            Range::Lex(min, max) => window(by_lex(z, min, max, o.rev), o.offset, o.limit),
        };
        items.into_iter().map(|(m, s)| (m.into(), s)).collect()
    };
    if f.store {
        let got = read(cx, a.arg(2), |z: Option<&ZSet>| z.map(items))?;
        let mut z = ZSet::default();
        for (m, s) in got.into_iter().flatten() {
            z.insert(&m, s);
        }
        super::zmore::stored(cx, a.arg(1), z, out);
        return Ok(());
    }
    Ok(read(cx, a.arg(1), |z: Option<&ZSet>| {
        let Some(z) = z else {
            return reply::array(out, 0);
        };
        let all = match range {
            Range::Rank(start, end) => by_rank(z, start, end, o.rev),
            Range::Score(min, max) => window(by_score(z, min, max, o.rev), o.offset, o.limit),
            Range::Lex(min, max) => window(by_lex(z, min, max, o.rev), o.offset, o.limit),
        };
        reply::array(out, all.len() * if o.withscores { 2 } else { 1 });
        for (m, s) in all {
            reply::bulk(out, m);
            if o.withscores {
                bulk_double(out, s);
            }
        }
    })?)
}

pub(super) type Items<'z> = Vec<(&'z [u8], f64)>;
pub(super) type Walk<'z> = Box<dyn Iterator<Item = (&'z [u8], f64)> + 'z>;

/// Ranks `start` to `end` (negative: from the end), from the lowest
/// score or, `rev`, the highest; walked from whichever end is nearer.
pub(super) fn by_rank(z: &ZSet, start: i64, end: i64, rev: bool) -> Items<'_> {
    let len = z.len() as i64;
    let start = if start < 0 { len + start } else { start }.max(0);
    let end = if end < 0 { len + end } else { end };
    if start > end || start >= len {
        return Vec::new();
    }
    let (start, end, len) = (start as usize, end.min(len - 1) as usize, len as usize);
    let (n, after) = (end - start + 1, len - 1 - end);
    let mut items: Items = match (rev, start <= after) {
        (false, true) => z.iter().skip(start).take(n).collect(),
        (true, true) => z.iter().rev().skip(start).take(n).collect(),
        (false, false) => z.iter().rev().skip(after).take(n).collect(),
        (true, false) => z.iter().skip(after).take(n).collect(),
    };
    if start > after {
        items.reverse();
    }
    items
}

/// LIMIT offset count over a walk: a negative offset finds nothing, a
/// negative count is no limit (as Redis walks them).
pub(super) fn window(walk: Walk<'_>, offset: i64, limit: i64) -> Items<'_> {
    let Ok(offset) = usize::try_from(offset) else {
        return Vec::new();
    };
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    walk.skip(offset).take(limit).collect()
}

/// One end of a score range: `(` makes it open.
#[derive(Clone, Copy)]
pub(super) struct ScoreEnd {
    v: f64,
    open: bool,
}

pub(super) fn score_end(s: &[u8]) -> Option<ScoreEnd> {
    match s.first() {
        Some(b'(') => float::range_end(&s[1..]).map(|v| ScoreEnd { v, open: true }),
        _ => float::range_end(s).map(|v| ScoreEnd { v, open: false }),
    }
}

/// The next double up (`f64::next_up`, newer than this workspace's
/// minimum Rust).
fn next_up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        x
    } else if x == 0.0 {
        f64::from_bits(1)
    } else if x > 0.0 {
        f64::from_bits(x.to_bits() + 1)
    } else {
        f64::from_bits(x.to_bits() - 1)
    }
}

/// The members scored from `min` to `max`, upwards; or, `rev`, from
/// `max` down.
pub(super) fn by_score(z: &ZSet, min: ScoreEnd, max: ScoreEnd, rev: bool) -> Walk<'_> {
    let empty = min.v > max.v || (min.v == max.v && (min.open || max.open));
    if empty || (min.open && min.v == f64::INFINITY) {
        return Box::new(std::iter::empty());
    }
    if rev {
        let from = match max {
            ScoreEnd { v, open: true } => Bound::Excluded((v, &b""[..])),
            ScoreEnd { v, .. } if v == f64::INFINITY => Bound::Unbounded,
            ScoreEnd { v, .. } => Bound::Excluded((next_up(v), &b""[..])),
        };
        let above = move |s: f64| if min.open { s > min.v } else { s >= min.v };
        Box::new(z.iter_from(from, true).take_while(move |(_, s)| above(*s)))
    } else {
        let from = match min {
            ScoreEnd { v, open: true } => Bound::Included((next_up(v), &b""[..])),
            ScoreEnd { v, .. } => Bound::Included((v, &b""[..])),
        };
        let below = move |s: f64| if max.open { s < max.v } else { s <= max.v };
        Box::new(z.iter_from(from, false).take_while(move |(_, s)| below(*s)))
    }
}

/// One end of a lex range: `-` and `+` (below and above every member),
/// `[m` (closed) or `(m` (open).
#[derive(Clone, Copy)]
pub(super) enum LexEnd<'a> {
    Least,
    Most,
    Closed(&'a [u8]),
    Open(&'a [u8]),
}

pub(super) fn lex_end(s: &[u8]) -> Option<LexEnd<'_>> {
    // A C string: `+` or `-` alone, up to a NUL.
    let alone = s.get(1).is_none_or(|&b| b == 0);
    match s.first() {
        Some(b'-') if alone => Some(LexEnd::Least),
        Some(b'+') if alone => Some(LexEnd::Most),
        Some(b'(') => Some(LexEnd::Open(&s[1..])),
        Some(b'[') => Some(LexEnd::Closed(&s[1..])),
        _ => None,
    }
}

impl LexEnd<'_> {
    /// How `m` compares with this end's value.
    fn cmp(&self, m: &[u8]) -> Ordering {
        match self {
            LexEnd::Least => Ordering::Greater,
            LexEnd::Most => Ordering::Less,
            LexEnd::Closed(v) | LexEnd::Open(v) => m.cmp(v),
        }
    }

    /// `-`, `+` and `(m` leave their value out.
    fn open(&self) -> bool {
        !matches!(self, LexEnd::Closed(_))
    }

    fn value(&self) -> Option<&[u8]> {
        match self {
            LexEnd::Closed(v) | LexEnd::Open(v) => Some(v),
            _ => None,
        }
    }

    /// Redis's comparison of two ends' values (`sdscmplex`).
    fn cmp_end(&self, other: &LexEnd) -> Ordering {
        match (self, other) {
            (LexEnd::Least, LexEnd::Least) | (LexEnd::Most, LexEnd::Most) => Ordering::Equal,
            (LexEnd::Least, _) | (_, LexEnd::Most) => Ordering::Less,
            (LexEnd::Most, _) | (_, LexEnd::Least) => Ordering::Greater,
            (a, b) => a.value().cmp(&b.value()),
        }
    }
}

/// The members from `min` to `max` bytewise (meant for members of one
/// score, as Redis means it), upwards; or, `rev`, from `max` down. With
/// one score throughout, the walk starts at `min` (or `max`); else, if
/// the last member is at or above `min` and the first at or below `max`
/// (Redis's check of a range), it starts at the first member in range
/// and stops at the first after it that is not.
pub(super) fn by_lex<'z>(z: &'z ZSet, min: LexEnd<'z>, max: LexEnd<'z>, rev: bool) -> Walk<'z> {
    let order = min.cmp_end(&max);
    if order == Ordering::Greater || (order == Ordering::Equal && (min.open() || max.open())) {
        return Box::new(std::iter::empty());
    }
    let above = move |m: &[u8]| {
        let c = min.cmp(m);
        c == Ordering::Greater || (c == Ordering::Equal && !min.open())
    };
    let below = move |m: &[u8]| {
        let c = max.cmp(m);
        c == Ordering::Less || (c == Ordering::Equal && !max.open())
    };
    // Redis's `zslIsInLexRange`: nothing unless the last member is at
    // or above `min` and the first at or below `max`.
    match (z.iter().next(), z.iter().next_back()) {
        (Some((first, _)), Some((last, _))) if above(last) && below(first) => {}
        _ => return Box::new(std::iter::empty()),
    }
    let one_score = match (z.iter().next(), z.iter().next_back()) {
        (Some((_, a)), Some((_, b))) if a == b => Some(a),
        _ => None,
    };
    let from = |end: LexEnd<'z>, s: f64| match end {
        LexEnd::Open(v) => Bound::Excluded((s, v)),
        LexEnd::Closed(v) => Bound::Included((s, v)),
        _ => Bound::Unbounded,
    };
    let walk: Walk<'z> = match (one_score, rev) {
        (Some(s), false) => z.iter_from(from(min, s), false),
        (Some(s), true) => z.iter_from(from(max, s), true),
        (None, false) => Box::new(z.iter().skip_while(move |(m, _)| !above(m))),
        (None, true) => Box::new(z.iter().rev().skip_while(move |(m, _)| !below(m))),
    };
    if rev {
        Box::new(walk.take_while(move |(m, _)| above(m)))
    } else {
        Box::new(walk.take_while(move |(m, _)| below(m)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zset(items: &[(&str, f64)]) -> ZSet {
        let mut z = ZSet::default();
        for (m, s) in items {
            z.insert(m.as_bytes(), *s);
        }
        z
    }

    fn names(items: Items) -> String {
        items
            .iter()
            .map(|(m, _)| std::str::from_utf8(m).unwrap())
            .collect::<Vec<_>>()
            .join(",")
    }

    #[test]
    fn ranks_as_redis_clamps_them_either_way() {
        let z = zset(&[("a", 1.0), ("b", 2.0), ("c", 3.0), ("d", 4.0), ("e", 5.0)]);
        assert_eq!(names(by_rank(&z, 0, -1, false)), "a,b,c,d,e");
        assert_eq!(names(by_rank(&z, 3, 100, false)), "d,e");
        assert_eq!(names(by_rank(&z, -2, -1, true)), "b,a");
        assert_eq!(names(by_rank(&z, 0, 1, true)), "e,d");
        assert_eq!(names(by_rank(&z, -100, 0, false)), "a");
        assert_eq!(names(by_rank(&z, i64::MIN, i64::MAX, false)), "a,b,c,d,e");
        assert_eq!(names(by_rank(&z, 2, 1, false)), "");
        assert_eq!(names(by_rank(&z, 5, 9, false)), "");
    }

    #[test]
    fn score_ranges_open_closed_infinite_and_reversed() {
        let z = zset(&[
            ("a", f64::NEG_INFINITY),
            ("b", 1.0),
            ("c", 1.0),
            ("d", 2.0),
            ("e", f64::INFINITY),
        ]);
        let r = |lo: &str, hi: &str, rev: bool| {
            let (lo, hi) = (
                score_end(lo.as_bytes()).unwrap(),
                score_end(hi.as_bytes()).unwrap(),
            );
            names(window(by_score(&z, lo, hi, rev), 0, -1))
        };
        assert_eq!(r("-inf", "+inf", false), "a,b,c,d,e");
        assert_eq!(r("(1", "2", false), "d");
        assert_eq!(r("1", "(2", false), "b,c");
        assert_eq!(r("1", "2", true), "d,c,b");
        assert_eq!(r("(-inf", "(inf", true), "d,c,b");
        assert_eq!(r("inf", "inf", false), "e");
        assert_eq!(r("2", "1", false), "");
        assert_eq!(r("(1", "1", false), "");
        assert!(score_end(b"(x").is_none() && score_end(b"nan").is_none());
        let all = |off, lim| {
            names(window(
                by_score(
                    &z,
                    score_end(b"-inf").unwrap(),
                    score_end(b"inf").unwrap(),
                    false,
                ),
                off,
                lim,
            ))
        };
        assert_eq!(all(1, 2), "b,c");
        assert_eq!(all(-1, 2), "");
        assert_eq!(all(3, -5), "d,e");
    }

    #[test]
    fn lex_ranges_as_redis_reads_their_ends() {
        let z = zset(&[("a", 0.0), ("b", 0.0), ("c", 0.0), ("d", 0.0)]);
        let r = |lo: &str, hi: &str, rev: bool| {
            let (lo, hi) = (
                lex_end(lo.as_bytes()).unwrap(),
                lex_end(hi.as_bytes()).unwrap(),
            );
            names(window(by_lex(&z, lo, hi, rev), 0, -1))
        };
        assert_eq!(r("-", "+", false), "a,b,c,d");
        assert_eq!(r("[b", "(d", false), "b,c");
        assert_eq!(r("(a", "[c", true), "c,b");
        assert_eq!(r("-", "+", true), "d,c,b,a");
        assert_eq!(r("+", "-", false), "");
        assert_eq!(r("[b", "(b", false), "");
        assert_eq!(r("[b", "[b", false), "b");
        assert!(lex_end(b"b").is_none() && lex_end(b"+x").is_none() && lex_end(b"").is_none());
        // Mixed scores: from the first member in range to the first out.
        let z = zset(&[("c", 1.0), ("a", 2.0), ("b", 3.0)]);
        let (lo, hi) = (lex_end(b"[b").unwrap(), lex_end(b"[c").unwrap());
        assert_eq!(names(window(by_lex(&z, lo, hi, false), 0, -1)), "c,a,b");
        let hi = lex_end(b"(b").unwrap();
        assert_eq!(names(window(by_lex(&z, lo, hi, false), 0, -1)), "");
        // The last member ("b") is below "[c": nothing, whatever is
        // before it (Redis's `zslIsInLexRange`).
        let (lo, hi) = (lex_end(b"[c").unwrap(), lex_end(b"+").unwrap());
        assert_eq!(names(window(by_lex(&z, lo, hi, false), 0, -1)), "");
        assert_eq!(names(window(by_lex(&z, lo, hi, true), 0, -1)), "");
        let z = zset(&[("x", 0.0), ("y", 0.0), ("b", 2.0), ("d", 4.0)]);
        let (lo, hi) = (lex_end(b"[x").unwrap(), lex_end(b"+").unwrap());
        assert_eq!(names(window(by_lex(&z, lo, hi, false), 0, -1)), "");
        let (lo, hi) = (lex_end(b"-").unwrap(), lex_end(b"[x").unwrap());
        assert_eq!(names(window(by_lex(&z, lo, hi, false), 0, -1)), "x");
    }
}
