//! Provided buffers: a ring's receive buffers and the ring of descriptors
//! that offers them to the kernel, which picks one for each receive
//! completion. Who owns a buffer when is rule 2 of `sys`.

use super::BUFFER_GROUP;
use io_uring::IoUring;
use std::alloc::{self, Layout};
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, Ordering};

/// A provided buffer the kernel filled and the caller now owns (rule 2);
/// [`Uring::take`] reads it and hands it back.
pub(crate) struct Received {
    pub(super) bid: u16,
    pub(super) len: usize,
}

impl Drop for Received {
    fn drop(&mut self) {
        // Not unsafe (the buffer is only lost to the pool), but a bug.
        debug_assert!(
            std::thread::panicking(),
            "a received buffer was dropped without being handed back"
        );
    }
}

/// The layout of one descriptor on a buffer ring (`struct io_uring_buf`).
/// The ring's tail overlays the `resv` field of its first descriptor.
#[repr(C)]
struct BufDesc {
    addr: u64,
    len: u32,
    bid: u16,
    resv: u16,
}

const TAIL_OFFSET: usize = 14;

/// Provided buffers: `count` buffers of `len` bytes and the ring of
/// descriptors that offers them to the kernel.
pub(super) struct BufRing {
    descs: NonNull<BufDesc>,
    descs_layout: Layout,
    mem: NonNull<u8>,
    mem_layout: Layout,
    pub(super) count: u16,
    pub(super) len: u32,
    /// Our tail: descriptors up to it are (or will be, once published)
    /// the kernel's.
    tail: u16,
    /// Memory an operation might still use is leaked, not freed.
    pub(super) leak: bool,
}

impl BufRing {
    pub(super) fn new(count: u16, len: u32) -> BufRing {
        assert!(count.is_power_of_two() && count <= 1 << 15 && len > 0);
        let descs_layout = Layout::from_size_align(
            usize::from(count) * std::mem::size_of::<BufDesc>(),
            page_size(),
        )
        .expect("a buffer ring layout");
        let mem_layout = Layout::from_size_align(usize::from(count) * len as usize, 64)
            .expect("a buffer layout");
        // SAFETY: both layouts have a non-zero size (count, len > 0).
        let (descs, mem) = unsafe {
            (
                alloc::alloc_zeroed(descs_layout),
                alloc::alloc_zeroed(mem_layout),
            )
        };
        let (Some(descs), Some(mem)) = (NonNull::new(descs.cast()), NonNull::new(mem)) else {
            alloc::handle_alloc_error(mem_layout)
        };
        BufRing {
            descs,
            descs_layout,
            mem,
            mem_layout,
            count,
            len,
            tail: 0,
            leak: false,
        }
    }

    /// Register with `ring` and offer every buffer.
    pub(super) fn register(&mut self, ring: &IoUring) -> io::Result<()> {
        // SAFETY: the descriptors are page-aligned, zeroed, `count` long,
        // and stay allocated until the ring is unregistered or closed
        // (rule 4: `Uring` drops its ring before this memory, and leaks
        // this memory if it could not quiesce).
        unsafe {
            ring.submitter().register_buf_ring_with_flags(
                self.descs.as_ptr() as u64,
                self.count,
                BUFFER_GROUP,
                0,
            )?;
        }
        for bid in 0..self.count {
            self.push(bid);
        }
        self.publish();
        Ok(())
    }

    pub(super) fn buffer(&self, bid: u16) -> *const u8 {
        // SAFETY: `bid < count` (callers check), so the offset is inside
        // the allocation.
        unsafe { self.mem.as_ptr().add(usize::from(bid) * self.len as usize) }
    }

    /// Offer buffer `bid` again (visible to the kernel once published).
    pub(super) fn push(&mut self, bid: u16) {
        let slot = usize::from(self.tail & (self.count - 1));
        let addr = self.buffer(bid) as u64;
        // SAFETY: `slot < count`. The kernel reads only descriptors
        // between its head and the published tail, and this one is past
        // the tail; only its own fields are written, never `resv`, which
        // for slot 0 is the tail the kernel reads.
        unsafe {
            let d = self.descs.as_ptr().add(slot);
            std::ptr::addr_of_mut!((*d).addr).write(addr);
            std::ptr::addr_of_mut!((*d).len).write(self.len);
            std::ptr::addr_of_mut!((*d).bid).write(bid);
        }
        self.tail = self.tail.wrapping_add(1);
    }

    /// Make every pushed buffer visible to the kernel.
    pub(super) fn publish(&self) {
        // SAFETY: the tail is the aligned u16 at byte 14 of the
        // descriptors, shared with the kernel, which reads it atomically.
        let tail = unsafe {
            AtomicU16::from_ptr(
                self.descs
                    .as_ptr()
                    .cast::<u8>()
                    .add(TAIL_OFFSET)
                    .cast::<u16>(),
            )
        };
        // Release: the descriptors written before are visible to the
        // kernel before the tail that offers them.
        tail.store(self.tail, Ordering::Release);
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        if self.leak {
            return;
        }
        // SAFETY: allocated in `new` with these layouts, freed once, after
        // the ring was closed (field order in `Uring`) with nothing in
        // flight (rule 4).
        unsafe {
            alloc::dealloc(self.descs.as_ptr().cast(), self.descs_layout);
            alloc::dealloc(self.mem.as_ptr(), self.mem_layout);
        }
    }
}

fn page_size() -> usize {
    // SAFETY: `sysconf` takes no pointers.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096).max(4096)
}
