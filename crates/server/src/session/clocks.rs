//! A session's clocks and the deadlines they set: the request clock (a
//! request must arrive within the service's request timeout, counted from
//! when every reply so far is written) and the stall clock (unwritten
//! replies that make no progress for the write timeout reset the
//! connection).

use std::time::{Duration, Instant};

/// The request and stall clocks.
#[derive(Default)]
pub(super) struct Clocks {
    /// A request is awaited: the input ran dry since the last was framed.
    awaiting: bool,
    /// When the awaited request's clock started.
    waiting_since: Option<Instant>,
    /// When the socket last refused unwritten replies, with no progress
    /// since.
    stalled_since: Option<Instant>,
    /// The strategy's own bound on a write expired.
    write_expired: bool,
}

impl Clocks {
    /// A request was framed: none is awaited, and its clock stops.
    pub(super) fn request_framed(&mut self) {
        self.awaiting = false;
        self.waiting_since = None;
    }

    /// The input ran dry: a request is awaited. Its clock starts if the
    /// service has a request timeout and every reply is written.
    pub(super) fn await_request(&mut self, timeout: Option<Duration>, all_written: bool) {
        self.awaiting = true;
        self.start_request_clock(timeout, all_written);
    }

    /// The request clock runs from when the server is ready for a request
    /// (accepted, or the last one framed) and has written every reply,
    /// whether or not any of it has arrived: an idle connection times out
    /// like a slow one, but a client slowly reading a large reply is not
    /// charged for it.
    pub(super) fn start_request_clock(&mut self, timeout: Option<Duration>, all_written: bool) {
        if self.awaiting && self.waiting_since.is_none() && timeout.is_some() && all_written {
            self.waiting_since = Some(Instant::now());
        }
    }

    /// When the awaited request must be complete, if the service limits it.
    pub(super) fn request_deadline(&self, timeout: Option<Duration>) -> Option<Instant> {
        Some(self.waiting_since? + timeout?)
    }

    /// Some unwritten replies went out: the stall clock stops.
    pub(super) fn progressed(&mut self) {
        self.stalled_since = None;
    }

    /// The socket would take none of the unwritten replies now: the stall
    /// clock starts, unless it already runs.
    pub(super) fn write_blocked(&mut self) {
        if self.stalled_since.is_none() {
            self.stalled_since = Some(Instant::now());
        }
    }

    /// The strategy's own bound on a write expired.
    pub(super) fn write_timed_out(&mut self) {
        self.write_expired = true;
    }

    /// When unwritten replies, stalled since the socket last refused them,
    /// are given up on, if the server has a write timeout (`unwritten`:
    /// there are any).
    pub(super) fn write_deadline(
        &self,
        timeout: Option<Duration>,
        unwritten: bool,
    ) -> Option<Instant> {
        if !unwritten {
            return None;
        }
        Some(self.stalled_since? + timeout?)
    }

    /// The write timeout has passed: the strategy's own bound expired, or
    /// the stall clock ran past it.
    pub(super) fn write_expired(&self, timeout: Option<Duration>, unwritten: bool) -> bool {
        self.write_expired
            || (self.stalled_since.is_some()
                && self
                    .write_deadline(timeout, unwritten)
                    .is_some_and(|d| d <= Instant::now()))
    }
}

/// The earlier of two deadlines, either of which may be absent.
pub(super) fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
