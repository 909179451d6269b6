//! One global reader/writer lock: READ, COUNT and LIST share it, POST takes
//! it alone. parking_lot's RwLock is task-fair, so a stream of readers cannot
//! starve a poster.

use super::table::Table;
use super::BoardStore;
use parking_lot::RwLock;

#[derive(Default)]
pub struct RwLockBoard(RwLock<Table>);

impl BoardStore for RwLockBoard {
    fn post(&self, topic: &[u8], message: &[u8]) -> u64 {
        self.0.write().post(topic, message)
    }
    fn read_part(
        &self,
        topic: &[u8],
        id: u64,
        from: usize,
        max: usize,
        out: &mut Vec<u8>,
    ) -> Option<usize> {
        self.0.read().read_part(topic, id, from, max, out)
    }
    fn count(&self, topic: &[u8]) -> u64 {
        self.0.read().count(topic)
    }
    fn topics(&self) -> usize {
        self.0.read().topics()
    }
    fn list_part(&self, from: usize, end: usize, budget: usize, out: &mut Vec<u8>) -> usize {
        self.0.read().list_part(from, end, budget, out)
    }
}
