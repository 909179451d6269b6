//! One global mutex: every operation, read or write, waits for every other
//! (the labs' "global lock"). parking_lot's mutex: no poisoning, a fast
//! uncontended path.

use super::{put_in, KvStore, Map, Put, Value};
use parking_lot::Mutex;
use std::sync::Arc;

#[derive(Default)]
pub struct MutexKv(Mutex<Map>);

impl KvStore for MutexKv {
    fn get(&self, key: &[u8]) -> Option<Arc<Value>> {
        self.0.lock().get(key).cloned()
    }

    fn put(&self, key: &[u8], value: Arc<Value>) -> Put {
        let (put, old) = put_in(&mut self.0.lock(), key, value);
        drop(old); // after the guard: freeing a large value is not locked work
        put
    }

    fn delete(&self, key: &[u8]) -> bool {
        let old = self.0.lock().remove(key);
        old.is_some()
    }

    fn len(&self) -> usize {
        self.0.lock().len()
    }
}
