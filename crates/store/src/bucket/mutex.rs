//! One mutex around every bucket: each add waits for every other, whatever
//! its bucket. The assignment's baseline. parking_lot's mutex: no
//! poisoning, a fast uncontended path, and it spins briefly before
//! parking, which suits a critical section of one addition.

use super::BucketStore;
use parking_lot::Mutex;

pub struct MutexBuckets(Mutex<Box<[u64]>>);

impl MutexBuckets {
    pub fn new(buckets: usize) -> Self {
        MutexBuckets(Mutex::new(vec![0; buckets].into_boxed_slice()))
    }
}

impl BucketStore for MutexBuckets {
    fn add(&self, bucket: usize, delta: u64) -> u64 {
        let mut all = self.0.lock();
        let b = &mut all[bucket];
        *b = b.wrapping_add(delta);
        *b
    }

    fn len(&self) -> usize {
        self.0.lock().len()
    }
}
