//! One global reader/writer lock: READ, COUNT and LIST share it, POST takes
//! it alone. parking_lot's RwLock is task-fair, so a stream of readers cannot
//! starve a poster.

use super::table::Table;
use crate::guarded::Guarded;
use parking_lot::RwLock;

#[derive(Default)]
pub struct RwLockBoard(RwLock<Table>);

impl Guarded for RwLockBoard {
    type State = Table;

    fn read<R>(&self, _h: u64, f: impl FnOnce(&Table) -> R) -> R {
        f(&self.0.read())
    }

    fn write<R>(&self, _h: u64, f: impl FnOnce(&mut Table) -> R) -> R {
        f(&mut self.0.write())
    }
}
