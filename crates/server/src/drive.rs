//! Carrying out a session's I/O with plain socket calls, for the
//! strategies that make them on threads: thread-per-connection (blocking
//! sockets, so a call waits) and the reactor's workers (non-blocking
//! sockets run after a readiness event, so a call that would wait returns
//! to the event loop instead).

use crate::io::{peer_closed, reset_on_close, shutdown_write};
use crate::session::{Io, Session};
use crate::shutdown::Phase;
use serverlab_service::Service;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How often a blocking thread waiting for a blocked pop looks whether
/// its client has left or the stop aborted (the pop itself is woken, not
/// looked for).
const LOOK_EVERY: Duration = Duration::from_millis(50);

/// How the service wakes a blocking thread whose blocked pop may go (a
/// writer served it, CLIENT UNBLOCK ended it): a flag, and the thread
/// unparked.
#[derive(Debug)]
pub(crate) struct Wakeup {
    woken: AtomicBool,
    thread: Thread,
}

impl Wakeup {
    /// For the calling thread, which will wait.
    pub(crate) fn for_this_thread() -> Arc<Self> {
        Arc::new(Wakeup {
            woken: AtomicBool::new(false),
            thread: std::thread::current(),
        })
    }
}

impl std::task::Wake for Wakeup {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

/// Whether the socket's calls wait.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Mode<'a> {
    /// Blocking calls: a read waits until input, end of stream, its
    /// deadline (`SO_RCVTIMEO`, set here) or a signal (`EINTR`). The flag
    /// is set while the thread is blocked reading for a request, so the
    /// stop knows whom to interrupt. A write never blocks in the call: it
    /// sends what the socket takes now, and if that is nothing, waits until
    /// the socket is writable or the session's deadline. (A blocking send
    /// bounded by `SO_SNDTIMEO` returns a partial count at its timeout
    /// whenever it copied anything, even in its first microsecond, so a
    /// client that stops reading was reset only after two or three
    /// timeouts.) The [`Wakeup`] is the one the session's waits were
    /// given ([`Session::on_wait`]): a blocked pop parks the thread until
    /// it is woken.
    Blocking(&'a AtomicBool, &'a Wakeup),
    /// Non-blocking calls: one that would wait returns [`Parked::Wait`].
    NonBlocking,
}

/// Why [`drive`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parked {
    /// The socket has nothing for now (non-blocking only): run the session
    /// again when it is ready, or at [`Session::deadline`].
    Wait,
    /// The session's budget is spent: run it again after others.
    Yield,
    /// The connection is finished (its session too); drop the socket.
    Closed,
}

/// Carry out the session's I/O on `stream` until it must wait, yields, or
/// is closed.
pub(crate) fn drive<S: Service, T: Read + Write + AsFd>(
    sess: &mut Session<S>,
    stream: &mut T,
    mode: Mode<'_>,
) -> Parked {
    // The read timeout now set on a blocking socket.
    let mut read_timeout = None;
    loop {
        let parked = match sess.next() {
            Io::Delay(d) => {
                // Abandoned when the client has gone or the stop passed
                // its drain limit.
                if !crate::delay::perform(d, stream, sess.shutdown()) {
                    sess.abandon_delay();
                }
                None
            }
            // A wait (a blocking pop): a blocking thread is the
            // connection's own, it parks until woken; a worker parks the
            // connection until the session's deadline, its waker, or the
            // socket is ready. A client that left ends it.
            Io::Wait(d) => match mode {
                Mode::Blocking(_, wakeup) => {
                    park(sess, stream, wakeup, d);
                    None
                }
                Mode::NonBlocking if peer_closed(stream) => {
                    sess.abandon_wait();
                    None
                }
                Mode::NonBlocking => Some(Parked::Wait),
            },
            // A blocking thread is the connection's own: it waits there. A
            // non-blocking one parks the connection; the log's thread wakes
            // the waker its strategy gave the session.
            Io::Commit(t) => match mode {
                Mode::Blocking(..) => {
                    sess.wait_commit(t);
                    None
                }
                Mode::NonBlocking => sess.register_commit(t).then_some(Parked::Wait),
            },
            Io::Write => write(sess, stream, mode),
            Io::Read { deadline } => read(sess, stream, mode, deadline, &mut read_timeout),
            Io::ShutdownWrite => {
                shutdown_write(stream);
                None
            }
            Io::Yield => Some(Parked::Yield),
            Io::Close => Some(closed(sess)),
            Io::Reset => {
                reset_on_close(stream);
                Some(closed(sess))
            }
        };
        if let Some(parked) = parked {
            return parked;
        }
    }
}

/// Park a blocking thread for a blocked pop until its waker is woken,
/// `d` passes, the client leaves, or the stop aborts (the session then
/// resets); it looks at the socket and the stop every [`LOOK_EVERY`].
fn park<S: Service>(sess: &mut Session<S>, stream: &impl AsFd, wakeup: &Wakeup, d: Duration) {
    let end = Instant::now().checked_add(d);
    loop {
        // A wake that came before the park is kept by the flag (and the
        // unpark's token): none is lost.
        if wakeup.woken.swap(false, Ordering::Acquire) || sess.shutdown().phase() == Phase::Aborting
        {
            return;
        }
        if peer_closed(stream) {
            sess.abandon_wait();
            return;
        }
        let left = end.map_or(LOOK_EVERY, |e| e.saturating_duration_since(Instant::now()));
        if left.is_zero() {
            return;
        }
        std::thread::park_timeout(left.min(LOOK_EVERY));
    }
}

/// One write of what the socket takes now; `Some` when driving stops.
fn write<S: Service, T: Write + AsFd>(
    sess: &mut Session<S>,
    stream: &mut T,
    mode: Mode<'_>,
) -> Option<Parked> {
    let blocking = matches!(mode, Mode::Blocking(..));
    match send(stream, sess.unwritten(), blocking) {
        Ok(0) => Some(closed(sess)),
        Ok(n) => {
            sess.wrote(n);
            None
        }
        Err(e) if would_block(&e) => {
            sess.write_blocked();
            if !blocking {
                return Some(Parked::Wait);
            }
            // `next` resets the connection once the stall passes the
            // write timeout.
            match wait_writable(stream, sess.deadline()) {
                Ok(()) => None,
                Err(_) => Some(closed(sess)),
            }
        }
        Err(e) if e.kind() == io::ErrorKind::Interrupted => None,
        Err(_) => Some(closed(sess)),
    }
}

/// One read, waiting for input until `deadline` (blocking calls) or
/// parking until the socket is readable; `Some` when driving stops.
fn read<S: Service, T: Read + AsFd>(
    sess: &mut Session<S>,
    stream: &mut T,
    mode: Mode<'_>,
    deadline: Option<Instant>,
    read_timeout: &mut Option<Duration>,
) -> Option<Parked> {
    let blocking = matches!(mode, Mode::Blocking(..));
    if blocking && set_read_timeout(stream, deadline, read_timeout).is_err() {
        return Some(closed(sess));
    }
    match read_marked(sess, stream, mode) {
        Ok(0) => sess.set_eof(),
        Ok(n) => sess.filled(n),
        // Blocking: the deadline passed, which `next` deals with.
        Err(e) if would_block(&e) && blocking => {}
        Err(e) if would_block(&e) => return Some(Parked::Wait),
        // A signal (the stop, under blocking calls): `next` looks.
        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
        Err(_) => return Some(closed(sess)),
    }
    None
}

/// The read call itself. Under blocking calls, a thread reading for a
/// request is marked meanwhile, so the stop knows whom to interrupt.
fn read_marked<S: Service, T: Read>(
    sess: &mut Session<S>,
    stream: &mut T,
    mode: Mode<'_>,
) -> io::Result<usize> {
    let marked = match mode {
        // Relaxed: the stop looks again until the thread is out.
        Mode::Blocking(reading, _) if sess.reading_requests() => {
            reading.store(true, Ordering::Relaxed);
            Some(reading)
        }
        _ => None,
    };
    let read = stream.read(sess.read_buf());
    if let Some(reading) = marked {
        reading.store(false, Ordering::Relaxed);
    }
    read
}

fn closed<S: Service>(sess: &mut Session<S>) -> Parked {
    sess.finish();
    Parked::Closed
}

/// Write what the socket takes now. Blocking mode asks not to wait
/// (`MSG_DONTWAIT`) so the stall is timed by the session, as it is for
/// non-blocking sockets.
fn send<T: Write + AsFd>(stream: &mut T, buf: &[u8], blocking: bool) -> io::Result<usize> {
    if blocking {
        socket2::SockRef::from(&*stream)
            .send_with_flags(buf, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL)
    } else {
        stream.write(buf)
    }
}

/// Wait until `stream` is writable (or fails, or hangs up), or until
/// `deadline`. An interrupted wait returns early: the caller asks again.
fn wait_writable(stream: &impl AsFd, deadline: Option<Instant>) -> io::Result<()> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let timeout = match deadline {
        // Rounded up, so the wait never ends just short of the deadline.
        Some(d) => PollTimeout::try_from(
            d.saturating_duration_since(Instant::now()) + Duration::from_micros(999),
        )
        .unwrap_or(PollTimeout::MAX),
        None => PollTimeout::NONE,
    };
    let mut fds = [PollFd::new(stream.as_fd(), PollFlags::POLLOUT)];
    match poll(&mut fds, timeout) {
        Ok(_) | Err(nix::errno::Errno::EINTR) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// A call that would have waited: `EAGAIN` from a non-blocking socket, or
/// a blocking one's timeout.
fn would_block(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Bound a blocking read by `deadline`, changing the socket's read timeout
/// only when it must.
fn set_read_timeout(
    stream: &impl AsFd,
    deadline: Option<Instant>,
    current: &mut Option<Duration>,
) -> io::Result<()> {
    // A zero timeout means "none" to the kernel: wait at least 1 ms.
    let want = deadline.map(|d| {
        d.saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    });
    if want.is_some() || current.is_some() {
        socket2::SockRef::from(stream).set_read_timeout(want)?;
        *current = want;
    }
    Ok(())
}
