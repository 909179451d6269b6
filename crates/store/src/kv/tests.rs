//! The same behaviour from every kv store kind, sequential and concurrent.

use super::*;
use serverlab_util::Named;
use std::sync::Barrier;

fn each(test: impl Fn(&dyn KvStore)) {
    for &kind in StoreKind::ALL {
        test(&*new(kind));
    }
}

fn value(bytes: &[u8]) -> Arc<Value> {
    let mut digest = [0u8; 16];
    digest[0] = bytes.len() as u8;
    Arc::new(Value {
        bytes: bytes.into(),
        digest,
    })
}

fn get(s: &dyn KvStore, key: &[u8]) -> Option<Vec<u8>> {
    s.get(key).map(|v| v.bytes.to_vec())
}

#[test]
fn put_get_replace_delete() {
    each(|s| {
        assert!(s.is_empty());
        assert_eq!(get(s, b"k"), None);
        assert_eq!(s.put(b"k", value(b"one")), Put::Created);
        assert_eq!(get(s, b"k").as_deref(), Some(&b"one"[..]));
        assert_eq!(s.put(b"k", value(b"three")), Put::Replaced);
        let v = s.get(b"k").unwrap();
        assert_eq!((&*v.bytes, v.digest[0]), (&b"three"[..], 5));
        assert_eq!(
            s.put(b"", value(b"")),
            Put::Created,
            "the store allows any key"
        );
        assert_eq!(s.put(b"\xff\x00", value(b"bin")), Put::Created);
        assert_eq!(s.len(), 3);
        assert!(s.delete(b"k"));
        assert!(!s.delete(b"k"));
        assert_eq!(get(s, b"k"), None);
        assert_eq!(s.put(b"k", value(b"again")), Put::Created);
        assert_eq!(s.len(), 3);
    });
}

#[test]
fn many_keys() {
    each(|s| {
        for i in 0..5000u32 {
            assert_eq!(
                s.put(&i.to_be_bytes(), value(&i.to_le_bytes())),
                Put::Created
            );
        }
        assert_eq!(s.len(), 5000);
        for i in (0..5000u32).step_by(7) {
            assert_eq!(get(s, &i.to_be_bytes()).unwrap(), i.to_le_bytes());
        }
        for i in (0..5000u32).filter(|i| i % 2 == 0) {
            assert!(s.delete(&i.to_be_bytes()));
        }
        assert_eq!(s.len(), 2500);
    });
}

/// Threads race to create, replace and delete the same keys: exactly one
/// creator per key, replacements see a value, and every value read is one
/// that some thread wrote, whole.
#[test]
fn concurrent_writers_and_readers() {
    const THREADS: usize = 4;
    const KEYS: usize = 64;
    for &kind in StoreKind::ALL {
        let s = new(kind);
        let barrier = Barrier::new(THREADS);
        let created: Vec<usize> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..THREADS)
                .map(|t| {
                    let (s, barrier) = (&s, &barrier);
                    scope.spawn(move || {
                        barrier.wait();
                        let mut created = 0;
                        for round in 0..200 {
                            for k in 0..KEYS {
                                let key = [k as u8];
                                let bytes = vec![t as u8; 1 + (round + k) % 50];
                                if s.put(&key, value(&bytes)) == Put::Created && round == 0 {
                                    created += 1;
                                }
                                if let Some(v) = s.get(&key) {
                                    let first = v.bytes[0];
                                    assert!(
                                        v.bytes.iter().all(|&b| b == first),
                                        "{kind}: torn value"
                                    );
                                    assert_eq!(v.digest[0] as usize, v.bytes.len(), "{kind}");
                                }
                            }
                        }
                        created
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(
            created.iter().sum::<usize>(),
            KEYS,
            "{kind}: one creator per key"
        );
        assert_eq!(s.len(), KEYS, "{kind}");
    }
}

#[test]
fn for_each_visits_every_key_once() {
    each(|s| {
        for i in 0..100u8 {
            s.put(&[i], value(&[i, i]));
        }
        s.delete(&[7]);
        let mut seen = std::collections::BTreeMap::new();
        s.for_each(&mut |k, v| assert!(seen.insert(k.to_vec(), v.bytes.to_vec()).is_none()));
        assert_eq!(seen.len(), 99);
        assert_eq!(seen.get(&vec![42]), Some(&vec![42, 42]));
        assert!(!seen.contains_key(&vec![7]));
    });
}
