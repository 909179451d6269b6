//! One global mutex: every operation, read or write, waits for every other
//! (the labs' "global lock"). parking_lot's mutex: no poisoning, a fast
//! uncontended path.

use super::Map;
use crate::guarded::Guarded;
use parking_lot::Mutex;

#[derive(Default)]
pub struct MutexKv(Mutex<Map>);

impl Guarded for MutexKv {
    type State = Map;

    fn read<R>(&self, _h: u64, f: impl FnOnce(&Map) -> R) -> R {
        f(&self.0.lock())
    }

    fn write<R>(&self, _h: u64, f: impl FnOnce(&mut Map) -> R) -> R {
        f(&mut self.0.lock())
    }
}
