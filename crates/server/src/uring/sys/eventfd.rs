//! An eventfd, which other threads signal to wake a ring.

use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// An eventfd: other threads wake a ring by adding to its counter; the
/// ring's pending read of it completes.
pub(crate) struct EventFd(std::fs::File);

impl EventFd {
    /// A blocking eventfd: io_uring returns `EAGAIN` for a read of a
    /// non-blocking file instead of waiting for it.
    pub(crate) fn new() -> io::Result<EventFd> {
        // SAFETY: `eventfd` takes no pointers.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `eventfd` just returned this descriptor; nothing else
        // owns it.
        Ok(EventFd(std::fs::File::from(unsafe {
            OwnedFd::from_raw_fd(fd)
        })))
    }

    pub(super) fn raw(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// Wake the ring. A failure (the counter at its maximum) means a wake
    /// is pending anyway.
    pub(crate) fn signal(&self) {
        let _ = (&self.0).write(&1u64.to_ne_bytes());
    }
}
