//! Strategies on tokio: `async` (one multi-thread, work-stealing runtime)
//! and `shared-nothing` (one single-thread runtime per core, each with its
//! own SO_REUSEPORT listener, so a connection never leaves the loop that
//! accepted it). Both run the same connection task, which carries out its
//! session's I/O with awaits.
//!
//! Delays never block a loop: sleeps are timers, and spin or CPU work runs
//! on the runtime's blocking threads.
//!
//! Graceful stop: a watch channel carries the stop's phase. Draining tells
//! the accept loops to stop and every connection waiting for a request to
//! look again (its session answers what it has read, then closes,
//! lingering); past the drain limit, aborting ends every wait — a
//! lingering read, a write the client does not take, a delay — and each
//! session resets. The runtime is dropped only after every connection task
//! has finished (and dropping it joins its blocking threads), so the final
//! statistics are complete.
//!
//! Failures: a loop that cannot accept any more (or cannot be set up:
//! shared-nothing's loops run through `listeners.rs`) stops the whole
//! server, and returns its error only once its own connections have
//! drained. A connection that cannot be registered with its loop's
//! reactor is closed and counted, and the loop accepts on.
//!
//! At the connection cap with none idle to evict, an accept loop stops
//! polling its listener until a connection closes (`room.rs`): new
//! clients wait in the backlog.
//!
//! Every write is bounded by the write timeout: one that makes no progress
//! within it (a client that does not read) resets the connection.
//!
//! A delay is abandoned when the client has gone or the stop aborts: a
//! sleep looks at the socket every [`LOOK_EVERY`]; spin or CPU work on a
//! blocking thread looks at a flag the connection's task raises when it
//! sees the socket gone (it looks every [`LOOK_EVERY`] meanwhile), so a
//! delay costs no descriptor of its own, and the thread never touches a
//! socket the task may close.
//!
//! A blocked pop (`Io::Wait`) awaits its waker (a `Notify` the writer
//! that serves it notifies), its deadline, or the abort; a client that
//! leaves meanwhile (looked for every [`LOOK_EVERY`]) ends it.

use crate::accept::{Accepted, FULL_RECHECK};
use crate::io::{gone, peer_closed, reset_on_close, shutdown_write};
use crate::listen::{Listener, MioListener};
use crate::session::{Io, Session};
use crate::shutdown::{Phase, Shutdown};
use crate::strategy::{Delays, Listeners, Strategy, Threads};
use crate::Ctx;
use serverlab_service::{Delay, Peer, Service};
use std::io;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::unix::{AsyncFd, AsyncFdReadyGuard};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{watch, Notify};
use tokio::task::JoinSet;

/// How often a sleeping delay looks whether its client has gone.
const LOOK_EVERY: Duration = Duration::from_millis(50);
/// How long tasks get to finish once the stop aborts before they are
/// dropped where they wait (every wait ends at the abort, so this is only
/// a backstop).
const ABORT_GRACE: Duration = Duration::from_secs(1);

/// `async`.
pub(crate) struct Async;
/// `shared-nothing`.
pub(crate) struct SharedNothing;

impl Strategy for Async {
    const NAME: &'static str = "async";
    const DESCRIBE: &'static str = "tokio multi-thread runtime, N workers, work stealing";
    const THREADS: Threads = Threads::Sizes("runtime workers");
    const LISTENERS: Listeners = Listeners::One;
    const DELAYS: Delays = Delays::OffTheServingThreads;

    fn run<S: Service>(ctx: Arc<Ctx<S>>, mut listeners: Vec<Listener>) -> io::Result<()> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(ctx.threads)
            .thread_name("async")
            .enable_all()
            .build()?;
        let stop = stop_channel(&ctx);
        rt.block_on(accept_loop(ctx, listeners.remove(0), stop))
    }
}

impl Strategy for SharedNothing {
    const NAME: &'static str = "shared-nothing";
    const DESCRIBE: &'static str = "N single-thread event loops, one SO_REUSEPORT listener each";
    const THREADS: Threads = Threads::Sizes("event loops");
    const LISTENERS: Listeners = Listeners::PerThread;
    const DELAYS: Delays = Delays::OffTheServingThreads;

    /// A single-thread runtime per listener, each on its own thread
    /// (`listeners.rs`).
    fn run<S: Service>(ctx: Arc<Ctx<S>>, listeners: Vec<Listener>) -> io::Result<()> {
        let stop = stop_channel(&ctx);
        let set_up = |_| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
        };
        let serve = |rt: tokio::runtime::Runtime, listener| {
            rt.block_on(accept_loop(ctx.clone(), listener, stop.clone()))
        };
        crate::listeners::run_per_listener(&ctx, "loop", listeners, set_up, serve)
    }
}

/// The stop's phase, as a channel tasks can await.
fn stop_channel<S: Service>(ctx: &Ctx<S>) -> watch::Receiver<Phase> {
    let (tx, rx) = watch::channel(Phase::Running);
    ctx.shutdown.on_phase(move |phase| {
        tx.send_if_modified(|now| {
            let forward = phase > *now;
            if forward {
                *now = phase;
            }
            forward
        });
    });
    rx
}

/// Accept on `listener` and serve each connection on a task of its own
/// until the stop, then drain them. A failure to accept stops the server
/// (it is returned once this loop's connections have drained); a
/// connection that cannot be served costs only itself.
async fn accept_loop<S: Service>(
    ctx: Arc<Ctx<S>>,
    listener: Listener,
    stop: watch::Receiver<Phase>,
) -> io::Result<()> {
    let listener = register_listener(listener)?;
    let mut tasks = JoinSet::new();
    let accepted = accept_until_stop(&ctx, &listener, &stop, &mut tasks).await;
    if accepted.is_err() {
        ctx.shutdown.trigger();
    }
    drop(listener);
    drain(&ctx, tasks).await;
    accepted
}

/// The listener, on this runtime's reactor. Its readiness is ours to
/// clear (tokio's `TcpListener` keeps it set after any error): out of
/// descriptors, `accept` fails before it looks at the backlog, so only
/// the shedding can tell that the backlog is empty (`accept.rs`).
fn register_listener(listener: Listener) -> io::Result<AsyncFd<MioListener>> {
    let listener = MioListener::new(listener)?;
    // SAFETY: the mio listener owns its descriptor, which stays open and
    // the same until the `AsyncFd` (which owns the listener) is dropped.
    let listener =
        unsafe { AsyncFd::register_with_interest(listener, tokio::io::Interest::READABLE)? };
    Ok(listener)
}

/// Accept until the stop starts; an error means this loop can accept no
/// more. Full (`room.rs`), the loop stops polling the listener until a
/// connection closes (the room notifies it) or `FULL_RECHECK` passes.
async fn accept_until_stop<S: Service>(
    ctx: &Arc<Ctx<S>>,
    listener: &AsyncFd<MioListener>,
    stop: &watch::Receiver<Phase>,
    tasks: &mut JoinSet<()>,
) -> io::Result<()> {
    let mut stopping = stop.clone();
    let room = Arc::new(Notify::new());
    let r = room.clone();
    // `notify_one` keeps a permit if the loop is not waiting yet.
    ctx.room.on_room(move || r.notify_one());
    let mut full = false;
    loop {
        tokio::select! {
            _ = stopping.wait_for(|p| *p != Phase::Running) => return Ok(()),
            ready = listener.readable(), if !full => full = accept(ctx, ready?, stop, tasks).await,
            _ = room.notified(), if full => full = false,
            _ = tokio::time::sleep(FULL_RECHECK), if full => full = false,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
}

/// The listener is readable: accept a connection and start its task.
/// Returns whether the server is full (then the loop waits for room).
async fn accept<S: Service>(
    ctx: &Arc<Ctx<S>>,
    mut ready: AsyncFdReadyGuard<'_, MioListener>,
    stop: &watch::Receiver<Phase>,
    tasks: &mut JoinSet<()>,
) -> bool {
    let listener = ready.get_inner();
    match ctx.accept(listener.as_fd(), || listener.accept()) {
        Accepted::Serve(stream, peer) => match register(stream, peer) {
            Ok(stream) => {
                tasks.spawn(serve(ctx.clone(), stream, peer, stop.clone()));
            }
            Err(e) => ctx.cannot_serve(peer, &e),
        },
        Accepted::Again => {}
        Accepted::Drained => ready.clear_ready(),
        Accepted::RetryIn(d) => {
            drop(ready);
            tokio::time::sleep(d).await;
        }
        // The readiness stays set: once there is room, the loop accepts at
        // once.
        Accepted::Full => return ctx.wait_for_room(),
    }
    false
}

/// A connection, on this runtime's reactor (which may fail: out of
/// memory, or of epoll watches). Tests can make it fail for one peer.
fn register(stream: mio::net::TcpStream, peer: Peer) -> io::Result<TcpStream> {
    #[cfg(test)]
    tests::refuse_registration_of(peer)?;
    #[cfg(not(test))]
    let _ = peer;
    TcpStream::from_std(stream.into())
}

/// Connections drain; past the drain limit the stop aborts, which ends
/// every wait, and each session resets. Tasks that somehow still wait are
/// dropped (a session dropped while aborting counts what it drops).
async fn drain<S: Service>(ctx: &Ctx<S>, mut tasks: JoinSet<()>) {
    let drained = tokio::time::timeout(crate::DRAIN_LIMIT, async {
        while tasks.join_next().await.is_some() {}
    });
    if drained.await.is_ok() {
        return;
    }
    ctx.shutdown.abort();
    let reset = tokio::time::timeout(ABORT_GRACE, async {
        while tasks.join_next().await.is_some() {}
    });
    if reset.await.is_err() {
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
    }
}

async fn serve<S: Service>(
    ctx: Arc<Ctx<S>>,
    mut stream: TcpStream,
    peer: Peer,
    mut stop: watch::Receiver<Phase>,
) {
    let mut sess = Session::new(&ctx, peer);
    let evicted = Arc::new(Notify::new());
    let wake = evicted.clone();
    // `notify_one` keeps a permit if the task is not waiting yet.
    sess.on_evict(stream.as_fd(), move || wake.notify_one());
    // A blocked pop's writer wakes the task the same way.
    let woken = Arc::new(Notify::new());
    sess.on_wait(std::task::Waker::from(Arc::new(NotifyWake(woken.clone()))));
    let notices = Notices {
        evicted: &evicted,
        woken: &woken,
    };
    drive(&mut sess, &mut stream, &mut stop, notices).await;
    sess.finish();
}

/// What a connection's task is told besides its socket's readiness: it
/// was evicted at the cap, or its blocked pop may go.
#[derive(Clone, Copy)]
struct Notices<'a> {
    evicted: &'a Notify,
    woken: &'a Notify,
}

/// Wakes a task waiting for a blocked pop (`notify_one` keeps a permit
/// if it is not waiting yet: no wake is lost).
struct NotifyWake(Arc<Notify>);

impl std::task::Wake for NotifyWake {
    fn wake(self: Arc<Self>) {
        self.0.notify_one();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.notify_one();
    }
}

/// A blocked pop's wait: until its writer wakes the task, `d` passes, or
/// the stop aborts (the session then resets); a client that leaves
/// meanwhile (looked for every [`LOOK_EVERY`]) ends it.
async fn wait<S: Service>(
    sess: &mut Session<S>,
    stream: &TcpStream,
    stop: &mut watch::Receiver<Phase>,
    woken: &Notify,
    d: Duration,
) {
    let client_left = async {
        while !peer_closed(stream) {
            tokio::time::sleep(LOOK_EVERY).await;
        }
    };
    tokio::select! {
        _ = tokio::time::sleep(d) => {}
        _ = woken.notified() => {}
        _ = stop.wait_for(|p| *p == Phase::Aborting) => {}
        _ = client_left => sess.abandon_wait(),
    }
}

/// Carry out the session's I/O until the connection is finished.
async fn drive<S: Service>(
    sess: &mut Session<S>,
    stream: &mut TcpStream,
    stop: &mut watch::Receiver<Phase>,
    notices: Notices<'_>,
) {
    loop {
        match sess.next() {
            Io::Delay(d) => {
                if !perform(d, stream, sess.shutdown(), stop).await {
                    sess.abandon_delay();
                }
            }
            Io::Wait(d) => wait(sess, stream, stop, notices.woken, d).await,
            // Awaited: the task waits, its worker serves others.
            Io::Commit(t) => {
                if let Some(commit) = sess.commit(t) {
                    // Committed or failed: `next` tells them apart.
                    let _ = commit.await;
                }
            }
            Io::Write => {
                if write(sess, stream, stop, notices.woken).await.is_err() {
                    return;
                }
            }
            Io::Read { deadline } => {
                // A read for a request ends when the stop starts; a
                // lingering close's read when it aborts. The session sees
                // the stop, or the deadline, itself.
                let wake_at = if sess.reading_requests() {
                    Phase::Draining
                } else {
                    Phase::Aborting
                };
                let deadline = deadline.map(tokio::time::Instant::from_std);
                tokio::select! {
                    r = stream.read(sess.read_buf()) => match r {
                        Ok(0) => sess.set_eof(),
                        Ok(n) => sess.filled(n),
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) => return,
                    },
                    // The session sees the stop, an eviction, or the
                    // deadline, itself.
                    _ = stop.wait_for(|p| *p >= wake_at) => {}
                    _ = notices.evicted.notified() => {}
                    // A subscriber's message (or its cut-off) arrived.
                    _ = notices.woken.notified(), if sess.listening() => {}
                    _ = tokio::time::sleep_until(deadline.unwrap_or_else(tokio::time::Instant::now)), if deadline.is_some() => {}
                }
            }
            Io::ShutdownWrite => shutdown_write(stream),
            Io::Yield => tokio::task::yield_now().await,
            Io::Close => return,
            Io::Reset => {
                reset_on_close(stream);
                return;
            }
        }
    }
}

/// One write, bounded by the write timeout, and ended by the abort (then
/// the session resets).
async fn write<S: Service>(
    sess: &mut Session<S>,
    stream: &mut TcpStream,
    stop: &mut watch::Receiver<Phase>,
    woken: &Notify,
) -> io::Result<()> {
    let limit = sess.write_timeout();
    // A subscriber that does not read is cut off while its write waits:
    // the wake ends the wait (a write cancelled writes nothing), and
    // `next` closes it, or asks for the write again.
    let listening = sess.listening();
    let written = {
        let write = stream.write(sess.unwritten());
        let bounded = async {
            match limit {
                Some(limit) => tokio::time::timeout(limit, write).await.ok(),
                None => Some(write.await),
            }
        };
        tokio::select! {
            w = bounded => Some(w),
            _ = stop.wait_for(|p| *p == Phase::Aborting) => None,
            _ = woken.notified(), if listening => None,
        }
    };
    match written {
        // Aborting: `next` resets.
        None => Ok(()),
        Some(None) => {
            sess.write_timed_out();
            Ok(())
        }
        Some(Some(w)) => match w? {
            0 => Err(io::ErrorKind::WriteZero.into()),
            n => {
                sess.wrote(n);
                Ok(())
            }
        },
    }
}

/// Delay without blocking the event loop; false when abandoned (the client
/// has gone, or the stop aborted).
async fn perform(
    delay: Delay,
    stream: &TcpStream,
    shutdown: &Shutdown,
    stop: &mut watch::Receiver<Phase>,
) -> bool {
    match delay {
        Delay::Sleep(d) => {
            let client_gone = async {
                while !gone(stream, 0) {
                    tokio::time::sleep(LOOK_EVERY).await;
                }
            };
            tokio::select! {
                _ = tokio::time::sleep(d) => true,
                _ = client_gone => false,
                _ = stop.wait_for(|p| *p == Phase::Aborting) => false,
            }
        }
        busy => {
            // The blocking thread cannot look at the socket without a
            // descriptor of its own (the task's may close under it), and
            // a duplicate per delay would cost a descriptor per
            // connection: the task looks instead, and raises a flag the
            // thread looks at.
            let gone_flag = Arc::new(AtomicBool::new(false));
            let flag = gone_flag.clone();
            let shutdown = shutdown.clone();
            let mut work = tokio::task::spawn_blocking(move || {
                let gone = |wait_ms: u16| {
                    if wait_ms > 0 {
                        std::thread::sleep(Duration::from_millis(wait_ms.into()));
                    }
                    flag.load(Ordering::Relaxed)
                };
                crate::delay::perform_with(busy, gone, &shutdown)
            });
            let client_gone = async {
                while !gone(stream, 0) {
                    tokio::time::sleep(LOOK_EVERY).await;
                }
            };
            tokio::select! {
                spent = &mut work => return spent.unwrap_or(false),
                _ = client_gone => gone_flag.store(true, Ordering::Relaxed),
            }
            work.await.unwrap_or(false)
        }
    }
}

#[cfg(test)]
mod tests;
