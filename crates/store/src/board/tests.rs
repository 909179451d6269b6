//! The same behaviour from every store kind, sequential and concurrent.

use super::*;
use serverlab_util::Named;
use std::sync::Barrier;

fn each(test: impl Fn(&dyn BoardStore)) {
    for &kind in StoreKind::ALL {
        let store = new(kind);
        test(&*store);
    }
}

fn read(s: &dyn BoardStore, t: &[u8], id: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    s.read(t, id, &mut out).then_some(out)
}

fn list(s: &dyn BoardStore) -> Vec<u8> {
    let mut out = Vec::new();
    s.list(&mut out);
    out
}

#[test]
fn protocol_walkthrough() {
    each(|s| {
        assert_eq!(list(s), b"");
        assert_eq!(
            s.post(b"Solar system", b"The dark side of the @moon is #dark."),
            0
        );
        assert_eq!(s.post(b"", b"x"), 0);
        assert_eq!(s.post(b"night_sky", b"cloudy!"), 0);
        assert_eq!(s.post(b"Solar system", b"Mercury, Venus, Earth"), 1);
        assert_eq!(list(s), b"@Solar system#@#@night_sky");
        assert_eq!(s.count(b"Solar system"), 2);
        assert_eq!(s.count(b"solar_system"), 0);
        assert_eq!(read(s, b"", 0).as_deref(), Some(&b"x"[..]));
        assert_eq!(
            read(s, b"Solar system", 1).as_deref(),
            Some(&b"Mercury, Venus, Earth"[..])
        );
        assert_eq!(read(s, b"night_sky", 2), None);
        assert_eq!(read(s, b"nope", 0), None);
        assert_eq!(read(s, b"Solar system", u64::MAX), None);
    });
}

#[test]
fn many_messages_cross_segments() {
    each(|s| {
        for i in 0..5000u64 {
            assert_eq!(s.post(b"t", i.to_string().as_bytes()), i);
        }
        assert_eq!(s.count(b"t"), 5000);
        for i in (0..5000u64).step_by(7) {
            assert_eq!(read(s, b"t", i).unwrap(), i.to_string().into_bytes());
        }
    });
}

/// 8 threads post to 3 shared topics while 2 threads read: ids are dense
/// per topic, every acknowledged id reads back its message, COUNT covers
/// every acknowledged id, and LIST holds every topic that has an answer.
#[test]
fn concurrent_invariants() {
    for &kind in StoreKind::ALL {
        let store = new(kind);
        let posters = 8;
        let per = 2000u64;
        let barrier = Barrier::new(posters + 2);
        let topics: [&[u8]; 3] = [b"a", b"b", b"c"];
        let acked = std::thread::scope(|sc| {
            let readers: Vec<_> = (0..2)
                .map(|_| {
                    sc.spawn(|| {
                        barrier.wait();
                        let mut last = [0u64; 3];
                        for round in 0..20_000u64 {
                            let ti = (round % 3) as usize;
                            let n = store.count(topics[ti]);
                            assert!(n >= last[ti], "{kind}: COUNT went backwards");
                            last[ti] = n;
                            if n > 0 {
                                assert!(
                                    read(&*store, topics[ti], n - 1).is_some(),
                                    "{kind}: counted but unreadable"
                                );
                            }
                        }
                    })
                })
                .collect();
            let handles: Vec<_> = (0..posters)
                .map(|p| {
                    let (store, barrier) = (&store, &barrier);
                    sc.spawn(move || {
                        barrier.wait();
                        let mut mine = Vec::new();
                        for i in 0..per {
                            let t = topics[(i as usize + p) % 3];
                            let msg = format!("{p}-{i}").into_bytes();
                            let id = store.post(t, &msg);
                            assert!(
                                store.count(t) > id,
                                "{kind}: COUNT not past an acknowledged id"
                            );
                            assert_eq!(read(&**store, t, id).as_deref(), Some(&msg[..]));
                            mine.push((t, id, msg));
                        }
                        mine
                    })
                })
                .collect();
            readers.into_iter().for_each(|r| r.join().unwrap());
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        });
        for t in topics {
            let mut ids: Vec<u64> = acked.iter().filter(|a| a.0 == t).map(|a| a.1).collect();
            ids.sort_unstable();
            assert!(
                ids.iter().copied().eq(0..ids.len() as u64),
                "{kind}: ids not dense"
            );
        }
        for (t, id, msg) in &acked {
            assert_eq!(read(&*store, t, *id).as_deref(), Some(&msg[..]), "{kind}");
        }
        let l = list(&*store);
        assert_eq!(l.len(), 8, "{kind}: {:?}", String::from_utf8_lossy(&l));
    }
}

/// A LIST appended in parts, from the length taken when it was asked for,
/// is the LIST appended at once then — even when topics are created in
/// between; each part fits its budget.
#[test]
fn list_in_parts_is_the_list_when_asked() {
    each(|s| {
        for i in 0..50 {
            s.post(format!("topic-{i:02}").as_bytes(), b"m");
        }
        let whole = list(s);
        let end = s.topics();
        assert_eq!(end, 50);
        let (mut parts, mut next, mut calls) = (Vec::new(), 0, 0);
        while next < end {
            let before = parts.len();
            next = s.list_part(next, end, 30, &mut parts);
            assert!(parts.len() - before <= 30, "within the budget");
            s.post(format!("later-{calls}").as_bytes(), b"m");
            calls += 1;
        }
        assert_eq!(parts, whole);
        assert!(calls > 10, "in parts: {calls}");
        assert_eq!(s.list_part(end, end, 30, &mut parts), end, "nothing left");
        assert_eq!(s.topics(), 50 + calls);
        // One entry larger than the budget still goes, alone.
        let mut one = Vec::new();
        assert_eq!(s.list_part(0, end, 3, &mut one), 1);
        assert_eq!(one, b"@topic-00");
    });
}

/// A message read in parts is the message; a missing one appends nothing.
#[test]
fn read_in_parts() {
    each(|s| {
        let message: Vec<u8> = (0..1000u32).map(|i| b'a' + (i % 26) as u8).collect();
        s.post(b"t", &message);
        let mut out = Vec::new();
        let mut from = 0;
        while from < message.len() {
            assert_eq!(s.read_part(b"t", 0, from, 64, &mut out), Some(1000));
            from += 64;
        }
        assert_eq!(out, message);
        assert_eq!(s.read_part(b"t", 0, 5000, 64, &mut out), Some(1000));
        assert_eq!(out.len(), 1000, "past the end: nothing");
        assert_eq!(s.read_part(b"t", 1, 0, 64, &mut out), None);
        assert_eq!(s.read_part(b"u", 0, 0, 64, &mut out), None);
        assert_eq!(out.len(), 1000);
    });
}
