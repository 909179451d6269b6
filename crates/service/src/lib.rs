//! Protocol plus store: how a connection's bytes become replies.
//!
//! A [`Service`] knows nothing of sockets or threads. A server strategy owns
//! the buffers and calls, per connection and strictly in order:
//! [`Service::frame`] to find the next request, [`Service::delay`] for any
//! work the request asks to be done before its reply, and
//! [`Service::apply`] to change state and append the reply. Every strategy
//! is generic over this trait, so one strategy implementation serves every
//! protocol.

pub mod board;
pub mod bucket;
mod delay;
pub mod echo;
pub mod kv;
mod line;
pub mod stats;

pub use delay::Delay;

use std::net::SocketAddr;
use std::time::Duration;

/// Where the next request lies in a connection's unconsumed input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// Wait for more bytes.
    Incomplete,
    /// A whole request is the first `n` bytes.
    Ready(usize),
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

/// A protocol bound to its state. Shared by every connection of a server.
pub trait Service: Send + Sync + 'static {
    /// Per-connection protocol state.
    type Conn: Send + 'static;

    /// A new connection from `peer`.
    fn open(&self, peer: SocketAddr) -> Self::Conn;

    /// The most unconsumed input a connection may hold. A strategy never
    /// reads past it; reaching it with only [`Frame::Incomplete`] calls
    /// [`Service::overflow`].
    fn input_limit(&self) -> usize;

    /// Find the next request at the front of `input`. May append an error
    /// reply to `out` when returning [`Frame::Close`], or an interim reply
    /// (kv's `100 Continue`) when returning [`Frame::Incomplete`]: every
    /// strategy flushes the output before it waits for more input.
    fn frame(&self, conn: &mut Self::Conn, input: &[u8], out: &mut Vec<u8>) -> Frame;

    /// Work the framed request asks for before its reply (bucket delays).
    fn delay(&self, _conn: &mut Self::Conn, _request: &[u8]) -> Option<Delay> {
        None
    }

    /// Apply the framed request (the exact bytes `frame` reported) and
    /// append its reply to `out`.
    fn apply(&self, conn: &mut Self::Conn, request: &[u8], out: &mut Vec<u8>) -> After;

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

    /// Statistics so far, as an ordered JSON object.
    fn report(&self) -> serde_json::Value;
}
