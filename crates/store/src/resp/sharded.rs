//! Keys striped over 64 reader/writer locks by their hash, so commands on
//! different keys rarely wait for each other. A command takes exactly one
//! stripe's lock (a multi-key command, one at a time), so there is no lock
//! order to keep; DBSIZE and FLUSHALL visit the stripes one by one.

use super::db::{hasher, Db};
use crate::guarded::Guarded;
use crossbeam_utils::CachePadded;
use foldhash::fast::RandomState;
use parking_lot::RwLock;
use std::hash::BuildHasher;

const SHARDS: usize = 64;

pub struct ShardedResp {
    hasher: RandomState,
    /// Cache-padded: two stripes' locks never share a line.
    shards: Box<[CachePadded<RwLock<Db>>]>,
}

impl Default for ShardedResp {
    fn default() -> Self {
        let hasher = hasher();
        ShardedResp {
            shards: (0..SHARDS)
                .map(|_| CachePadded::new(RwLock::new(Db::new(hasher.clone()))))
                .collect(),
            hasher,
        }
    }
}

impl ShardedResp {
    /// The stripe of a hash: middle bits, since the table inside uses the
    /// low bits (bucket) and the top seven (tag).
    fn shard(&self, h: u64) -> &RwLock<Db> {
        &self.shards[(h >> 32) as usize % SHARDS]
    }
}

impl Guarded for ShardedResp {
    type State = Db;

    fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    fn read<R>(&self, h: u64, f: impl FnOnce(&Db) -> R) -> R {
        f(&self.shard(h).read())
    }

    fn write<R>(&self, h: u64, f: impl FnOnce(&mut Db) -> R) -> R {
        f(&mut self.shard(h).write())
    }

    fn each(&self, f: &mut dyn FnMut(&mut Db)) {
        for s in self.shards.iter() {
            f(&mut s.write());
        }
    }
}
