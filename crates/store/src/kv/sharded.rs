//! Keys striped over many reader/writer locks by their hash, so operations
//! on different keys rarely wait for each other. Each operation takes
//! exactly one stripe's lock, so there is no lock order to keep; `len`
//! visits the stripes one at a time (a snapshot, exact when quiescent).

use super::{put_in, KvStore, Map, Put, Value};
use parking_lot::RwLock;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::Arc;

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
    fn shard(&self, key: &[u8]) -> &RwLock<Map> {
        &self.shards[self.hasher.hash_one(key) as usize % SHARDS]
    }
}

impl KvStore for ShardedKv {
    fn get(&self, key: &[u8]) -> Option<Arc<Value>> {
        self.shard(key).read().get(key).cloned()
    }

    fn put(&self, key: &[u8], value: Arc<Value>) -> Put {
        let (put, old) = put_in(&mut self.shard(key).write(), key, value);
        drop(old); // after the guard: freeing a large value is not locked work
        put
    }

    fn delete(&self, key: &[u8]) -> bool {
        let old = self.shard(key).write().remove(key);
        old.is_some()
    }

    fn len(&self) -> usize {
        self.shards.iter().map(|s| s.read().len()).sum()
    }
}
