//! Accepting connections so the listener never gives up: what every
//! strategy does with the outcome of an `accept`, in one place.
//!
//! A connection is accepted only when there is room for it under the
//! connection cap, or when, at the cap, one is pending and the connection
//! idle longest was evicted for it (`idle.rs`). At the cap with none idle,
//! the accept loop stops accepting until a connection closes, and pending
//! connections wait in the listen backlog (`room.rs`). A connection that
//! an accept armed earlier has already made (uring's multishot accept) is
//! admitted under the cap, by an eviction, or closed at once, counted.
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
//! new edge. Each one shed is counted (`shed_out_of_fds`), as is a
//! connection accepted into the last descriptor and closed because its
//! strategy could not get the one more it needs per connection. If the spare
//! cannot be had (another thread holds it, or the system table is full),
//! the strategy retries after a short back-off without waiting for an
//! event. Log lines about it are rate-limited.
//!
//! The slot the spare frees must not be taken by another thread's
//! `accept` (shared-nothing runs one accept loop per core): that would
//! serve one more connection but lose the spare until some connection
//! closes, leaving new clients waiting in the backlog meanwhile. So once
//! an accept has run out of descriptors, every accept goes through the
//! spare's lock until one succeeds again; until then no lock is taken.
//!
//! Several loops may accept at once (shared-nothing and uring run one per
//! core, each on its own listener), and the bound on connections open over
//! the cap (`fds::EVICTION_SLACK`, whose descriptors are reserved) must
//! hold across them. Looking at the open count, accepting, then counting
//! the connection in is not one step: two loops could each see the last
//! place free, both accept, and the second's connection — accepted, its
//! request unread — could only be refused, a reset (issue 28, under
//! shared-nothing and uring; docs/reliability.md has the figures). So
//! a loop takes a [`Place`] before it accepts: one atomic step that counts
//! the places other loops hold and are yet to count in, and holds its own
//! until its connection is counted open or there is none. A connection
//! accepted always has its place, and is never refused.

use crate::Ctx;
use parking_lot::Mutex;
use serverlab_service::{ConnCounters, Peer, Service};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long to wait before accepting again when nothing else can be done.
pub(crate) const BACKOFF: Duration = Duration::from_millis(10);
/// Least time between two log lines about failing accepts.
const LOG_EVERY: Duration = Duration::from_secs(5);
/// How long a full server's accept loop waits for a close before it looks
/// again whether an idle connection can be evicted for a pending one
/// (connections turn idle without telling the loop: that costs nothing
/// per request).
pub(crate) const FULL_RECHECK: Duration = Duration::from_millis(100);

/// What to do after an `accept`.
#[derive(Debug)]
pub(crate) enum Accepted<T> {
    /// A connection, admitted: serve it.
    Serve(T, Peer),
    /// Accept again at once (a connection was refused, evicted for, shed,
    /// or a transient error passed).
    Again,
    /// The backlog is empty: wait for the listener's next readiness.
    Drained,
    /// Nothing can be done now: accept again after this long, even without
    /// a readiness event (the backlog may be full and never signal again).
    RetryIn(Duration),
    /// The cap is reached and none is idle: stop watching the listener
    /// (pending connections wait in its backlog) until [`Ctx::wait_for_room`]
    /// says to accept again, the room's waker runs (a connection closed),
    /// or [`FULL_RECHECK`] passes (a connection may have turned idle,
    /// evictable, without closing).
    Full,
}

/// The spare descriptor and the log's rate limit, one per server.
pub(crate) struct Acceptor {
    spare: Mutex<Option<File>>,
    /// An accept ran out of descriptors and none has succeeded since:
    /// accepts take the spare's lock. A hint only (the lock serialises),
    /// so `Relaxed`.
    exhausted: AtomicBool,
    /// Places taken by accepts under way, not yet counted open or given
    /// back (see [`Place`]).
    taking: AtomicU64,
    log: Mutex<LogState>,
}

/// A place under the connection bound, held by an accept under way: the
/// connection it accepts is counted open ([`Place::admit`]) before the
/// place is given back, so the places held and the connections counted
/// open never undercount what is, or will be, open. Dropped unused (no
/// connection came), it is given back.
#[must_use]
pub(crate) struct Place<'a> {
    taking: &'a AtomicU64,
    conns: &'a ConnCounters,
}

impl Place<'_> {
    /// Count the accepted connection open, then give the place back.
    fn admit(self) {
        self.conns.admit_over_max();
        // Dropped: given back after the count (see `Drop`).
    }
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        // Release: whoever takes a place after seeing this one given back
        // sees the connection it was for counted open.
        self.taking.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What the shedding came to.
#[derive(Debug, PartialEq, Eq)]
enum Shed {
    /// A pending connection was accepted and closed.
    One,
    /// The backlog is empty.
    Empty,
    /// No spare to shed with.
    NoSpare,
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
            exhausted: AtomicBool::new(false),
            taking: AtomicU64::new(0),
            log: Mutex::default(),
        }
    }

    /// A place for one more connection if, with those `conns` counts
    /// open and the places other accepts hold (each its connection, to be
    /// counted open), no more than `bound` would be open; `None` if not.
    ///
    /// Taking a place is one atomic step, so two takers are ordered: the
    /// later counts the earlier's place, or (given back) its connection
    /// open. Of loops racing for the last place, at most one gets it; one
    /// may be refused for a place that is then given back unused, and
    /// waits for room as at the cap (a close, or `FULL_RECHECK`).
    fn place<'a>(&'a self, conns: &'a ConnCounters, bound: u64) -> Option<Place<'a>> {
        // Acquire: a place given back before this one is taken had its
        // connection counted open first, and `active` below sees it.
        let held = self.taking.fetch_add(1, Ordering::SeqCst) + 1;
        let place = Place {
            taking: &self.taking,
            conns,
        };
        // Dropped if refused: given back.
        (conns.active().saturating_add(held) <= bound).then_some(place)
    }

    /// Run `accept`; out of descriptors, shed a pending connection on
    /// `listener` with the spare instead (see the module's doc).
    fn run<T>(
        &self,
        listener: BorrowedFd<'_>,
        accept: impl Fn() -> io::Result<T>,
    ) -> Result<io::Result<T>, (io::Error, Shed)> {
        if !self.exhausted.load(Ordering::Relaxed) {
            match accept() {
                Err(e) if out_of_fds(&e) => self.exhausted.store(true, Ordering::Relaxed),
                other => return Ok(other),
            }
        }
        let mut spare = self.spare.lock();
        match accept() {
            Err(e) if out_of_fds(&e) => Err((e, shed(&mut spare, listener))),
            other => {
                self.exhausted.store(false, Ordering::Relaxed);
                Ok(other)
            }
        }
    }

    /// Whether accepts are out of descriptors: one failed so, and none
    /// has succeeded since (server-wide: descriptors are the process's).
    pub(crate) fn out_of_fds(&self) -> bool {
        self.exhausted.load(Ordering::Relaxed)
    }

    /// Log `what` unless a line was logged within `LOG_EVERY`; the next
    /// line says how many went unlogged.
    pub(crate) fn note(&self, what: &str) {
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
        crate::warn(&format!("serverlab: {what}{more}"));
        log.last = Some(now);
        log.since = 0;
    }
}

fn open_spare() -> Option<File> {
    File::open("/dev/null").ok()
}

/// Whether `listener` has a connection pending in its backlog (a
/// listening socket is readable then). A failed look says yes: the accept
/// that follows tells.
fn pending(listener: BorrowedFd<'_>) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let mut fds = [PollFd::new(listener, PollFlags::POLLIN)];
    !matches!(poll(&mut fds, PollTimeout::ZERO), Ok(0))
}

fn out_of_fds(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

/// Out of descriptors: free the spare's slot, accept one pending
/// connection on `listener` into it, close that, and take the slot back.
fn shed(spare: &mut Option<File>, listener: BorrowedFd<'_>) -> Shed {
    if spare.take().is_none() {
        // Try to get it back for next time, in case some are free now.
        *spare = open_spare();
        return Shed::NoSpare;
    }
    let shed = match socket2::SockRef::from(&listener).accept() {
        // Closed here, before the spare is reopened into its slot.
        Ok(accepted) => {
            drop(accepted);
            Shed::One
        }
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Shed::Empty,
        Err(_) => Shed::NoSpare,
    };
    *spare = open_spare();
    shed
}

impl<S: Service> Ctx<S> {
    /// Whether the cap is reached.
    fn full(&self) -> bool {
        self.conns().active() >= self.max_connections
    }

    /// The most connections ever open: the cap, and the evicted still
    /// closing for those admitted in their stead, or those other accept
    /// loops admitted in the same instant as the last one under the cap.
    /// Their descriptors are reserved (`fds.rs`).
    fn bound(&self) -> u64 {
        self.max_connections
            .saturating_add(crate::fds::EVICTION_SLACK)
    }

    /// A place for one more connection under [`Ctx::bound`] (see
    /// [`Place`]); at the cap, only with the connection idle longest
    /// evicted for it. An evicted connection takes a moment to close, so
    /// the new one is admitted over the cap — by `EVICTION_SLACK` at most,
    /// however fast connections arrive and however many loops accept.
    fn place_for_one(&self, full: bool) -> Option<Place<'_>> {
        let place = self.accept.place(self.conns(), self.bound())?;
        if full {
            if !self.idle.evict_longest() {
                return None;
            }
            self.conns().evicted();
        }
        Some(place)
    }

    /// Before an accept: a place for the connection if one may be
    /// accepted (there is room, or one is pending and an idle one was
    /// evicted for it); else what to do instead.
    fn make_room<T>(&self, listener: BorrowedFd<'_>) -> Result<Place<'_>, Accepted<T>> {
        let full = self.full();
        if full && !pending(listener) {
            return Err(Accepted::Drained);
        }
        self.place_for_one(full).ok_or(Accepted::Full)
    }

    /// Admit a connection an accept armed earlier has made: under the cap,
    /// or by evicting the connection idle longest; otherwise it is refused
    /// (the caller drops it, which closes it). Counted either way.
    fn admit_made(&self) -> bool {
        match self.place_for_one(self.full()) {
            Some(place) => {
                place.admit();
                true
            }
            None => {
                self.conns().refused();
                false
            }
        }
    }

    /// The accept loop is full (`Accepted::Full`): ask the room to run its
    /// waker when a connection closes. True: wait for that (or
    /// `FULL_RECHECK`); false: one closed meanwhile, accept again now.
    pub(crate) fn wait_for_room(&self) -> bool {
        self.room.wait(|| self.full())
    }

    /// Accept a connection on `listener` with `accept` (the strategy's
    /// own call), and say what to do next. At the cap, it is accepted only
    /// if an idle connection can be evicted for it (see the module's doc).
    /// Out of descriptors, a pending connection is shed instead.
    pub(crate) fn accept<T: AsFd>(
        &self,
        listener: BorrowedFd<'_>,
        accept: impl Fn() -> io::Result<(T, Peer)>,
    ) -> Accepted<T> {
        let place = match self.make_room(listener) {
            Ok(place) => place,
            Err(instead) => return instead,
        };
        // No connection: the place is given back as it is dropped.
        match self.accept.run(listener, accept) {
            Ok(Ok((stream, peer))) => {
                place.admit();
                self.serve(stream, peer, true)
            }
            Ok(Err(e)) => self.failed(e),
            Err((e, shed)) => self.shed(e, shed),
        }
    }

    /// What an accept armed earlier (uring's multishot) made: admitted or
    /// refused as [`Ctx::admit_made`] says, or its error dealt with as
    /// [`Ctx::accept`] deals with one.
    pub(crate) fn accepted<T: AsFd>(&self, made: io::Result<(T, Peer)>) -> Accepted<T> {
        match made {
            Ok((stream, peer)) => self.serve(stream, peer, self.admit_made()),
            Err(e) => self.failed(e),
        }
    }

    fn serve<T: AsFd>(&self, stream: T, peer: Peer, admitted: bool) -> Accepted<T> {
        if !admitted {
            return Accepted::Again;
        }
        // A Unix socket has no Nagle to turn off.
        if let Peer::Tcp(_) = peer {
            let _ = socket2::SockRef::from(&stream).set_tcp_nodelay(true);
        }
        Accepted::Serve(stream, peer)
    }

    /// An accept failed with `e` (not for want of descriptors).
    fn failed<T>(&self, e: io::Error) -> Accepted<T> {
        match e.raw_os_error() {
            _ if e.kind() == io::ErrorKind::WouldBlock => Accepted::Drained,
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

    /// A connection that an accept armed earlier made past the descriptor
    /// limit now in force (`fds::past_limit`): closed at once and counted
    /// as shed, as `accept` would have shed it.
    pub(crate) fn shed_accepted<T>(&self, stream: T) {
        drop(stream);
        self.conns().shed();
        self.accept.note(
            "accepted past the descriptor limit; closing new connections at once until \
             descriptors free up (counted as shed_out_of_fds)",
        );
    }

    /// An admitted connection from `peer` that its strategy could not
    /// serve (`e`; its socket is closed): counted closed, and logged.
    /// Failing for want of descriptors (accepted into the last one, it
    /// could not get one more its strategy needed), it was closed at once
    /// for want of descriptors, so counted as shed too.
    pub(crate) fn cannot_serve(&self, peer: Peer, e: &io::Error) {
        self.conns().closed();
        self.room.freed();
        if out_of_fds(e) {
            self.conns().shed();
        }
        self.accept
            .note(&format!("cannot serve a connection from {peer}: {e}"));
    }

    /// Out of descriptors (`e`): what the shedding came to.
    fn shed<T>(&self, e: io::Error, shed: Shed) -> Accepted<T> {
        match shed {
            Shed::One => {
                self.conns().shed();
                self.accept.note(&format!(
                    "accept failed: {e}; closing new connections at once until descriptors \
                     free up (counted as shed_out_of_fds)"
                ));
                Accepted::Again
            }
            Shed::Empty => Accepted::Drained,
            Shed::NoSpare => {
                self.accept.note(&format!("accept failed: {e}; retrying"));
                Accepted::RetryIn(BACKOFF)
            }
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
        let mut spare = open_spare();
        assert_eq!(shed(&mut spare, listener.as_fd()), Shed::Empty);
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while shed(&mut spare, listener.as_fd()) != Shed::One {
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
        assert!(spare.is_some(), "the spare is back");
    }

    #[test]
    fn out_of_descriptors_accepts_are_serialised_until_one_succeeds() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let a = Acceptor::new();
        let emfile = || -> io::Result<()> { Err(io::Error::from_raw_os_error(libc::EMFILE)) };
        let r = a.run(listener.as_fd(), emfile);
        assert!(matches!(r, Err((_, Shed::Empty))), "{r:?}");
        assert!(a.exhausted.load(Ordering::Relaxed));
        assert!(matches!(a.run(listener.as_fd(), || Ok(())), Ok(Ok(()))));
        assert!(!a.exhausted.load(Ordering::Relaxed), "one succeeded");
    }

    /// The last place goes to one taker; one given back unused is taken
    /// again; a connection counted open keeps its place taken.
    #[test]
    fn the_last_place_goes_to_one_taker() {
        let a = Acceptor::new();
        let conns = ConnCounters::default();
        for _ in 0..2 {
            conns.admit_over_max();
        }
        let last = a.place(&conns, 3).expect("the third place");
        assert!(a.place(&conns, 3).is_none(), "held by the first taker");
        drop(last);
        let last = a.place(&conns, 3).expect("given back unused");
        last.admit();
        assert_eq!(conns.active(), 3);
        assert!(a.place(&conns, 3).is_none(), "counted open");
        conns.closed();
        assert!(a.place(&conns, 3).is_some(), "closed");
    }

    /// Loops racing for places (issue 28): however they interleave, no
    /// more connections are ever open than the bound, so none accepted
    /// has to be refused. Looking, then counting in, let two loops take
    /// the last place.
    #[test]
    fn racing_loops_never_open_past_the_bound() {
        use std::sync::Arc;
        const BOUND: u64 = 2;
        let a = Arc::new(Acceptor::new());
        let conns = Arc::new(ConnCounters::default());
        let open = Arc::new(AtomicU64::new(0));
        let start = Arc::new(std::sync::Barrier::new(4));
        let loops: Vec<_> = (0..4)
            .map(|_| {
                let (a, conns, open) = (a.clone(), conns.clone(), open.clone());
                let start = start.clone();
                std::thread::spawn(move || {
                    start.wait();
                    let mut most = 0;
                    for _ in 0..5_000 {
                        let Some(place) = a.place(&conns, BOUND) else {
                            std::thread::yield_now();
                            continue;
                        };
                        // The accept, meanwhile other loops run.
                        std::thread::yield_now();
                        place.admit();
                        most = most.max(open.fetch_add(1, Ordering::SeqCst) + 1);
                        // Served, meanwhile other loops run.
                        std::thread::yield_now();
                        open.fetch_sub(1, Ordering::SeqCst);
                        conns.closed();
                    }
                    most
                })
            })
            .collect();
        for l in loops {
            let most = l.join().unwrap();
            assert!(most <= BOUND, "{most} open, bound {BOUND}");
        }
        assert_eq!(a.taking.load(Ordering::SeqCst), 0, "every place given back");
        assert_eq!(conns.active(), 0);
    }
}
