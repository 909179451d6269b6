//! SORT, as Redis 7.0.15 serves it:
//! `SORT key [BY pattern] [LIMIT offset count] [GET pattern …] [ASC|DESC]
//! [ALPHA] [STORE destination]`, over a list, a set or a sorted set (an
//! absent key is an empty list).
//!
//! Elements sort as numbers by default (each read as C's `strtod` reads
//! it, up to a NUL; one that is no number fails the whole command with
//! "One or more scores can't be converted into double"), equal numbers
//! by their bytes; with ALPHA by their bytes (Redis compares with
//! `strcoll`, which in the C locale compares up to the first NUL as
//! `strcmp` does; with STORE it compares every byte). `BY pattern` sorts
//! by the value of the key named by the pattern with its first `*`
//! replaced by the element (`prefix*->field`: that field of a hash); a
//! missing one counts as 0, or, ALPHA, before every other. A BY pattern
//! without `*` does not sort (a list or sorted set keeps its order,
//! reversed by DESC), except a set's under STORE, which then sorts ALPHA
//! as Redis forces it to. `GET pattern` answers, for each element, what
//! the pattern names (`#`: the element itself), nil for nothing (an
//! empty string under STORE).
//!
//! A set's members are taken in the order Redis answers them where that
//! can be told (at most 512 integers, an intset there: ascending), and
//! otherwise bytewise: so elements that sort equal (ALPHA BY, where Redis
//! keeps no tie-break of its own) come out the same on every run, and a
//! logged `SORT … STORE` replays to the same list. The sort is stable.
//!
//! STORE puts the result under the destination as a list, replacing
//! whatever was there and its deadline (Redis's `setKey`), or deletes the
//! destination when the result is empty; it answers the result's length
//! and is logged as it arrived (given the same data it sorts the same).
//! Without STORE SORT changes nothing and logs nothing.
//!
//! SORT_RO is SORT without STORE (a syntax error there, as Redis's), a
//! read: it never writes.

use super::colls::float::strtod;
use super::Running;
use crate::resp::Args;
use serverlab_proto::resp::number::parse_i64;
use serverlab_proto::resp::reply::{self, NOT_INTEGER, SYNTAX};
use serverlab_proto::resp::Name;
use serverlab_store::resp::{Coll, Held, Value};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{HashSet, VecDeque};
use std::ops::Range;

const NOT_DOUBLE: &str = "ERR One or more scores can't be converted into double";

/// Redis keeps a set of at most this many integers as an intset
/// (`set-max-intset-entries`), whose members come out ascending.
const INTSET_MAX: usize = 512;

/// SORT.
pub(crate) fn run(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let mut o = match Opts::parse(a, cx.name == Name::SortRo) {
        Ok(o) => o,
        Err(msg) => return cx.error(out, msg),
    };
    let Some((source, mut items)) = elements(cx, a.arg(1)) else {
        return cx.wrongtype(out);
    };
    if o.nosort && source == Source::Set && o.store.is_some() {
        // Redis sorts a set it stores, so that the list is the same on
        // a replica: ALPHA, by the members themselves.
        (o.nosort, o.alpha, o.by) = (false, true, None);
    }
    if o.nosort {
        if o.desc && source != Source::Set {
            items.reverse();
        }
    } else {
        items = match sort(cx, items, &o) {
            Some(sorted) => sorted,
            None => return cx.error(out, NOT_DOUBLE),
        };
    }
    let chosen = window(items.len(), o.start, o.count);
    let chosen = items.drain(chosen);
    match o.store {
        None => answer(cx, chosen.as_slice(), &o.gets, out),
        Some(dst) => match results(cx, chosen, &o.gets) {
            Some(list) => store(cx, dst, list, out),
            None => crate::resp::too_large(out, cx.svc.limits.max_query),
        },
    }
}

/// SORT's options, as read.
struct Opts<'a> {
    by: Option<&'a [u8]>,
    /// A BY pattern without `*` was given: nothing to sort by.
    nosort: bool,
    start: i64,
    count: i64,
    gets: Vec<&'a [u8]>,
    desc: bool,
    alpha: bool,
    store: Option<&'a [u8]>,
}

impl<'a> Opts<'a> {
    /// The options after the key, in Redis's order of checks: a word it
    /// does not know (or one short of its arguments) is a syntax error,
    /// LIMIT's numbers must be integers.
    /// SORT_RO (`read_only`) knows no STORE.
    fn parse(a: &Args<'a>, read_only: bool) -> Result<Opts<'a>, &'static str> {
        let mut o = Opts {
            by: None,
            nosort: false,
            start: 0,
            count: -1,
            gets: Vec::new(),
            desc: false,
            alpha: false,
            store: None,
        };
        let n = a.count();
        let mut j = 2;
        while j < n {
            let left = n - j - 1;
            let word = a.arg(j);
            let is = |w: &str| word.eq_ignore_ascii_case(w.as_bytes());
            if is("asc") {
                o.desc = false;
            } else if is("desc") {
                o.desc = true;
            } else if is("alpha") {
                o.alpha = true;
            } else if is("limit") && left >= 2 {
                o.start = parse_i64(a.arg(j + 1)).ok_or(NOT_INTEGER)?;
                o.count = parse_i64(a.arg(j + 2)).ok_or(NOT_INTEGER)?;
                j += 2;
            } else if is("store") && left >= 1 && !read_only {
                o.store = Some(a.arg(j + 1));
                j += 1;
            } else if is("by") && left >= 1 {
                let pattern = a.arg(j + 1);
                o.nosort |= !c_str(pattern).contains(&b'*');
                o.by = Some(pattern);
                j += 1;
            } else if is("get") && left >= 1 {
                o.gets.push(a.arg(j + 1));
                j += 1;
            } else {
                return Err(SYNTAX);
            }
            j += 1;
        }
        Ok(o)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    List,
    Set,
    ZSet,
}

/// What SORT sorts: the key's elements in their order (a list's, a
/// sorted set's by score, a set's as [`set_order`] gives it); an absent
/// key as an empty list; `None` for a string or a hash.
fn elements(cx: &Running, key: &[u8]) -> Option<(Source, Vec<Box<[u8]>>)> {
    let mut got = None;
    let found = cx.store().peek(key, &mut |held| {
        got = match held {
            Held::List(l) => Some((Source::List, l.iter().cloned().collect())),
            Held::Coll(Coll::Set(s)) => Some((Source::Set, set_order(s))),
            Held::Coll(Coll::ZSet(z)) => {
                Some((Source::ZSet, z.iter().map(|(m, _)| m.into()).collect()))
            }
            Held::Str(_) | Held::Coll(Coll::Hash(_)) => None,
        }
    });
    if !found {
        return Some((Source::List, Vec::new()));
    }
    got
}

/// A set's members: at most [`INTSET_MAX`] integers ascending (as Redis
/// keeps them), any other set bytewise.
fn set_order(s: &HashSet<Box<[u8]>>) -> Vec<Box<[u8]>> {
    let mut all: Vec<Box<[u8]>> = s.iter().cloned().collect();
    let numbers: Option<Vec<i64>> = if all.len() <= INTSET_MAX {
        all.iter().map(|m| parse_i64(m)).collect()
    } else {
        None
    };
    match numbers {
        Some(numbers) => {
            let mut pairs: Vec<(i64, Box<[u8]>)> = numbers.into_iter().zip(all).collect();
            pairs.sort_unstable_by_key(|p| p.0);
            pairs.into_iter().map(|p| p.1).collect()
        }
        None => {
            all.sort_unstable();
            all
        }
    }
}

/// An element with what it sorts by.
struct Keyed {
    item: Box<[u8]>,
    score: f64,
    /// ALPHA BY: the value the pattern named, if any.
    by: Option<Vec<u8>>,
}

/// The elements sorted as the options say; `None` if one's weight is no
/// number (numeric sorting).
fn sort(cx: &Running, items: Vec<Box<[u8]>>, o: &Opts) -> Option<Vec<Box<[u8]>>> {
    let mut keyed = Vec::with_capacity(items.len());
    for item in items {
        let (mut score, mut by) = (0.0, None);
        if !(o.alpha && o.by.is_none()) {
            let weight = match o.by {
                Some(pattern) => lookup(cx, pattern, &item),
                None => Some(Cow::Borrowed(&item[..])),
            };
            if let Some(w) = weight {
                if o.alpha {
                    by = Some(w.into_owned());
                } else {
                    score = number(&w)?;
                }
            }
        }
        keyed.push(Keyed { item, score, by });
    }
    let bytewise = o.store.is_some();
    keyed.sort_by(|x, y| {
        let ord = if !o.alpha {
            x.score
                .partial_cmp(&y.score)
                .unwrap_or(Ordering::Equal)
                .then_with(|| x.item.cmp(&y.item))
        } else if o.by.is_some() {
            match (&x.by, &y.by) {
                (Some(p), Some(q)) => text_cmp(p, q, bytewise),
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Less,
                (Some(_), None) => Ordering::Greater,
            }
        } else {
            text_cmp(&x.item, &y.item, bytewise)
        };
        if o.desc {
            ord.reverse()
        } else {
            ord
        }
    });
    Some(keyed.into_iter().map(|k| k.item).collect())
}

/// A weight as Redis reads it for numeric sorting: `strtod` up to the
/// end or a NUL, in range, not NaN (an empty one is 0).
fn number(w: &[u8]) -> Option<f64> {
    let (d, n, erange) = strtod(w);
    let ended = n == w.len() || w[n] == 0;
    (ended && !erange && !d.is_nan()).then_some(d)
}

/// ALPHA's comparison: every byte (`bytewise`, as Redis compares under
/// STORE), or as C's `strcoll` in the C locale (up to the first NUL).
fn text_cmp(x: &[u8], y: &[u8], bytewise: bool) -> Ordering {
    if bytewise {
        x.cmp(y)
    } else {
        c_str(x).cmp(c_str(y))
    }
}

/// `b` as a C string: up to its first NUL.
fn c_str(b: &[u8]) -> &[u8] {
    match b.iter().position(|&c| c == 0) {
        Some(i) => &b[..i],
        None => b,
    }
}

/// The part of `len` sorted elements that LIMIT chooses, clamped as
/// Redis clamps it (a negative start is 0, a negative count is all).
fn window(len: usize, start: i64, count: i64) -> Range<usize> {
    let n = len as i64;
    let start = start.clamp(0, n);
    let count = count.clamp(-1, n);
    let end = if count < 0 { n - 1 } else { start + count - 1 };
    if start >= n {
        return 0..0;
    }
    let end = end.min(n - 1);
    if end < start {
        return 0..0;
    }
    start as usize..end as usize + 1
}

/// What `pattern` names for `elem` (Redis's `lookupKeyByPattern`): `#`
/// is the element; otherwise the first `*` is replaced by the element
/// and the key so named must hold a string, or with `->field` after the
/// `*` (a field not empty), a hash with that field. A pattern without
/// `*` names nothing. As in Redis, the pattern is searched for `#`, `*`
/// and `->` as a C string (up to a NUL), and used whole.
fn lookup<'e>(cx: &Running, pattern: &[u8], elem: &'e [u8]) -> Option<Cow<'e, [u8]>> {
    if pattern.first() == Some(&b'#') && pattern.get(1).is_none_or(|&b| b == 0) {
        return Some(Cow::Borrowed(elem));
    }
    let c = c_str(pattern).len();
    let star = pattern[..c].iter().position(|&b| b == b'*')?;
    let after = star + 1;
    let arrow = pattern[after..c]
        .windows(2)
        .position(|w| w == b"->")
        .map(|i| after + i)
        .filter(|&f| f + 2 < c);
    let (postfix, field) = match arrow {
        Some(f) => (&pattern[after..f], Some(&pattern[f + 2..])),
        None => (&pattern[after..], None),
    };
    let mut key = Vec::with_capacity(star + elem.len() + postfix.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(elem);
    key.extend_from_slice(postfix);
    cx.read_computed(&key);
    let mut found = None;
    cx.store().peek(&key, &mut |held| {
        found = match (held, field) {
            (Held::Str(s), None) => Some(s.to_vec()),
            (Held::Coll(Coll::Hash(h)), Some(f)) => h.get(f).map(|v| v.to_vec()),
            _ => None,
        }
    });
    found.map(Cow::Owned)
}

/// The reply without STORE: each chosen element, or what each GET
/// pattern names for it (nil for nothing).
/// Bounded by `--max-query`, as MGET is: GET patterns may name one
/// large value for every element.
fn answer(cx: &Running, chosen: &[Box<[u8]>], gets: &[&[u8]], out: &mut Vec<u8>) {
    let each = if gets.is_empty() { 1 } else { gets.len() };
    let (from, bound) = (out.len(), cx.svc.limits.max_query);
    reply::array(out, chosen.len() * each);
    for item in chosen {
        if gets.is_empty() {
            reply::bulk(out, item);
        }
        for pattern in gets {
            match lookup(cx, pattern, item) {
                Some(v) => reply::bulk(out, &v),
                None => reply::null(out),
            }
            if crate::resp::past(out, from, bound) {
                return;
            }
        }
    }
}

/// What STORE counts at least for each element it keeps, found or not:
/// an empty string's bulk reply (`$0\r\n\r\n`), what reading it back
/// costs.
const LEAST_BULK: usize = 6;

/// The list STORE keeps: the chosen elements, or what each GET pattern
/// names for them (an empty string for nothing); `None` if what the GET
/// patterns name passes `--max-query` bytes (they may name one large
/// value for every element, or nothing many times over: as SORT's
/// reply, it is bounded, checked before anything is made, as
/// SRANDMEMBER's picks are).
fn results(
    cx: &Running,
    chosen: impl ExactSizeIterator<Item = Box<[u8]>>,
    gets: &[&[u8]],
) -> Option<VecDeque<Box<[u8]>>> {
    let bound = cx.svc.limits.max_query;
    if !gets.is_empty() && chosen.len().saturating_mul(gets.len()) > bound / LEAST_BULK {
        return None;
    }
    let mut list = VecDeque::new();
    let mut bytes = 0usize;
    for item in chosen {
        if gets.is_empty() {
            list.push_back(item);
            continue;
        }
        for pattern in gets {
            let v = lookup(cx, pattern, &item).unwrap_or_default();
            bytes += v.len();
            if bytes > cx.svc.limits.max_query {
                return None;
            }
            list.push_back(v.into_owned().into_boxed_slice());
        }
    }
    Some(list)
}

/// STORE: the list under `dst` (its deadline dropped), or `dst` deleted
/// for an empty result; its length answered; logged if anything changed.
fn store(cx: &mut Running, dst: &[u8], list: VecDeque<Box<[u8]>>, out: &mut Vec<u8>) {
    let n = list.len();
    let had = cx.store().exists(dst);
    // What it replaces (moved out), and nothing else, takes it back.
    cx.keep(cx.db, dst);
    if n > 0 {
        cx.store().put(dst, Value::List(list));
    } else {
        cx.store().del(dst);
    }
    let changed = n > 0 || had;
    if changed {
        cx.here().expires.remove(dst);
        cx.log_input();
    }
    reply::int(out, n as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_clamps_as_redis_does() {
        assert_eq!(window(5, 0, -1), 0..5);
        assert_eq!(window(5, 1, 2), 1..3);
        assert_eq!(window(5, -3, 2), 0..2);
        assert_eq!(window(5, 3, 100), 3..5);
        assert_eq!(window(5, 5, 1), 0..0);
        assert_eq!(window(5, 100, -1), 0..0);
        assert_eq!(window(5, 2, 0), 0..0);
        assert_eq!(window(5, 2, -7), 2..5);
        assert_eq!(window(0, 0, -1), 0..0);
        assert_eq!(window(0, 0, 3), 0..0);
        assert_eq!(window(3, i64::MIN, i64::MAX), 0..3);
        assert_eq!(window(3, i64::MAX, i64::MIN), 0..0);
    }

    #[test]
    fn weights_read_as_strtod_up_to_a_nul() {
        assert_eq!(number(b"3"), Some(3.0));
        assert_eq!(number(b" -1.5e2"), Some(-150.0));
        assert_eq!(number(b"0x10"), Some(16.0));
        assert_eq!(number(b"inf"), Some(f64::INFINITY));
        assert_eq!(number(b""), Some(0.0));
        assert_eq!(number(b"7\0junk"), Some(7.0));
        assert_eq!(number(b"\0"), Some(0.0));
        assert_eq!(number(b"nan"), None);
        assert_eq!(number(b"1x"), None);
        assert_eq!(number(b" "), None);
        assert_eq!(number(b"1e400"), None);
        assert_eq!(number(b"abc"), None);
    }

    #[test]
    fn alpha_compares_as_strcoll_in_the_c_locale_or_every_byte() {
        assert_eq!(text_cmp(b"a\0b", b"a\0c", false), Ordering::Equal);
        assert_eq!(text_cmp(b"a\0b", b"a\0c", true), Ordering::Less);
        assert_eq!(text_cmp(b"B", b"a", false), Ordering::Less);
        assert_eq!(text_cmp(b"ab", b"a", false), Ordering::Greater);
        assert_eq!(text_cmp(b"\xff", b"a", false), Ordering::Greater);
    }

    fn order_of(members: &[&str]) -> Vec<String> {
        let set: HashSet<Box<[u8]>> = members.iter().map(|m| m.as_bytes().into()).collect();
        set_order(&set)
            .iter()
            .map(|m| String::from_utf8_lossy(m).into_owned())
            .collect()
    }

    #[test]
    fn small_integer_sets_ascend_and_others_go_bytewise() {
        assert_eq!(order_of(&["10", "-2", "3"]), ["-2", "3", "10"]);
        assert_eq!(order_of(&["10", "b", "3", "a"]), ["10", "3", "a", "b"]);
        // "01" is no integer as Redis reads one: no intset.
        assert_eq!(order_of(&["2", "01", "10"]), ["01", "10", "2"]);
        let many: Vec<String> = (0..600).map(|i| i.to_string()).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(order_of(&many)[..3], ["0", "1", "10"]);
    }
}
