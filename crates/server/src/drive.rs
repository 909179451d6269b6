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
use std::os::unix::net::UnixStream;
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
/// unparked. A subscriber's thread, blocked reading (or waiting to write),
/// is woken through a socket pair made when it first listens: its read
/// end is polled beside the connection's socket.
#[derive(Debug)]
pub(crate) struct Wakeup {
    woken: AtomicBool,
    thread: Thread,
    pair: std::sync::OnceLock<Option<(UnixStream, UnixStream)>>,
}

impl Wakeup {
    /// For the calling thread, which will wait.
    pub(crate) fn for_this_thread() -> Arc<Self> {
        Arc::new(Wakeup {
            woken: AtomicBool::new(false),
            thread: std::thread::current(),
            pair: std::sync::OnceLock::new(),
        })
    }

    /// The end to poll for wakes, made on first use (`None` if no socket
    /// pair could be made: the wait then ends every [`LOOK_EVERY`]).
    fn listener(&self) -> Option<&UnixStream> {
        let pair = self.pair.get_or_init(|| {
            let (rx, tx) = UnixStream::pair().ok()?;
            rx.set_nonblocking(true).ok()?;
            tx.set_nonblocking(true).ok()?;
            Some((rx, tx))
        });
        pair.as_ref().map(|(rx, _)| rx)
    }

    /// Takes a wake that came (the flag, and the pair's bytes).
    fn take(&self) -> bool {
        self.drain();
        self.woken.swap(false, Ordering::Acquire)
    }

    /// Empties the pair, leaving the flag: a wake seen while waiting to
    /// write, whose messages are taken before the next read. (Left in the
    /// pair, it would end every later wait at once: a spin.)
    fn drain(&self) {
        if let Some(Some((rx, _))) = self.pair.get() {
            let mut buf = [0u8; 64];
            while matches!((&*rx).read(&mut buf), Ok(n) if n > 0) {}
        }
    }
}

impl std::task::Wake for Wakeup {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.thread.unpark();
        if let Some(Some((_, tx))) = self.pair.get() {
            // Full: a wake is already waiting there.
            let _ = (&*tx).write(&[1]);
        }
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
            // write timeout (or closes a subscriber cut off meanwhile).
            let wakeup = match mode {
                Mode::Blocking(_, w) if sess.listening() => Some(w),
                _ => None,
            };
            let waited = wait_writable(stream, wakeup.and_then(Wakeup::listener), sess.deadline());
            wakeup.inspect(|w| w.drain());
            match waited {
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
    if let Mode::Blocking(reading, wakeup) = mode {
        // A subscriber: wait for input or a message, whichever is first
        // (marked as a read is: the stop's signal ends the wait).
        if sess.listening() {
            reading.store(true, Ordering::Relaxed);
            let input = input_or_wake(stream, wakeup, deadline);
            reading.store(false, Ordering::Relaxed);
            if !input {
                return None;
            }
        }
    }
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
fn wait_writable(
    stream: &impl AsFd,
    wake: Option<&UnixStream>,
    deadline: Option<Instant>,
) -> io::Result<()> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let timeout = match deadline {
        // Rounded up, so the wait never ends just short of the deadline.
        Some(d) => PollTimeout::try_from(
            d.saturating_duration_since(Instant::now()) + Duration::from_micros(999),
        )
        .unwrap_or(PollTimeout::MAX),
        None => PollTimeout::NONE,
    };
    let mut fds = vec![PollFd::new(stream.as_fd(), PollFlags::POLLOUT)];
    if let Some(w) = wake {
        fds.push(PollFd::new(w.as_fd(), PollFlags::POLLIN));
    }
    match poll(&mut fds, timeout) {
        Ok(_) | Err(nix::errno::Errno::EINTR) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// A subscriber's blocking thread waits until its socket has input (or
/// ends), a message is published to it (its [`Wakeup`] is woken), the
/// deadline, or a signal: true when the socket is to be read, false when
/// `next` is to look again (a message, the deadline, the stop).
fn input_or_wake(stream: &impl AsFd, wakeup: &Wakeup, deadline: Option<Instant>) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let wake = wakeup.listener();
    if wakeup.take() {
        return false;
    }
    let left =
        deadline.map(|d| d.saturating_duration_since(Instant::now()) + Duration::from_micros(999));
    // Without a pair, look again every so often.
    let left = match wake {
        Some(_) => left,
        None => Some(left.map_or(LOOK_EVERY, |l| l.min(LOOK_EVERY))),
    };
    let timeout = left.map_or(PollTimeout::NONE, |l| {
        PollTimeout::try_from(l).unwrap_or(PollTimeout::MAX)
    });
    let mut fds = vec![PollFd::new(stream.as_fd(), PollFlags::POLLIN)];
    if let Some(w) = wake {
        fds.push(PollFd::new(w.as_fd(), PollFlags::POLLIN));
    }
    let input = match poll(&mut fds, timeout) {
        Ok(n) if n > 0 => fds[0].revents().is_some_and(|r| !r.is_empty()),
        _ => false,
    };
    if wakeup.take() {
        // A message: written first; the input waits for the next read.
        return false;
    }
    input
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
