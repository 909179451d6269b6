//! One reader/writer lock over every key: GET, EXISTS, LLEN, LINDEX and
//! LRANGE share it; writes take it alone. parking_lot's RwLock is
//! task-fair, so a stream of readers cannot starve a writer.

use super::db::{hasher, Db};
use crate::guarded::Guarded;
use foldhash::fast::RandomState;
use parking_lot::RwLock;
use std::hash::BuildHasher;

pub struct RwLockResp {
    hasher: RandomState,
    db: RwLock<Db>,
}

impl Default for RwLockResp {
    fn default() -> Self {
        let hasher = hasher();
        RwLockResp {
            db: RwLock::new(Db::new(hasher.clone())),
            hasher,
        }
    }
}

impl Guarded for RwLockResp {
    type State = Db;

    fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    fn read<R>(&self, _h: u64, f: impl FnOnce(&Db) -> R) -> R {
        f(&self.db.read())
    }

    fn write<R>(&self, _h: u64, f: impl FnOnce(&mut Db) -> R) -> R {
        f(&mut self.db.write())
    }
}
