//! Heap allocations per board POST, counted by a global allocator that
//! counts on the measuring thread only (allocation counts are
//! deterministic, unlike times, so they can be asserted).
//!
//! Before this test existed the lock-free board made two allocations per
//! POST (the message's bytes, and a box around their fat pointer); it now
//! makes one, and the locked stores none beyond their arenas' occasional
//! growth.

use serverlab_store::StoreKind;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

fn bump() {
    // `try_with`: the allocator also runs while thread-locals are torn down.
    let _ = ON.try_with(|on| {
        if on.get() {
            let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        }
    });
}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counting touches only const-initialised thread-locals, which never
// allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: the caller's contract for this call is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: the caller's contract for this call is passed on unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump();
        // SAFETY: the caller's contract for this call is passed on unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for this call is passed on unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Allocations `f` makes on this thread.
fn allocations(f: impl FnOnce()) -> u64 {
    COUNT.with(|c| c.set(0));
    ON.with(|on| on.set(true));
    f();
    ON.with(|on| on.set(false));
    COUNT.with(|c| c.get())
}

const MESSAGE: &[u8] = b"p1-12345:abcdefghijklmnopqrstuvw";

/// The lock-free board: exactly one allocation per POST to an existing
/// topic (the message, length and bytes in one block), while no new
/// segment of its log is needed (ids 1 to 31 share the first segment).
#[test]
fn lockfree_board_allocates_once_per_post() {
    let board = serverlab_store::board::new(StoreKind::LockFree);
    board.post(b"t", MESSAGE);
    let n = allocations(|| {
        for _ in 1..32 {
            board.post(b"t", MESSAGE);
        }
    });
    assert_eq!(n, 31, "allocations for 31 POSTs");
}

/// The locked boards store a topic's messages in one arena: POSTs allocate
/// only when it grows (doubling), far less than once per POST.
#[test]
fn locked_boards_allocate_only_to_grow() {
    for kind in [StoreKind::Mutex, StoreKind::RwLock, StoreKind::Sharded] {
        let board = serverlab_store::board::new(kind);
        board.post(b"t", MESSAGE);
        let n = allocations(|| {
            for _ in 0..1000 {
                board.post(b"t", MESSAGE);
            }
        });
        assert!(n <= 40, "{kind:?}: {n} allocations for 1000 POSTs");
    }
}
