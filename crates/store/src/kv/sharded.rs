//! Keys striped over many reader/writer locks by their hash, so operations
//! on different keys rarely wait for each other. Each operation takes
//! exactly one stripe's lock, so there is no lock order to keep; `len`
//! visits the stripes one at a time (a snapshot, exact when quiescent).

use super::Map;
use crate::guarded::Guarded;
use parking_lot::RwLock;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

const SHARDS: usize = 64;

pub struct ShardedKv {
    hasher: RandomState,
    shards: Box<[RwLock<Map>]>,
}

impl Default for ShardedKv {
    fn default() -> Self {
        ShardedKv {
            hasher: RandomState::new(),
            shards: (0..SHARDS).map(|_| RwLock::default()).collect(),
        }
    }
}

impl ShardedKv {
    fn shard(&self, h: u64) -> &RwLock<Map> {
        &self.shards[h as usize % SHARDS]
    }
}

impl Guarded for ShardedKv {
    type State = Map;

    fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    fn read<R>(&self, h: u64, f: impl FnOnce(&Map) -> R) -> R {
        f(&self.shard(h).read())
    }

    fn write<R>(&self, h: u64, f: impl FnOnce(&mut Map) -> R) -> R {
        f(&mut self.shard(h).write())
    }

    fn each(&self, f: &mut dyn FnMut(&mut Map)) {
        for s in self.shards.iter() {
            f(&mut s.write());
        }
    }
}
