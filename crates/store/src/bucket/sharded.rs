//! Buckets striped over up to 64 mutexes (bucket `b` lives in stripe
//! `b % stripes`), so adds to different stripes never wait for each other.
//! A lock per bucket would cost a cache line per bucket for little more
//! parallelism than a server has cores; 64 stripes already make two
//! concurrent adds collide with probability 1/64 at most.
//!
//! Each stripe is cache-padded so that two cores working on neighbouring
//! stripes do not fight over one cache line (false sharing).

use super::BucketStore;
use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

const MAX_STRIPES: usize = 64;

/// One stripe's buckets, behind its own lock, on its own cache line.
type Stripe = CachePadded<Mutex<Box<[u64]>>>;

pub struct ShardedBuckets {
    len: usize,
    /// Stripe `s` holds buckets `s, s + stripes, s + 2 × stripes, …`.
    stripes: Box<[Stripe]>,
}

impl ShardedBuckets {
    pub fn new(buckets: usize) -> Self {
        let n = buckets.clamp(1, MAX_STRIPES);
        let stripes = (0..n)
            .map(|s| {
                // Buckets s, s + n, … below `buckets`.
                let held = (buckets - s).div_ceil(n);
                CachePadded::new(Mutex::new(vec![0; held].into_boxed_slice()))
            })
            .collect();
        ShardedBuckets {
            len: buckets,
            stripes,
        }
    }
}

impl BucketStore for ShardedBuckets {
    fn add(&self, bucket: usize, delta: u64) -> u64 {
        assert!(bucket < self.len, "bucket {bucket} out of range");
        let n = self.stripes.len();
        let mut stripe = self.stripes[bucket % n].lock();
        let b = &mut stripe[bucket / n];
        *b = b.wrapping_add(delta);
        *b
    }

    fn len(&self) -> usize {
        self.len
    }
}
