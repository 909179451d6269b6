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
    fn read_part(
        &self,
        topic: &[u8],
        id: u64,
        from: usize,
        max: usize,
        out: &mut Vec<u8>,
    ) -> Option<usize> {
        self.0.lock().read_part(topic, id, from, max, out)
    }
    fn count(&self, topic: &[u8]) -> u64 {
        self.0.lock().count(topic)
    }
    fn topics(&self) -> usize {
        self.0.lock().topics()
    }
    fn list_part(&self, from: usize, end: usize, budget: usize, out: &mut Vec<u8>) -> usize {
        self.0.lock().list_part(from, end, budget, out)
    }
}
