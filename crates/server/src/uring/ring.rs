//! One ring's loop: a thread, its io_uring, its listener, and the
//! connections it accepted, which never leave it.
//!
//! A turn: submit everything the last turn queued and wait for at least
//! one completion (not at all if a connection yielded and is still to
//! run; a tick, itself a timeout operation, completes every 100 ms, and
//! the eventfd when the stop starts); fold every completion in;
//! then run each connection that became ready, which queues its next
//! operations for the following turn's single submission. So sends (and
//! everything else) are batched per turn: one `io_uring_enter` carries
//! them all, and reaps what completed.
//!
//! Deadlines (a request that must arrive in time, the end of a lingering
//! close, a send that makes no progress for `--write-timeout`) are checked
//! at each tick, which runs or cancels what is due.
//!
//! Accepting (a multishot accept while there is room, readiness and one
//! accept at a time near the cap or out of descriptors) is `accept.rs`'s.
//!
//! The stop: what waits for connections is cancelled, and every
//! connection waiting for input runs once more: its session reads nothing
//! more, answers what it read, and closes lingering (a wait for input
//! again, until the peer ends or the linger time). Past the drain limit
//! the server aborts: every connection waiting for input runs again, and
//! every send and timer still in flight is cancelled (a delay on another
//! thread sees the abort itself), so each session resets at its next step,
//! counting what it drops. The loop ends when every connection is closed.

mod accept;

use super::conn::{Conn, Delays, Parked, Wait};
use super::mailbox::{Mailbox, Post};
use super::sys::{Completion, EventFd, Op, Uring};
use crate::delay;
use crate::listen::Listener;
use crate::shutdown::{Phase, Shutdown};
use crate::Ctx;
use accept::Accepting;
use serverlab_service::{Delay, Service};
use slab::Slab;
use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Requests one connection answers before the ring runs the others.
const BUDGET: usize = 64;

/// Where the ring is in stopping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Running,
    Draining(Instant),
    Aborting,
}

/// Serve `listener` on this thread's ring until the stop has closed every
/// connection.
pub(super) fn serve<S: Service>(
    ctx: Arc<Ctx<S>>,
    listener: Listener,
    io: Uring,
    wake: EventFd,
) -> io::Result<()> {
    // The ring also accepts on it itself (`accept.rs`), and shedding
    // needs an empty backlog to say so, not wait.
    listener.set_nonblocking(true)?;
    let mailbox = Arc::new(Mailbox::new(wake));
    let m = mailbox.clone();
    // Each phase of the stop (draining, aborting) wakes the ring at once.
    ctx.shutdown.on_phase(move |_| m.wake());
    // Full, the ring waits for a connection to close (`accept.rs`).
    let m = mailbox.clone();
    ctx.room.on_room(move || m.wake());
    let mut ring = Ring {
        conns: Slab::new(),
        io,
        delays: OffRing {
            mailbox: mailbox.clone(),
            shutdown: ctx.shutdown.clone(),
            runtime: None,
            gone: HashMap::new(),
        },
        mailbox,
        ctx,
        listener: Some(listener),
        accepting: Accepting::Off,
        backoff: false,
        full: false,
        ready: VecDeque::new(),
        committing: Vec::new(),
        last_commit: (0, Duration::ZERO),
        gather_until: None,
        cqes: Vec::new(),
        posted: Vec::new(),
        stop: Stop::Running,
    };
    ring.run()
}

/// The longest a ring gathers a commit's writers (`commit_pass`).
const MAX_GATHER: Duration = Duration::from_millis(1);

struct Ring<S: Service> {
    // Dropped first: connections (their sockets, and sessions not lent to
    // the kernel) go before the ring waits for its operations to end.
    conns: Slab<Conn<S>>,
    io: Uring,
    // Dropped after the ring: waits for the delay threads to finish.
    delays: OffRing,
    mailbox: Arc<Mailbox<EventFd>>,
    ctx: Arc<Ctx<S>>,
    /// Until the stop's cancelled accept has completed (and dropped after
    /// the ring, so it outlives an accept still in flight).
    listener: Option<Listener>,
    /// What waits for connections on it.
    accepting: Accepting,
    /// A backoff timer is pending: accepting failed, or the server was
    /// full, and is retried then.
    backoff: bool,
    /// The server was full: the ring accepts again when a connection
    /// closes (the room wakes it), or at the backoff.
    full: bool,
    /// Tokens of connections to run this turn, in order.
    ready: VecDeque<u32>,
    /// Tokens of connections whose replies wait for the commit this ring
    /// makes at the end of the pass (`Committer::Caller`).
    committing: Vec<u32>,
    /// How the last commit went: how many connections it released and how
    /// long its write and `fsync` took; and, while fewer connections than
    /// that wait, until when the ring gathers more before it commits.
    last_commit: (usize, Duration),
    gather_until: Option<Instant>,
    cqes: Vec<Completion>,
    posted: Vec<Post>,
    stop: Stop,
}

impl<S: Service> Ring<S> {
    fn run(&mut self) -> io::Result<()> {
        self.io.read_wake(self.mailbox.signal());
        self.io.tick();
        self.arm_accept();
        loop {
            // Wait only if no connection is ready to run: the tick
            // completes every 100 ms, the eventfd on a stop. Gathering a
            // commit's writers, wait as long as that allows.
            match self.gather_until {
                Some(until) => {
                    let want = self.last_commit.0.saturating_sub(self.committing.len());
                    let left = until.saturating_duration_since(Instant::now());
                    self.io.gather(want, left)?;
                }
                None => self.io.submit(self.ready.is_empty())?,
            }
            self.io.reap(&mut self.cqes);
            let now = Instant::now();
            let mut cqes = std::mem::take(&mut self.cqes);
            for c in cqes.drain(..) {
                self.complete(c, now);
            }
            self.cqes = cqes;
            self.check_stop(now);
            self.run_ready(now);
            self.commit_pass(Instant::now());
            if self.stop != Stop::Running
                && self.conns.is_empty()
                && self.accepting == Accepting::Off
            {
                return Ok(());
            }
        }
    }

    fn complete(&mut self, c: Completion, now: Instant) {
        match c.op {
            Op::Accept => self.accepted(c),
            Op::Readable => self.readable(),
            Op::Backoff => self.backoff_over(),
            Op::Wake => self.woken(c),
            Op::Tick => {
                self.tick(now);
                if c.result != -libc::ECANCELED {
                    self.io.tick();
                }
            }
            // What it cancelled reports how that ended.
            Op::Cancel => {}
            Op::Recv | Op::Send | Op::Sleep => self.conn_completed(c),
        }
    }

    fn conn_completed(&mut self, c: Completion) {
        let token = c.token;
        let conn = self
            .conns
            .get_mut(token as usize)
            .expect("a connection outlives its operations");
        if !c.more {
            conn.in_flight -= 1;
        }
        let run = conn.complete(c, &mut self.io);
        self.settle(token, run);
    }

    /// After a completion: close a closing connection once nothing of it
    /// is in flight, or queue it to run.
    fn settle(&mut self, token: u32, run: bool) {
        let conn = &mut self.conns[token as usize];
        if conn.wait == Wait::Closing {
            if conn.in_flight == 0 {
                self.finish(token);
            }
        } else if run {
            self.make_ready(token);
        }
    }

    fn make_ready(&mut self, token: u32) {
        let conn = &mut self.conns[token as usize];
        if !matches!(conn.wait, Wait::Ready | Wait::Closing) {
            conn.wait = Wait::Ready;
            self.ready.push_back(token);
        }
    }

    /// Run every connection ready at the start; one that yields runs
    /// again next turn, after the completions that came meanwhile.
    fn run_ready(&mut self, now: Instant) {
        for _ in 0..self.ready.len() {
            let Some(token) = self.ready.pop_front() else {
                break;
            };
            let Some(conn) = self.conns.get_mut(token as usize) else {
                continue;
            };
            if conn.wait != Wait::Ready {
                continue;
            }
            match conn.drive(&mut self.io, &mut self.delays, now) {
                Parked::Waiting => {}
                Parked::Yield => self.ready.push_back(token),
                Parked::Commit => self.committing.push(token),
                Parked::Closed { reset } => {
                    if conn.close(&mut self.io, reset) {
                        self.finish(token);
                    }
                }
            }
        }
    }

    /// Commit what this pass's requests wrote, in this thread: one write
    /// and one `fsync` for every connection that waits (and whatever other
    /// rings appended), as Redis does at the end of its event loop's pass;
    /// then run them again to send their replies. No hand-off, no wake.
    ///
    /// Lock-step writers come back as a group, a round trip after their
    /// replies, but not at one instant: committing the first of them alone
    /// would split the group in two that alternate, each `fsync` carrying
    /// half. So while fewer connections wait than the last commit
    /// released, the ring first gathers for at most half the last commit's
    /// time (the wait the larger batch saves), then commits.
    fn commit_pass(&mut self, now: Instant) {
        if self.committing.is_empty() {
            self.gather_until = None;
            return;
        }
        let (released, took) = self.last_commit;
        if self.committing.len() < released {
            let until = *self.gather_until.get_or_insert(now + took / 2);
            if now < until {
                return;
            }
        }
        self.gather_until = None;
        let started = Instant::now();
        if let Some(wal) = self.ctx.svc.wal() {
            wal.commit_pending();
        }
        self.last_commit = (self.committing.len(), started.elapsed().min(MAX_GATHER * 2));
        for token in std::mem::take(&mut self.committing) {
            if self
                .conns
                .get(token as usize)
                .is_some_and(|c| c.wait == Wait::Commit)
            {
                self.make_ready(token);
            }
        }
    }

    fn finish(&mut self, token: u32) {
        let mut conn = self.conns.remove(token as usize);
        conn.finish();
    }

    /// The eventfd was signalled: delays spent on other threads,
    /// evictions, room at the cap, or the stop (which `check_stop` sees).
    fn woken(&mut self, c: Completion) {
        self.room_made();
        self.mailbox.take(&mut self.posted);
        for post in std::mem::take(&mut self.posted) {
            match post {
                Post::Spent(token) | Post::Abandoned(token) => {
                    self.delays.gone.remove(&token);
                    let conn = &mut self.conns[token as usize];
                    conn.in_flight -= 1;
                    if let Post::Abandoned(_) = post {
                        conn.abandon_delay();
                    }
                    let run = conn.wait == Wait::Delay { timer: false };
                    self.settle(token, run);
                }
                Post::Woken(token) => {
                    if let Some(conn) = self.conns.get_mut(token as usize) {
                        conn.wake_blocked(&mut self.io);
                        conn.wake_sending(&mut self.io);
                        // A subscriber waiting for input has a message to
                        // write (its receive stays armed).
                        if let Wait::Input(_) = conn.wait {
                            self.make_ready(token);
                        }
                    }
                }
                // Run it if it waits for a request: its session sees the
                // eviction and closes. (Otherwise it runs soon anyway; or
                // it has closed, and a newer connection with its token
                // runs once for nothing.)
                Post::Evicted(token) => {
                    if let Some(Wait::Input(_)) = self.conns.get(token as usize).map(|c| c.wait) {
                        self.make_ready(token);
                    }
                }
            }
        }
        if c.result != -libc::ECANCELED {
            self.io.read_wake(self.mailbox.signal());
        }
    }

    /// Follow the stop: draining once it is triggered, aborting past the
    /// drain limit or once another ring aborted (both in one turn if the
    /// wake-ups of both phases came together).
    fn check_stop(&mut self, now: Instant) {
        let phase = self.ctx.shutdown.phase();
        if self.stop == Stop::Running && phase != Phase::Running {
            self.stop = Stop::Draining(now);
            self.stop_accepting();
            self.wake_waiting(false);
        }
        if let Stop::Draining(t0) = self.stop {
            if phase == Phase::Aborting || now - t0 > crate::DRAIN_LIMIT {
                self.ctx.shutdown.abort();
                self.stop = Stop::Aborting;
                self.wake_waiting(true);
            }
        }
    }

    /// Run every connection waiting for input (its session sees the stop);
    /// `abort`: also cancel every send and timer, so those sessions reset.
    fn wake_waiting(&mut self, abort: bool) {
        let mut due = Vec::new();
        for (token, conn) in self.conns.iter_mut() {
            if let Wait::Input(_) = conn.wait {
                due.push(token as u32);
            } else if abort {
                conn.cancel_all(&mut self.io);
            }
        }
        for token in due {
            self.make_ready(token);
        }
    }

    /// Run connections whose deadline passed; cancel sends that made no
    /// progress for the write timeout, and sleeps for clients that have
    /// gone.
    fn tick(&mut self, now: Instant) {
        let mut due = Vec::new();
        let limit = self.ctx.write_timeout;
        for (token, conn) in self.conns.iter_mut() {
            match conn.wait {
                Wait::Input(Some(deadline)) if deadline <= now => due.push(token as u32),
                Wait::Output => {
                    if let Some(limit) = limit {
                        conn.expire_send(&mut self.io, limit, now);
                    }
                }
                Wait::Delay { timer: true } => conn.abandon_if_gone(&mut self.io),
                Wait::Blocked => conn.left_while_blocked(&mut self.io),
                Wait::Delay { timer: false } if conn.gone_during_delay_off_ring() => {
                    self.delays.client_gone(token as u32)
                }
                _ => {}
            }
        }
        for token in due {
            self.make_ready(token);
        }
    }
}

/// Delays: sleeps on the ring's timer; spin and CPU work on a blocking
/// thread pool (tokio's, started on first use from the ring's thread, so
/// its threads inherit the ring's CPU), whose threads perform them in
/// slices (`delay::perform_with`), giving up when the client has gone or
/// the stop passes its drain limit, and post how they ended. The thread
/// does not look at the socket (that would take a duplicate descriptor
/// per delay: at a tight descriptor limit, the accepts' share): the
/// ring's tick looks, and raises the delay's flag, which the thread reads.
struct OffRing {
    mailbox: Arc<Mailbox<EventFd>>,
    shutdown: Shutdown,
    runtime: Option<tokio::runtime::Runtime>,
    /// The flags of delays on the pool, by connection token, until they
    /// post how they ended.
    gone: HashMap<u32, Arc<AtomicBool>>,
}

impl OffRing {
    /// The client of the delay on the pool for `token` has gone.
    fn client_gone(&mut self, token: u32) {
        if let Some(flag) = self.gone.get(&token) {
            flag.store(true, Ordering::Relaxed);
        }
    }
}

impl Delays for OffRing {
    fn start(&mut self, delay: Delay, token: u32, stream: &TcpStream, io: &mut Uring) -> bool {
        if let Delay::Sleep(d) = delay {
            io.sleep(d, token);
            return true;
        }
        let runtime = match &self.runtime {
            Some(rt) => rt,
            None => match tokio::runtime::Builder::new_current_thread()
                .thread_name("uring-delay")
                .build()
            {
                Ok(rt) => self.runtime.insert(rt),
                Err(e) => {
                    // No pool: spend it here, holding up this ring only.
                    crate::warn(&format!(
                        "serverlab: cannot start delay threads ({e}); delaying on the ring"
                    ));
                    let spent = delay::perform(delay, stream, &self.shutdown);
                    self.mailbox.post(ended(spent, token));
                    return false;
                }
            },
        };
        // The ring's tick raises the flag when the client has gone.
        let flag = Arc::new(AtomicBool::new(false));
        self.gone.insert(token, flag.clone());
        let (mailbox, shutdown) = (self.mailbox.clone(), self.shutdown.clone());
        runtime.spawn_blocking(move || {
            let gone = |wait_ms: u16| {
                if wait_ms > 0 {
                    std::thread::sleep(Duration::from_millis(wait_ms.into()));
                }
                flag.load(Ordering::Relaxed)
            };
            let spent = delay::perform_with(delay, gone, &shutdown);
            mailbox.post(ended(spent, token));
        });
        false
    }
}

/// What a delay's thread tells the ring.
fn ended(spent: bool, token: u32) -> Post {
    if spent {
        Post::Spent(token)
    } else {
        Post::Abandoned(token)
    }
}
