//! SSCAN, HSCAN and ZSCAN: `key cursor [MATCH pattern] [COUNT count]`,
//! as Redis 7.0.15 reads them (the cursor first, then the key: a missing
//! key is an empty scan and a key of another type WRONGTYPE, then the
//! options, TYPE not among them).
//!
//! The cursor works as SCAN's (see [`super::super::keys`]): each member
//! (field) has a fixed place, a 64-bit hash of its bytes with a fixed
//! seed; a call takes the COUNT lowest places at or after the cursor (and
//! any other member sharing the last one) and answers the place after
//! the last taken as the next cursor, or 0 when none is left. A member
//! present for the whole scan is so returned exactly once; one added or
//! removed during it may or may not be. MATCH then filters what the call
//! took. Unlike SCAN's, the places are not kept sorted: a call looks at
//! every member of the collection once (as SMEMBERS does), where Redis
//! visits about COUNT buckets (and returns a small collection, kept as a
//! listpack or intset, whole in one call).

use super::{read, Done, Fail, Hash, Set};
use crate::resp::alone::keys::{parse_cursor, scan_options};
use crate::resp::alone::Running;
use crate::resp::Args;
use serverlab_proto::resp::{glob, reply, Name};
use serverlab_store::resp::ZSet;
use std::hash::BuildHasher;

pub(super) fn run(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) -> Done {
    let Some(cursor) = parse_cursor(a.arg(2)) else {
        return Err(Fail::Err("ERR invalid cursor"));
    };
    let key = a.arg(1);
    // Each collection's members (and their values), as (member, value).
    let done = match name {
        Name::SScan => read(cx, key, |s: Option<&Set>| {
            s.map(|s| step(a, cursor, || s.iter().map(|m| (&**m, Val::None)), out))
        })?,
        Name::HScan => read(cx, key, |h: Option<&Hash>| {
            h.map(|h| {
                step(
                    a,
                    cursor,
                    || h.iter().map(|(f, v)| (&**f, Val::Bytes(v))),
                    out,
                )
            })
        })?,
        _ => read(cx, key, |z: Option<&ZSet>| {
            z.map(|z| step(a, cursor, || z.iter().map(|(m, s)| (m, Val::Score(s))), out))
        })?,
    };
    match done {
        None => {
            // Redis's `shared.emptyscan`.
            reply::array(out, 2);
            reply::bulk(out, b"0");
            reply::array(out, 0);
            Ok(())
        }
        Some(Err(e)) => Err(Fail::Said(String::from_utf8_lossy(e).into_owned())),
        Some(Ok(())) => Ok(()),
    }
}

/// What is answered after a member: nothing (a set's), a hash field's
/// value, a sorted-set member's score.
#[derive(Clone, Copy)]
enum Val<'v> {
    None,
    Bytes(&'v [u8]),
    Score(f64),
}

/// A member's place in the scan order.
fn place(m: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(0x5ca7_5ca7).hash_one(m)
}

/// The `count` lowest places at or after `cursor` among `places`, and
/// whether any place lies past them: memory for `count` places, not for
/// every member.
fn lowest_places(
    places: impl Iterator<Item = u64>,
    cursor: u64,
    count: usize,
) -> (std::collections::BTreeSet<u64>, bool) {
    let mut kept = std::collections::BTreeSet::new();
    let mut more = false;
    for p in places.filter(|&p| p >= cursor) {
        if kept.len() == count && kept.last().is_some_and(|&max| p > max) {
            more = true;
            continue;
        }
        if kept.insert(p) && kept.len() > count {
            kept.pop_last();
            more = true;
        }
    }
    (kept, more)
}

/// One call over the members `items` gives: the options read, the
/// members taken, answered with the next cursor; the options' error, if
/// any.
fn step<'m, I: Iterator<Item = (&'m [u8], Val<'m>)>>(
    a: &Args,
    cursor: u64,
    items: impl Fn() -> I,
    out: &mut Vec<u8>,
) -> Result<(), &'static [u8]> {
    let o = scan_options(a, 3)?;
    // The first `count` places (members sharing a place go together).
    let (places, more) = lowest_places(items().map(|(m, _)| place(m)), cursor, o.count);
    let last = places.last().copied();
    let mut found: Vec<(u64, &[u8], Val)> = match last {
        Some(last) => items()
            .map(|(m, v)| (place(m), m, v))
            .filter(|(p, _, _)| (cursor..=last).contains(p))
            .collect(),
        None => Vec::new(),
    };
    found.sort_unstable_by(|x, y| (x.0, x.1).cmp(&(y.0, y.1)));
    let next = match (more, last) {
        (true, Some(l)) => l + 1,
        _ => 0,
    };
    found.retain(|(_, m, _)| o.pattern.is_none_or(|p| glob::matches_exact(p, m)));
    let per = match found.first() {
        Some((_, _, Val::None)) | None => 1,
        Some(_) => 2,
    };
    reply::array(out, 2);
    reply::bulk(out, next.to_string().as_bytes());
    reply::array(out, found.len() * per);
    for (_, m, v) in found {
        reply::bulk(out, m);
        match v {
            Val::None => {}
            Val::Bytes(v) => reply::bulk(out, v),
            Val::Score(s) => super::bulk_double(out, s),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::lowest_places;

    #[test]
    fn the_lowest_places_are_kept_and_more_is_said_only_when_there_is_more() {
        let all = [50u64, 7, 30, 7, 90, 10, 30, 70];
        let (kept, more) = lowest_places(all.into_iter(), 10, 3);
        assert_eq!(kept.into_iter().collect::<Vec<_>>(), vec![10, 30, 50]);
        assert!(more);
        // Exactly as many places as asked: none past them.
        let (kept, more) = lowest_places(all.into_iter(), 50, 3);
        assert_eq!(kept.into_iter().collect::<Vec<_>>(), vec![50, 70, 90]);
        assert!(!more);
        // Shared places count once.
        let (kept, more) = lowest_places([5u64, 5, 5, 6].into_iter(), 0, 1);
        assert_eq!(kept.into_iter().collect::<Vec<_>>(), vec![5]);
        assert!(more);
        let (kept, more) = lowest_places(all.into_iter(), 91, 3);
        assert!(kept.is_empty() && !more);
    }
}
