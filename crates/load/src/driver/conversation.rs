//! What the driver asks of a slot's client, and what it tells it when a
//! connection fails.

use crate::endpoint::Endpoint;
use std::fmt;
use std::io;
use std::time::Instant;

/// A connection opened before the run, still blocking (with timeouts),
/// for what must be said before any request ([`Conversation::greet`]).
pub trait Blocking: io::Read + io::Write {}

impl<T: io::Read + io::Write> Blocking for T {}

/// One slot's side of the talk with the server: what goes out and when,
/// what comes back, and when a connection has done its work. A slot holds
/// at most one connection at a time; its conversation may span many
/// connections, one after another.
pub trait Conversation {
    /// What replies are recorded into: one per event loop, shared by the
    /// loop's conversations on its thread only.
    type Sink;
    /// The slot has no connection: start one at `now`? False when this
    /// conversation is finished. Not called once the run's window has
    /// closed.
    fn connect(&mut self, now: Instant) -> bool;
    /// A connection opened before the run (blocking, within the connect
    /// timeout): say what must be said before any request (RESP's `AUTH`
    /// and `SELECT`). `Err`: the run cannot start.
    fn greet(&mut self, _stream: &mut dyn Blocking) -> io::Result<()> {
        Ok(())
    }
    /// Append as many requests as may go out at `now` (up to any pipeline
    /// depth, and none before it is due) and note `now` as their send
    /// time. Returns how many were appended.
    fn fill(&mut self, wire: &mut Vec<u8>, now: Instant) -> usize;
    /// If a whole reply is at the front of `input`, take it (received at
    /// `now`, recorded into `sink`) and return how many bytes it took
    /// (never 0); `Ok(None)` if the reply is still incomplete. `Err`: the
    /// stream cannot be read on (the connection fails with that
    /// description).
    fn take(
        &mut self,
        input: &[u8],
        now: Instant,
        sink: &mut Self::Sink,
    ) -> Result<Option<usize>, String>;
    /// The `n` requests the last `fill` appended go to the socket now:
    /// `at` is the clock read just before the send call (the client's
    /// own share of their latency ends here).
    fn handed(&mut self, _n: usize, _at: Instant) {}
    /// Whether the replies `take` is about to be given are in the
    /// sample of the client's share and, if so, when they reached the
    /// socket by the kernel's clock (the latest segment read), where it
    /// timed them ([`super::stamp`]).
    fn arrived(&mut self, _receipt: super::stamp::Receipt) {}
    /// The connection's TLS handshake is done: it `took` this long from
    /// the start of its connect.
    fn handshaken(&mut self, _took: std::time::Duration, _sink: &mut Self::Sink) {}
    /// Requests sent on this connection and not yet answered.
    fn in_flight(&self) -> usize;
    /// This connection has done its work: nothing in flight and nothing
    /// more to send on it. The driver closes it and calls `connect`.
    fn connection_done(&self) -> bool;
    /// The connection failed and was closed; what was in flight on it is
    /// lost. The driver then calls `connect` (unless the window closed).
    fn failed(&mut self, failure: Failure, now: Instant);
    /// The window closed at `now` (at its deadline, or early: the run
    /// was interrupted); replies from now on are late.
    fn window_closed(&mut self, _now: Instant, _sink: &mut Self::Sink) {}
    /// When a paced conversation waiting for its slot (or its request's
    /// intended send time) wants to send.
    fn next_due(&self) -> Option<Instant> {
        None
    }
    /// When a conversation without a connection wants its next one, if
    /// not now: a paced request that opens its own connection opens it
    /// when the request is due.
    fn connect_at(&self) -> Option<Instant> {
        None
    }
}

/// Why a connection failed.
#[derive(Debug)]
pub enum Failure {
    /// It could not be opened.
    Connect { addr: Endpoint, source: io::Error },
    /// The server closed it while the client still wanted it.
    Closed,
    /// A read or write failed.
    Io(io::Error),
    /// The client could not read a reply.
    Reply(String),
    /// Replies stopped coming.
    Stalled(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Connect { addr, source } => write!(f, "cannot connect to {addr}: {source}"),
            Failure::Closed => f.write_str("the server closed the connection mid-run"),
            Failure::Io(e) => write!(f, "{e}"),
            Failure::Reply(s) | Failure::Stalled(s) => f.write_str(s),
        }
    }
}
