//! thread-per-connection: each connection gets a blocking thread for its
//! whole life. Simple and fast at low connection counts; costs a thread
//! (stack, scheduler entry) per idle connection.
//!
//! Graceful stop: the acceptor stops, then every open connection's read
//! side is shut down, so its thread's blocked `read` returns what was
//! already received and then end-of-file; the thread answers it all,
//! closes, and is joined. A client that does not read its replies is cut
//! off after the drain limit.
//!
//! A client that stops reading its replies would hold its thread in a
//! blocked write forever: writes wait for the socket to take more only
//! until the session's write deadline (`drive.rs`), and the session resets
//! the connection.
//!
//! Each connection holds two descriptors: its socket, and a clone kept in
//! the open-connection table so the stop (and an eviction at the
//! connection cap) can reach the blocked thread by shutting the socket's
//! read side.

use crate::accept::accept_all;
use crate::drive::{drive, Mode};
use crate::io::to_std;
use crate::session::Session;
use crate::strategy::{Delays, Listeners, Strategy, Threads};
use crate::Ctx;
use mio::{Events, Interest, Poll, Token, Waker};
use parking_lot::Mutex;
use serverlab_service::Service;
use std::collections::HashMap;
use std::io;
use std::net::{Shutdown as HalfClose, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

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

/// Open connections, so the stop reaches each thread's socket.
type Open = Arc<Mutex<HashMap<u64, TcpStream>>>;

fn run<S: Service>(ctx: Arc<Ctx<S>>, listener: TcpListener) -> io::Result<()> {
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
    open.lock().insert(id, stream.try_clone()?);
    let (ctx, registry) = (ctx.clone(), open.clone());
    let spawned = std::thread::Builder::new()
        .name("conn".into())
        .spawn(move || {
            serve(&ctx, stream, peer, &registry, id);
            registry.lock().remove(&id);
        });
    if spawned.is_err() {
        open.lock().remove(&id);
    }
    spawned
}

/// Serve one connection until it closes. Evicted, its thread is woken
/// from its blocked read by shutting the socket's read side.
fn serve<S: Service>(
    ctx: &Arc<Ctx<S>>,
    mut stream: TcpStream,
    peer: SocketAddr,
    open: &Open,
    id: u64,
) {
    let mut sess = Session::new(ctx, peer);
    let open = open.clone();
    sess.on_evict(move || {
        if let Some(s) = open.lock().get(&id) {
            let _ = s.shutdown(HalfClose::Read);
        }
    });
    drive(&mut sess, &mut stream, Mode::Blocking);
}

/// The graceful stop: shut every connection's read side, so its thread's
/// blocked `read` returns what was already received and then end of
/// stream; the thread answers it all and closes. A client that will not
/// read its replies must not hold the stop up: after the drain limit its
/// socket is shut both ways, which fails the thread's blocked write.
fn stop<S: Service>(ctx: &Ctx<S>, open: &Open, threads: Vec<JoinHandle<()>>) {
    for stream in open.lock().values() {
        let _ = stream.shutdown(HalfClose::Read);
    }
    let deadline = Instant::now() + crate::DRAIN_LIMIT;
    while threads.iter().any(|t| !t.is_finished()) && Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    if threads.iter().any(|t| !t.is_finished()) {
        ctx.shutdown.abort();
        for stream in open.lock().values() {
            let _ = stream.shutdown(HalfClose::Both);
        }
    }
    for t in threads {
        let _ = t.join();
    }
}
