//! One global reader/writer lock: GETs share it, writes take it alone (the
//! labs' "reader/writer lock"). parking_lot's RwLock is task-fair, so a
//! stream of readers cannot starve a writer.

use super::Map;
use crate::guarded::Guarded;
use parking_lot::RwLock;

#[derive(Default)]
pub struct RwLockKv(RwLock<Map>);

impl Guarded for RwLockKv {
    type State = Map;

    fn read<R>(&self, _h: u64, f: impl FnOnce(&Map) -> R) -> R {
        f(&self.0.read())
    }

    fn write<R>(&self, _h: u64, f: impl FnOnce(&mut Map) -> R) -> R {
        f(&mut self.0.write())
    }
}
