//! Accepting connections so the listener never gives up: what every
//! strategy does with the outcome of an `accept`, in one place.
//!
//! A connection accepted is admitted under the connection cap (evicting
//! the connection idle longest when the cap is reached, `idle.rs`) or
//! closed at once, counted either way.
//!
//! Running out of file descriptors (`EMFILE`, `ENFILE`) must not wedge
//! the listener. An edge-triggered listener whose backlog is left full is
//! never signalled again (no new connection can complete to make an
//! edge), so "log and wait for the next event" stops accepting for good.
//! Instead the backlog is drained with the reserve-descriptor technique:
//! the server keeps one spare descriptor open (`/dev/null`); out of
//! descriptors, it closes the spare, accepts one pending connection with
//! the freed slot, closes that connection at once (its client sees the
//! server close instead of waiting in the backlog forever), and reopens
//! the spare — until the backlog is empty, so the next connection makes a
//! new edge. Each one shed is counted (`shed_out_of_fds`). If the spare
//! cannot be had (another thread holds it, or the system table is full),
//! the strategy retries after a short back-off without waiting for an
//! event. Log lines about it are rate-limited.

use crate::Ctx;
use parking_lot::Mutex;
use serverlab_service::Service;
use std::fs::File;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, BorrowedFd};
use std::time::{Duration, Instant};

/// How long to wait before accepting again when nothing else can be done.
pub(crate) const BACKOFF: Duration = Duration::from_millis(10);
/// Least time between two log lines about failing accepts.
const LOG_EVERY: Duration = Duration::from_secs(5);

/// What to do after an `accept`.
#[derive(Debug)]
pub(crate) enum Accepted<T> {
    /// A connection, admitted: serve it.
    Serve(T, SocketAddr),
    /// Accept again at once (a connection was refused, evicted for, shed,
    /// or a transient error passed).
    Again,
    /// The backlog is empty: wait for the listener's next readiness.
    Drained,
    /// Nothing can be done now: accept again after this long, even without
    /// a readiness event (the backlog may be full and never signal again).
    RetryIn(Duration),
}

/// The spare descriptor and the log's rate limit, one per server.
pub(crate) struct Acceptor {
    spare: Mutex<Option<File>>,
    log: Mutex<LogState>,
}

#[derive(Default)]
struct LogState {
    last: Option<Instant>,
    /// Failures since the last line.
    since: u64,
}

impl Acceptor {
    pub(crate) fn new() -> Self {
        Acceptor {
            spare: Mutex::new(open_spare()),
            log: Mutex::default(),
        }
    }

    /// Out of descriptors: accept one pending connection on `listener`
    /// with the spare and close it. `Some(true)`: one was shed;
    /// `Some(false)`: the backlog is empty; `None`: no spare to use.
    fn shed(&self, listener: BorrowedFd<'_>) -> Option<bool> {
        let mut spare = self.spare.lock();
        if spare.take().is_none() {
            // Try to get it back for next time, now that some may be free.
            *spare = open_spare();
            return None;
        }
        let got = socket2::SockRef::from(&listener).accept();
        // The accepted socket (if any) is closed here, before the spare
        // is reopened into its slot.
        let shed = match got {
            Ok(_) => Some(true),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Some(false),
            Err(_) => None,
        };
        *spare = open_spare();
        shed
    }

    /// Log `what` unless a line was logged within `LOG_EVERY`; the next
    /// line says how many went unlogged.
    fn note(&self, what: &str) {
        let mut log = self.log.lock();
        log.since += 1;
        let now = Instant::now();
        if log.last.is_some_and(|t| now.duration_since(t) < LOG_EVERY) {
            return;
        }
        let more = match log.since - 1 {
            0 => String::new(),
            n => format!(" ({n} more since the last such line)"),
        };
        eprintln!("serverlab: {what}{more}");
        log.last = Some(now);
        log.since = 0;
    }
}

fn open_spare() -> Option<File> {
    File::open("/dev/null").ok()
}

impl<S: Service> Ctx<S> {
    /// Admit a connection just accepted: under the cap, or by evicting the
    /// connection idle longest; otherwise it is refused (the caller drops
    /// it, which closes it). Counted either way.
    pub(crate) fn admit(&self) -> bool {
        let conns = self.conns();
        if conns.admit(self.max_connections) {
            return true;
        }
        if self.idle.evict_longest() {
            conns.evicted();
            conns.admit_over_max();
            return true;
        }
        conns.refused();
        false
    }

    /// What an `accept` on `listener` came to, and what to do next.
    pub(crate) fn accepted<T: AsFd>(
        &self,
        listener: BorrowedFd<'_>,
        outcome: io::Result<(T, SocketAddr)>,
    ) -> Accepted<T> {
        let e = match outcome {
            Ok((stream, peer)) => {
                if !self.admit() {
                    return Accepted::Again;
                }
                let _ = socket2::SockRef::from(&stream).set_tcp_nodelay(true);
                return Accepted::Serve(stream, peer);
            }
            Err(e) => e,
        };
        match e.raw_os_error() {
            _ if e.kind() == io::ErrorKind::WouldBlock => Accepted::Drained,
            Some(libc::EMFILE | libc::ENFILE) => match self.accept.shed(listener) {
                Some(true) => {
                    self.conns().shed();
                    self.accept.note(&format!(
                        "accept failed: {e}; closing new connections at once until descriptors free up \
                         (counted as shed_out_of_fds)"
                    ));
                    Accepted::Again
                }
                Some(false) => Accepted::Drained,
                None => {
                    self.accept.note(&format!("accept failed: {e}; retrying"));
                    Accepted::RetryIn(BACKOFF)
                }
            },
            // Errors of the connection, not the listener (Linux reports a
            // pending connection's network error from accept), or a signal.
            Some(
                libc::EINTR
                | libc::ECONNABORTED
                | libc::EPROTO
                | libc::ENETDOWN
                | libc::ENOPROTOOPT
                | libc::EHOSTDOWN
                | libc::ENONET
                | libc::EHOSTUNREACH
                | libc::EOPNOTSUPP
                | libc::ENETUNREACH
                | libc::EPERM,
            ) => Accepted::Again,
            // Out of memory, or anything else: never spin, never give up.
            _ => {
                self.accept.note(&format!("accept failed: {e}; retrying"));
                Accepted::RetryIn(BACKOFF)
            }
        }
    }
}

/// Accept every pending connection on a mio (edge-triggered) listener,
/// handing each admitted one to `serve` (whose failure closes it, counted).
/// Returns when to try again without waiting for a readiness event, if the
/// backlog could not be drained.
pub(crate) fn accept_all<S: Service>(
    listener: &mio::net::TcpListener,
    ctx: &Ctx<S>,
    mut serve: impl FnMut(mio::net::TcpStream, SocketAddr) -> io::Result<()>,
) -> Option<Duration> {
    loop {
        match ctx.accepted(listener.as_fd(), listener.accept()) {
            Accepted::Serve(stream, peer) => {
                if let Err(e) = serve(stream, peer) {
                    ctx.conns().closed();
                    ctx.accept
                        .note(&format!("cannot serve a connection from {peer}: {e}"));
                }
            }
            Accepted::Again => {}
            Accepted::Drained => return None,
            Accepted::RetryIn(d) => return Some(d),
        }
    }
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn shedding_closes_a_pending_connection_and_keeps_the_spare() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let a = Acceptor::new();
        assert_eq!(a.shed(listener.as_fd()), Some(false), "nothing pending");
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while a.shed(listener.as_fd()) != Some(true) {
            assert!(Instant::now() < deadline, "never shed");
            std::thread::sleep(Duration::from_millis(5));
        }
        client
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut buf = [0u8; 1];
        let n = io::Read::read(&mut client, &mut buf);
        assert!(
            matches!(n, Ok(0)) || n.is_err(),
            "closed by the server: {n:?}"
        );
        assert!(a.spare.lock().is_some(), "the spare is back");
    }
}
