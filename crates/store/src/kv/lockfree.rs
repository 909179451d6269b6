//! A lock-free store on `papaya::HashMap`, a concurrent hash table whose
//! reads never block and whose writes are lock-free except while the table
//! resizes: papaya then migrates entries incrementally, and a writer may
//! briefly wait for a bucket being copied. So, honestly: readers never
//! wait; writers almost never do. Removed values are reclaimed by papaya's
//! epoch-style collector (seize) once no reader can still see them.
//!
//! papaya is linearizable per key (its operations are single atomic steps
//! on the entry), which is what the kv protocol needs.

use super::{KvStore, Put, Value};
use std::sync::Arc;

#[derive(Default)]
pub struct LockFreeKv(papaya::HashMap<Box<[u8]>, Arc<Value>>);

impl KvStore for LockFreeKv {
    fn get(&self, key: &[u8]) -> Option<Arc<Value>> {
        self.0.pin().get(key).cloned()
    }

    fn put(&self, key: &[u8], value: Arc<Value>) -> Put {
        match self.0.pin().insert(key.into(), value) {
            Some(_) => Put::Replaced,
            None => Put::Created,
        }
    }

    fn delete(&self, key: &[u8]) -> bool {
        self.0.pin().remove(key).is_some()
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn for_each(&self, f: &mut dyn FnMut(&[u8], &Arc<Value>)) {
        self.0.pin().iter().for_each(|(k, v)| f(k, v));
    }
}
