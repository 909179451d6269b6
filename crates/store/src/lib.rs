//! The state behind each protocol: one trait per protocol, one file per
//! locking scheme. Every scheme of a protocol must give the same answers; the
//! schemes differ only in how concurrent callers wait for each other.

pub mod board;
pub mod bucket;
pub mod kv;
mod sync;

use std::fmt;
use std::str::FromStr;

/// How a store serialises concurrent access (`--store`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreKind {
    /// One global mutex around all state.
    Mutex,
    /// One global reader/writer lock: reads share, writes exclude.
    RwLock,
    /// State striped over many locks by key.
    Sharded,
    /// Atomics and lock-free structures; readers never wait.
    LockFree,
}

impl StoreKind {
    pub const ALL: [StoreKind; 4] = [
        StoreKind::Mutex,
        StoreKind::RwLock,
        StoreKind::Sharded,
        StoreKind::LockFree,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StoreKind::Mutex => "mutex",
            StoreKind::RwLock => "rwlock",
            StoreKind::Sharded => "sharded",
            StoreKind::LockFree => "lockfree",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            StoreKind::Mutex => "one global mutex: every operation waits for every other",
            StoreKind::RwLock => "one reader/writer lock: reads run together, writes alone",
            StoreKind::Sharded => "keys striped over many locks: only same-stripe operations wait",
            StoreKind::LockFree => "atomics and lock-free structures: readers never block",
        }
    }
}

impl fmt::Display for StoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for StoreKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        StoreKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                format!("unknown store '{s}' (expected one of: mutex, rwlock, sharded, lockfree)")
            })
    }
}
