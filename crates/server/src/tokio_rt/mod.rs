//! Strategies on tokio: `async` (one multi-thread, work-stealing runtime)
//! and `shared-nothing` (one single-thread runtime per core, each with its
//! own SO_REUSEPORT listener, so a connection never leaves the loop that
//! accepted it). Both run the same connection task, which carries out its
//! session's I/O with awaits.
//!
//! Delays never block a loop: sleeps are timers, and spin or CPU work runs
//! on the runtime's blocking threads.
//!
//! Graceful stop: a watch channel tells the accept loops to stop and every
//! waiting connection to look again (its session, seeing the server
//! draining, answers what already arrived, then closes); the runtime is
//! dropped only after every connection task has finished. Past the drain
//! limit the tasks left are aborted (their sessions, dropped, close).
//!
//! Every write is bounded by the write timeout: one that makes no progress
//! within it (a client that does not read) resets the connection.

use crate::accept::Accepted;
use crate::io::{reset_on_close, shutdown_write};
use crate::session::{Io, Session};
use crate::strategy::{Delays, Listeners, Strategy, Threads};
use crate::Ctx;
use serverlab_service::{Delay, Service};
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsFd;
use std::sync::Arc;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{watch, Notify};

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

    fn run<S: Service>(ctx: Arc<Ctx<S>>, mut listeners: Vec<TcpListener>) -> io::Result<()> {
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

    fn run<S: Service>(ctx: Arc<Ctx<S>>, listeners: Vec<TcpListener>) -> io::Result<()> {
        let stop = stop_channel(&ctx);
        let loops: Vec<_> = listeners
            .into_iter()
            .enumerate()
            .map(|(i, listener)| {
                let (ctx, stop) = (ctx.clone(), stop.clone());
                std::thread::Builder::new()
                    .name(format!("loop-{i}"))
                    .spawn(move || {
                        if let Some(cpus) = &ctx.cpus {
                            cpus.nth(i).pin_current_thread()?;
                        }
                        let rt = tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()?;
                        rt.block_on(accept_loop(ctx, listener, stop))
                    })
            })
            .collect::<io::Result<_>>()?;
        let mut result = Ok(());
        for l in loops {
            let r = l
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("an event loop panicked")));
            result = result.and(r);
        }
        result
    }
}

fn stop_channel<S: Service>(ctx: &Ctx<S>) -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    ctx.shutdown.on_trigger(move || {
        let _ = tx.send(true);
    });
    rx
}

async fn accept_loop<S: Service>(
    ctx: Arc<Ctx<S>>,
    listener: TcpListener,
    stop: watch::Receiver<bool>,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    // The listener's readiness is ours to clear (tokio's `TcpListener`
    // keeps it set after any error): out of descriptors, `accept` fails
    // before it looks at the backlog, so only the shedding can tell that
    // the backlog is empty (`accept.rs`).
    let listener = mio::net::TcpListener::from_std(listener);
    // SAFETY: the mio listener owns its descriptor, which stays open and
    // the same until the `AsyncFd` (which owns the listener) is dropped.
    let listener =
        unsafe { AsyncFd::register_with_interest(listener, tokio::io::Interest::READABLE)? };
    let mut tasks = tokio::task::JoinSet::new();
    let mut stopping = stop.clone();
    loop {
        tokio::select! {
            _ = stopping.wait_for(|s| *s) => break,
            ready = listener.readable() => {
                let mut ready = ready?;
                match ctx.accept(listener.as_fd(), || listener.get_ref().accept()) {
                    Accepted::Serve(stream, peer) => {
                        let stream = TcpStream::from_std(stream.into())?;
                        tasks.spawn(serve(ctx.clone(), stream, peer, stop.clone()));
                    }
                    Accepted::Again => {}
                    Accepted::Drained => ready.clear_ready(),
                    Accepted::RetryIn(d) => {
                        drop(ready);
                        tokio::time::sleep(d).await;
                    }
                }
            },
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    drop(listener);
    // Connections drain; past the drain limit the rest are aborted (a task
    // dropped mid-await drops its session, which closes it).
    let drained = tokio::time::timeout(crate::DRAIN_LIMIT, async {
        while tasks.join_next().await.is_some() {}
    });
    if drained.await.is_err() {
        ctx.shutdown.abort();
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
    }
    Ok(())
}

async fn serve<S: Service>(
    ctx: Arc<Ctx<S>>,
    mut stream: TcpStream,
    peer: SocketAddr,
    mut stop: watch::Receiver<bool>,
) {
    let mut sess = Session::new(&ctx, peer);
    let evicted = Arc::new(Notify::new());
    let wake = evicted.clone();
    // `notify_one` keeps a permit if the task is not waiting yet.
    sess.on_evict(move || wake.notify_one());
    drive(&mut sess, &mut stream, &mut stop, &evicted).await;
    sess.finish();
}

/// Carry out the session's I/O until the connection is finished.
async fn drive<S: Service>(
    sess: &mut Session<S>,
    stream: &mut TcpStream,
    stop: &mut watch::Receiver<bool>,
    evicted: &Notify,
) {
    loop {
        match sess.next() {
            Io::Delay(d) => {
                if perform(d).await.is_err() {
                    return;
                }
            }
            Io::Write => {
                if write(sess, stream).await.is_err() {
                    return;
                }
            }
            Io::Read { wait: false, .. } => match stream.try_read(sess.read_buf()) {
                Ok(0) => sess.set_eof(),
                Ok(n) => sess.filled(n),
                // Draining: what had arrived is all there is.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => sess.set_eof(),
                Err(_) => return,
            },
            Io::Read {
                deadline,
                wait: true,
            } => {
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
                    _ = stop.wait_for(|s| *s) => {}
                    _ = evicted.notified() => {}
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

/// One write, bounded by the write timeout.
async fn write<S: Service>(sess: &mut Session<S>, stream: &mut TcpStream) -> io::Result<()> {
    let write = stream.write(sess.unwritten());
    let written = match sess.write_timeout() {
        Some(limit) => match tokio::time::timeout(limit, write).await {
            Ok(written) => written,
            Err(_elapsed) => {
                sess.write_timed_out();
                return Ok(());
            }
        },
        None => write.await,
    };
    match written? {
        0 => Err(io::ErrorKind::WriteZero.into()),
        n => {
            sess.wrote(n);
            Ok(())
        }
    }
}

/// Delay without blocking the event loop.
async fn perform(delay: Delay) -> io::Result<()> {
    match delay {
        Delay::Sleep(d) => tokio::time::sleep(d).await,
        busy => tokio::task::spawn_blocking(move || busy.block())
            .await
            .map_err(io::Error::other)?,
    }
    Ok(())
}
