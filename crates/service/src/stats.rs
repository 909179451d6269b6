//! Request counters that many threads bump without sharing a cache line.
//!
//! Each thread adds to its own stripe (a cache-padded row of counters);
//! reading sums the stripes. `Relaxed` everywhere: the counts are
//! statistics, ordered with nothing else, and a read that races a bump may
//! see it or not.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Stripes per counter set; threads beyond this share stripes.
pub(crate) const STRIPES: usize = 32;

pub struct Counters<const N: usize> {
    stripes: Box<[CachePadded<[AtomicU64; N]>]>,
}

impl<const N: usize> Default for Counters<N> {
    fn default() -> Self {
        Counters {
            stripes: (0..STRIPES)
                .map(|_| CachePadded::new(std::array::from_fn(|_| AtomicU64::new(0))))
                .collect(),
        }
    }
}

/// The calling thread's stripe: threads are dealt stripes round-robin.
pub(crate) fn stripe() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static STRIPE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
    }
    STRIPE.with(|s| *s)
}

impl<const N: usize> Counters<N> {
    pub fn add(&self, i: usize, n: u64) {
        self.stripes[stripe()][i].fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(&self, i: usize) -> u64 {
        self.stripes
            .iter()
            .map(|s| s[i].load(Ordering::Relaxed))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sums_across_threads() {
        let c = super::Counters::<2>::default();
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| (0..1000).for_each(|_| c.add(1, 1)));
            }
        });
        assert_eq!(c.get(1), 8000);
        assert_eq!(c.get(0), 0);
    }
}
