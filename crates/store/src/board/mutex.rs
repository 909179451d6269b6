//! One global mutex: every operation, read or write, waits for every other.
//! The simplest correct design and the baseline the others are measured
//! against. parking_lot's mutex: no poisoning, a fast uncontended path.

use super::table::Table;
use super::BoardStore;
use parking_lot::Mutex;

#[derive(Default)]
pub struct MutexBoard(Mutex<Table>);

impl BoardStore for MutexBoard {
    fn post(&self, topic: &[u8], message: &[u8]) -> u64 {
        self.0.lock().post(topic, message)
    }
    fn read(&self, topic: &[u8], id: u64, out: &mut Vec<u8>) -> bool {
        self.0.lock().read(topic, id, out)
    }
    fn count(&self, topic: &[u8]) -> u64 {
        self.0.lock().count(topic)
    }
    fn list(&self, out: &mut Vec<u8>) {
        self.0.lock().list(out)
    }
}
