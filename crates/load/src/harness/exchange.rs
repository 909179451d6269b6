//! What a protocol supplies for one client: the next request and what its
//! reply must be. When a request goes out, how many are in flight, how it
//! is timed and recorded, and when the run ends are the harness's.

use crate::checks::Checks;
use crate::driver::Failure;
use std::time::Instant;

/// One client's side of the protocol. The harness holds each request's
/// [`Exchange::Sent`] while it is in flight (with its timing) and hands it
/// back with the reply, so a client needs no queue of its own and never
/// reads a clock.
pub trait Exchange {
    /// What a reply needs from its request: how to frame it (kv: a HEAD's
    /// response has no body) and what it must say.
    type Sent: Send;

    /// The client has no connection: start one at `now`? False when it
    /// has no more work (or stops after a failure). With
    /// [`super::Connections::Persistent`] the harness calls it once before
    /// the window opens, and again only after that connection failed.
    fn connect(&mut self, now: Instant) -> bool;

    /// A persistent connection just opened, before the window (blocking,
    /// within the connect timeout): say what must be said before any
    /// request (RESP's `AUTH` and `SELECT`). `Err`: the run cannot start.
    fn greet(&mut self, _stream: &mut dyn crate::driver::Blocking) -> std::io::Result<()> {
        Ok(())
    }

    /// Append the next request to `wire` and return its operation (an
    /// index into [`super::Protocol::OPS`]) with what its reply must be.
    /// None: this connection has nothing more to send; it closes once its
    /// replies are in.
    fn request(&mut self, wire: &mut Vec<u8>) -> Option<(usize, Self::Sent)>;

    /// If the whole reply to `sent` is at the front of `input`, check it
    /// (when `checks.enabled`) and return how many bytes it takes (never
    /// 0); `Ok(None)` while it is incomplete. `Err`: the stream cannot be
    /// read on, or the reply says the run cannot go on (the connection
    /// fails with that description).
    fn reply(
        &mut self,
        input: &[u8],
        sent: &Self::Sent,
        rx: Received,
        checks: &mut Checks,
    ) -> Result<Option<usize>, String>;

    /// The connection failed; `unanswered` is the oldest request it still
    /// owed a reply to. Returns the error as the run reports it.
    fn failed(&mut self, failure: &Failure, unanswered: Option<&Self::Sent>) -> String;

    /// Who this client is in the per-client figures: a role ("poster",
    /// "connection") and its index in that role.
    fn label(&self) -> (&'static str, usize);

    /// The server said it closes this connection after the replies in
    /// flight (HTTP's `Connection: close`): it is done once they are in,
    /// and its end of stream then is no failure.
    fn closing(&self) -> bool {
        false
    }

    /// Whether this client's connection listens (a pub/sub subscriber):
    /// it stays open with nothing to send, for what the server sends
    /// unasked ([`Exchange::unasked`]), until the window has closed and
    /// it awaits nothing more ([`Exchange::awaiting`]).
    fn listening(&self) -> bool {
        false
    }

    /// Nothing is in flight and `input` holds bytes: if a whole message
    /// the server sent unasked is at its front, check it and return its
    /// length, with what to record (a delivery and when its publisher
    /// sent it) if anything; `Ok(None)` while it is incomplete. Only a
    /// listening client gets any.
    fn unasked(
        &mut self,
        _input: &[u8],
        _rx: Received,
        _checks: &mut Checks,
    ) -> Result<Option<(usize, Option<Pushed>)>, String> {
        Err(NO_REQUEST.into())
    }

    /// The window closed: nothing more is sent by anyone of this process.
    fn window_closed(&mut self) {}

    /// A listening client, after the window closed: whether it still
    /// awaits messages (its connection stays open for them, as for
    /// replies in flight, until the drain timeout).
    fn awaiting(&self) -> bool {
        false
    }

    /// The drain timeout ended while it still awaited messages: what has
    /// not come will not (not a failure of the connection).
    fn drained(&mut self) {}
}

/// What a client's input that answers nothing is said to be.
pub const NO_REQUEST: &str = "a reply to no request: the server answered more than it was asked";

/// A message the server sent unasked, to record: its operation, and when
/// it was sent (its latency counts from there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pushed {
    pub op: usize,
    pub sent: Instant,
}

/// When a reply came, and whether it counts (it came inside the window).
#[derive(Debug, Clone, Copy)]
pub struct Received {
    pub at: Instant,
    pub counted: bool,
}
