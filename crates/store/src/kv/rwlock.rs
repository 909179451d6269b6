//! One global reader/writer lock: GETs share it, writes take it alone (the
//! labs' "reader/writer lock"). parking_lot's RwLock is task-fair, so a
//! stream of readers cannot starve a writer.

use super::{put_in, KvStore, Map, Put, Value};
use parking_lot::RwLock;
use std::sync::Arc;

#[derive(Default)]
pub struct RwLockKv(RwLock<Map>);

impl KvStore for RwLockKv {
    fn get(&self, key: &[u8]) -> Option<Arc<Value>> {
        self.0.read().get(key).cloned()
    }

    fn put(&self, key: &[u8], value: Arc<Value>) -> Put {
        let (put, old) = put_in(&mut self.0.write(), key, value);
        drop(old); // after the guard: freeing a large value is not locked work
        put
    }

    fn delete(&self, key: &[u8]) -> bool {
        let old = self.0.write().remove(key);
        old.is_some()
    }

    fn len(&self) -> usize {
        self.0.read().len()
    }
}
