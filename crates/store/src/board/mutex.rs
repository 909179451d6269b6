//! One global mutex: every operation, read or write, waits for every other.
//! The simplest correct design and the baseline the others are measured
//! against. parking_lot's mutex: no poisoning, a fast uncontended path.

use super::table::Table;
use crate::guarded::Guarded;
use parking_lot::Mutex;

#[derive(Default)]
pub struct MutexBoard(Mutex<Table>);

impl Guarded for MutexBoard {
    type State = Table;

    fn read<R>(&self, _h: u64, f: impl FnOnce(&Table) -> R) -> R {
        f(&self.0.lock())
    }

    fn write<R>(&self, _h: u64, f: impl FnOnce(&mut Table) -> R) -> R {
        f(&mut self.0.lock())
    }
}
