//! Protocol plus store: how a connection's bytes become replies.
//!
//! A [`Service`] knows nothing of sockets or threads. A server strategy owns
//! the buffers and calls, per connection and strictly in order:
//! [`Service::frame`] to find and parse the next request, [`Service::delay`]
//! for any work the request asks to be done before its reply,
//! [`apply_timed`] (which times [`Service::apply`]) to change state and
//! append the reply, and [`Service::more`] for the rest of a reply too
//! large to append at once. `frame` parses once, into the service's own
//! [`Service::Request`], which `delay` and `apply` take: no service parses
//! a request twice. Every strategy is generic over this trait, so one
//! strategy implementation serves every protocol.
#![forbid(unsafe_code)]
// A test reads as one story; the 60-line limit is for the code under test.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod board;
pub mod bucket;
pub mod busy;
mod common;
mod delay;
pub mod durable;
pub mod echo;
pub mod kv;
pub mod protocol_stats;
pub mod resp;
pub mod service_time;
pub mod sim;
pub mod stats;

pub use common::{final_stats, ByteCounts, Common, ConnCounters};
pub use delay::{work, Delay};
pub use durable::{Durable, Logged};
pub use protocol_stats::{ErrorCount, ProtocolStats};
pub use serverlab_wal as wal;

use std::net::SocketAddr;
use std::time::Duration;

/// Who a connection is from: a TCP peer, by its address, or a client of a
/// Unix domain socket, which is on this machine (and allowed in by the
/// socket file's permissions) but has no address to name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Peer {
    Tcp(SocketAddr),
    Unix,
}

impl Peer {
    /// Whether the peer is on this machine: a loopback address, or any
    /// client of a Unix socket.
    pub fn is_local(self) -> bool {
        match self {
            Peer::Tcp(addr) => addr.ip().is_loopback(),
            Peer::Unix => true,
        }
    }
}

impl From<SocketAddr> for Peer {
    fn from(addr: SocketAddr) -> Self {
        Peer::Tcp(addr)
    }
}

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Peer::Tcp(addr) => write!(f, "{addr}"),
            Peer::Unix => f.write_str("a Unix-socket client"),
        }
    }
}

/// About how much of a large reply a service appends at a time (board
/// `LIST` and large `READ`s, kv `GET` bodies): the rest follows through
/// [`Service::more`] as the connection's output drains, so a reply costs
/// the server at most this much memory beyond what it has not yet sent,
/// however large the reply is.
pub const REPLY_CHUNK: usize = 64 * 1024;

/// What `frame` found at the front of a connection's unconsumed input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<R> {
    /// Wait for more bytes.
    Incomplete,
    /// A whole request, parsed: it is the first `len` bytes.
    Ready { len: usize, request: R },
    /// The input can never become a valid request: any reply has been
    /// appended; flush it, then close the connection.
    Close,
}

/// What the connection does after a request's reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    Continue,
    /// Flush the replies, then close this connection.
    Close,
    /// Flush, close, and stop the whole server gracefully (board `EXIT`).
    Shutdown,
}

/// Whether a connection may be sent messages it did not ask for (RESP's
/// publish/subscribe), as [`Service::pushes`] answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushes {
    /// No: it is only answered.
    None,
    /// Yes: while it waits for input, a message may arrive for it, and
    /// the waker given is woken then (and when it is cut off).
    Listening,
    /// It fell too far behind (a subscriber that does not read): drop
    /// its unwritten output and close it.
    Cut,
}

/// A protocol bound to its state. Shared by every connection of a server.
pub trait Service: Send + Sync + 'static {
    /// Per-connection protocol state.
    type Conn: Send + 'static;

    /// A framed request, parsed. It does not borrow the input (a strategy
    /// may hold it across a delay); where it needs the request's bytes it
    /// holds their positions, and `apply` is given the same bytes again,
    /// so nothing is copied. Only the service's `frame` builds one.
    type Request: Send + 'static;

    /// A new connection from `peer` (a [`Peer`], or a TCP peer's
    /// address).
    fn open(&self, peer: impl Into<Peer>) -> Self::Conn;

    /// The most unconsumed input a connection may hold. A strategy never
    /// reads past it; reaching it with only [`Frame::Incomplete`] calls
    /// [`Service::overflow`].
    fn input_limit(&self) -> usize;

    /// Find and parse the next request at the front of `input`. May append
    /// an error reply to `out` when returning [`Frame::Close`], or an
    /// interim reply (kv's `100 Continue`) when returning
    /// [`Frame::Incomplete`]: every strategy flushes the output before it
    /// waits for more input.
    fn frame(&self, conn: &mut Self::Conn, input: &[u8], out: &mut Vec<u8>)
        -> Frame<Self::Request>;

    /// Work the framed request asks for before its reply (bucket delays).
    fn delay(&self, _conn: &mut Self::Conn, _request: &Self::Request) -> Option<Delay> {
        None
    }

    /// Whether the framed request must wait before it is applied (a
    /// blocking pop on empty lists): how long to wait before asking
    /// again; `None`: apply it now. Asked when the request is framed and
    /// again after each wait, with the request's bytes (`input`); a
    /// service that serves the request while asked keeps its reply in
    /// `conn` for `apply`. The request's replies before it are written
    /// first, and nothing after it is applied until it is. `waker`, where
    /// the strategy has one, runs the connection again at once: a service
    /// that learns sooner that the request can go wakes it.
    fn wait(
        &self,
        _conn: &mut Self::Conn,
        _request: &Self::Request,
        _input: &[u8],
        _waker: Option<&std::task::Waker>,
    ) -> Option<Delay> {
        None
    }

    /// Apply the request `frame` returned and append its reply to `out`.
    /// `input` is the request's bytes (the `len` bytes `frame` reported),
    /// for the positions the request holds. A reply much larger than
    /// [`REPLY_CHUNK`] may be left unfinished: `apply` appends its start
    /// and keeps in `conn` where it stopped, and [`Service::more`] appends
    /// the rest.
    fn apply(
        &self,
        conn: &mut Self::Conn,
        request: Self::Request,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> After;

    /// Messages sent to this connection unasked (RESP's pub/sub): with
    /// `out`, append those that arrived (in order) and, while the
    /// connection listens, keep `waker` (where the strategy has one), to
    /// be woken when another arrives or the connection is cut off;
    /// without `out`, only say whether it is cut off. Asked before the
    /// connection waits for input (with every reply written), and (without
    /// `out`) at each step while it listens. A service that never pushes
    /// keeps this default.
    fn pushes(
        &self,
        _conn: &mut Self::Conn,
        _out: Option<&mut Vec<u8>>,
        _waker: Option<&std::task::Waker>,
    ) -> Pushes {
        Pushes::None
    }

    /// Continue the reply the last `apply` left unfinished: append its
    /// next part (about [`REPLY_CHUNK`] bytes) to `out` and return true, or
    /// return false, appending nothing, when no reply is unfinished. The
    /// caller calls it after every `apply`, and again whenever its output
    /// has room, until it returns false; only then does it frame the next
    /// request (replies stay in order). A service that finishes every
    /// reply in `apply` keeps this default. Keep it `#[inline]` and cheap
    /// when nothing is unfinished: it runs once per request.
    #[inline]
    fn more(&self, _conn: &mut Self::Conn, _out: &mut Vec<u8>) -> bool {
        false
    }

    /// The input reached `input_limit` without a complete request. Append
    /// any reply; the connection then closes.
    fn overflow(&self, _conn: &mut Self::Conn, _out: &mut Vec<u8>) {}

    /// How long a connection may take to deliver a whole request, counted
    /// from when the server is ready for it (accepted, or the previous
    /// request framed, and every reply so far written to the socket)
    /// whether or not any of it has arrived, before [`Service::timed_out`]
    /// (kv's header timeout). `None`: forever.
    fn request_timeout(&self) -> Option<Duration> {
        None
    }

    /// No complete request within `request_timeout`: append any reply;
    /// the connection then closes.
    fn timed_out(&self, _conn: &mut Self::Conn, _out: &mut Vec<u8>) {}

    /// The connection is gone.
    fn close(&self, _conn: Self::Conn) {}

    /// The service's write-ahead log, when it keeps one
    /// (`--durability` other than `none`).
    fn wal(&self) -> Option<&serverlab_wal::Wal> {
        None
    }

    /// What the writes applied since the last call came to (and forget
    /// it): the replies appended since must not be sent before its ticket
    /// commits, nor ever when it failed. `None`: nothing was logged.
    fn logged(&self, _conn: &mut Self::Conn) -> Option<Logged> {
        None
    }

    /// The statistics every protocol keeps alike (connections, service
    /// time), which the server records into: each service holds one
    /// [`Common`] and returns it here.
    fn common(&self) -> &Common;

    /// The protocol's own statistics, typed ([`protocol_stats`]).
    type Stats: ProtocolStats;

    /// The protocol's own statistics so far; the server reports them
    /// beside [`Service::common`]'s.
    fn stats(&self) -> Self::Stats;

    /// [`Service::stats`] as the final statistics write them: their
    /// serialization, an ordered JSON object.
    fn report(&self) -> serde_json::Value {
        serde_json::to_value(self.stats()).expect("statistics serialize")
    }

    /// The operations the timed requests are recorded by, named as the
    /// protocol's request counters (its report's `requests`) name them:
    /// [`Service::op`] answers an index into it. Requests applied but not
    /// counted under an operation (a bucket rejection, an empty RESP
    /// request) have an op of their own, so every timed request has one.
    const OPS: &'static [&'static str];

    /// Which of [`Service::OPS`] `request` is: the operation `apply` will
    /// count it under. Asked only of the timed requests (one in
    /// [`service_time::SAMPLED_ONE_IN`] per thread), before `apply`.
    fn op(&self, conn: &Self::Conn, request: &Self::Request) -> usize;

    /// The store's size, read when asked (by a scrape of `serve
    /// --metrics`), never on a request's path: what is counted (`keys`,
    /// `topics`, `buckets`) and how many. `None`: no store (echo).
    fn store_size(&self) -> Option<(&'static str, u64)> {
        None
    }
}

/// Apply a framed request as every server does: counted and (one in
/// [`service_time::SAMPLED_ONE_IN`] per thread) timed in the service's
/// [`Common`] statistics, under its operation ([`Service::op`], asked of
/// the timed requests only).
#[inline]
pub fn apply_timed<S: Service>(
    svc: &S,
    conn: &mut S::Conn,
    request: S::Request,
    input: &[u8],
    out: &mut Vec<u8>,
) -> After {
    let times = &svc.common().times;
    let timer = times.start_op(|| svc.op(conn, &request));
    let after = svc.apply(conn, request, input, out);
    times.finish(timer);
    after
}

/// What [`run_all`] did with a connection's input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// Each applied request's delay (asked for, not performed) and what
    /// the connection does after it.
    pub applied: Vec<(Option<Delay>, After)>,
    /// `frame` answered [`Frame::Close`] (the input can never be a valid
    /// request).
    pub frame_closed: bool,
}

impl Ran {
    /// The connection ends here: the input was refused, or a request
    /// closed it.
    pub fn closed(&self) -> bool {
        self.frame_closed || self.applied.last().is_some_and(|a| a.1 != After::Continue)
    }

    pub fn delays(&self) -> Vec<Option<Delay>> {
        self.applied.iter().map(|a| a.0).collect()
    }

    pub fn afters(&self) -> Vec<After> {
        self.applied.iter().map(|a| a.1).collect()
    }
}

/// Feed `wire` through a service as a server does, as one connection's
/// input arriving at once: frame, delay (asked for, not performed), then
/// [`apply_timed`] and [`Service::more`] until the reply is whole, until a
/// request ends the connection or no complete request is left. Replies go
/// to `out`. The sans-I/O way to drive a service in tests, benchmarks and
/// fuzzing.
pub fn run_all<S: Service>(svc: &S, conn: &mut S::Conn, wire: &[u8], out: &mut Vec<u8>) -> Ran {
    let mut ran = Ran {
        applied: Vec::new(),
        frame_closed: false,
    };
    let mut at = 0;
    loop {
        match svc.frame(conn, &wire[at..], out) {
            Frame::Ready { len, request } => {
                let delay = svc.delay(conn, &request);
                let after = apply_timed(svc, conn, request, &wire[at..at + len], out);
                while svc.more(conn, out) {}
                ran.applied.push((delay, after));
                at += len;
                if after != After::Continue {
                    return ran;
                }
            }
            Frame::Incomplete => return ran,
            Frame::Close => {
                ran.frame_closed = true;
                return ran;
            }
        }
    }
}
