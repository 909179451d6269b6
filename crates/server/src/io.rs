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
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Flushed::WouldBlock),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Flushed::All)
}
