//! The same behaviour from every bucket store, sequential and concurrent.

use super::*;
use std::sync::Barrier;

fn each(buckets: usize, test: impl Fn(StoreKind, &dyn BucketStore)) {
    for kind in KINDS {
        let store = new(kind, buckets).expect("a listed kind");
        test(kind, &*store);
    }
}

#[test]
fn adds_and_reads() {
    each(5, |kind, s| {
        assert_eq!(s.len(), 5, "{kind}");
        assert_eq!(s.add(3, 0), 0, "{kind}");
        assert_eq!(s.add(3, 5), 5, "{kind}");
        assert_eq!(s.add(3, 2), 7, "{kind}");
        assert_eq!(s.add(4, 1), 1, "{kind}");
        assert_eq!(s.add(0, 9), 9, "{kind}");
        for (b, want) in [(0, 9), (1, 0), (2, 0), (3, 7), (4, 1)] {
            assert_eq!(s.add(b, 0), want, "{kind}: bucket {b}");
        }
    });
}

#[test]
fn every_bucket_is_its_own() {
    for n in [1, 2, 63, 64, 65, 130, 2048] {
        each(n, |kind, s| {
            for b in 0..n {
                assert_eq!(s.add(b, b as u64 + 1), b as u64 + 1, "{kind}/{n}");
            }
            for b in 0..n {
                assert_eq!(s.add(b, 0), b as u64 + 1, "{kind}/{n}: bucket {b}");
            }
        });
    }
}

#[test]
fn values_wrap() {
    each(1, |kind, s| {
        assert_eq!(s.add(0, u64::MAX), u64::MAX, "{kind}");
        assert_eq!(s.add(0, 2), 1, "{kind}");
    });
}

#[test]
#[should_panic]
fn out_of_range_panics() {
    let s = new(StoreKind::Sharded, 10).unwrap();
    s.add(10, 1);
}

#[test]
fn rwlock_is_not_offered() {
    assert!(new(StoreKind::RwLock, 4).is_none());
}

/// 8 threads add 1, 2, …, 8 to 3 shared buckets: no update is lost, and the
/// values returned for each bucket are exactly its successive sums (sorted,
/// each minus its own delta is the previous one).
#[test]
fn concurrent_adds_lose_nothing() {
    each(3, |kind, s| {
        let threads = 8u64;
        let per = 3000u64;
        let barrier = Barrier::new(threads as usize);
        let seen: Vec<(usize, u64, u64)> = std::thread::scope(|sc| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let barrier = &barrier;
                    sc.spawn(move || {
                        barrier.wait();
                        (0..per)
                            .map(|i| {
                                let b = ((i + t) % 3) as usize;
                                let d = t + 1;
                                (b, d, s.add(b, d))
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        for b in 0..3 {
            let mut steps: Vec<(u64, u64)> = seen
                .iter()
                .filter(|x| x.0 == b)
                .map(|x| (x.2, x.1))
                .collect();
            steps.sort_unstable();
            let mut prev = 0;
            for (value, delta) in &steps {
                assert_eq!(value - delta, prev, "{kind}: bucket {b} skipped a sum");
                prev = *value;
            }
            assert_eq!(s.add(b, 0), prev, "{kind}: bucket {b}");
        }
        let total: u64 = (0..3).map(|b| s.add(b, 0)).sum();
        assert_eq!(total, per * (1..=threads).sum::<u64>(), "{kind}");
    });
}
