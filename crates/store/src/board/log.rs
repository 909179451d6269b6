//! An append-only log with dense indices, lock-free for readers.
//!
//! Slots live in segments of doubling size (segment `s` holds `BASE << s`
//! slots), allocated on first use and never moved, so a published element
//! stays at one address for the log's life.
//!
//! `append` reserves an index with one `fetch_add`, fills its slot, then
//! advances `published` over every contiguous filled slot, helping earlier
//! appenders. It returns only once `published` is past its own index, which
//! gives the board its linearizable COUNT: after `append` returned `k`,
//! `len() > k`. The price is that an appender may wait (spinning, then
//! yielding) for an earlier appender that reserved an index but has not yet
//! filled it. The element is allocated before the reservation, so that
//! window is usually a few instructions — but not always: the appender that
//! reserves the first index of a segment allocates and zeroes the whole
//! segment (`BASE << s` slots of 8 bytes: 256 B for the first, 1 MiB for
//! the 13th) inside the window, and one descheduled by the kernel there
//! holds every later appender of the topic until it runs again. Appends are
//! therefore lock-free for readers only; for appenders this is a short
//! critical section without a lock, not a lock-free algorithm. Readers never
//! wait.
//!
//! Memory ordering:
//! - reserve: `Relaxed`; it only picks a unique index, and publication is
//!   ordered by the slot and `published` below.
//! - slot store: `Release`, pairs with the `Acquire` slot loads of helpers
//!   and readers, so the element's bytes are visible to whoever sees the
//!   pointer.
//! - `published` CAS: `AcqRel`. A helper's CAS happens after it `Acquire`d the
//!   slot, and a reader's `Acquire` load of `published` then happens-after
//!   that slot's store (CASes on one atomic form a release sequence). So any
//!   index below a `published` a reader saw has a visible, filled slot.
//! - segment pointers: `Acquire` load, `AcqRel` CAS on install, `Release`
//!   semantics through the CAS, so the zeroed slots are visible.

use super::thin::Owned;
use crate::sync::{AtomicPtr, AtomicU64, Ordering, Spin};
use std::marker::PhantomData;
use std::ptr;

/// Slots in the first segment.
const BASE: u64 = if cfg!(serverlab_loom) { 2 } else { 32 };
/// Enough segments for more than 2^40 elements.
const SEGMENTS: usize = 40;

/// A log of owned `T`s, each held in its slot as a thin pointer (see
/// [`Owned`]).
pub(crate) struct Log<T: Owned> {
    segments: [AtomicPtr<AtomicPtr<u8>>; SEGMENTS],
    reserved: AtomicU64,
    published: AtomicU64,
    owns: PhantomData<T>,
}

// SAFETY: the log owns its elements (`T: Owned` is Send + Sync, shared by
// reference only) and hands out `&T::Target` to any thread.
unsafe impl<T: Owned> Send for Log<T> {}
// SAFETY: as above.
unsafe impl<T: Owned> Sync for Log<T> {}

/// Segment and offset of index `i`.
fn locate(i: u64) -> (usize, usize) {
    let block = i / BASE + 1;
    let s = 63 - block.leading_zeros() as u64;
    (s as usize, (i - BASE * ((1 << s) - 1)) as usize)
}

fn segment_len(s: usize) -> usize {
    (BASE as usize) << s
}

impl<T: Owned> Log<T> {
    pub(crate) fn new() -> Self {
        Log {
            segments: std::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
            reserved: AtomicU64::new(0),
            published: AtomicU64::new(0),
            owns: PhantomData,
        }
    }

    /// Number of published elements: every index below it is readable.
    pub(crate) fn len(&self) -> u64 {
        self.published.load(Ordering::Acquire)
    }

    /// The element at `i`, if published.
    pub(crate) fn get(&self, i: u64) -> Option<&T::Target> {
        if i >= self.len() {
            return None;
        }
        let p = self.slot(i)?.load(Ordering::Acquire);
        // SAFETY: a published slot holds a non-null pointer from
        // `T::into_raw`, freed only when the log is dropped (`&self` keeps
        // it alive for the reference's life).
        (!p.is_null()).then(|| unsafe { T::get(p) })
    }

    /// Append `value`, returning its index once `len()` is past it.
    pub(crate) fn append(&self, value: T) -> u64 {
        let value = value.into_raw();
        let k = self.reserved.fetch_add(1, Ordering::Relaxed);
        self.install_slot(k).store(value, Ordering::Release);
        self.publish_through(k);
        k
    }

    /// Advance `published` over filled slots until it is past `k`.
    fn publish_through(&self, k: u64) {
        let spin = Spin::new();
        loop {
            let p = self.published.load(Ordering::Acquire);
            if p > k {
                return;
            }
            let filled = self
                .slot(p)
                .is_some_and(|s| !s.load(Ordering::Acquire).is_null());
            if filled {
                let _ =
                    self.published
                        .compare_exchange(p, p + 1, Ordering::AcqRel, Ordering::Acquire);
            } else {
                spin.wait();
            }
        }
    }

    /// The slot for `i` if its segment exists.
    fn slot(&self, i: u64) -> Option<&AtomicPtr<u8>> {
        let (s, off) = locate(i);
        let seg = self.segments[s].load(Ordering::Acquire);
        // SAFETY: a non-null segment points to `segment_len(s)` slots that
        // live until the log is dropped; `off` is within it by `locate`.
        (!seg.is_null()).then(|| unsafe { &*seg.add(off) })
    }

    /// The slot for `i`, allocating its segment if need be.
    fn install_slot(&self, i: u64) -> &AtomicPtr<u8> {
        if let Some(slot) = self.slot(i) {
            return slot;
        }
        let (s, _) = locate(i);
        let fresh: Box<[AtomicPtr<u8>]> = (0..segment_len(s))
            .map(|_| AtomicPtr::new(ptr::null_mut()))
            .collect();
        let fresh = Box::into_raw(fresh) as *mut AtomicPtr<u8>;
        if let Err(_winner) = self.segments[s].compare_exchange(
            ptr::null_mut(),
            fresh,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            // Another appender installed it first: free ours.
            // SAFETY: `fresh` came from Box::into_raw above and was never shared.
            drop(unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(fresh, segment_len(s))) });
        }
        self.slot(i).expect("segment installed")
    }
}

impl<T: Owned> Drop for Log<T> {
    fn drop(&mut self) {
        for (s, seg) in self.segments.iter().enumerate() {
            let seg = seg.load(Ordering::Acquire);
            if seg.is_null() {
                continue;
            }
            // SAFETY: `&mut self`: no other thread can touch the log; the
            // segment came from Box::into_raw, every non-null slot from
            // `T::into_raw`, and each is freed once here.
            unsafe {
                let slots = Box::from_raw(ptr::slice_from_raw_parts_mut(seg, segment_len(s)));
                for slot in slots.iter() {
                    let p = slot.load(Ordering::Relaxed);
                    if !p.is_null() {
                        T::free(p);
                    }
                }
            }
        }
    }
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests {
    use super::*;

    #[test]
    fn locate_covers_indices_densely() {
        let mut expect = (0usize, 0usize);
        for i in 0..10_000u64 {
            assert_eq!(locate(i), expect, "index {i}");
            expect.1 += 1;
            if expect.1 == segment_len(expect.0) {
                expect = (expect.0 + 1, 0);
            }
        }
    }

    #[test]
    fn append_and_get() {
        let log = Log::<Box<u64>>::new();
        for i in 0..1000u64 {
            assert_eq!(log.append(Box::new(i * 3)), i);
            assert_eq!(log.len(), i + 1);
        }
        for i in 0..1000u64 {
            assert_eq!(log.get(i), Some(&(i * 3)));
        }
        assert_eq!(log.get(1000), None);
    }

    #[test]
    fn concurrent_appends_are_dense() {
        let log = std::sync::Arc::new(Log::<Box<(u64, u64)>>::new());
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let log = log.clone();
                std::thread::spawn(move || {
                    (0..5000u64)
                        .map(|i| (log.append(Box::new((t, i))), (t, i)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut seen = vec![false; 20_000];
        for th in threads {
            for (k, v) in th.join().unwrap() {
                assert!(!seen[k as usize], "index {k} twice");
                seen[k as usize] = true;
                assert_eq!(log.get(k), Some(&v));
            }
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(log.len(), 20_000);
    }
}

#[cfg(all(test, serverlab_loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    /// Two appenders and a reader: indices are dense, and whatever the
    /// reader sees as published is readable with its exact value.
    #[test]
    fn append_publish_read() {
        loom::model(|| {
            let log = Arc::new(Log::<Box<u64>>::new());
            let a = {
                let log = log.clone();
                loom::thread::spawn(move || {
                    let k = log.append(Box::new(10u64));
                    assert!(log.len() > k);
                    k
                })
            };
            let b = {
                let log = log.clone();
                loom::thread::spawn(move || {
                    let k = log.append(Box::new(20u64));
                    assert!(log.len() > k);
                    k
                })
            };
            let n = log.len();
            for i in 0..n {
                let v = *log.get(i).expect("published slot is filled");
                assert!(v == 10 || v == 20);
            }
            let (ka, kb) = (a.join().unwrap(), b.join().unwrap());
            assert_ne!(ka, kb);
            assert!(ka < 2 && kb < 2);
            assert_eq!(log.get(ka), Some(&10));
            assert_eq!(log.get(kb), Some(&20));
        });
    }

    /// Appends that cross into a new segment (BASE is 2 under loom).
    #[test]
    fn segment_install_race() {
        loom::model(|| {
            let log = Arc::new(Log::<Box<u64>>::new());
            log.append(Box::new(0u64));
            log.append(Box::new(1u64));
            let t = {
                let log = log.clone();
                loom::thread::spawn(move || log.append(Box::new(2u64)))
            };
            let k = log.append(Box::new(3u64));
            let k2 = t.join().unwrap();
            assert_eq!(k + k2, 5);
            assert_eq!(log.len(), 4);
            assert_eq!(*log.get(k).unwrap(), 3);
            assert_eq!(*log.get(k2).unwrap(), 2);
        });
    }
}
