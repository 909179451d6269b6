//! The driver every load runs on: one event loop per client CPU
//! multiplexes many client connections on non-blocking sockets
//! (edge-triggered epoll via mio).
//!
//! A thread per connection would cost the client a context switch per
//! request, as much CPU as a good server spends, and the client would set
//! the pace it claims to measure. One loop per client core keeps the
//! client's cost per request to a write and a read (shared with every
//! other reply that arrived in the same read).
//!
//! The driver owns sockets, buffers, timeouts, wake-ups and the run's
//! window, and hands each loop's replies a sink of that loop's own (the
//! harness's recorder). The [`Conversation`] in each [`Slot`] (the
//! harness's metered client around a protocol's exchange) decides what to
//! send and when, how replies are framed (lines for board, echo and
//! bucket — [`framing`] — HTTP responses for kv, RESP values for resp),
//! what each must be, and when its connection has done its work. A slot's
//! connection may end and be replaced (a kv session, a bucket request on
//! its own connection): the driver then asks the conversation for the
//! next one.
//!
//! By concept: [`Conversation`] and [`Failure`] are what the driver asks
//! of and tells a slot's client ([`conversation`]); [`Options`] bound a
//! run; a [`Slot`] is one connection's socket and buffers
//! ([`slot`]); [`run_loops`] spreads the slots over one event loop per
//! CPU ([`fanout`]); each loop ([`event_loop`], with the connection
//! lifecycle in `lifecycle`) wakes on epoll, on its paced slots' kernel
//! timer ([`wakeups`]) and on nothing else; an epoll token names a slot's
//! connection ([`token`]); and the time it polls in vain is accounted
//! apart ([`spin`]), where `--poll` allows it ([`poll`]).

mod conversation;
mod event_loop;
mod fanout;
pub mod framing;
mod lifecycle;
pub mod poll;
mod slot;
mod spin;
pub mod stamp;
mod token;
mod wakeups;

pub use conversation::{Blocking, Conversation, Failure};
pub use fanout::{run_loops, LoopsDone};
pub use framing::{line, reply_too_long, take_line};
pub use poll::{PollMode, PollStats, Polling};
pub use slot::Slot;

use crate::endpoint::Endpoint;

/// `--max-reply`'s default: no reply of a load's requests comes near it
/// (a kv value or a RESP LRANGE of a lab's sizes is kilobytes), and a
/// hostile server cannot make a connection hold more.
pub const MAX_REPLY: usize = 4 << 20;

/// The longest reply a connection may hold: twice what the load's
/// requests can legitimately get (`legit`, from its own settings), and
/// never more than `max_reply` (`--max-reply`).
pub fn reply_limit(legit: usize, max_reply: usize) -> usize {
    legit.saturating_mul(2).min(max_reply)
}

/// How a load says its connections waited in vain, with what to do.
pub fn no_reply_within(t: Duration) -> String {
    format!(
        "no reply within {} s (is the server stuck? if it is only slow, pass a longer \
         --reply-timeout)",
        t.as_secs_f64()
    )
}
use std::time::{Duration, Instant};

/// How a run is bounded and how long anything may take.
#[derive(Debug, Clone)]
pub struct Options {
    pub addr: Endpoint,
    pub connect_timeout: Duration,
    /// A connection with requests in flight fails when no whole reply
    /// arrives for this long — bytes that trickle in do not count (None:
    /// it may wait for ever).
    pub reply_timeout: Option<Duration>,
    /// When the window closes: no request is sent and no connection
    /// opened after it; replies in flight are still collected. None: the
    /// run ends when every client is finished.
    pub deadline: Option<Instant>,
    /// How long after the deadline replies in flight may take.
    pub drain_timeout: Option<Duration>,
    /// The longest reply a connection may hold unfinished: past it the
    /// connection fails with "a reply longer than N bytes" (the load's
    /// own bound on what its requests can get, capped by `--max-reply`).
    pub max_reply: usize,
    /// Whether loops may poll without sleeping while replies are due.
    pub poll: Polling,
    /// The most requests a connection keeps in flight (its pipeline
    /// depth): with the connections on a loop, how many replies a loop
    /// may have due at once, which `--poll auto` weighs.
    pub depth: usize,
}

#[cfg(test)]
mod tests;
