//! The session's stage machine: what it does next, as [`Session::next`]
//! decides it — serve (frame, delay, apply, reply, yield, read), then
//! close (write what is left), then linger (discard what the peer still
//! sends) — and the stop, the write timeout, an abandoned delay or an
//! eviction cutting it short.

use super::{Io, Session};
use crate::io::{LINGER_BYTES, LINGER_TIME};
use crate::shutdown::Phase;
use serverlab_service::{apply_timed, After, Delay, Frame, Logged, Pushes, Service};
use std::time::Instant;

/// A request at least this large is applied only after every reply before
/// it is written: applying it takes time (kv's MD5 of a large PUT), and one
/// more write is nothing beside its size.
pub(super) const HOLD_ABOVE: usize = 64 * 1024;

/// Where the session is in its life.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Stage {
    /// Serving requests.
    Open,
    /// No more requests: write what is left, then close.
    Closing,
    /// Write side shut: discard what the peer still sends until it ends,
    /// `LINGER_BYTES` arrived, or `until`.
    Lingering { until: Instant, discarded: usize },
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

/// A framed request held until every reply before it is written: it asks
/// for a delay, or is large.
pub(super) struct Held<R> {
    len: usize,
    request: R,
    delay: Option<Delay>,
    /// Its delay was handed to the strategy.
    pub(super) delaying: bool,
}

impl<S: Service> Session<S> {
    /// What to do next.
    pub(crate) fn next(&mut self) -> Io {
        let phase = self.ctx.shutdown.phase();
        if phase == Phase::Aborting || self.abandoned {
            return self.reset();
        }
        if self.write_expired() {
            self.ctx.svc.common().connections.write_timed_out();
            return self.reset();
        }
        if self.idle_marked && self.idle.evicted() {
            self.evicted = true;
        }
        self.output.compact_if_due();
        if self.listening && self.stage == Stage::Open {
            let conn = self.conn.as_mut().expect("session used after finish");
            if self.ctx.svc.pushes(conn, None, None) == Pushes::Cut {
                self.cut_off();
            }
        }
        // Evicted, it reads nothing more, as when draining: it answers the
        // requests it had received (see `close`), then closes.
        let draining = phase == Phase::Draining || self.evicted;
        loop {
            let io = match self.stage {
                Stage::Open => self.serve(draining),
                Stage::Closing => Some(self.close()),
                Stage::Lingering { until, discarded } => Some(self.linger(until, discarded)),
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
            if self.output.over_high_water() {
                return Some(self.send());
            }
            if self.output.replying() {
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
                return Some(self.yield_after_writing());
            }
            if self.starved {
                return self.starve(draining);
            }
            if let Framed::Stopped = self.frame_next() {
                return None;
            }
        }
    }

    /// The budget is spent: write every reply, then yield.
    fn yield_after_writing(&mut self) -> Io {
        if !self.unwritten().is_empty() {
            return self.send();
        }
        self.since_yield = 0;
        Io::Yield
    }

    /// Frame the next buffered request, and apply it unless it must wait
    /// for the replies before it to be written.
    fn frame_next(&mut self) -> Framed {
        let svc = &*self.ctx.svc;
        let conn = self.conn.as_mut().expect("session used after finish");
        match svc.frame(conn, self.input.data(), self.output.buf()) {
            Frame::Ready { len, request } => {
                self.clocks.request_framed();
                if std::mem::take(&mut self.idle_marked) && !self.idle.busy() {
                    // Evicted while its request was on its way to the
                    // session: its bytes had left the socket (a completion
                    // strategy's receive, a read not yet framed), so the
                    // eviction could not see them. The client sent it to
                    // an open connection: it is answered, then the
                    // connection closes (it reads nothing more).
                    self.evicted = true;
                }
                self.answered_evicted |= self.evicted;
                self.framed(len, request)
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

    /// A request was framed: hold it if it asks for a delay or is large
    /// behind unwritten replies, else apply it.
    fn framed(&mut self, len: usize, request: S::Request) -> Framed {
        let conn = self.conn.as_mut().expect("session used after finish");
        let delay = self.ctx.svc.delay(conn, &request);
        let input = &self.input.data()[..len];
        let waker = self.wait_waker.as_ref();
        let waits = delay.is_none() && self.ctx.svc.wait(conn, &request, input, waker).is_some();
        if delay.is_some() || waits || (len >= HOLD_ABOVE && !self.unwritten().is_empty()) {
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

    /// A held request goes once every reply before it is written: first
    /// its delay (handed out once), then its waits (as long as the
    /// service asks), then it is applied.
    fn release_held(&mut self) -> Option<Io> {
        if !self.unwritten().is_empty() {
            return Some(self.send());
        }
        let held = self.held.as_mut().expect("a held request");
        if let (Some(d), false) = (held.delay, held.delaying) {
            held.delaying = true;
            return Some(Io::Delay(d));
        }
        let conn = self.conn.as_mut().expect("session used after finish");
        let input = &self.input.data()[..held.len];
        if let Some(d) = self
            .ctx
            .svc
            .wait(conn, &held.request, input, self.wait_waker.as_ref())
        {
            held.delaying = true;
            let d = match d {
                Delay::Sleep(d) => d,
                other => unreachable!("a wait is a sleep, not {other:?}"),
            };
            self.waiting_until = Some(Instant::now() + d);
            return Some(Io::Wait(d));
        }
        self.waiting_until = None;
        let held = self.held.take().expect("a held request");
        self.apply(held.len, held.request);
        None
    }

    /// No whole request is buffered: close, write, or read more.
    fn starve(&mut self, draining: bool) -> Option<Io> {
        if self.input.len() >= self.ctx.svc.input_limit() {
            let conn = self.conn.as_mut().expect("session used after finish");
            self.ctx.svc.overflow(conn, self.output.buf());
            self.stage = Stage::Closing;
            return None;
        }
        // Draining: what has been read is answered; nothing more is read.
        if self.eof || draining {
            self.stage = Stage::Closing;
            return None;
        }
        if !self.unwritten().is_empty() {
            return Some(self.send());
        }
        if self.take_pushes() {
            return if self.stage == Stage::Open {
                Some(self.send())
            } else {
                None
            };
        }
        let timeout = self.ctx.svc.request_timeout();
        self.clocks.await_request(timeout, true);
        let deadline = self.clocks.request_deadline(timeout);
        if deadline.is_some_and(|d| d <= Instant::now()) {
            let conn = self.conn.as_mut().expect("session used after finish");
            self.ctx.svc.timed_out(conn, self.output.buf());
            self.stage = Stage::Closing;
            return None;
        }
        self.since_yield = 0;
        if self.listening && !self.idle_marked {
            // A subscriber waits for messages, not idle: it is not evicted
            // at the connection cap (its messages would be lost).
        } else if self.idle_marked {
            // What it held was no whole request (a slowloris's bytes).
            self.idle.waits_again();
        } else {
            self.idle.idle();
            self.idle_marked = true;
        }
        Some(Io::Read { deadline })
    }

    /// Before waiting for input: take the messages sent to the connection
    /// unasked (pub/sub) into the output, and note whether it listens for
    /// more (its waker is then the service's to wake). True: there is
    /// something to write, or it was cut off (then it is closing).
    fn take_pushes(&mut self) -> bool {
        let conn = self.conn.as_mut().expect("session used after finish");
        let waker = self.wait_waker.as_ref();
        match self.ctx.svc.pushes(conn, Some(self.output.buf()), waker) {
            Pushes::None => self.listening = false,
            Pushes::Listening => self.listening = true,
            Pushes::Cut => {
                self.cut_off();
                return true;
            }
        }
        !self.unwritten().is_empty()
    }

    /// A subscriber fell too far behind: what it has not been sent is
    /// dropped, and it closes.
    fn cut_off(&mut self) {
        self.listening = false;
        self.output.drop_unwritten();
        self.stage = Stage::Closing;
    }

    /// Write the unwritten replies — once the writes they acknowledge are
    /// durable: until then, wait for the commit; if the log failed, reset
    /// (the replies are never sent).
    fn send(&mut self) -> Io {
        let Some(logged) = self.logged else {
            return Io::Write;
        };
        let settled = match (logged, self.ctx.svc.wal()) {
            (Logged::Ticket(t), Some(wal)) => match wal.settled(t) {
                None => return Io::Commit(t),
                Some(r) => r.is_ok(),
            },
            _ => false,
        };
        if !settled {
            self.abandoned = true;
            return self.reset();
        }
        self.logged = None;
        Io::Write
    }

    fn apply(&mut self, len: usize, request: S::Request) {
        let svc = &*self.ctx.svc;
        let conn = self.conn.as_mut().expect("session used after finish");
        let input = &self.input.data()[..len];
        let after = apply_timed(svc, conn, request, input, self.output.for_a_reply());
        if let Some(l) = svc.logged(conn) {
            self.logged = Some(self.logged.map_or(l, |before| before.then(l)));
        }
        self.input.consume(len);
        self.since_yield += 1;
        self.applied += 1;
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
        if !self.ctx.svc.more(conn, self.output.for_a_reply()) {
            self.output.reply_ended();
        }
    }

    /// Reset the connection, counting what it drops: a request whose delay
    /// was begun but never applied, and applied requests whose replies were
    /// not all written.
    fn reset(&mut self) -> Io {
        self.count_dropped();
        Io::Reset
    }

    /// Closing: write what is left (the rest of a reply being appended
    /// too), then close — lingering when the peer may still be sending, or
    /// it may lose the last replies to a reset.
    fn close(&mut self) -> Io {
        if self.evicted && !self.answered_evicted {
            // Evicted while it waited: it owes nothing.
            return Io::Close;
        }
        while self.output.replying() {
            if self.output.over_high_water() {
                return self.send();
            }
            self.continue_reply();
        }
        if !self.unwritten().is_empty() {
            return self.send();
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

    /// Lingering: read (and discard) until the peer ends, enough arrived,
    /// or the time is up.
    fn linger(&self, until: Instant, discarded: usize) -> Io {
        if self.eof || discarded >= LINGER_BYTES || Instant::now() >= until {
            Io::Close
        } else {
            Io::Read {
                deadline: Some(until),
            }
        }
    }
}
