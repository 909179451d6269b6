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
//! Each connection holds two descriptors: its socket, and a clone kept in
//! the open-connection table so an eviction at the connection cap can wake
//! the blocked thread by shutting the socket's read side (an idle
//! connection owes no replies, so nothing queued is lost), and the stop
//! past the drain limit can shut it both ways.

use crate::accept::accept_all;
use crate::drive::{drive, Mode};
use crate::io::to_std;
use crate::session::Session;
use crate::strategy::{Delays, Listeners, Strategy, Threads};
use crate::Ctx;
use mio::{Events, Interest, Poll, Token, Waker};
use nix::sys::pthread::{pthread_kill, Pthread};
use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
use parking_lot::Mutex;
use serverlab_service::Service;
use std::collections::HashMap;
use std::io;
use std::net::{Shutdown as HalfClose, SocketAddr, TcpListener, TcpStream};
use std::os::unix::thread::JoinHandleExt;
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
    const FDS_PER_CONNECTION: u64 = 2;

    fn run<S: Service>(ctx: Arc<Ctx<S>>, mut listeners: Vec<TcpListener>) -> io::Result<()> {
        run(ctx, listeners.remove(0))
    }
}

/// The signal that interrupts a connection thread's blocked read.
const WAKE: Signal = Signal::SIGURG;
/// How often the stop interrupts threads still blocked reading for a
/// request (a signal that lands just before its thread enters `read` is
/// lost; the next one is not).
const WAKE_EVERY: Duration = Duration::from_millis(10);

/// What the stop needs of an open connection.
struct Conn {
    /// A handle on its socket, to shut it both ways past the drain limit.
    stream: TcpStream,
    /// Its thread, once known.
    thread: Option<Pthread>,
    /// Its thread is (about to be) blocked reading for a request.
    reading: Arc<AtomicBool>,
}

/// Open connections, so the stop reaches each thread and socket.
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

fn run<S: Service>(ctx: Arc<Ctx<S>>, listener: TcpListener) -> io::Result<()> {
    install_wake()?;
    let mut poll = Poll::new()?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
    ctx.shutdown.on_trigger(move || {
        let _ = waker.wake();
    });
    listener.set_nonblocking(true)?;
    let mut listener = mio::net::TcpListener::from_std(listener);
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)?;

    let open: Open = Arc::default();
    let mut threads: Vec<JoinHandle<()>> = Vec::new();
    let mut next_id = 0u64;
    let mut events = Events::with_capacity(64);
    // When to accept again without an event (the backlog was not drained).
    let mut retry = None;
    while !ctx.shutdown.is_triggered() {
        crate::io::poll(&mut poll, &mut events, retry)?;
        retry = accept_all(&listener, &ctx, |stream, peer| {
            next_id += 1;
            threads.push(start(&ctx, &open, next_id, to_std(stream)?, peer)?);
            Ok(())
        });
        threads.retain(|t| !t.is_finished());
    }
    drop(listener);
    stop(&ctx, &open, threads);
    Ok(())
}

/// A thread serving one connection, registered in `open` first so the
/// stop reaches it.
fn start<S: Service>(
    ctx: &Arc<Ctx<S>>,
    open: &Open,
    id: u64,
    stream: TcpStream,
    peer: SocketAddr,
) -> io::Result<JoinHandle<()>> {
    let reading = Arc::new(AtomicBool::new(false));
    let conn = Conn {
        stream: stream.try_clone()?,
        thread: None,
        reading: reading.clone(),
    };
    open.lock().insert(id, conn);
    let (ctx, registry) = (ctx.clone(), open.clone());
    let spawned = std::thread::Builder::new()
        .name("conn".into())
        .spawn(move || {
            serve(&ctx, stream, peer, &reading, &registry, id);
            registry.lock().remove(&id);
        });
    let mut open = open.lock();
    match &spawned {
        // Still registered: the thread has not finished, so its handle is
        // valid for as long as the entry stays (it removes it last).
        Ok(t) => {
            if let Some(c) = open.get_mut(&id) {
                c.thread = Some(t.as_pthread_t());
            }
        }
        Err(_) => drop(open.remove(&id)),
    }
    spawned
}

/// Serve one connection until it closes. Evicted (it is idle, so it owes
/// no replies), its thread is woken from its blocked read by shutting the
/// socket's read side: the read returns end of stream and the session
/// closes.
fn serve<S: Service>(
    ctx: &Arc<Ctx<S>>,
    mut stream: TcpStream,
    peer: SocketAddr,
    reading: &AtomicBool,
    open: &Open,
    id: u64,
) {
    let mut sess = Session::new(ctx, peer);
    let open = open.clone();
    sess.on_evict(move || {
        if let Some(c) = open.lock().get(&id) {
            let _ = c.stream.shutdown(HalfClose::Read);
        }
    });
    drive(&mut sess, &mut stream, Mode::Blocking(reading));
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
            if let (Some(t), true) = (c.thread, c.reading.load(Ordering::Relaxed)) {
                // Fails only for a thread that has exited, which is no
                // longer in `open`.
                let _ = pthread_kill(t, WAKE);
            }
        }
        if threads.iter().all(|t| t.is_finished()) {
            break;
        }
        if Instant::now() >= deadline {
            ctx.shutdown.abort();
            for c in open.lock().values() {
                let _ = c.stream.shutdown(HalfClose::Both);
            }
            break;
        }
        std::thread::sleep(WAKE_EVERY);
    }
    for t in threads {
        let _ = t.join();
    }
}
