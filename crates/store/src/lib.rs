//! The state behind each protocol: one trait per protocol, one file per
//! locking scheme. Every scheme of a protocol must give the same answers; the
//! schemes differ only in how concurrent callers wait for each other.

pub mod board;
pub mod bucket;
pub mod kv;
mod sync;

use serverlab_util::Named;

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

impl Named for StoreKind {
    const WHAT: &'static str = "store";
    const ALL: &'static [StoreKind] = &[
        StoreKind::Mutex,
        StoreKind::RwLock,
        StoreKind::Sharded,
        StoreKind::LockFree,
    ];

    fn name(self) -> &'static str {
        match self {
            StoreKind::Mutex => "mutex",
            StoreKind::RwLock => "rwlock",
            StoreKind::Sharded => "sharded",
            StoreKind::LockFree => "lockfree",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            StoreKind::Mutex => "one global mutex: every operation waits for every other",
            StoreKind::RwLock => "one reader/writer lock: reads run together, writes alone",
            StoreKind::Sharded => "keys striped over many locks: only same-stripe operations wait",
            StoreKind::LockFree => "atomics and lock-free structures: readers never block",
        }
    }
}

serverlab_util::named_enum_impls!(StoreKind);
