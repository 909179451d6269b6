//! Strategies on tokio: `async` (one multi-thread, work-stealing runtime)
//! and `shared-nothing` (one single-thread runtime per core, each with its
//! own SO_REUSEPORT listener, so a connection never leaves the loop that
//! accepted it). Both run the same connection task.
//!
//! Delays never block a loop: sleeps are timers, and spin or CPU work runs
//! on the runtime's blocking threads.
//!
//! Graceful stop: a watch channel tells the accept loops to stop and every
//! connection to drain (answer what already arrived, then close); the
//! runtime is dropped only after every connection task has finished.
//!
//! Every write is bounded by the write timeout: one that makes no progress
//! within it (a client that does not read) resets the connection.

use crate::session::{Session, Step};
use crate::Ctx;
use serverlab_service::{After, Delay, Service};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

pub(crate) fn run_multi<S: Service>(
    ctx: Arc<Ctx<S>>,
    listener: std::net::TcpListener,
) -> io::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(ctx.threads)
        .thread_name("async")
        .enable_all()
        .build()?;
    let stop = stop_channel(&ctx);
    rt.block_on(accept_loop(ctx, listener, stop))
}

pub(crate) fn run_shared_nothing<S: Service>(
    ctx: Arc<Ctx<S>>,
    listeners: Vec<std::net::TcpListener>,
) -> io::Result<()> {
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

fn stop_channel<S: Service>(ctx: &Ctx<S>) -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    ctx.shutdown.on_trigger(move || {
        let _ = tx.send(true);
    });
    rx
}

async fn accept_loop<S: Service>(
    ctx: Arc<Ctx<S>>,
    listener: std::net::TcpListener,
    stop: watch::Receiver<bool>,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let mut tasks = tokio::task::JoinSet::new();
    let mut stopping = stop.clone();
    loop {
        tokio::select! {
            _ = stopping.wait_for(|s| *s) => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    if !ctx.stats.admit(ctx.max_connections) {
                        continue;
                    }
                    let _ = stream.set_nodelay(true);
                    tasks.spawn(serve(ctx.clone(), stream, peer, stop.clone()));
                }
                Err(e) if matches!(e.kind(), io::ErrorKind::ConnectionAborted | io::ErrorKind::Interrupted) => {}
                Err(e) => {
                    eprintln!("serverlab: accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
            },
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    drop(listener);
    // Connections drain; one whose client will not take its replies is
    // dropped after the drain limit.
    let drained = tokio::time::timeout(crate::DRAIN_LIMIT, async {
        while tasks.join_next().await.is_some() {}
    });
    if drained.await.is_err() {
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
    let mut sess = Session::new(&*ctx.svc, peer);
    let _ = drive(&ctx, &mut stream, &mut sess, &mut stop).await;
    sess.finish(&*ctx.svc);
    ctx.stats.closed();
}

enum Woke {
    Read(io::Result<usize>),
    Stop,
    TimedOut,
}

async fn drive<S: Service>(
    ctx: &Ctx<S>,
    stream: &mut TcpStream,
    sess: &mut Session<S>,
    stop: &mut watch::Receiver<bool>,
) -> io::Result<()> {
    let svc = &*ctx.svc;
    let mut draining = *stop.borrow();
    loop {
        match sess.next(svc) {
            Step::Ready(delay) => {
                if let Some(d) = delay {
                    perform(d).await?;
                }
                if sess.execute(svc) == After::Shutdown {
                    ctx.shutdown.trigger();
                }
                if sess.over_high_water() {
                    flush(ctx, stream, sess).await?;
                }
            }
            Step::NeedInput => {
                flush(ctx, stream, sess).await?;
                if draining {
                    // Answer only what has already arrived.
                    match stream.try_read(sess.read_buf(svc)) {
                        Ok(0) => sess.set_eof(),
                        Ok(n) => sess.filled(n),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                        Err(e) => return Err(e),
                    }
                    continue;
                }
                let deadline = sess.deadline().map(tokio::time::Instant::from_std);
                let woke = tokio::select! {
                    r = stream.read(sess.read_buf(svc)) => Woke::Read(r),
                    _ = stop.wait_for(|s| *s) => Woke::Stop,
                    _ = tokio::time::sleep_until(deadline.unwrap_or_else(tokio::time::Instant::now)), if deadline.is_some() => Woke::TimedOut,
                };
                match woke {
                    Woke::Read(Ok(0)) => sess.set_eof(),
                    Woke::Read(Ok(n)) => sess.filled(n),
                    Woke::Read(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                    Woke::Read(Err(e)) => return Err(e),
                    Woke::Stop => draining = true,
                    Woke::TimedOut => sess.time_out(svc),
                }
            }
            Step::Close => {
                flush(ctx, stream, sess).await?;
                let _ = stream.shutdown().await;
                if sess.should_linger() {
                    linger(stream).await;
                }
                return Ok(());
            }
        }
    }
}

/// After the write half is shut: discard what the peer still sends, for
/// a bounded time and amount, so closing does not reset the connection
/// under the replies (see `io::linger_blocking`).
async fn linger(stream: &mut TcpStream) {
    let mut scratch = [0u8; 16 * 1024];
    let drain = async {
        let mut discarded = 0;
        while discarded < crate::io::LINGER_BYTES {
            match stream.read(&mut scratch).await {
                Ok(0) | Err(_) => return,
                Ok(n) => discarded += n,
            }
        }
    };
    let _ = tokio::time::timeout(crate::io::LINGER_TIME, drain).await;
}

/// Write every pending reply; a write that makes no progress within the
/// write timeout resets the connection.
async fn flush<S: Service>(
    ctx: &Ctx<S>,
    stream: &mut TcpStream,
    sess: &mut Session<S>,
) -> io::Result<()> {
    while !sess.unwritten().is_empty() {
        let write = stream.write(sess.unwritten());
        let n = match ctx.write_timeout {
            Some(limit) => match tokio::time::timeout(limit, write).await {
                Ok(written) => written?,
                Err(_elapsed) => {
                    ctx.stats.write_timed_out();
                    crate::io::reset_on_close(stream);
                    return Err(io::ErrorKind::TimedOut.into());
                }
            },
            None => write.await?,
        };
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        sess.wrote(n);
    }
    Ok(())
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
