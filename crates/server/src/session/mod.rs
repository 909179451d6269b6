//! One connection's session: its buffers, its protocol state, and the I/O
//! it needs next. Every transport duty strategies share lives here, once.
//!
//! A strategy drives a connection by asking [`Session::next`] for the next
//! [`Io`] — perform a delay, write the replies, read (until a deadline),
//! half-close, yield, close, reset — carrying it out its own way (a
//! blocking call, a non-blocking one after readiness, an await, a
//! submitted completion), reporting the outcome ([`Session::filled`],
//! [`Session::wrote`], …) and asking again. The session frames, performs
//! nothing itself, and decides everything else the same way for every
//! strategy:
//!
//! - requests are framed, delayed and applied in order. Replies are written
//!   as soon as something could hold them back: when the input runs dry,
//!   before a delay (and before a request large enough to take time to
//!   apply), when they pass a high-water mark (in bytes, or in replies),
//!   before a yield, and before closing. Replies to requests already buffered go out together, so
//!   pipelined requests cost few writes, but no reply waits behind work
//!   that takes time;
//! - a reply too large to append at once (board LIST, kv GET bodies) is
//!   appended a chunk at a time ([`Service::more`]) as the output drains,
//!   so unwritten output stays under the high-water mark plus one chunk;
//! - no read is asked for while replies are unwritten, nor past the
//!   service's input limit: a client that does not read its replies is not
//!   read from, so its memory is bounded by the input limit, the mark and
//!   a chunk;
//! - a request must arrive within the service's request timeout (kv's
//!   header timeout), counted from when every reply so far is written;
//! - replies that make no progress for the write timeout reset the
//!   connection, counted;
//! - a connection closed while its peer may still send closes lingering
//!   (half-close, discard what arrives for a while), so the last replies
//!   are not destroyed by a reset;
//! - once the server stops (draining), nothing more is read: the requests
//!   already read are answered, then the connection closes (lingering);
//!   past the drain limit it is reset, and applied requests whose replies
//!   were not all written are counted;
//! - a delay the strategy abandons (the client has gone, or the drain limit
//!   passed) drops its request unapplied, counted, and resets;
//! - a request that stops the server (board `EXIT`) triggers the stop;
//! - a connection tells the server's idle table (`idle.rs`) when it waits
//!   for a request and when one arrives; evicted at the connection cap
//!   while it waits, it closes, answering first any request it had
//!   received that the eviction could not see (its bytes already taken
//!   from the socket by the strategy).
//!
//! Files: this one is the session and what strategies call on it;
//! `stages.rs` its stage machine (`next`: serve, close, linger);
//! `output.rs` its output buffer and the bounds on it; `clocks.rs` its
//! request and stall clocks and the deadlines they set.
//!
//! One I/O at a time: a strategy reports the outcome of the last [`Io`]
//! before it calls `next` again. In particular the output buffer changes
//! only inside `next`, so a completion-based strategy may hand
//! [`Session::unwritten`] to the kernel and keep it there until the write
//! completes, and received bytes may be copied in with
//! [`Session::receive`] whenever a read is asked for.

mod clocks;
mod output;
mod stages;

use crate::idle;
use crate::shutdown::{Phase, Shutdown};
use crate::Ctx;
use clocks::{earliest, Clocks};
pub use output::OUTPUT_HIGH_WATER;
use output::{Output, SHRINK_ABOVE};
use serverlab_service::wal::Ticket;
use serverlab_service::{Delay, Logged, Peer, Service};
use serverlab_util::InputBuf;
use stages::{Held, Stage};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[cfg(test)]
use {
    crate::io::LINGER_BYTES,
    output::{COMPACT_ABOVE, REPLIES_HIGH_WATER},
    stages::HOLD_ABOVE,
};

/// Initial input buffer; it grows up to the service's input limit.
const INITIAL_INPUT: usize = 4096;
/// Largest single read.
const READ_CHUNK: usize = 64 * 1024;
/// Room to read into while lingering (what arrives is discarded).
const DISCARD_CHUNK: usize = 16 * 1024;

/// What a connection needs next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Io {
    /// Perform this delay (a framed request asked for it; every reply
    /// before it is written), then call `next`, which applies the request.
    /// A strategy that can abandon it part way — the peer has gone (see
    /// `io::gone`), or the server passed its drain limit — reports
    /// [`Session::abandon_delay`] instead.
    Delay(Delay),
    /// The framed request cannot be applied yet (a blocking pop on empty
    /// lists; every reply before it is written): wait this long without
    /// holding a thread others need — sleep on a connection's own thread,
    /// await a timer, or park the connection until
    /// [`Session::deadline`] — or less, if the connection is ready
    /// sooner, then call `next`, which asks the service again.
    Wait(Duration),
    /// The replies waiting to be written acknowledge writes whose log
    /// record is not yet durable: wait until the ticket is settled, as a
    /// delay is waited for, without holding a thread others need (block in
    /// [`Session::wait_commit`] on a connection's own thread, await
    /// [`Session::commit`], or [`Session::register_commit`] a waker that
    /// runs the connection again), then call `next`.
    Commit(Ticket),
    /// Write [`Session::unwritten`]; report [`Session::wrote`], or
    /// [`Session::write_blocked`] when the socket takes nothing now (then
    /// wait until it is writable or [`Session::deadline`]), or
    /// [`Session::write_timed_out`] when the strategy's own bound on a
    /// write expired.
    Write,
    /// Read into [`Session::read_buf`] and report [`Session::filled`], or
    /// [`Session::set_eof`] at end of stream. If nothing has arrived, wait
    /// for input — but not past `deadline`, nor past the stop's next phase
    /// (a strategy wakes waiting reads when the stop starts, and again past
    /// the drain limit); then call `next` again, which deals with the
    /// deadline.
    Read { deadline: Option<Instant> },
    /// Shut the socket's write side (lingering close), then call `next`.
    ShutdownWrite,
    /// The strategy's budget of requests is spent and every reply written:
    /// let other connections run, then call `next`.
    Yield,
    /// Done: close the socket.
    Close,
    /// Done: close the socket with a reset (SO_LINGER 0), dropping any
    /// unsent replies.
    Reset,
}

pub(crate) struct Session<S: Service> {
    ctx: Arc<Ctx<S>>,
    conn: Option<S::Conn>,
    input: InputBuf,
    output: Output,
    clocks: Clocks,
    stage: Stage,
    held: Option<Held<S::Request>>,
    /// Until when the held request waits ([`Io::Wait`]).
    waiting_until: Option<Instant>,
    /// The strategy abandoned a delay: reset.
    abandoned: bool,
    eof: bool,
    /// `frame` found no whole request in the input as it is.
    starved: bool,
    /// Requests applied since the last yield or wait for input.
    since_yield: usize,
    /// Requests applied in all.
    applied: u64,
    /// Requests a strategy runs before it lets others run.
    budget: usize,
    /// This connection in the server's idle table.
    idle: idle::Entry,
    /// It told the table it waits for a request, and has not since said a
    /// request arrived.
    idle_marked: bool,
    /// Evicted at the connection cap: answer what it had received, read
    /// nothing more, close.
    evicted: bool,
    /// It framed a request once evicted (received before the eviction
    /// could see it): it closes as any session does, lingering, so the
    /// reply is not lost to a reset.
    answered_evicted: bool,
    /// What the writes whose replies are unwritten came to in the log.
    logged: Option<Logged>,
    /// How an event loop is told that a commit this connection waits for
    /// is settled (see [`Session::register_commit`]).
    commit_waker: Option<std::task::Waker>,
    /// Given to the service with a wait ([`Session::on_wait`]), and to
    /// keep while it listens for pushed messages.
    wait_waker: Option<std::task::Waker>,
    /// The service may push it messages (a subscriber): a read for a
    /// request must also end when the wait waker is woken.
    listening: bool,
}

impl<S: Service> Session<S> {
    /// A session for a connection just admitted (and counted) from `peer`.
    pub(crate) fn new(ctx: &Arc<Ctx<S>>, peer: impl Into<Peer>) -> Self {
        Session {
            conn: Some(ctx.svc.open(peer)),
            ctx: ctx.clone(),
            input: InputBuf::new(),
            output: Output::default(),
            clocks: Clocks::default(),
            stage: Stage::Open,
            held: None,
            waiting_until: None,
            abandoned: false,
            eof: false,
            starved: false,
            since_yield: 0,
            applied: 0,
            budget: usize::MAX,
            idle: ctx.idle.join(),
            idle_marked: false,
            evicted: false,
            answered_evicted: false,
            logged: None,
            commit_waker: None,
            wait_waker: None,
            listening: false,
        }
    }

    /// The connection's socket (eviction passes over one with input
    /// unread; it must stay open until the session finishes), and how to
    /// wake the connection when it is evicted at the connection cap (it
    /// then closes at its next step). A session without them is never
    /// evicted.
    pub(crate) fn on_evict(
        &self,
        socket: std::os::fd::BorrowedFd<'_>,
        wake: impl Fn() + Send + Sync + 'static,
    ) {
        use std::os::fd::AsRawFd;
        self.idle.on_evict(socket.as_raw_fd(), Box::new(wake));
    }

    /// How an event loop runs this connection again once the commit it
    /// waits for is settled: `waker` is woken then (from the log's thread).
    pub(crate) fn on_commit(&mut self, waker: std::task::Waker) {
        self.commit_waker = Some(waker);
    }

    /// How an event loop that parks a waiting connection ([`Io::Wait`])
    /// until its deadline runs it again sooner: the service wakes `waker`
    /// when the request can go (a writer served the blocked pop).
    pub(crate) fn on_wait(&mut self, waker: std::task::Waker) {
        self.wait_waker = Some(waker);
    }

    /// Blocks this thread until `ticket` is settled (the connection's own
    /// thread: it holds no thread another connection needs).
    pub(crate) fn wait_commit(&self, ticket: Ticket) {
        if let Some(wal) = self.ctx.svc.wal() {
            // Committed or failed: `next` tells them apart.
            let _ = wal.wait(ticket);
        }
    }

    /// A future ready once `ticket` is settled; it borrows nothing.
    pub(crate) fn commit(&self, ticket: Ticket) -> Option<serverlab_service::wal::Commit> {
        self.ctx.svc.wal().map(|wal| wal.commit(ticket))
    }

    /// Whether the strategy itself commits at the end of its pass
    /// (`Committer::Caller`) rather than waiting for the log's thread.
    pub(crate) fn commits_in_pass(&self) -> bool {
        self.ctx
            .svc
            .wal()
            .is_some_and(|w| w.committer() == serverlab_service::wal::Committer::Caller)
    }

    /// Whether `ticket` is committed, or the log failed (`next` tells them
    /// apart).
    pub(crate) fn commit_settled(&self, ticket: Ticket) -> bool {
        self.ctx
            .svc
            .wal()
            .is_none_or(|w| w.settled(ticket).is_some())
    }

    /// Asks for the waker given to [`Session::on_commit`] to be woken once
    /// `ticket` is settled. False when it already is (or no waker was
    /// given, when this blocks until it is): call `next` now.
    pub(crate) fn register_commit(&self, ticket: Ticket) -> bool {
        match (&self.commit_waker, self.ctx.svc.wal()) {
            (Some(waker), Some(wal)) => wal.register(ticket, waker),
            _ => {
                self.wait_commit(ticket);
                false
            }
        }
    }

    /// Yield (after writing every reply) once `budget` requests were
    /// applied without the input running dry: a pool's fairness.
    pub(crate) fn with_budget(mut self, budget: usize) -> Self {
        self.budget = budget.max(1);
        self
    }

    /// When `next` must be called again even if the socket stays quiet:
    /// the awaited request's deadline, the stalled replies' deadline, or
    /// the end of lingering, whichever is first. A strategy that waits for
    /// readiness wakes the connection then.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        let read = match self.stage {
            Stage::Lingering { until, .. } => Some(until),
            _ => self.clocks.request_deadline(self.ctx.svc.request_timeout()),
        };
        let unwritten = !self.unwritten().is_empty();
        let io = earliest(
            read,
            self.clocks
                .write_deadline(self.ctx.write_timeout, unwritten),
        );
        earliest(io, self.waiting_until)
    }

    /// The write timeout has passed for the unwritten replies.
    fn write_expired(&self) -> bool {
        let unwritten = !self.unwritten().is_empty();
        self.clocks.write_expired(self.ctx.write_timeout, unwritten)
    }

    /// Space to read into: never lets unconsumed input exceed the limit.
    /// The buffer starts small and grows with the data it must hold.
    pub(crate) fn read_buf(&mut self) -> &mut [u8] {
        if let Stage::Lingering { .. } = self.stage {
            self.input.consume(self.input.len());
            self.input.reserve(DISCARD_CHUNK);
            return self.input.spare();
        }
        // A large request has been answered: give its buffer back, so an
        // idle connection costs a small buffer, not its largest.
        self.input.release_if_idle(SHRINK_ABOVE);
        let unconsumed = self.input.len();
        let room = self.ctx.svc.input_limit().saturating_sub(unconsumed);
        let want = room.min(unconsumed.max(INITIAL_INPUT)).min(READ_CHUNK);
        self.input.reserve(want);
        let spare = self.input.spare();
        let free = spare.len().min(room);
        &mut spare[..free]
    }

    /// `n` bytes were read into `read_buf`.
    pub(crate) fn filled(&mut self, n: usize) {
        self.ctx.svc.common().bytes.received(n);
        match &mut self.stage {
            Stage::Lingering { discarded, .. } => *discarded += n,
            _ => {
                self.input.filled(n);
                self.starved = false;
                if self.idle_marked && n > 0 {
                    self.idle.holding();
                }
            }
        }
    }

    /// Bytes that arrived elsewhere (a completion-based strategy's own
    /// buffers) copied in, as far as `read_buf` has room; returns how many
    /// were taken. The rest must be offered again at the next read.
    pub(crate) fn receive(&mut self, bytes: &[u8]) -> usize {
        let buf = self.read_buf();
        let n = buf.len().min(bytes.len());
        buf[..n].copy_from_slice(&bytes[..n]);
        self.filled(n);
        n
    }

    /// The delay the last [`Io::Delay`] asked for was abandoned part way:
    /// the client has gone, or the server passed its drain limit. Its
    /// request is dropped unapplied (counted), and `next` resets the
    /// connection.
    pub(crate) fn abandon_delay(&mut self) {
        self.abandoned = true;
    }

    /// The client of the request that waits ([`Io::Wait`], a blocked pop)
    /// has left (it ended its side, or the connection is gone): the
    /// request is dropped unapplied, and `next` resets the connection
    /// (which takes it out of the waiters, so what it would have popped
    /// goes to another). Not counted as an abandoned delay.
    pub(crate) fn abandon_wait(&mut self) {
        if let Some(h) = self.held.as_mut() {
            h.delaying = false;
        }
        self.abandoned = true;
    }

    /// Requests applied on this connection so far.
    pub(crate) fn applied(&self) -> u64 {
        self.applied
    }

    /// The server's stop signal: a strategy performing a delay gives it up
    /// once the stop passes its drain limit ([`Phase::Aborting`]).
    pub(crate) fn shutdown(&self) -> &Shutdown {
        &self.ctx.shutdown
    }

    /// The connection listens for messages the service pushes (a pub/sub
    /// subscriber): a wait for input or for the socket to take output
    /// must also end when the waker given to [`Session::on_wait`] is
    /// woken, so that `next` writes them (or closes a subscriber cut off).
    pub(crate) fn listening(&self) -> bool {
        self.listening
    }

    /// A read asked for now waits for a request (not a lingering close's).
    pub(crate) fn reading_requests(&self) -> bool {
        self.stage == Stage::Open
    }

    /// Whether bytes a completion strategy received while the session was
    /// not waiting for them may still be handed to it: while it reads
    /// requests, the server runs and it is not evicted. (Once the stop
    /// starts it reads nothing more: a client that keeps sending would
    /// otherwise feed it past the drain limit.)
    pub(crate) fn takes_held_input(&self) -> bool {
        self.stage == Stage::Open && !self.evicted && self.ctx.shutdown.phase() == Phase::Running
    }

    /// The peer closed its side: no more input will come.
    pub(crate) fn set_eof(&mut self) {
        self.eof = true;
    }

    /// Replies not yet written.
    pub(crate) fn unwritten(&self) -> &[u8] {
        self.output.unwritten()
    }

    /// `n` bytes of `unwritten` went out.
    pub(crate) fn wrote(&mut self, n: usize) {
        self.ctx.svc.common().bytes.sent(n);
        if n > 0 {
            self.clocks.progressed();
        }
        if self.output.wrote(n) {
            let timeout = self.ctx.svc.request_timeout();
            self.clocks.start_request_clock(timeout, true);
        }
    }

    /// The socket would take none of the unwritten replies now: the stall
    /// clock starts, unless it already runs (any progress stops it).
    pub(crate) fn write_blocked(&mut self) {
        if !self.unwritten().is_empty() {
            self.clocks.write_blocked();
        }
    }

    /// A write made no progress for the strategy's own bound (a socket
    /// send timeout, an awaited timer set to the write timeout): `next`
    /// resets the connection.
    pub(crate) fn write_timed_out(&mut self) {
        self.clocks.write_timed_out();
    }

    /// The server's write timeout, for strategies that bound each write
    /// themselves.
    pub(crate) fn write_timeout(&self) -> Option<Duration> {
        self.ctx.write_timeout
    }

    /// Once its unwritten replies are written, the session's next step is
    /// a read: it is serving (not draining), no whole request is buffered
    /// or held, no reply is still being appended, the input has room, and
    /// no yield is due. A hint for a completion-based strategy deciding
    /// whether to wait for more than a send's completion (a wrong answer
    /// costs it a wait, never a reply).
    pub(crate) fn reads_next(&self) -> bool {
        self.stage == Stage::Open
            && self.starved
            && !self.eof
            && self.held.is_none()
            && !self.output.replying()
            && self.input.len() < self.ctx.svc.input_limit()
            && self.since_yield < self.budget
            && self.ctx.shutdown.phase() == Phase::Running
    }

    /// Count (once) what a connection cut off drops, and drop it.
    fn count_dropped(&mut self) {
        let counts = &self.ctx.svc.common().connections;
        if self.held.take().is_some_and(|h| h.delaying) {
            counts.delay_abandoned();
        }
        let unanswered = self.output.drop_unwritten();
        if unanswered > 0 {
            counts.unanswered_on_reset(unanswered as u64);
        }
    }

    /// The connection is closed: hand the protocol state back to the
    /// service and count it. Idempotent; dropping the session does it too.
    /// Cut off past the drain limit without being asked (a strategy that
    /// drops its sessions then), it counts what it drops as a reset does.
    pub(crate) fn finish(&mut self) {
        if self.conn.is_some() && self.ctx.shutdown.phase() == Phase::Aborting {
            self.count_dropped();
        }
        if let Some(conn) = self.conn.take() {
            self.ctx.idle.leave(&self.idle);
            self.ctx.svc.close(conn);
            self.ctx.svc.common().connections.closed();
            self.ctx.room.freed();
        }
    }
}

impl<S: Service> Drop for Session<S> {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests;
