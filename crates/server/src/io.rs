//! Socket plumbing shared by the strategies.

use crate::session::Session;
use crate::Ctx;
use serverlab_service::Service;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::os::fd::{FromRawFd, IntoRawFd};

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

/// Accept every pending connection, admitting each under
/// `--max-connections` (a refused one is closed at once). Errors from
/// `accept` such as running out of file descriptors are reported once
/// and retried on the next readiness event: they must not stop the server.
pub(crate) fn accept_all<S: Service>(
    listener: &mio::net::TcpListener,
    ctx: &Ctx<S>,
    mut admit: impl FnMut(mio::net::TcpStream, SocketAddr) -> io::Result<()>,
) {
    loop {
        match listener.accept() {
            Ok((stream, peer)) => {
                if !ctx.stats.admit(ctx.max_connections) {
                    continue;
                }
                let _ = stream.set_nodelay(true);
                if let Err(e) = admit(stream, peer) {
                    ctx.stats.closed();
                    eprintln!("serverlab: cannot serve a connection from {peer}: {e}");
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => continue,
            Err(e) => {
                eprintln!("serverlab: accept failed: {e}");
                // Out of descriptors: back off briefly instead of spinning.
                std::thread::sleep(std::time::Duration::from_millis(5));
                return;
            }
        }
    }
}

/// A mio stream as a blocking std stream.
pub(crate) fn to_std(stream: mio::net::TcpStream) -> io::Result<std::net::TcpStream> {
    // SAFETY: the fd comes straight out of a live mio stream, which gives
    // up ownership; nothing else refers to it.
    let stream = unsafe { std::net::TcpStream::from_raw_fd(stream.into_raw_fd()) };
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// Write every pending reply on a blocking stream.
pub(crate) fn flush_blocking<S: Service>(
    stream: &mut std::net::TcpStream,
    sess: &mut Session<S>,
) -> io::Result<()> {
    while !sess.unwritten().is_empty() {
        match stream.write(sess.unwritten()) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => sess.wrote(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Outcome of writing without blocking.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Flushed {
    All,
    WouldBlock,
}

/// Write pending replies until done or the socket is full.
pub(crate) fn flush_nonblocking<S: Service>(
    stream: &mut impl Write,
    sess: &mut Session<S>,
) -> io::Result<Flushed> {
    while !sess.unwritten().is_empty() {
        match stream.write(sess.unwritten()) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => sess.wrote(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                sess.write_blocked();
                return Ok(Flushed::WouldBlock);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Flushed::All)
}

/// Close a connection whose client stopped reading with a reset rather
/// than a FIN: a graceful close would leave the kernel holding the unsent
/// replies (up to the socket's send buffer, megabytes) until it gives up
/// on the peer. Errors are ignored: the connection is going anyway.
pub(crate) fn reset_on_close(socket: &impl std::os::fd::AsFd) {
    let _ = socket2::SockRef::from(socket).set_linger(Some(std::time::Duration::ZERO));
}

/// Most a closing connection reads and discards while lingering.
pub(crate) const LINGER_BYTES: usize = 1 << 20;
/// Longest a blocking or async strategy lingers before closing.
pub(crate) const LINGER_TIME: std::time::Duration = std::time::Duration::from_secs(1);

/// Close "lingering", as HTTP servers do: the server is closing although
/// the peer may still be sending (an error reply to a request it did not
/// read whole). Closing a socket with unread input makes the kernel send a
/// reset, which can destroy the error reply before the peer reads it. So:
/// half-close (the peer sees our replies, then end of stream), and read
/// and discard what the peer still sends, for at most [`LINGER_TIME`] or
/// [`LINGER_BYTES`], before the real close.
pub(crate) fn linger_blocking(stream: &mut std::net::TcpStream) {
    use std::io::Read;
    if stream.shutdown(std::net::Shutdown::Write).is_err() {
        return;
    }
    let deadline = std::time::Instant::now() + LINGER_TIME;
    let mut scratch = [0u8; 16 * 1024];
    let mut discarded = 0;
    while discarded < LINGER_BYTES {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match stream.read(&mut scratch) {
            Ok(0) | Err(_) => return,
            Ok(n) => discarded += n,
        }
    }
}

/// The non-blocking form for event loops that cannot wait: half-close,
/// then discard whatever input has already arrived.
pub(crate) fn linger_nonblocking(stream: &mut mio::net::TcpStream) {
    use std::io::Read;
    if stream.shutdown(std::net::Shutdown::Write).is_err() {
        return;
    }
    let mut scratch = [0u8; 16 * 1024];
    let mut discarded = 0;
    while discarded < LINGER_BYTES {
        match stream.read(&mut scratch) {
            Ok(0) | Err(_) => return,
            Ok(n) => discarded += n,
        }
    }
}
