//! Socket plumbing shared by the strategies.

use std::io;

/// `poll`, retrying when a signal interrupts it.
pub(crate) fn poll(
    poll: &mut mio::Poll,
    events: &mut mio::Events,
    timeout: Option<std::time::Duration>,
) -> io::Result<()> {
    loop {
        match poll.poll(events, timeout) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// A mio stream as a blocking std stream.
pub(crate) fn to_std(stream: mio::net::TcpStream) -> io::Result<std::net::TcpStream> {
    let stream = std::net::TcpStream::from(stream);
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// Close a connection whose client stopped reading with a reset rather
/// than a FIN: a graceful close would leave the kernel holding the unsent
/// replies (up to the socket's send buffer, megabytes) until it gives up
/// on the peer. Takes effect when the socket is closed. Errors are
/// ignored: the connection is going anyway.
pub(crate) fn reset_on_close(socket: &impl std::os::fd::AsFd) {
    let _ = socket2::SockRef::from(socket).set_linger(Some(std::time::Duration::ZERO));
}

/// Shut a socket's write side (the peer reads our replies, then end of
/// stream). Errors are ignored: the connection is closing anyway.
pub(crate) fn shutdown_write(socket: &impl std::os::fd::AsFd) {
    let _ = socket2::SockRef::from(socket).shutdown(std::net::Shutdown::Write);
}

/// Whether the connection is gone both ways, waiting up to `wait_ms` for
/// it: the peer reset it (a client that closed entirely resets the
/// connection as soon as a reply reaches it) or it was shut down both ways
/// here (thread-per-connection's abort). A peer that only half-closed may
/// still be reading its replies: it is not gone. One `poll` asking for no
/// events, so only a hang-up or an error wakes it; an interrupted or
/// failed poll answers "not gone".
pub(crate) fn gone(socket: &impl std::os::fd::AsFd, wait_ms: u16) -> bool {
    use nix::poll::{poll, PollFd, PollFlags};
    let mut fds = [PollFd::new(socket.as_fd(), PollFlags::empty())];
    let gone = PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL;
    matches!(poll(&mut fds, wait_ms), Ok(n) if n > 0)
        && fds[0].revents().is_some_and(|r| r.intersects(gone))
}

/// Whether the peer has ended its side (or the connection is gone both
/// ways, or failed), even with input still unread: one `poll` for
/// `POLLRDHUP`, not waiting. A blocked pop whose client did this has left,
/// as Redis takes it: nobody is there to take what it would pop.
pub(crate) fn peer_closed(socket: &impl std::os::fd::AsFd) -> bool {
    use std::os::fd::AsRawFd;
    let mut fd = libc::pollfd {
        fd: socket.as_fd().as_raw_fd(),
        events: libc::POLLRDHUP,
        revents: 0,
    };
    // SAFETY: one `pollfd` of ours, borrowed for the call only; the
    // descriptor is open (borrowed from `socket`). (nix's flags lack
    // `POLLRDHUP`.)
    let n = unsafe { libc::poll(&mut fd, 1, 0) };
    let closed = libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR | libc::POLLNVAL;
    n > 0 && fd.revents & closed != 0
}

/// Most a closing connection reads and discards while lingering.
pub(crate) const LINGER_BYTES: usize = 1 << 20;
/// Longest a closing connection lingers before closing.
pub(crate) const LINGER_TIME: std::time::Duration = std::time::Duration::from_secs(1);
