//! The same behaviour from every RESP store kind, sequential and
//! concurrent.

use super::*;

fn each(test: impl Fn(&dyn RespStore)) {
    for kind in KINDS {
        test(&*new(kind).expect("a RESP store"));
    }
}

fn get(s: &dyn RespStore, key: &[u8]) -> Result<Option<Vec<u8>>, WrongType> {
    let mut got = None;
    s.get(key, &mut |v| got = Some(v.to_vec()))?;
    Ok(got)
}

fn range(s: &dyn RespStore, key: &[u8], a: i64, b: i64) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    s.lrange(key, a, b, &mut |n, items| {
        got = items.map(|i| i.to_vec()).collect();
        assert_eq!(got.len(), n);
    })
    .unwrap();
    got
}

fn push(s: &dyn RespStore, key: &[u8], end: End, vals: &[&[u8]]) -> Result<usize, WrongType> {
    s.push(key, end, &mut vals.iter().copied())
}

#[test]
fn strings() {
    each(|s| {
        assert_eq!(get(s, b"k"), Ok(None));
        assert!(s.set(b"k", b"v1", SetCond::Always));
        assert_eq!(get(s, b"k"), Ok(Some(b"v1".to_vec())));
        assert!(!s.set(b"k", b"v2", SetCond::Absent));
        assert!(s.set(b"k", b"v3", SetCond::Present));
        assert!(!s.set(b"x", b"v", SetCond::Present));
        assert!(s.set(b"", b"", SetCond::Absent), "any key, any value");
        assert_eq!(get(s, b""), Ok(Some(Vec::new())));
        assert_eq!(s.len(), 2);
        assert!(s.exists(b"k") && !s.exists(b"x"));
        assert!(s.del(b"k") && !s.del(b"k"));
        assert_eq!(s.incr_by(b"n", 5), Ok(5));
        assert_eq!(s.incr_by(b"n", -7), Ok(-2));
        assert_eq!(get(s, b"n"), Ok(Some(b"-2".to_vec())));
        s.set(b"n", b"007", SetCond::Always);
        assert_eq!(s.incr_by(b"n", 1), Err(IncrError::NotInteger));
        s.set(b"n", b"9223372036854775807", SetCond::Always);
        assert_eq!(s.incr_by(b"n", 1), Err(IncrError::Overflow));
        s.clear();
        assert!(s.is_empty());
    });
}

#[test]
fn lists() {
    each(|s| {
        assert_eq!(push(s, b"l", End::Right, &[b"a", b"b"]), Ok(2));
        assert_eq!(push(s, b"l", End::Left, &[b"x", b"y"]), Ok(4));
        assert_eq!(range(s, b"l", 0, -1), [&b"y"[..], b"x", b"a", b"b"]);
        assert_eq!(range(s, b"l", -2, 100), [&b"a"[..], b"b"]);
        assert_eq!(range(s, b"l", 3, 1), Vec::<Vec<u8>>::new());
        assert_eq!(range(s, b"none", 0, -1), Vec::<Vec<u8>>::new());
        assert_eq!(s.llen(b"l"), Ok(4));
        let mut at = None;
        assert_eq!(s.lindex(b"l", -1, &mut |v| at = Some(v.to_vec())), Ok(true));
        assert_eq!(at.as_deref(), Some(&b"b"[..]));
        assert_eq!(s.lindex(b"l", 4, &mut |_| {}), Ok(false));
        assert_eq!(s.pop(b"l", End::Left, 1), Ok(Some(vec![b"y"[..].into()])));
        assert_eq!(
            s.pop(b"l", End::Right, 2),
            Ok(Some(vec![b"b"[..].into(), b"a"[..].into()]))
        );
        assert_eq!(s.pop(b"l", End::Right, 5), Ok(Some(vec![b"x"[..].into()])));
        assert!(!s.exists(b"l"), "popped empty, the list is gone");
        assert_eq!(s.pop(b"l", End::Right, 1), Ok(None));
        assert_eq!(s.llen(b"l"), Ok(0));
    });
}

#[test]
fn kinds_meet() {
    each(|s| {
        s.set(b"s", b"v", SetCond::Always);
        push(s, b"l", End::Right, &[b"a"]).unwrap();
        assert_eq!(get(s, b"l"), Err(WrongType));
        assert_eq!(s.incr_by(b"l", 1), Err(IncrError::WrongType));
        assert_eq!(push(s, b"s", End::Left, &[b"a"]), Err(WrongType));
        assert_eq!(s.pop(b"s", End::Left, 1), Err(WrongType));
        assert_eq!(s.llen(b"s"), Err(WrongType));
        assert!(s.lrange(b"s", 0, 1, &mut |_, _| {}).is_err());
        assert!(!s.set(b"l", b"v", SetCond::Absent), "NX: the list exists");
        assert_eq!(s.llen(b"l"), Ok(1), "and is kept");
        assert!(
            s.set(b"l", b"v", SetCond::Present),
            "XX: SET replaces a list"
        );
        assert_eq!(get(s, b"l"), Ok(Some(b"v".to_vec())));
        assert_eq!(s.len(), 2);
        assert!(s.del(b"s") && s.del(b"l") && s.is_empty());
    });
}

/// Threads push to one list and count on one key: every length and every
/// count is handed out exactly once.
#[test]
fn concurrent_pushes_and_counts_are_atomic() {
    const THREADS: usize = 4;
    const EACH: usize = 2000;
    for kind in KINDS {
        let s = new(kind).unwrap();
        let (lens, counts): (Vec<Vec<usize>>, Vec<Vec<i64>>) = std::thread::scope(|scope| {
            let hs: Vec<_> = (0..THREADS)
                .map(|t| {
                    let s = &s;
                    scope.spawn(move || {
                        let mut lens = Vec::new();
                        let mut counts = Vec::new();
                        for i in 0..EACH {
                            let v = format!("{t}-{i}");
                            lens.push(push(&**s, b"l", End::Right, &[v.as_bytes()]).unwrap());
                            counts.push(s.incr_by(b"n", 1).unwrap());
                            s.set(
                                format!("k{}", i % 50).as_bytes(),
                                v.as_bytes(),
                                SetCond::Always,
                            );
                        }
                        (lens, counts)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).unzip()
        });
        let mut lens: Vec<usize> = lens.into_iter().flatten().collect();
        lens.sort_unstable();
        assert_eq!(lens, (1..=THREADS * EACH).collect::<Vec<_>>(), "{kind:?}");
        let mut counts: Vec<i64> = counts.into_iter().flatten().collect();
        counts.sort_unstable();
        assert_eq!(counts, (1..=(THREADS * EACH) as i64).collect::<Vec<_>>());
        assert_eq!(s.len(), 52);
    }
}

/// Threads push to and pop from one list, which empties (and is removed)
/// again and again, while others delete it or SET over it: every value
/// pushed is popped, still there, or went with a DEL or SET — never lost
/// in a list nobody can see. Counted by the pushes' own replies: each
/// acknowledged push is found by a later pop or the final range, unless a
/// removal came between.
#[test]
fn pushes_are_never_lost_to_a_list_popped_empty() {
    for kind in KINDS {
        let s = new(kind).unwrap();
        let popped: usize = std::thread::scope(|scope| {
            let hs: Vec<_> = (0..4)
                .map(|t| {
                    let s = &s;
                    scope.spawn(move || {
                        let mut popped = 0;
                        for i in 0..10_000 {
                            if t < 2 {
                                push(&**s, b"q", End::Right, &[format!("{t}-{i}").as_bytes()])
                                    .unwrap();
                            } else if let Ok(Some(p)) = s.pop(b"q", End::Left, 2) {
                                popped += p.len();
                            }
                        }
                        popped
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        let left = s.llen(b"q").unwrap();
        assert_eq!(
            popped + left,
            20_000,
            "{kind:?}: {popped} popped + {left} left"
        );
    }
}

#[test]
fn for_each_shows_every_key_once_with_what_it_holds() {
    each(|s| {
        for i in 0..100u32 {
            s.set(
                format!("s{i}").as_bytes(),
                &i.to_le_bytes(),
                SetCond::Always,
            );
        }
        push(s, b"l", End::Right, &[b"a", b"b"]).unwrap();
        push(s, b"l", End::Left, &[b"z"]).unwrap();
        push(s, b"gone", End::Right, &[b"x"]).unwrap();
        s.pop(b"gone", End::Left, 1).unwrap();
        s.del(b"s7");
        let mut seen = std::collections::BTreeMap::new();
        s.for_each(&mut |k, held| {
            let v = match held {
                Held::Str(v) => vec![v.to_vec()],
                Held::List(items) => items.iter().map(|i| i.to_vec()).collect(),
                Held::Coll(_) => unreachable!("no collections here"),
            };
            assert!(seen.insert(k.to_vec(), v).is_none(), "a key seen twice");
        });
        assert_eq!(seen.len(), 100, "99 strings and one list");
        assert_eq!(
            seen[&b"l"[..]],
            [b"z".to_vec(), b"a".to_vec(), b"b".to_vec()]
        );
        assert_eq!(seen[&b"s42"[..]], [42u32.to_le_bytes().to_vec()]);
        assert!(!seen.contains_key(&b"s7"[..]) && !seen.contains_key(&b"gone"[..]));
    });
}

/// Whole values taken out and put back, of every type, in every store;
/// the fast path's commands see a collection as another type, and SET
/// (or DEL) replaces (or removes) it.
#[test]
fn whole_values_move_out_and_back_and_collections_are_another_type() {
    each(|s| {
        let set: std::collections::HashSet<Box<[u8]>> =
            [&b"a"[..], b"b"].iter().map(|m| Box::from(*m)).collect();
        s.put(b"c", Value::Coll(Coll::Set(set.clone())));
        assert_eq!(s.cloned(b"c"), Some(Value::Coll(Coll::Set(set.clone()))));
        assert!(s.exists(b"c") && s.len() == 1);
        assert_eq!(get(s, b"c"), Err(WrongType));
        assert_eq!(push(s, b"c", End::Left, &[b"x"]), Err(WrongType));
        assert_eq!(s.pop(b"c", End::Left, 1), Err(WrongType));
        assert_eq!(s.llen(b"c"), Err(WrongType));
        assert_eq!(s.incr_by(b"c", 1), Err(IncrError::WrongType));
        let mut kinds = Vec::new();
        s.for_each(&mut |k, h| kinds.push((k.to_vec(), h.to_value().type_name())));
        assert_eq!(kinds, [(b"c".to_vec(), "set")]);
        assert!(s.set(b"c", b"v", SetCond::Always), "SET replaces any type");
        assert_eq!(get(s, b"c"), Ok(Some(b"v".to_vec())));
        assert_eq!(s.take(b"c"), Some(Value::Str(b"v".to_vec())));
        assert!(!s.exists(b"c"));
        push(s, b"l", End::Right, &[b"1", b"2"]).unwrap();
        let Some(Value::List(items)) = s.take(b"l") else {
            panic!("a list")
        };
        assert_eq!(items.len(), 2);
        assert!(!s.exists(b"l"));
        s.put(b"l", Value::List(items));
        assert_eq!(range(s, b"l", 0, -1), [b"1".to_vec(), b"2".to_vec()]);
        s.put(b"l", Value::List(Default::default()));
        assert!(!s.exists(b"l"), "an empty list leaves no key");
        s.put(b"h", Value::Coll(Coll::Hash(Default::default())));
        assert!(s.is_empty());
        s.put(b"c", Value::Coll(Coll::Set(set)));
        assert!(s.del(b"c") && s.is_empty());
    });
}

/// APPEND's, SETRANGE's and SETBIT's primitive: a string changed where
/// it is, short (kept with its key) or long (kept apart), made when
/// asked; every reader sees the change, and the key stays a string of
/// every other operation's (INCR, SET over it, DEL, take, SCAN).
#[test]
fn strings_are_edited_in_place_short_or_long() {
    each(|s| {
        let mut calls = 0;
        let mut count = |_: &mut Vec<u8>| calls += 1;
        assert_eq!(s.edit(b"k", false, &mut count), Ok(false));
        assert_eq!(calls, 0, "an absent key not made is not edited");
        assert!(!s.exists(b"k"));
        assert_eq!(s.edit(b"k", true, &mut |v| v.extend(b"12")), Ok(true));
        assert_eq!(get(s, b"k"), Ok(Some(b"12".to_vec())));
        assert_eq!(s.len(), 1);
        assert_eq!(s.incr_by(b"k", 1), Ok(13), "an edited number counts");
        assert_eq!(s.edit(b"k", false, &mut |v| v.push(b'0')), Ok(true));
        assert_eq!(get(s, b"k"), Ok(Some(b"130".to_vec())));
        // A long string, set whole, then changed byte by byte and grown.
        let long = vec![b'x'; 3 * 1024];
        assert!(s.set(b"big", &long, SetCond::Always));
        s.edit(b"big", false, &mut |v| v[5] = b'y').unwrap();
        s.edit(b"big", false, &mut |v| v.extend_from_slice(b"end"))
            .unwrap();
        let mut want = long.clone();
        want[5] = b'y';
        want.extend_from_slice(b"end");
        assert_eq!(get(s, b"big"), Ok(Some(want.clone())));
        let mut seen = Vec::new();
        assert!(s.peek(b"big", &mut |h| seen = h.to_value().type_name().into()));
        assert_eq!(seen, b"string");
        s.edit(b"big", false, &mut |v| v.truncate(2)).unwrap();
        assert_eq!(get(s, b"big"), Ok(Some(b"xx".to_vec())));
        push(s, b"l", End::Right, &[b"a"]).unwrap();
        assert_eq!(s.edit(b"l", true, &mut |v| v.push(1)), Err(WrongType));
        assert_eq!(push(s, b"k", End::Left, &[b"a"]), Err(WrongType));
        let mut keys = scan_all(s, 10);
        keys.sort();
        assert_eq!(keys, [b"big".to_vec(), b"k".to_vec(), b"l".to_vec()]);
        assert!(s.set(b"k", b"short", SetCond::Present), "SET replaces it");
        assert_eq!(get(s, b"k"), Ok(Some(b"short".to_vec())));
        assert_eq!(s.take(b"big"), Some(Value::Str(b"xx".to_vec())));
        assert!(s.del(b"k") && !s.exists(b"k") && s.len() == 1);
    });
}

/// SET handing back what it replaced (for an undo to keep): a short or
/// long string, a list or a collection, whole; nothing when it did not
/// write or the key was absent.
#[test]
fn replace_hands_back_the_old_value() {
    each(|s| {
        assert_eq!(s.replace(b"k", b"v1", SetCond::Always), (true, None));
        let v1 = Some(Value::Str(b"v1".to_vec()));
        assert_eq!(s.replace(b"k", b"v2", SetCond::Absent), (false, None));
        assert_eq!(s.replace(b"k", b"v2", SetCond::Present), (true, v1));
        let long = vec![7u8; 4096];
        s.replace(b"k", &long, SetCond::Always);
        let old = Some(Value::Str(long.clone()));
        assert_eq!(s.replace(b"k", b"s", SetCond::Always), (true, old));
        push(s, b"l", End::Right, &[b"a", b"b"]).unwrap();
        let Some(Value::List(items)) = s.replace(b"l", b"s", SetCond::Always).1 else {
            panic!("the list")
        };
        assert_eq!(items.len(), 2);
        let set: std::collections::HashSet<Box<[u8]>> = [Box::from(&b"m"[..])].into();
        s.put(b"c", Value::Coll(Coll::Set(set.clone())));
        let back = s.replace(b"c", &long, SetCond::Always).1;
        assert_eq!(back, Some(Value::Coll(Coll::Set(set))));
        assert_eq!(get(s, b"c"), Ok(Some(long.clone())));
        assert_eq!(s.len(), 3);
    });
}

/// Every key, by a full SCAN from 0 in steps of `count`.
fn scan_all(s: &dyn RespStore, count: usize) -> Vec<Vec<u8>> {
    let (mut cursor, mut all, mut steps) = (0, Vec::new(), 0);
    loop {
        let step = s.scan(cursor, count);
        assert!(
            step.keys.len() >= count.min(1) || step.next == 0,
            "{step:?}"
        );
        all.extend(step.keys.iter().map(|k| k.to_vec()));
        steps += 1;
        assert!(steps <= 100_000, "the scan ends");
        if step.next == 0 {
            return all;
        }
        cursor = step.next;
    }
}

fn key_set(s: &dyn RespStore) -> std::collections::BTreeSet<Vec<u8>> {
    let mut keys = std::collections::BTreeSet::new();
    s.for_each(&mut |k, _| {
        keys.insert(k.to_vec());
    });
    keys
}

/// One write of the store's that may make or remove key `k`.
fn churn(s: &dyn RespStore, op: u8, k: &[u8]) {
    match op % 8 {
        0 => drop(s.set(k, b"v", SetCond::Always)),
        1 => drop(s.set(k, b"v", SetCond::Absent)),
        2 => drop(s.del(k)),
        3 => drop(s.incr_by(k, 1)),
        4 => drop(push(s, k, End::Right, &[b"x"])),
        5 => drop(s.pop(k, End::Left, 1)),
        6 => drop(s.take(k)),
        _ => s.put(k, Value::Str(b"p".to_vec())),
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// SCAN's guarantee, under every store: with keys made and removed
    /// between its steps, every key present for the whole scan is
    /// returned exactly once, no key twice; and a scan of a store at
    /// rest returns exactly its keys.
    #[test]
    fn a_scan_returns_each_key_present_throughout_once(
        first in proptest::collection::vec(0u8..60, 0..60),
        ops in proptest::collection::vec((0u8..8, 0u8..80), 0..200),
        count in 1usize..12,
    ) {
        each(|s| {
            for k in &first {
                s.set(format!("k{k}").as_bytes(), b"v", SetCond::Always);
            }
            let before = key_set(s);
            let mut touched = std::collections::BTreeSet::new();
            let (mut cursor, mut seen, mut ops) = (0, Vec::new(), ops.iter());
            loop {
                let step = s.scan(cursor, count);
                seen.extend(step.keys.iter().map(|k| k.to_vec()));
                for &(op, k) in ops.by_ref().take(3) {
                    let k = format!("k{k}").into_bytes();
                    churn(s, op, &k);
                    touched.insert(k);
                }
                if step.next == 0 {
                    break;
                }
                cursor = step.next;
            }
            let distinct: std::collections::BTreeSet<_> = seen.iter().cloned().collect();
            assert_eq!(distinct.len(), seen.len(), "no key twice");
            for k in before.difference(&touched) {
                assert!(distinct.contains(k), "{:?} missed", String::from_utf8_lossy(k));
            }
            let mut all = scan_all(s, count);
            all.sort();
            assert_eq!(all, key_set(s).into_iter().collect::<Vec<_>>());
            s.clear();
            assert!(scan_all(s, count).is_empty());
        });
    }
}

/// Writers racing on a few keys (makes and removes out of order in the
/// lock-free store's count): once they stop, a scan returns exactly the
/// keys there are.
#[test]
fn the_scan_order_is_exact_once_writers_stop() {
    each(|s| {
        std::thread::scope(|t| {
            for w in 0..4u8 {
                t.spawn(move || {
                    let mut rng = w as u32 + 1;
                    for _ in 0..20_000 {
                        rng ^= rng << 13;
                        rng ^= rng >> 17;
                        rng ^= rng << 5;
                        let k = format!("k{}", rng % 16);
                        churn(s, (rng >> 8) as u8, k.as_bytes());
                    }
                });
            }
        });
        let mut all = scan_all(s, 3);
        all.sort();
        assert_eq!(all, key_set(s).into_iter().collect::<Vec<_>>());
    });
}

/// Over 200 000 keys, 2 000 steps of COUNT 10 each take 10 keys and go
/// on (the sharded store merges its stripes' first places).
#[test]
fn scan_steps_take_count_keys_each() {
    each(|s| {
        for i in 0..200_000u32 {
            s.set(&i.to_le_bytes(), b"v", SetCond::Always);
        }
        let mut cursor = 0;
        for _ in 0..2_000 {
            let step = s.scan(cursor, 10);
            assert_eq!(step.keys.len(), 10);
            assert_ne!(step.next, 0);
            cursor = step.next;
        }
    });
}
