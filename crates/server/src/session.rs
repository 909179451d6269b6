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
//!   while it waits (so it owes no reply), it closes.
//!
//! One I/O at a time: a strategy reports the outcome of the last [`Io`]
//! before it calls `next` again. In particular the output buffer changes
//! only inside `next`, so a completion-based strategy may hand
//! [`Session::unwritten`] to the kernel and keep it there until the write
//! completes, and received bytes may be copied in with
//! [`Session::receive`] whenever a read is asked for.

use crate::idle;
use crate::io::{LINGER_BYTES, LINGER_TIME};
use crate::shutdown::{Phase, Shutdown};
use crate::Ctx;
use serverlab_service::{apply_timed, After, Delay, Frame, Service, REPLY_CHUNK};
use serverlab_util::InputBuf;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Initial input buffer; it grows up to the service's input limit.
const INITIAL_INPUT: usize = 4096;
/// An empty input or output buffer larger than this is released.
const SHRINK_ABOVE: usize = 256 * 1024;
/// Largest single read.
const READ_CHUNK: usize = 64 * 1024;
/// Room to read into while lingering (what arrives is discarded).
const DISCARD_CHUNK: usize = 16 * 1024;
/// Unwritten output beyond which replies are written before more work: a
/// connection holds at most this much plus one reply chunk unwritten.
pub const OUTPUT_HIGH_WATER: usize = 256 * 1024;
/// Replies unwritten beyond which they are written before more work, so
/// the record of where each ends (what a reset counts) stays small.
const REPLIES_HIGH_WATER: usize = 1024;
/// Written output at the front of the buffer beyond which it is dropped
/// (the unwritten rest moved down), so a client reading slowly but never
/// quite catching up does not make the buffer grow.
const COMPACT_ABOVE: usize = REPLY_CHUNK;
/// A request at least this large is applied only after every reply before
/// it is written: applying it takes time (kv's MD5 of a large PUT), and one
/// more write is nothing beside its size.
const HOLD_ABOVE: usize = 64 * 1024;

/// What a connection needs next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Io {
    /// Perform this delay (a framed request asked for it; every reply
    /// before it is written), then call `next`, which applies the request.
    /// A strategy that can abandon it part way — the peer has gone (see
    /// `io::gone`), or the server passed its drain limit — reports
    /// [`Session::abandon_delay`] instead.
    Delay(Delay),
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

/// What framing the next request came to.
enum Framed {
    /// A request is held until the replies before it are written.
    Held,
    /// A request was applied; the session serves on.
    Applied,
    /// No whole request is buffered.
    Starved,
    /// The session stopped serving (the input was refused, or a request
    /// closed the connection).
    Stopped,
}

/// Where the session is in its life.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stage {
    /// Serving requests.
    Open,
    /// No more requests: write what is left, then close.
    Closing,
    /// Write side shut: discard what the peer still sends until it ends,
    /// `LINGER_BYTES` arrived, or `until`.
    Lingering { until: Instant, discarded: usize },
}

/// A framed request held until every reply before it is written: it asks
/// for a delay, or is large.
struct Held<R> {
    len: usize,
    request: R,
    delay: Option<Delay>,
    /// Its delay was handed to the strategy.
    delaying: bool,
}

pub(crate) struct Session<S: Service> {
    ctx: Arc<Ctx<S>>,
    conn: Option<S::Conn>,
    input: InputBuf,
    output: Vec<u8>,
    written: usize,
    /// Where each whole reply in `output` not yet wholly written ends:
    /// what a reset counts as unanswered. At most [`REPLIES_HIGH_WATER`].
    ends: Vec<usize>,
    /// A reply is being appended: applied, and `more` has not yet said it
    /// is whole.
    replying: bool,
    held: Option<Held<S::Request>>,
    /// The strategy abandoned a delay: reset.
    abandoned: bool,
    stage: Stage,
    eof: bool,
    /// `frame` found no whole request in the input as it is.
    starved: bool,
    /// Requests applied since the last yield or wait for input.
    since_yield: usize,
    /// Requests a strategy runs before it lets others run.
    budget: usize,
    /// A request is awaited: the input ran dry since the last was framed.
    awaiting: bool,
    /// When the awaited request's clock started.
    waiting_since: Option<Instant>,
    /// When the socket last refused unwritten replies, with no progress
    /// since.
    stalled_since: Option<Instant>,
    /// The strategy's own bound on a write expired.
    write_expired: bool,
    /// This connection in the server's idle table.
    idle: idle::Entry,
    /// It told the table it waits for a request, and has not since said a
    /// request arrived.
    idle_marked: bool,
    /// Evicted at the connection cap: close.
    evicted: bool,
}

impl<S: Service> Session<S> {
    /// A session for a connection just admitted (and counted) from `peer`.
    pub(crate) fn new(ctx: &Arc<Ctx<S>>, peer: SocketAddr) -> Self {
        Session {
            conn: Some(ctx.svc.open(peer)),
            ctx: ctx.clone(),
            input: InputBuf::new(),
            output: Vec::new(),
            written: 0,
            ends: Vec::new(),
            replying: false,
            held: None,
            abandoned: false,
            stage: Stage::Open,
            eof: false,
            starved: false,
            since_yield: 0,
            budget: usize::MAX,
            awaiting: false,
            waiting_since: None,
            stalled_since: None,
            write_expired: false,
            idle: ctx.idle.join(),
            idle_marked: false,
            evicted: false,
        }
    }

    /// How to wake this connection when it is evicted at the connection
    /// cap (it then closes at its next step). A session without one is
    /// never evicted.
    pub(crate) fn on_evict(&self, wake: impl Fn() + Send + Sync + 'static) {
        self.idle.on_evict(Box::new(wake));
    }

    /// Yield (after writing every reply) once `budget` requests were
    /// applied without the input running dry: a pool's fairness.
    pub(crate) fn with_budget(mut self, budget: usize) -> Self {
        self.budget = budget.max(1);
        self
    }

    /// What to do next.
    pub(crate) fn next(&mut self) -> Io {
        let phase = self.ctx.shutdown.phase();
        if phase == Phase::Aborting || self.abandoned {
            return self.reset();
        }
        if self.write_expired || self.stall_expired() {
            self.ctx.svc.common().connections.write_timed_out();
            return self.reset();
        }
        if self.evicted || (self.idle_marked && self.idle.evicted()) {
            // Nothing is unanswered: it was evicted while waiting.
            self.evicted = true;
            return Io::Close;
        }
        if self.written >= COMPACT_ABOVE {
            self.compact();
        }
        let draining = phase == Phase::Draining;
        loop {
            let io = match self.stage {
                Stage::Open => self.serve(draining),
                Stage::Closing => Some(self.close()),
                Stage::Lingering { until, discarded } => Some(
                    if self.eof || discarded >= LINGER_BYTES || Instant::now() >= until {
                        Io::Close
                    } else {
                        Io::Read {
                            deadline: Some(until),
                        }
                    },
                ),
            };
            if let Some(io) = io {
                return io;
            }
        }
    }

    /// The I/O serving requests needs next; `None` once the session stops
    /// serving.
    fn serve(&mut self, draining: bool) -> Option<Io> {
        loop {
            if self.over_high_water() {
                return Some(Io::Write);
            }
            if self.replying {
                self.continue_reply();
                continue;
            }
            if self.held.is_some() {
                match self.release_held() {
                    Some(io) => return Some(io),
                    None if self.stage != Stage::Open => return None,
                    None => continue,
                }
            }
            if self.since_yield >= self.budget {
                if !self.unwritten().is_empty() {
                    return Some(Io::Write);
                }
                self.since_yield = 0;
                return Some(Io::Yield);
            }
            if self.starved {
                return self.starve(draining);
            }
            if let Framed::Stopped = self.frame_next() {
                return None;
            }
        }
    }

    /// Frame the next buffered request, and apply it unless it must wait
    /// for the replies before it to be written.
    fn frame_next(&mut self) -> Framed {
        let svc = &*self.ctx.svc;
        let conn = self.conn.as_mut().expect("session used after finish");
        match svc.frame(conn, self.input.data(), &mut self.output) {
            Frame::Ready { len, request } => {
                self.awaiting = false;
                self.waiting_since = None;
                if std::mem::take(&mut self.idle_marked) && !self.idle.busy() {
                    // Evicted just before the request arrived: it is not
                    // applied, and the connection closes.
                    self.evicted = true;
                    self.stage = Stage::Closing;
                    return Framed::Stopped;
                }
                let delay = svc.delay(conn, &request);
                if delay.is_some() || (len >= HOLD_ABOVE && self.written < self.output.len()) {
                    self.held = Some(Held {
                        len,
                        request,
                        delay,
                        delaying: false,
                    });
                    return Framed::Held;
                }
                self.apply(len, request);
                if self.stage == Stage::Open {
                    Framed::Applied
                } else {
                    Framed::Stopped
                }
            }
            Frame::Incomplete => {
                self.starved = true;
                Framed::Starved
            }
            Frame::Close => {
                self.stage = Stage::Closing;
                Framed::Stopped
            }
        }
    }

    /// A held request goes once every reply before it is written: first
    /// its delay (handed out once), then it is applied.
    fn release_held(&mut self) -> Option<Io> {
        if !self.unwritten().is_empty() {
            return Some(Io::Write);
        }
        let held = self.held.as_mut().expect("a held request");
        if let (Some(d), false) = (held.delay, held.delaying) {
            held.delaying = true;
            return Some(Io::Delay(d));
        }
        let held = self.held.take().expect("a held request");
        self.apply(held.len, held.request);
        None
    }

    /// No whole request is buffered: close, write, or read more.
    fn starve(&mut self, draining: bool) -> Option<Io> {
        if self.input.len() >= self.ctx.svc.input_limit() {
            let conn = self.conn.as_mut().expect("session used after finish");
            self.ctx.svc.overflow(conn, &mut self.output);
            self.stage = Stage::Closing;
            return None;
        }
        // Draining: what has been read is answered; nothing more is read.
        if self.eof || draining {
            self.stage = Stage::Closing;
            return None;
        }
        if !self.unwritten().is_empty() {
            return Some(Io::Write);
        }
        self.awaiting = true;
        self.start_request_clock();
        let deadline = self.request_deadline();
        if deadline.is_some_and(|d| d <= Instant::now()) {
            let conn = self.conn.as_mut().expect("session used after finish");
            self.ctx.svc.timed_out(conn, &mut self.output);
            self.stage = Stage::Closing;
            return None;
        }
        self.since_yield = 0;
        if !self.idle_marked {
            self.idle.idle();
            self.idle_marked = true;
        }
        Some(Io::Read { deadline })
    }

    fn apply(&mut self, len: usize, request: S::Request) {
        let svc = &*self.ctx.svc;
        let conn = self.conn.as_mut().expect("session used after finish");
        let input = &self.input.data()[..len];
        room_for_a_part(&mut self.output);
        let after = apply_timed(svc, conn, request, input, &mut self.output);
        self.input.consume(len);
        self.since_yield += 1;
        self.replying = true;
        match after {
            After::Continue => {}
            After::Close => self.stage = Stage::Closing,
            After::Shutdown => {
                self.ctx.shutdown.trigger();
                self.stage = Stage::Closing;
            }
        }
    }

    /// Append the next part of the reply being appended, or note where it
    /// ended.
    fn continue_reply(&mut self) {
        let conn = self.conn.as_mut().expect("session used after finish");
        room_for_a_part(&mut self.output);
        if !self.ctx.svc.more(conn, &mut self.output) {
            self.replying = false;
            // An empty reply is answered already.
            if self.output.len() > self.written {
                self.ends.push(self.output.len());
            }
        }
    }

    /// Drop the written front of the output.
    fn compact(&mut self) {
        let written = self.written;
        self.output.drain(..written);
        self.ends.retain(|&e| e > written);
        self.ends.iter_mut().for_each(|e| *e -= written);
        self.written = 0;
    }

    /// Reset the connection, counting what it drops: a request whose delay
    /// was begun but never applied, and applied requests whose replies were
    /// not all written.
    fn reset(&mut self) -> Io {
        self.count_dropped();
        Io::Reset
    }

    /// Count (once) what a connection cut off drops, and drop it.
    fn count_dropped(&mut self) {
        let counts = &self.ctx.svc.common().connections;
        if self.held.take().is_some_and(|h| h.delaying) {
            counts.delay_abandoned();
        }
        let whole = self.ends.len() - self.ends.partition_point(|&e| e <= self.written);
        let unanswered = whole + usize::from(self.replying);
        if unanswered > 0 {
            counts.unanswered_on_reset(unanswered as u64);
        }
        self.ends.clear();
        self.replying = false;
        self.output.clear();
        self.written = 0;
    }

    /// Closing: write what is left (the rest of a reply being appended
    /// too), then close — lingering when the peer may still be sending, or
    /// it may lose the last replies to a reset.
    fn close(&mut self) -> Io {
        if self.evicted {
            return Io::Close;
        }
        while self.replying {
            if self.over_high_water() {
                return Io::Write;
            }
            self.continue_reply();
        }
        if !self.unwritten().is_empty() {
            return Io::Write;
        }
        if self.eof {
            return Io::Close;
        }
        self.stage = Stage::Lingering {
            until: Instant::now() + LINGER_TIME,
            discarded: 0,
        };
        Io::ShutdownWrite
    }

    /// The request clock runs from when the server is ready for a request
    /// (accepted, or the last one framed) and has written every reply,
    /// whether or not any of it has arrived: an idle connection times out
    /// like a slow one, but a client slowly reading a large reply is not
    /// charged for it.
    fn start_request_clock(&mut self) {
        if self.awaiting
            && self.waiting_since.is_none()
            && self.ctx.svc.request_timeout().is_some()
            && self.unwritten().is_empty()
        {
            self.waiting_since = Some(Instant::now());
        }
    }

    /// When the awaited request must be complete, if the service limits it.
    fn request_deadline(&self) -> Option<Instant> {
        Some(self.waiting_since? + self.ctx.svc.request_timeout()?)
    }

    /// When unwritten replies, stalled since the socket last refused them,
    /// are given up on, if the server has a write timeout.
    fn write_deadline(&self) -> Option<Instant> {
        if self.unwritten().is_empty() {
            return None;
        }
        Some(self.stalled_since? + self.ctx.write_timeout?)
    }

    fn stall_expired(&self) -> bool {
        self.stalled_since.is_some() && self.write_deadline().is_some_and(|d| d <= Instant::now())
    }

    /// When `next` must be called again even if the socket stays quiet:
    /// the awaited request's deadline, the stalled replies' deadline, or
    /// the end of lingering, whichever is first. A strategy that waits for
    /// readiness wakes the connection then.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        let read = match self.stage {
            Stage::Lingering { until, .. } => Some(until),
            _ => self.request_deadline(),
        };
        match (read, self.write_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
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
        match &mut self.stage {
            Stage::Lingering { discarded, .. } => *discarded += n,
            _ => {
                self.input.filled(n);
                self.starved = false;
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

    /// The server's stop signal: a strategy performing a delay gives it up
    /// once the stop passes its drain limit ([`Phase::Aborting`]).
    pub(crate) fn shutdown(&self) -> &Shutdown {
        &self.ctx.shutdown
    }

    /// A read asked for now waits for a request (not a lingering close's).
    pub(crate) fn reading_requests(&self) -> bool {
        self.stage == Stage::Open
    }

    /// The peer closed its side: no more input will come.
    pub(crate) fn set_eof(&mut self) {
        self.eof = true;
    }

    /// Replies not yet written.
    pub(crate) fn unwritten(&self) -> &[u8] {
        &self.output[self.written..]
    }

    /// `n` bytes of `unwritten` went out.
    pub(crate) fn wrote(&mut self, n: usize) {
        if n > 0 {
            self.stalled_since = None;
        }
        self.written += n;
        if self.written == self.output.len() {
            if self.output.capacity() > SHRINK_ABOVE {
                // A large reply has gone out: give its buffer back, so an
                // idle connection costs a small buffer, not its largest.
                self.output = Vec::new();
            } else {
                self.output.clear();
            }
            self.written = 0;
            self.ends.clear();
            self.start_request_clock();
        } else {
            // Part of it: forget the replies now wholly written.
            let answered = self.ends.partition_point(|&e| e <= self.written);
            self.ends.drain(..answered);
        }
    }

    /// The socket would take none of the unwritten replies now: the stall
    /// clock starts, unless it already runs (any progress stops it).
    pub(crate) fn write_blocked(&mut self) {
        if self.stalled_since.is_none() && !self.unwritten().is_empty() {
            self.stalled_since = Some(Instant::now());
        }
    }

    /// A write made no progress for the strategy's own bound (a socket
    /// send timeout, an awaited timer set to the write timeout): `next`
    /// resets the connection.
    pub(crate) fn write_timed_out(&mut self) {
        self.write_expired = true;
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
            && !self.replying
            && self.input.len() < self.ctx.svc.input_limit()
            && self.since_yield < self.budget
            && self.ctx.shutdown.phase() == Phase::Running
    }

    /// Enough is unwritten to write before doing more: the byte mark, or
    /// as many replies (so the record of where they end stays small).
    fn over_high_water(&self) -> bool {
        self.output.len() - self.written >= OUTPUT_HIGH_WATER
            || self.ends.len() >= REPLIES_HIGH_WATER
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
        }
    }
}

/// Make room for a reply or a part of one (at most [`REPLY_CHUNK`] but for
/// a single reply or LIST entry larger than that) in a large buffer, by
/// exactly that much: appending would double it, and a buffer held at the
/// mark would then hold twice the mark. Small buffers grow as usual, and a
/// buffer with room is left alone: one comparison per request.
#[inline]
fn room_for_a_part(output: &mut Vec<u8>) {
    if output.len() >= REPLY_CHUNK {
        output.reserve_exact(REPLY_CHUNK);
    }
}

impl<S: Service> Drop for Session<S> {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests;
