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
//! Graceful stop: the loop closes the listener and runs every connection
//! once more; each session, seeing the server draining, answers what was
//! already received and closes when its socket has nothing more. Past the
//! drain limit the loop aborts the stop: every connection left is run once
//! more and reset, and the executor is stopped and joined before `run`
//! returns, so no worker outlives the server.
//!
//! Deadlines (a service's request timeout, the write timeout for replies a
//! client does not read, the end of a lingering close) are checked by the
//! loop's timer tick, which runs a connection whose deadline has passed;
//! its session then answers 408, resets, or closes.

mod pool;
mod queue;
mod readiness;
mod tick;

pub(crate) use pool::{PoolLockFree, PoolLocked, ThreadPerRequest};

use crate::drive::{drive, Mode, Parked};
use crate::listen::Listener;
use crate::session::Session;
use crate::watch::Watched;
use crate::Ctx;
use mio::{Events, Interest, Poll, Token, Waker};
use parking_lot::Mutex;
use pool::{Executor, Pool};
use readiness::Readiness;
use serverlab_service::Service;
use std::collections::HashMap;
use std::io;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tick::Ticker;

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
/// How often deadlines are checked: the loop scans every connection at
/// most this often.
const TIMEOUT_TICK: Duration = Duration::from_millis(100);
/// How often the loop looks again while stopping.
const STOP_TICK: Duration = Duration::from_millis(20);

pub(crate) struct Conn<S: Service> {
    token: usize,
    ready: Readiness,
    /// Milliseconds since the server's epoch when the session must run
    /// again even without an event (see `Session::deadline`); 0 for none.
    /// Written by the worker, read by the loop's timer tick (`Relaxed`: a
    /// stale value only delays the check by a tick, and the session
    /// re-checks the real deadlines itself).
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
    /// Requests a worker answers on one connection before requeueing it.
    budget: usize,
    closed: crossbeam_channel::Sender<usize>,
    /// Connections to be run: evicted at the cap (and so closed), or
    /// their commit settled.
    evicted: crossbeam_channel::Sender<usize>,
    waker: Arc<Waker>,
    epoch: Instant,
}

/// The event loop's state.
struct Loop<S: Service> {
    poll: Poll,
    /// Until the stop.
    listener: Option<Watched>,
    conns: HashMap<usize, Job<S>>,
    next_token: usize,
    closed: crossbeam_channel::Receiver<usize>,
    evicted: crossbeam_channel::Receiver<usize>,
}

pub(crate) fn run<S: Service>(ctx: Arc<Ctx<S>>, listener: Listener, pool: Pool) -> io::Result<()> {
    let poll = Poll::new()?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
    let w = waker.clone();
    ctx.shutdown.on_trigger(move || {
        let _ = w.wake();
    });
    let w = waker.clone();
    ctx.room.on_room(move || {
        let _ = w.wake();
    });
    let (closed_tx, closed_rx) = crossbeam_channel::unbounded();
    let (evicted_tx, evicted_rx) = crossbeam_channel::unbounded();
    let shared = Arc::new(Shared {
        ctx: ctx.clone(),
        budget: pool.budget(),
        closed: closed_tx,
        evicted: evicted_tx,
        waker,
        epoch: Instant::now(),
    });
    let exec = pool::start(pool, shared.clone())?;
    let listener = Watched::new(listener, poll.registry(), LISTENER)?;
    let mut l = Loop {
        poll,
        listener: Some(listener),
        conns: HashMap::new(),
        next_token: 2,
        closed: closed_rx,
        evicted: evicted_rx,
    };
    let result = l.serve(&shared, &*exec);
    // Every connection is closed (or the loop failed): no worker can be
    // handed more, so the executor finishes and joins its threads.
    if result.is_err() {
        l.abort(&shared, &*exec);
    }
    exec.stop();
    result
}

impl<S: Service> Loop<S> {
    /// Run until the stop is triggered and every connection has closed;
    /// past the drain limit, reset the rest.
    fn serve(&mut self, shared: &Shared<S>, exec: &dyn Executor<S>) -> io::Result<()> {
        let ctx = &shared.ctx;
        let mut events = Events::with_capacity(1024);
        let mut stopping: Option<Instant> = None;
        let mut ticker = Ticker::new(TIMEOUT_TICK, Instant::now());
        loop {
            let now = Instant::now();
            let timeout = match stopping {
                Some(_) => STOP_TICK,
                None => ticker.wait(now).min(self.until_accept_retry(now)),
            };
            crate::io::poll(&mut self.poll, &mut events, Some(timeout))?;
            let mut woken = false;
            for ev in events.iter() {
                match ev.token() {
                    LISTENER => self.accept(shared),
                    WAKER => woken = true,
                    Token(t) => self.notify(t, exec),
                }
            }
            // Full, the listener is unwatched: accept again when a close
            // wakes the loop, or at the recheck.
            if self
                .listener
                .as_ref()
                .is_some_and(|l| l.due(Instant::now(), woken))
            {
                self.accept(shared);
            }
            for t in self.evicted.try_iter() {
                self.notify(t, exec);
            }
            self.reap();
            if ticker.due(Instant::now()) {
                self.run_due(shared, exec);
                exec.tick();
            }
            if ctx.shutdown.is_triggered() && stopping.is_none() {
                stopping = Some(Instant::now());
                self.stop_accepting();
                self.notify_all(exec);
            }
            if let Some(t0) = stopping {
                if self.conns.is_empty() {
                    return Ok(());
                }
                if t0.elapsed() > crate::DRAIN_LIMIT {
                    self.abort(shared, exec);
                    return Ok(());
                }
            }
        }
    }

    fn accept(&mut self, shared: &Shared<S>) {
        let ctx = &shared.ctx;
        let Some(listener) = self.listener.as_mut() else {
            return;
        };
        let (poll, conns, next_token) = (&self.poll, &mut self.conns, &mut self.next_token);
        listener.accept(poll.registry(), ctx, |mut stream, peer| {
            let token = *next_token;
            *next_token += 1;
            poll.registry().register(
                &mut stream,
                Token(token),
                Interest::READABLE | Interest::WRITABLE,
            )?;
            let mut sess = Session::new(ctx, peer).with_budget(shared.budget);
            let run_again = std::task::Waker::from(Arc::new(RunAgain {
                token,
                run: shared.evicted.clone(),
                waker: shared.waker.clone(),
            }));
            sess.on_wait(run_again.clone());
            sess.on_commit(run_again);
            let (evicted, waker) = (shared.evicted.clone(), shared.waker.clone());
            sess.on_evict(stream.as_fd(), move || {
                let _ = evicted.send(token);
                let _ = waker.wake();
            });
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

    /// How long the loop may wait before it must accept again unasked.
    fn until_accept_retry(&self, now: Instant) -> Duration {
        self.listener
            .as_ref()
            .and_then(|l| l.timeout(now))
            .unwrap_or(Duration::MAX)
    }

    /// Something happened on connection `t`: queue it unless it already is.
    fn notify(&self, t: usize, exec: &dyn Executor<S>) {
        if let Some(c) = self.conns.get(&t) {
            if c.ready.notify() {
                exec.submit(c.clone());
            }
        }
    }

    fn notify_all(&self, exec: &dyn Executor<S>) {
        for c in self.conns.values() {
            if c.ready.notify() {
                exec.submit(c.clone());
            }
        }
    }

    /// Forget connections their workers closed.
    fn reap(&mut self) {
        for t in self.closed.try_iter() {
            self.conns.remove(&t);
        }
    }

    /// Run every connection whose deadline has passed.
    fn run_due(&self, shared: &Shared<S>, exec: &dyn Executor<S>) {
        let now = shared.epoch.elapsed().as_millis() as u64;
        for c in self.conns.values() {
            let d = c.deadline_ms.load(Ordering::Relaxed);
            if d != 0 && d <= now && c.ready.notify() {
                exec.submit(c.clone());
            }
        }
    }

    fn stop_accepting(&mut self) {
        if let Some(l) = self.listener.take() {
            l.close(self.poll.registry());
        }
    }

    /// The drain limit passed (or the loop failed): every session still
    /// open resets at its next step. Run each once more and wait until all
    /// have closed; a worker still performing a delay finishes it first.
    fn abort(&mut self, shared: &Shared<S>, exec: &dyn Executor<S>) {
        shared.ctx.shutdown.abort();
        self.stop_accepting();
        self.notify_all(exec);
        while !self.conns.is_empty() {
            exec.tick();
            match self.closed.recv_timeout(STOP_TICK) {
                Ok(t) => {
                    self.conns.remove(&t);
                }
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => self.notify_all(exec),
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
            }
        }
    }
}

/// Wakes the loop to run a connection again: its commit is settled. It
/// shares the channel of connections evicted at the cap, which the loop
/// runs (`notify`) whatever the reason.
struct RunAgain {
    token: usize,
    run: crossbeam_channel::Sender<usize>,
    waker: Arc<Waker>,
}

impl std::task::Wake for RunAgain {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let _ = self.run.send(self.token);
        let _ = self.waker.wake();
    }
}

/// Run one scheduled connection, timed as the worker's busy time (see
/// `serverlab_service::busy`). True: queue it again.
pub(crate) fn run_job<S: Service>(shared: &Shared<S>, conn: &Conn<S>) -> bool {
    let busy = &shared.ctx.svc.common().busy;
    let timer = busy.start();
    let (again, answered) = run_once(shared, conn);
    busy.finish(timer, answered);
    again
}

/// [`run_job`]'s run: whether to queue the connection again, and how many
/// requests it answered.
fn run_once<S: Service>(shared: &Shared<S>, conn: &Conn<S>) -> (bool, u64) {
    conn.ready.start();
    let mut io = conn.io.lock();
    let ConnIo { stream, sess } = &mut *io;
    let before = sess.applied();
    let parked = drive(sess, stream, Mode::NonBlocking);
    let answered = sess.applied() - before;
    let again = match parked {
        Parked::Wait => {
            let ms = sess.deadline().map_or(0, |d| {
                d.saturating_duration_since(shared.epoch).as_millis().max(1) as u64
            });
            conn.deadline_ms.store(ms, Ordering::Relaxed);
            drop(io);
            conn.ready.finish(false)
        }
        Parked::Yield => {
            drop(io);
            conn.ready.finish(true)
        }
        Parked::Closed => {
            let _ = stream.shutdown(std::net::Shutdown::Both);
            drop(io);
            conn.ready.close();
            let _ = shared.closed.send(conn.token);
            let _ = shared.waker.wake();
            false
        }
    };
    (again, answered)
}
