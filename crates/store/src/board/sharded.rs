//! Topics striped over many reader/writer locks by the hash of their name,
//! so operations on different topics rarely wait for each other. Creation
//! order for LIST lives in one separate mutex-protected list.
//!
//! Lock order: a shard, then the creation list; never the reverse. A new
//! topic is appended to the creation list while its shard is still
//! write-locked, so no POST to it can be answered before LIST shows it.

use super::messages::Messages;
use super::BoardStore;
use foldhash::fast::RandomState;
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::hash::BuildHasher;

const SHARDS: usize = 64;

/// One stripe: topic name → its messages.
type Shard = RwLock<HashMap<Box<[u8]>, Messages, RandomState>>;

pub struct ShardedBoard {
    hasher: RandomState,
    shards: Box<[Shard]>,
    created: Mutex<Vec<Box<[u8]>>>,
}

impl Default for ShardedBoard {
    fn default() -> Self {
        ShardedBoard {
            hasher: RandomState::default(),
            shards: (0..SHARDS).map(|_| RwLock::default()).collect(),
            created: Mutex::default(),
        }
    }
}

impl ShardedBoard {
    fn shard(&self, topic: &[u8]) -> &Shard {
        &self.shards[self.hasher.hash_one(topic) as usize % SHARDS]
    }
}

impl BoardStore for ShardedBoard {
    fn post(&self, topic: &[u8], message: &[u8]) -> u64 {
        let mut shard = self.shard(topic).write();
        if let Some(messages) = shard.get_mut(topic) {
            return messages.push(message);
        }
        let mut messages = Messages::default();
        messages.push(message);
        shard.insert(topic.into(), messages);
        self.created.lock().push(topic.into());
        0
    }

    fn message(&self, topic: &[u8], id: u64, found: &mut dyn FnMut(&[u8])) -> bool {
        let shard = self.shard(topic).read();
        shard
            .get(topic)
            .and_then(|m| m.get(id))
            .map(found)
            .is_some()
    }

    fn count(&self, topic: &[u8]) -> u64 {
        self.shard(topic).read().get(topic).map_or(0, Messages::len)
    }

    fn topics(&self) -> usize {
        self.created.lock().len()
    }

    fn list_part(&self, from: usize, end: usize, budget: usize, out: &mut Vec<u8>) -> usize {
        let created = self.created.lock();
        let end = end.min(created.len());
        let names = created[from.min(end)..end].iter().map(|t| &**t);
        super::push_entries(names, from, budget, out)
    }
}
