//! One global mutex over every key: each command waits for every other.
//! parking_lot's mutex: no poisoning, a fast uncontended path.

use super::db::{hasher, Db};
use crate::guarded::Guarded;
use foldhash::fast::RandomState;
use parking_lot::Mutex;
use std::hash::BuildHasher;

pub struct MutexResp {
    hasher: RandomState,
    db: Mutex<Db>,
}

impl Default for MutexResp {
    fn default() -> Self {
        let hasher = hasher();
        MutexResp {
            db: Mutex::new(Db::new(hasher.clone())),
            hasher,
        }
    }
}

impl Guarded for MutexResp {
    type State = Db;

    fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    fn read<R>(&self, _h: u64, f: impl FnOnce(&Db) -> R) -> R {
        f(&self.db.lock())
    }

    fn write<R>(&self, _h: u64, f: impl FnOnce(&mut Db) -> R) -> R {
        f(&mut self.db.lock())
    }
}
