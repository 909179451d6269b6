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
//! blocked write forever: the socket's send timeout (`SO_SNDTIMEO`, set to
//! the write timeout) fails a write that makes no progress within it, and
//! the connection is reset.

use crate::io::{accept_all, flush_blocking, to_std};
use crate::session::{Session, Step};
use crate::Ctx;
use mio::{Events, Interest, Poll, Token, Waker};
use parking_lot::Mutex;
use serverlab_service::{After, Service};
use std::collections::HashMap;
use std::io::{self, Read};
use std::net::{Shutdown as HalfClose, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);

pub(crate) fn run<S: Service>(ctx: Arc<Ctx<S>>, listener: TcpListener) -> io::Result<()> {
    let mut poll = Poll::new()?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
    ctx.shutdown.on_trigger(move || {
        let _ = waker.wake();
    });
    listener.set_nonblocking(true)?;
    let mut listener = mio::net::TcpListener::from_std(listener);
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)?;

    let open: Arc<Mutex<HashMap<u64, TcpStream>>> = Arc::default();
    let mut threads: Vec<JoinHandle<()>> = Vec::new();
    let mut next_id = 0u64;
    let mut events = Events::with_capacity(64);
    while !ctx.shutdown.is_triggered() {
        crate::io::poll(&mut poll, &mut events, None)?;
        accept_all(&listener, &ctx, |stream, peer| {
            let stream = to_std(stream)?;
            next_id += 1;
            // Registered before the thread starts, so the stop below
            // reaches every connection.
            open.lock().insert(next_id, stream.try_clone()?);
            let (ctx, registry, id) = (ctx.clone(), open.clone(), next_id);
            let spawned = std::thread::Builder::new()
                .name("conn".into())
                .spawn(move || {
                    serve(&ctx, stream, peer);
                    registry.lock().remove(&id);
                });
            match spawned {
                Ok(handle) => threads.push(handle),
                Err(e) => {
                    open.lock().remove(&id);
                    return Err(e);
                }
            }
            Ok(())
        });
        threads.retain(|t| !t.is_finished());
    }
    drop(listener);
    for stream in open.lock().values() {
        let _ = stream.shutdown(HalfClose::Read);
    }
    // A client that will not read its replies must not hold the stop up:
    // after the drain limit its socket is shut both ways, which fails the
    // thread's blocked write.
    let deadline = Instant::now() + crate::DRAIN_LIMIT;
    while threads.iter().any(|t| !t.is_finished()) && Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    for stream in open.lock().values() {
        let _ = stream.shutdown(HalfClose::Both);
    }
    for t in threads {
        let _ = t.join();
    }
    Ok(())
}

/// Serve one connection until it closes.
fn serve<S: Service>(ctx: &Ctx<S>, mut stream: TcpStream, peer: SocketAddr) {
    let svc = &*ctx.svc;
    let mut sess = Session::new(svc, peer);
    // Fails only for a zero timeout; the connection is served regardless.
    let _ = stream.set_write_timeout(ctx.write_timeout);
    let _ = drive(ctx, &mut stream, &mut sess);
    sess.finish(svc);
    ctx.stats.closed();
}

fn drive<S: Service>(
    ctx: &Ctx<S>,
    stream: &mut TcpStream,
    sess: &mut Session<S>,
) -> io::Result<()> {
    let svc = &*ctx.svc;
    loop {
        match sess.next(svc) {
            Step::Ready(delay) => {
                if let Some(d) = delay {
                    d.block();
                }
                if sess.execute(svc) == After::Shutdown {
                    ctx.shutdown.trigger();
                }
                if sess.over_high_water() {
                    flush(ctx, stream, sess)?;
                }
            }
            Step::NeedInput => {
                flush(ctx, stream, sess)?;
                let deadline = sess.deadline();
                if let Some(deadline) = deadline {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        sess.time_out(svc);
                        continue;
                    }
                    stream.set_read_timeout(Some(left))?;
                }
                match stream.read(sess.read_buf(svc)) {
                    Ok(0) => sess.set_eof(),
                    Ok(n) => sess.filled(n),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if is_timeout(&e) && deadline.is_some() => {}
                    Err(e) => return Err(e),
                }
                if deadline.is_some() {
                    stream.set_read_timeout(None)?;
                }
            }
            Step::Close => {
                flush(ctx, stream, sess)?;
                if sess.should_linger() {
                    crate::io::linger_blocking(stream);
                }
                return Ok(());
            }
        }
    }
}

/// Write every pending reply. A write that makes no progress within the
/// write timeout fails with a timeout: the connection is then reset.
fn flush<S: Service>(
    ctx: &Ctx<S>,
    stream: &mut TcpStream,
    sess: &mut Session<S>,
) -> io::Result<()> {
    let result = flush_blocking(stream, sess);
    if let Err(e) = &result {
        if is_timeout(e) {
            ctx.stats.write_timed_out();
            crate::io::reset_on_close(stream);
        }
    }
    result
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}
