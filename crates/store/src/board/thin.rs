//! What a slot of the lock-free [`Log`](super::log::Log) owns: a value
//! behind one thin pointer (an `AtomicPtr` holds nothing wider), and
//! [`ThinBytes`], a byte string as one allocation — its length, then its
//! bytes — so a lock-free POST allocates once, not once for the bytes and
//! again for a box around their (fat) pointer.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;

/// An owned value a log slot can hold as a thin raw pointer.
///
/// # Safety
/// `into_raw` returns a non-null pointer, aligned for `Target`'s use, that
/// `get` may read from any thread until `free` is called on it, once.
pub(crate) unsafe trait Owned: Send + Sync {
    type Target: ?Sized;

    fn into_raw(self) -> *mut u8;

    /// # Safety
    /// `p` came from `into_raw` of this type and has not been freed; the
    /// reference must not outlive that.
    unsafe fn get<'a>(p: *mut u8) -> &'a Self::Target;

    /// # Safety
    /// `p` came from `into_raw` of this type, is freed once, and is not
    /// used again.
    unsafe fn free(p: *mut u8);
}

// SAFETY: a box's pointer is non-null and aligned for `T`; it is read as
// `&T` until it is turned back into the box and dropped.
unsafe impl<T: Send + Sync> Owned for Box<T> {
    type Target = T;

    fn into_raw(self) -> *mut u8 {
        Box::into_raw(self).cast()
    }

    unsafe fn get<'a>(p: *mut u8) -> &'a T {
        // SAFETY: the caller's contract: a live pointer from `Box::into_raw`.
        unsafe { &*p.cast::<T>() }
    }

    unsafe fn free(p: *mut u8) {
        // SAFETY: the caller's contract: from `Box::into_raw`, freed once.
        drop(unsafe { Box::from_raw(p.cast::<T>()) });
    }
}

/// A byte string in one heap block: a `usize` length, then the bytes.
pub(crate) struct ThinBytes(NonNull<u8>);

// SAFETY: the block is owned exclusively and never mutated after `new`.
unsafe impl Send for ThinBytes {}
// SAFETY: as above: shared access only reads.
unsafe impl Sync for ThinBytes {}

const HEADER: usize = std::mem::size_of::<usize>();

fn layout(len: usize) -> Layout {
    Layout::from_size_align(HEADER + len, std::mem::align_of::<usize>())
        .expect("a message fits in memory")
}

impl ThinBytes {
    pub(crate) fn new(bytes: &[u8]) -> Self {
        let layout = layout(bytes.len());
        // SAFETY: the layout is never zero-sized (it has the header); the
        // block is written whole (header, then every byte) before it is
        // read, and `usize` alignment makes the header write aligned.
        unsafe {
            let p = alloc(layout);
            let Some(p) = NonNull::new(p) else {
                handle_alloc_error(layout)
            };
            p.as_ptr().cast::<usize>().write(bytes.len());
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.as_ptr().add(HEADER), bytes.len());
            ThinBytes(p)
        }
    }
}

impl Drop for ThinBytes {
    fn drop(&mut self) {
        // SAFETY: `self.0` is a live block from `ThinBytes::new`.
        unsafe { <ThinBytes as Owned>::free(self.0.as_ptr()) };
    }
}

// SAFETY: `into_raw` hands over the block from `new` without freeing it
// (`forget`); `get` reads the header written by `new` and that many bytes.
unsafe impl Owned for ThinBytes {
    type Target = [u8];

    fn into_raw(self) -> *mut u8 {
        let p = self.0.as_ptr();
        std::mem::forget(self);
        p
    }

    unsafe fn get<'a>(p: *mut u8) -> &'a [u8] {
        // SAFETY: the caller's contract: a live block from `new`, whose
        // header holds the length of the bytes that follow it.
        unsafe {
            let len = p.cast::<usize>().read();
            std::slice::from_raw_parts(p.add(HEADER), len)
        }
    }

    unsafe fn free(p: *mut u8) {
        // SAFETY: the caller's contract: a live block from `new`, freed once,
        // with the layout `new` allocated it with.
        unsafe {
            let len = p.cast::<usize>().read();
            dealloc(p, layout(len));
        }
    }
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_through_a_thin_pointer() {
        for bytes in [&b""[..], b"x", b"\xff\x00 hello", &[7u8; 1000]] {
            let p = ThinBytes::new(bytes).into_raw();
            // SAFETY: `p` is live until the `free` below.
            assert_eq!(unsafe { ThinBytes::get(p) }, bytes);
            // SAFETY: freed once, not used after.
            unsafe { ThinBytes::free(p) };
        }
        drop(ThinBytes::new(b"dropped without being stored"));
    }
}
