//! thread-per-connection: each connection gets a blocking thread for its
//! whole life. Simple and fast at low connection counts; costs a thread
//! (stack, scheduler entry) per idle connection.
//!
//! Graceful stop: the acceptor stops, then every thread blocked reading
//! for a request is interrupted (a signal, `SIGURG`, whose handler does
//! nothing but is installed without `SA_RESTART`, so the `read` fails with
//! `EINTR`); its session, seeing the server draining, answers what it has
//! read and closes, lingering like every other strategy. Shutting the read
//! side instead would wake it too, but Linux then resets the connection as
//! soon as the client sends more after our FIN, destroying replies still
//! queued. Past the drain limit every socket still open is shut both ways,
//! which ends any blocked write, read or delay at once, and every thread
//! is joined before `run` returns.
//!
//! A client that stops reading its replies would hold its thread in a
//! blocked write forever: writes wait for the socket to take more only
//! until the session's write deadline (`drive.rs`), and the session resets
//! the connection.
//!
//! One descriptor per connection: its socket, owned by its thread. The
//! stop and the eviction reach the socket by number, through the table of
//! open connections, without a handle of their own; the danger is a number
//! the kernel has handed to another socket since the connection closed
//! (shutting that would cut a stranger). So the table's lock serialises
//! the two: a thread enters its socket's number in the table before its
//! session runs, and takes it out, under the lock, *before* it closes the
//! socket; the stop and the eviction shut a socket only under the lock,
//! and only while its number is in the table. Between the entry and its
//! removal the thread holds the socket open, so the number is its own
//! throughout. (A cloned handle did the same at the price of a second
//! descriptor per connection, and the cap bound at half the connections
//! the descriptor limit allows; polling with a timeout or an eventfd
//! instead of blocking would cost a wake-up per timeout per idle thread,
//! or an eventfd per connection, a descriptor again.) An eviction shuts
//! the read side, which wakes the blocked read (an idle connection owes
//! no replies, so nothing queued is lost); the stop past the drain limit
//! shuts both ways.
//!
//! At the connection cap with none idle to evict, the acceptor stops
//! watching its listener until a connection closes (`watch.rs`,
//! `room.rs`): new clients wait in the backlog, not shut out.

use crate::drive::{drive, Mode, Wakeup};
use crate::io::to_std;
use crate::listen::Listener;
use crate::session::Session;
use crate::strategy::{Delays, Listeners, Strategy, Threads};
use crate::watch::Watched;
use crate::Ctx;
use mio::{Events, Poll, Token, Waker};
use nix::sys::pthread::{pthread_kill, pthread_self, Pthread};
use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
use parking_lot::Mutex;
use serverlab_service::{Peer, Service};
use std::collections::HashMap;
use std::io;
use std::net::TcpStream;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);

/// `thread-per-connection`.
pub(crate) struct ThreadPerConnection;

impl Strategy for ThreadPerConnection {
    const NAME: &'static str = "thread-per-connection";
    const DESCRIBE: &'static str = "a blocking thread for each connection, for its whole life";
    const THREADS: Threads = Threads::Unused("a thread per connection");
    const LISTENERS: Listeners = Listeners::One;
    const DELAYS: Delays = Delays::OnTheRequestThread;

    fn run<S: Service>(ctx: Arc<Ctx<S>>, mut listeners: Vec<Listener>) -> io::Result<()> {
        run(ctx, listeners.remove(0))
    }
}

/// The signal that interrupts a connection thread's blocked read.
const WAKE: Signal = Signal::SIGURG;
/// How often the stop interrupts threads still blocked reading for a
/// request (a signal that lands just before its thread enters `read` is
/// lost; the next one is not).
const WAKE_EVERY: Duration = Duration::from_millis(10);

/// What the stop and the eviction need of an open connection.
struct Conn {
    /// Its socket's number: open, and its own, while the entry stays
    /// (see the module's doc).
    fd: RawFd,
    /// Its thread.
    thread: Pthread,
    /// Its thread is (about to be) blocked reading for a request.
    reading: Arc<AtomicBool>,
}

impl Conn {
    /// Shut the socket's read side, or both. Called only under the table's
    /// lock, with the entry in it: the descriptor is this connection's.
    fn shut(&self, how: libc::c_int) {
        // SAFETY: `shutdown` takes a descriptor number and touches no
        // memory of ours; the number is this connection's open socket
        // (the module's doc says why). Errors are ignored: the connection
        // is going anyway.
        unsafe { libc::shutdown(self.fd, how) };
    }
}

/// Open connections, so the stop and the eviction reach each thread and
/// socket.
type Open = Arc<Mutex<HashMap<u64, Conn>>>;

/// Install [`WAKE`]'s handler: it does nothing, but without `SA_RESTART`
/// a blocking `read` it interrupts fails with `EINTR`. `SIGURG` is ignored
/// by default and sent by nobody else here (only for out-of-band data to
/// a socket's owner, which no socket here has).
fn install_wake() -> io::Result<()> {
    static INSTALLED: OnceLock<nix::Result<()>> = OnceLock::new();
    extern "C" fn wake(_: nix::libc::c_int) {}
    let action = SigAction::new(SigHandler::Handler(wake), SaFlags::empty(), SigSet::empty());
    // SAFETY: the handler is async-signal-safe (it does nothing), and
    // replacing SIGURG's default (ignore) changes nothing else.
    let installed = INSTALLED.get_or_init(|| unsafe { sigaction(WAKE, &action) }.map(drop));
    installed.map_err(io::Error::from)
}

fn run<S: Service>(ctx: Arc<Ctx<S>>, listener: Listener) -> io::Result<()> {
    install_wake()?;
    let mut poll = Poll::new()?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
    let w = waker.clone();
    ctx.shutdown.on_trigger(move || {
        let _ = w.wake();
    });
    // Full, the acceptor waits for a connection to close.
    ctx.room.on_room(move || {
        let _ = waker.wake();
    });
    let mut listener = Watched::new(listener, poll.registry(), LISTENER)?;

    let open: Open = Arc::default();
    let mut threads: Vec<JoinHandle<()>> = Vec::new();
    let mut next_id = 0u64;
    let mut events = Events::with_capacity(64);
    while !ctx.shutdown.is_triggered() {
        crate::io::poll(&mut poll, &mut events, listener.timeout(Instant::now()))?;
        let mut ready = false;
        let mut woken = false;
        for ev in events.iter() {
            ready |= ev.token() == LISTENER;
            woken |= ev.token() == WAKER;
        }
        if ready || listener.due(Instant::now(), woken) {
            listener.accept(poll.registry(), &ctx, |stream, peer| {
                next_id += 1;
                threads.push(start(&ctx, &open, next_id, to_std(stream)?, peer)?);
                Ok(())
            });
        }
        threads.retain(|t| !t.is_finished());
    }
    listener.close(poll.registry());
    stop(&ctx, &open, threads);
    Ok(())
}

/// A thread serving one connection. It enters itself in `open` before
/// its session runs, and leaves before its socket is closed (see the
/// module's doc).
fn start<S: Service>(
    ctx: &Arc<Ctx<S>>,
    open: &Open,
    id: u64,
    mut stream: TcpStream,
    peer: Peer,
) -> io::Result<JoinHandle<()>> {
    let (ctx, open) = (ctx.clone(), open.clone());
    std::thread::Builder::new()
        .name("conn".into())
        .spawn(move || {
            let reading = Arc::new(AtomicBool::new(false));
            let conn = Conn {
                fd: stream.as_raw_fd(),
                thread: pthread_self(),
                reading: reading.clone(),
            };
            open.lock().insert(id, conn);
            serve(&ctx, &mut stream, peer, &reading, &open, id);
            open.lock().remove(&id);
            // Only now, out of the table, is the descriptor closed.
            drop(stream);
        })
}

/// Serve one connection until it closes. Evicted (it is idle, so it owes
/// no replies), its thread is woken from its blocked read by shutting the
/// socket's read side: the read returns end of stream and the session
/// closes.
fn serve<S: Service>(
    ctx: &Arc<Ctx<S>>,
    stream: &mut TcpStream,
    peer: Peer,
    reading: &AtomicBool,
    open: &Open,
    id: u64,
) {
    let mut sess = Session::new(ctx, peer);
    // A blocked pop parks this thread; its writer unparks it.
    let wakeup = Wakeup::for_this_thread();
    sess.on_wait(std::task::Waker::from(wakeup.clone()));
    let open = open.clone();
    sess.on_evict(stream.as_fd(), move || {
        if let Some(c) = open.lock().get(&id) {
            c.shut(libc::SHUT_RD);
        }
    });
    drive(&mut sess, stream, Mode::Blocking(reading, &wakeup));
}

/// The graceful stop: interrupt every thread blocked reading for a request
/// (again every [`WAKE_EVERY`] while any is), so its session answers what
/// it has read and closes; wait for every thread up to the drain limit.
/// A client that will not read its replies, or a delay that would outlast
/// the limit, must not hold the stop up: past it the server aborts, every
/// socket still open is shut both ways, which ends a blocked write, read
/// or delay at once, and every thread is joined.
fn stop<S: Service>(ctx: &Ctx<S>, open: &Open, threads: Vec<JoinHandle<()>>) {
    let deadline = Instant::now() + crate::DRAIN_LIMIT;
    loop {
        for c in open.lock().values() {
            // Relaxed: a flag seen late is seen at the next round.
            if c.reading.load(Ordering::Relaxed) {
                // Fails only for a thread that has exited, which is no
                // longer in `open`.
                let _ = pthread_kill(c.thread, WAKE);
            }
        }
        if threads.iter().all(|t| t.is_finished()) {
            break;
        }
        if Instant::now() >= deadline {
            ctx.shutdown.abort();
            for c in open.lock().values() {
                c.shut(libc::SHUT_RDWR);
            }
            break;
        }
        std::thread::sleep(WAKE_EVERY);
    }
    for t in threads {
        let _ = t.join();
    }
}
