//! Reactor strategies: one event-loop thread watches every socket
//! (edge-triggered epoll through mio) and hands each *ready* connection to
//! an executor: a worker pool or a fresh thread. The unit of work is a
//! ready connection with input to process, never a connection for its
//! whole life, so 2 workers serve 100 persistent connections fairly.
//!
//! A worker runs a connection until its socket would block, or until it
//! has answered `budget` requests; then the connection goes to the back of
//! the queue, so one busy pipelining client cannot starve the others.
//! [`readiness::Readiness`] makes sure each connection is run by at most
//! one worker at a time (so replies stay in order) and that no event is
//! lost between a worker's last read and its return.
//!
//! Graceful stop: the loop closes the listener, marks the server draining
//! and runs every connection once more; a draining worker answers what was
//! already received and closes when its socket has nothing more.
//!
//! Deadlines (a service's request timeout, and the write timeout for
//! replies a client does not read) are checked by the loop's timer tick,
//! which runs a connection whose deadline has passed; its worker then
//! answers 408 or resets the connection.

mod pool;
mod queue;
mod readiness;
mod tick;

pub(crate) use pool::Pool;

use crate::io::{accept_all, flush_nonblocking, Flushed};
use crate::session::{Session, Step};
use crate::Ctx;
use mio::{Events, Interest, Poll, Token, Waker};
use parking_lot::Mutex;
use readiness::Readiness;
use serverlab_service::{After, Service};
use std::collections::HashMap;
use std::io::{self, Read};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tick::Ticker;

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
/// Requests a pool worker answers on one connection before requeueing it.
const POOL_BUDGET: usize = 16;
/// How often request and write deadlines are checked: the loop scans every
/// connection at most this often.
const TIMEOUT_TICK: Duration = Duration::from_millis(100);

pub(crate) struct Conn<S: Service> {
    token: usize,
    ready: Readiness,
    /// Milliseconds since the server's epoch when the awaited request times
    /// out or the stalled replies are given up on, whichever is first; 0
    /// for none. Written by the worker, read by the loop's timer tick
    /// (`Relaxed`: a stale value only delays the check by a tick, and the
    /// worker re-checks the real deadlines under the lock).
    deadline_ms: AtomicU64,
    io: Mutex<ConnIo<S>>,
}

struct ConnIo<S: Service> {
    stream: mio::net::TcpStream,
    sess: Session<S>,
}

pub(crate) type Job<S> = Arc<Conn<S>>;

/// What the loop shares with the executor's threads.
pub(crate) struct Shared<S> {
    pub ctx: Arc<Ctx<S>>,
    budget: usize,
    /// Set once at graceful stop (`Release`), read by workers (`Acquire`).
    draining: AtomicBool,
    closed: crossbeam_channel::Sender<usize>,
    waker: Arc<Waker>,
    epoch: Instant,
}

enum Outcome {
    /// Waiting for the socket.
    Idle,
    /// Budget spent with work left.
    More,
    Closed,
}

pub(crate) fn run<S: Service>(
    ctx: Arc<Ctx<S>>,
    listener: TcpListener,
    pool: Pool,
) -> io::Result<()> {
    let mut poll = Poll::new()?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
    let w = waker.clone();
    ctx.shutdown.on_trigger(move || {
        let _ = w.wake();
    });
    let (closed_tx, closed_rx) = crossbeam_channel::unbounded();
    let timeouts = ctx.svc.request_timeout().is_some() || ctx.write_timeout.is_some();
    let shared = Arc::new(Shared {
        ctx: ctx.clone(),
        budget: if pool == Pool::Spawn { 1 } else { POOL_BUDGET },
        draining: AtomicBool::new(false),
        closed: closed_tx,
        waker,
        epoch: Instant::now(),
    });
    let exec = pool::start(pool, shared.clone())?;

    listener.set_nonblocking(true)?;
    let mut listener = Some(mio::net::TcpListener::from_std(listener));
    if let Some(l) = listener.as_mut() {
        poll.registry().register(l, LISTENER, Interest::READABLE)?;
    }
    let mut conns: HashMap<usize, Job<S>> = HashMap::new();
    let mut next_token = 2usize;
    let mut events = Events::with_capacity(1024);
    let mut stopping: Option<Instant> = None;
    let mut ticker = timeouts.then(|| Ticker::new(TIMEOUT_TICK, Instant::now()));
    loop {
        let timeout = if stopping.is_some() {
            Some(Duration::from_millis(20))
        } else {
            ticker.as_ref().map(|t| t.wait(Instant::now()))
        };
        crate::io::poll(&mut poll, &mut events, timeout)?;
        for ev in events.iter() {
            match ev.token() {
                LISTENER => {
                    let Some(l) = listener.as_ref() else { continue };
                    accept_all(l, &ctx, |mut stream, peer| {
                        let token = next_token;
                        next_token += 1;
                        poll.registry().register(
                            &mut stream,
                            Token(token),
                            Interest::READABLE | Interest::WRITABLE,
                        )?;
                        let sess = Session::new(&*ctx.svc, peer);
                        let conn = Arc::new(Conn {
                            token,
                            ready: Readiness::idle(),
                            deadline_ms: AtomicU64::new(0),
                            io: Mutex::new(ConnIo { stream, sess }),
                        });
                        conns.insert(token, conn);
                        Ok(())
                    });
                }
                WAKER => {}
                Token(t) => {
                    if let Some(c) = conns.get(&t) {
                        if c.ready.notify() {
                            exec.submit(c.clone());
                        }
                    }
                }
            }
        }
        for t in closed_rx.try_iter() {
            conns.remove(&t);
        }
        if ticker.as_mut().is_some_and(|t| t.due(Instant::now())) {
            let now = shared.epoch.elapsed().as_millis() as u64;
            for c in conns.values() {
                let d = c.deadline_ms.load(Ordering::Relaxed);
                if d != 0 && d <= now && c.ready.notify() {
                    exec.submit(c.clone());
                }
            }
        }
        if ctx.shutdown.is_triggered() && stopping.is_none() {
            stopping = Some(Instant::now());
            if let Some(mut l) = listener.take() {
                let _ = poll.registry().deregister(&mut l);
            }
            shared.draining.store(true, Ordering::Release);
            for c in conns.values() {
                if c.ready.notify() {
                    exec.submit(c.clone());
                }
            }
        }
        if let Some(t0) = stopping {
            if conns.is_empty() || t0.elapsed() > crate::DRAIN_LIMIT {
                break;
            }
        }
    }
    if conns.is_empty() {
        exec.stop();
    }
    // Otherwise some client would not take its replies within the drain
    // limit: its worker may be blocked, so the process exits without it.
    Ok(())
}

/// Run one scheduled connection. True: queue it again.
pub(crate) fn run_job<S: Service>(shared: &Shared<S>, conn: &Conn<S>) -> bool {
    conn.ready.start();
    let mut io = conn.io.lock();
    let outcome = step(shared, &mut io).unwrap_or(Outcome::Closed);
    match outcome {
        Outcome::Idle => {
            let write = io.sess.write_deadline(shared.ctx.write_timeout);
            let deadline = match (io.sess.deadline(), write) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let ms = deadline.map_or(0, |d| {
                d.saturating_duration_since(shared.epoch).as_millis().max(1) as u64
            });
            conn.deadline_ms.store(ms, Ordering::Relaxed);
            drop(io);
            conn.ready.finish(false)
        }
        Outcome::More => {
            drop(io);
            conn.ready.finish(true)
        }
        Outcome::Closed => {
            io.sess.finish(&*shared.ctx.svc);
            let _ = io.stream.shutdown(std::net::Shutdown::Both);
            drop(io);
            conn.ready.close();
            shared.ctx.stats.closed();
            let _ = shared.closed.send(conn.token);
            let _ = shared.waker.wake();
            false
        }
    }
}

/// Process the connection until its socket would block or the budget is
/// spent.
fn step<S: Service>(shared: &Shared<S>, io: &mut ConnIo<S>) -> io::Result<Outcome> {
    let svc = &*shared.ctx.svc;
    let draining = shared.draining.load(Ordering::Acquire);
    // Replies still backed up from the last run go out before any more
    // work, so a client that does not read cannot grow them.
    if io.sess.over_high_water()
        && flush_nonblocking(&mut io.stream, &mut io.sess)? == Flushed::WouldBlock
    {
        return Ok(stalled(shared, io));
    }
    let mut handled = 0;
    loop {
        match io.sess.next(svc) {
            Step::Ready(delay) => {
                if let Some(d) = delay {
                    d.block();
                }
                if io.sess.execute(svc) == After::Shutdown {
                    shared.ctx.shutdown.trigger();
                }
                handled += 1;
                if handled >= shared.budget || io.sess.over_high_water() {
                    return Ok(match flush_nonblocking(&mut io.stream, &mut io.sess)? {
                        Flushed::All => Outcome::More,
                        Flushed::WouldBlock => stalled(shared, io),
                    });
                }
            }
            Step::NeedInput => {
                if flush_nonblocking(&mut io.stream, &mut io.sess)? == Flushed::WouldBlock {
                    return Ok(stalled(shared, io));
                }
                if io.sess.deadline().is_some_and(|d| d <= Instant::now()) {
                    io.sess.time_out(svc);
                    continue;
                }
                match io.stream.read(io.sess.read_buf(svc)) {
                    Ok(0) => io.sess.set_eof(),
                    Ok(n) => io.sess.filled(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        return Ok(if draining {
                            Outcome::Closed
                        } else {
                            Outcome::Idle
                        });
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            Step::Close => {
                return Ok(match flush_nonblocking(&mut io.stream, &mut io.sess)? {
                    Flushed::All => {
                        if io.sess.should_linger() {
                            crate::io::linger_nonblocking(&mut io.stream);
                        }
                        Outcome::Closed
                    }
                    Flushed::WouldBlock => stalled(shared, io),
                });
            }
        }
    }
}

/// The socket took no more replies: wait for it, unless they have made no
/// progress for the write timeout; then the connection is reset.
fn stalled<S: Service>(shared: &Shared<S>, io: &mut ConnIo<S>) -> Outcome {
    let limit = shared.ctx.write_timeout;
    if io
        .sess
        .write_deadline(limit)
        .is_some_and(|d| d <= Instant::now())
    {
        shared.ctx.stats.write_timed_out();
        crate::io::reset_on_close(&io.stream);
        return Outcome::Closed;
    }
    Outcome::Idle
}
