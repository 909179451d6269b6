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
    fn read(&self, topic: &[u8], id: u64, out: &mut Vec<u8>) -> bool {
        self.0.read().read(topic, id, out)
    }
    fn count(&self, topic: &[u8]) -> u64 {
        self.0.read().count(topic)
    }
    fn list(&self, out: &mut Vec<u8>) {
        self.0.read().list(out)
    }
}
