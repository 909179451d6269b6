//! One client as the driver runs it (its [`Conversation`]): a protocol's
//! [`Exchange`] metered by the harness — when requests may go out
//! (pipeline depth, pacing or the open loop's schedule, the run's request
//! budget), how many a connection carries, the requests in flight with
//! their clocks (intended send time, when their connection had room,
//! actual send), recording into its loop's recorder, its own per-second
//! counts, its checks and its errors.

use super::exchange::{Exchange, Received};
use super::pace::Pacer;
use super::{Connections, Plan};
use crate::checks::Checks;
use crate::driver::stamp::Receipt;
use crate::driver::{Conversation, Failure};
use crate::live::ErrorAt;
use crate::record::{Recorder, Span, Timing};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Error descriptions a client keeps; the rest are only counted.
const ERRORS_KEPT: usize = 10;

/// A client's errors: the first few described, all counted.
#[derive(Debug, Default)]
pub struct ErrorLog {
    pub kept: Vec<String>,
    pub count: u64,
}

impl ErrorLog {
    pub fn push(&mut self, what: String) {
        self.count += 1;
        if self.kept.len() < ERRORS_KEPT {
            self.kept.push(what);
        }
    }
}

/// Requests sent, by when they went.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Sends {
    /// During the warm-up (their replies are checked, not counted).
    pub warmup: u64,
    /// In the window.
    pub window: u64,
    /// Of those sent in the window, those due before it opened: the
    /// warm-up's backlog, sent late (an open loop that fell behind).
    pub backlog: u64,
}

impl Sends {
    /// A request with these clocks went.
    fn count(&mut self, span: &Span, timing: &Timing) {
        if timing.sent < span.start {
            self.warmup += 1;
        } else if span.contains(timing.sent) {
            self.window += 1;
            self.backlog += u64::from(timing.intended < span.start);
        }
    }

    pub fn add(&mut self, other: Sends) {
        self.warmup += other.warmup;
        self.window += other.window;
        self.backlog += other.backlog;
    }
}

/// A request in flight: its operation, its clocks, and what its reply
/// must be.
struct InFlight<S> {
    op: usize,
    timing: Timing,
    sent: S,
    /// The `now` of the `fill` that appended it, and the clock read
    /// just before the send call that took it
    /// ([`Conversation::handed`]; the fill's `now` until then).
    filled: Instant,
    handed: Instant,
}

impl<S> InFlight<S> {
    /// The client's own share of its latency on the way out: from when
    /// it was due (or its connection had room) until it went, and then
    /// from its fill until the send call. Worked out only for a reply in
    /// the share's sample: two clock readings kept per request are
    /// cheaper than a subtraction.
    fn own(&self) -> Duration {
        let t = &self.timing;
        t.sent.saturating_duration_since(t.ready)
            + self.handed.saturating_duration_since(self.filled)
    }
}

pub(crate) struct Metered<'r, E: Exchange> {
    pub(crate) exchange: E,
    plan: &'r Plan,
    /// Requests left to claim across all clients (a run bounded by a
    /// request count).
    budget: Option<&'r AtomicU64>,
    inflight: VecDeque<InFlight<E::Sent>>,
    pacer: Pacer,
    /// When a paced client that is waiting for its slot (or its next
    /// request's intended time) wants to send.
    due: Option<Instant>,
    /// The measured window.
    span: Span,
    /// Requests sent, in the warm-up and in the window.
    pub(crate) sent: Sends,
    /// Replies recorded, in all and per second of the window.
    pub(crate) total: u64,
    pub(crate) per_second: Vec<u64>,
    /// Since when the connection has had room for another request (a
    /// request due earlier waited for the server, not for the client).
    room_at: Instant,
    pub(crate) checks: Checks,
    pub(crate) errors: ErrorLog,
    pub(crate) last_reply: Option<Instant>,
    /// When the last reply counted in the window came.
    pub(crate) last_counted: Option<Instant>,
    /// Requests sent on the current connection.
    sent_here: usize,
    /// The exchange has nothing more for the current connection.
    ended: bool,
    /// A request already claimed from the budget: a new connection's
    /// first, claimed when it was started.
    ticket: bool,
    /// With a connection per request: when its connection began to open,
    /// where the request's latency starts.
    opened_at: Option<Instant>,
    /// The budget ran out: this client is done.
    exhausted: bool,
    /// Not yet noted in the recorder (for a watcher, [`crate::live`]):
    /// requests sent in the window by operation, errors.
    unnoted_sent: Vec<u64>,
    unnoted_errors: Vec<ErrorAt>,
    unnoted: bool,
    /// When the last recorded reply's request went out (for the gaps
    /// between sends the verdict tests, under random arrivals only).
    last_sent: Option<Instant>,
    /// Whether the replies being taken are in the client's share's
    /// sample and when the kernel received them.
    arrived: Receipt,
}

impl<'r, E: Exchange> Metered<'r, E> {
    /// Client `index` of `clients`.
    pub(crate) fn new(
        exchange: E,
        plan: &'r Plan,
        budget: Option<&'r AtomicU64>,
        (index, clients): (usize, usize),
        start: Instant,
    ) -> Self {
        Metered {
            exchange,
            plan,
            budget,
            inflight: VecDeque::with_capacity(plan.pacing.pipeline.max(1)),
            pacer: Pacer::new(&plan.pacing, index, clients, plan.seed, start),
            due: None,
            span: plan.span(start),
            sent: Sends::default(),
            total: 0,
            per_second: Vec::new(),
            room_at: start,
            checks: Checks::new(plan.verify),
            errors: ErrorLog::default(),
            last_reply: None,
            last_counted: None,
            sent_here: 0,
            ended: false,
            ticket: false,
            opened_at: None,
            exhausted: false,
            unnoted_sent: Vec::new(),
            unnoted_errors: Vec::new(),
            unnoted: false,
            last_sent: None,
            arrived: Receipt::Unsampled,
        }
    }

    /// Count the run from `start` (set once every connection is open).
    pub(crate) fn restart(&mut self, start: Instant) {
        self.span = self.plan.span(start);
        self.pacer.restart(start);
        self.room_at = start;
    }

    /// The clocks of a request that goes out at `at` (its connection begun
    /// then, if it has one of its own), due at `due` if paced.
    fn timing(&self, due: Option<Instant>, at: Instant) -> Timing {
        match due {
            Some(intended) if self.pacer.is_open() => Timing {
                intended,
                ready: self.room_at.max(intended),
                sent: at,
            },
            _ => Timing {
                intended: at,
                ready: at,
                sent: at,
            },
        }
    }

    /// Count a recorded reply among this client's own figures.
    fn counted(&mut self, now: Instant) {
        let sec = self.span.second(now);
        if self.per_second.len() <= sec {
            self.per_second.resize(sec + 1, 0);
        }
        self.per_second[sec] += 1;
        self.total += 1;
        self.last_counted = Some(now);
    }

    /// A request of `op` sent in the window, for the recorder to note.
    fn note_sent(&mut self, op: usize) {
        if self.unnoted_sent.len() <= op {
            self.unnoted_sent.resize(op + 1, 0);
        }
        self.unnoted_sent[op] += 1;
        self.unnoted = true;
    }

    /// Hand what was sent and failed since the last time to `rec`.
    pub(super) fn note(&mut self, rec: &mut Recorder) {
        if std::mem::take(&mut self.unnoted) {
            rec.note(&mut self.unnoted_sent, &mut self.unnoted_errors);
        }
    }

    /// Claim the right to send one more request.
    fn claim(&mut self) -> bool {
        if std::mem::take(&mut self.ticket) {
            return true;
        }
        let Some(budget) = self.budget else {
            return true;
        };
        // Relaxed: a counter that hands out tickets; nothing else is
        // published through it.
        let granted = budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok();
        self.exhausted |= !granted;
        granted
    }

    /// Give back a ticket that no request used.
    fn unclaim(&mut self) {
        if let Some(budget) = self.budget {
            budget.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// What the server sent unasked (nothing is in flight), if the
    /// exchange listens for it: a delivery is recorded as a reply whose
    /// request went when its publisher sent it.
    fn take_unasked(
        &mut self,
        input: &[u8],
        now: Instant,
        rec: &mut Recorder,
    ) -> Result<Option<usize>, String> {
        let rx = Received {
            at: now,
            counted: self.span.contains(now),
        };
        let Some((len, pushed)) = self.exchange.unasked(input, rx, &mut self.checks)? else {
            return Ok(None);
        };
        if let Some(p) = pushed {
            self.note(rec);
            let at = p.sent.min(now);
            let timing = Timing {
                intended: at,
                ready: at,
                sent: at,
            };
            if rec.record_unasked(p.op, &timing, now) {
                self.counted(now);
            }
            self.last_reply = Some(now);
        }
        Ok(Some(len))
    }

    /// The current connection may carry no more requests.
    fn spent(&self) -> bool {
        match self.plan.connections {
            Connections::Persistent => self.exhausted,
            Connections::PerRequest => self.sent_here >= 1,
            Connections::Series { requests } => {
                self.exhausted || requests.is_some_and(|r| self.sent_here >= r)
            }
        }
    }
}

impl<E: Exchange> Conversation for Metered<'_, E> {
    type Sink = Recorder;

    fn connect(&mut self, now: Instant) -> bool {
        if self.exhausted {
            return false;
        }
        let per_request = self.plan.connections == Connections::PerRequest;
        // A new connection's first request is claimed first, so no
        // connection opens for a request that will not be sent.
        if !self.claim() {
            return false;
        }
        if !self.exchange.connect(now) {
            self.unclaim();
            return false;
        }
        self.ticket = true;
        // A connection per request is part of its request.
        self.opened_at = per_request.then_some(now);
        self.sent_here = 0;
        self.ended = false;
        true
    }

    fn greet(&mut self, stream: &mut dyn crate::driver::Blocking) -> std::io::Result<()> {
        self.exchange.greet(stream)
    }

    fn fill(&mut self, wire: &mut Vec<u8>, now: Instant) -> usize {
        let mut n = 0;
        self.due = None;
        while self.inflight.len() < self.plan.pacing.pipeline && !self.ended && !self.spent() {
            let due = self.pacer.due();
            if let Some(due) = due.filter(|&d| d > now) {
                self.due = Some(due);
                break;
            }
            if !self.claim() {
                break;
            }
            let Some((op, sent)) = self.exchange.request(wire) else {
                self.ended = true;
                self.unclaim();
                break;
            };
            let at = self.opened_at.take().unwrap_or(now);
            let timing = self.timing(due, at);
            self.sent.count(&self.span, &timing);
            if self.span.contains(timing.sent) {
                self.note_sent(op);
            }
            self.inflight.push_back(InFlight {
                op,
                timing,
                sent,
                filled: now,
                handed: now,
            });
            self.pacer.issued();
            self.sent_here += 1;
            n += 1;
        }
        n
    }

    fn handed(&mut self, n: usize, at: Instant) {
        for f in self.inflight.iter_mut().rev().take(n) {
            f.handed = at;
        }
    }

    fn handshaken(&mut self, took: Duration, rec: &mut Recorder) {
        rec.tls.record(took);
    }

    fn arrived(&mut self, receipt: Receipt) {
        self.arrived = receipt;
    }

    fn take(
        &mut self,
        input: &[u8],
        now: Instant,
        rec: &mut Recorder,
    ) -> Result<Option<usize>, String> {
        let Some(front) = self.inflight.front() else {
            return self.take_unasked(input, now, rec);
        };
        let rx = Received {
            at: now,
            counted: self.span.contains(now),
        };
        let Some(len) = self
            .exchange
            .reply(input, &front.sent, rx, &mut self.checks)?
        else {
            return Ok(None);
        };
        let full = self.inflight.len() >= self.plan.pacing.pipeline;
        let done = self.inflight.pop_front().expect("a request in flight");
        if full || self.spent() {
            self.room_at = now;
        }
        self.note(rec);
        if rec.record(done.op, &done.timing, now) {
            self.counted(now);
            if let Receipt::Sampled(at) = self.arrived {
                let received = at.map(|at| now.saturating_duration_since(at));
                rec.client.record(done.own(), received);
            }
            if crate::certify::PER_REQUEST && self.plan.pacing.random_arrivals() {
                let sent = done.timing.sent;
                if let Some(prev) = self.last_sent.replace(sent) {
                    rec.send_gap(sent.saturating_duration_since(prev));
                }
            }
        }
        self.last_reply = Some(now);
        Ok(Some(len))
    }

    /// A listening client awaiting messages after the window closed
    /// counts as one in flight: its connection drains as replies do.
    fn in_flight(&self) -> usize {
        self.inflight.len() + usize::from(self.exchange.awaiting())
    }

    fn connection_done(&self) -> bool {
        self.inflight.is_empty()
            && (self.ended || self.spent() || self.exchange.closing())
            && !self.exchange.listening()
    }

    fn failed(&mut self, failure: Failure, now: Instant) {
        if matches!(failure, Failure::Stalled(_))
            && self.inflight.is_empty()
            && self.exchange.awaiting()
        {
            // A listener's drain is over: what it awaited did not come,
            // which it counts itself; its connection did not fail.
            self.exchange.drained();
            return;
        }
        let unanswered = self.inflight.front().map(|f| &f.sent);
        let what = self.exchange.failed(&failure, unanswered);
        self.errors.push(what);
        let op = self.inflight.front().map(|f| f.op);
        self.unnoted_errors.push((op, crate::live::cause(&failure)));
        self.unnoted = true;
        // What was in flight is lost with the connection, and so is a
        // request claimed for it but not sent: it was tried (so a budget
        // also bounds how often a client retries a server that is gone).
        self.inflight.clear();
        self.ticket = false;
        self.opened_at = None;
        self.last_sent = None;
        self.room_at = now;
    }

    fn window_closed(&mut self, now: Instant, rec: &mut Recorder) {
        self.exchange.window_closed();
        self.note(rec);
        self.span.close_at(now);
        rec.span.close_at(now);
    }

    fn next_due(&self) -> Option<Instant> {
        self.due
    }

    /// A paced request that has its own connection opens it when due, so
    /// its latency (which counts from the connect) holds no waiting.
    fn connect_at(&self) -> Option<Instant> {
        let paced = self.plan.connections == Connections::PerRequest && !self.exhausted;
        self.pacer.due().filter(|_| paced)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sending side of a reply's share: from its connection's room
    /// (or its due time) to its going out, then from its fill to the
    /// send call; a clock that ran backwards counts nothing.
    #[test]
    fn a_requests_own_share_runs_from_ready_to_sent_and_fill_to_send_call() {
        let t0 = Instant::now();
        let us = |n| t0 + Duration::from_micros(n);
        let f = |sent, filled, handed| InFlight {
            op: 0,
            timing: Timing {
                intended: t0,
                ready: us(10),
                sent,
            },
            sent: (),
            filled,
            handed,
        };
        // Went 5 µs after its connection had room, sent 3 µs after its fill.
        assert_eq!(f(us(15), us(15), us(18)).own(), Duration::from_micros(8));
        // A connection of its own: begun at 12, filled once open at 40.
        assert_eq!(f(us(12), us(40), us(41)).own(), Duration::from_micros(3));
        assert_eq!(f(us(5), us(40), us(40)).own(), Duration::ZERO);
    }
}
