//! The state behind each protocol: one trait per protocol, one file per
//! locking scheme. Every scheme of a protocol must give the same answers; the
//! schemes differ only in how concurrent callers wait for each other.
// A test reads as one story; the 60-line limit is for the code under test.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod board;
pub mod bucket;
mod guarded;
pub mod kv;
pub mod resp;
mod sync;

use serverlab_util::Named;

/// The list of stores (`--store`): `$callback! { [$($extra)*] snake_name:
/// Variant, … }`. `StoreKind` is made from it, and so are the tests'
/// per-store matrices, so a store added here is listed and tested with no
/// other list to edit. Extra tokens after the callback's name are passed
/// through in the brackets.
#[macro_export]
macro_rules! for_each_store {
    ($callback:ident $(, $($extra:tt)*)?) => {
        $callback! {
            [$($($extra)*)?]
            mutex: Mutex,
            rwlock: RwLock,
            sharded: Sharded,
            lockfree: LockFree,
        }
    };
}

macro_rules! store_kind {
    ([] $($snake:ident: $variant:ident),* $(,)?) => {
        /// How a store serialises concurrent access (`--store`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum StoreKind {
            $($variant),*
        }

        impl StoreKind {
            const LIST: &'static [StoreKind] = &[$(StoreKind::$variant),*];
        }
    };
}

for_each_store!(store_kind);

impl Named for StoreKind {
    const WHAT: &'static str = "store";
    const ALL: &'static [StoreKind] = StoreKind::LIST;

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
