//! One connection of the RESP load: a keys client ([`KeysClient`]), a
//! board poster or reader (the board load's client, spelled in lists:
//! [`Lists`]), or a pub/sub publisher or subscriber.

use super::board::Lists;
use super::keys::{self, KeysClient};
use super::pubsub::{Publisher, Subscriber};
use crate::board::client::{BoardClient, Expect};
use crate::checks::Checks;
use crate::driver::Failure;
use crate::harness::{Exchange, Pushed, Received};
use std::time::Instant;

pub enum RespClient<'a> {
    Keys(KeysClient<'a>),
    Board(BoardClient<'a, Lists>),
    Publisher(Publisher<'a>),
    Subscriber(Subscriber<'a>),
}

/// What a reply needs from its request, by workload.
pub enum Sent {
    Keys(keys::Sent),
    Board(Expect),
    /// A PUBLISH, to this channel.
    Publish(usize),
}

impl RespClient<'_> {
    /// Replies that were errors, and that were the null bulk string.
    pub(crate) fn errors_and_nulls(&self) -> (u64, u64) {
        match self {
            RespClient::Keys(c) => (c.error_replies, c.nulls),
            RespClient::Board(c) => (c.encoding.error_replies, c.encoding.nulls),
            RespClient::Publisher(p) => (p.error_replies, 0),
            RespClient::Subscriber(_) => (0, 0),
        }
    }

    /// The error replies by prefix (the keys workload's; the board's
    /// only counts them).
    pub(crate) fn error_prefixes(&self) -> Vec<(&String, u64)> {
        match self {
            RespClient::Keys(c) => c.error_prefixes.iter().map(|(p, n)| (p, *n)).collect(),
            _ => Vec::new(),
        }
    }

    /// The board's reads that found a message, and that found none.
    pub(crate) fn hits_and_misses(&self) -> (u64, u64) {
        match self {
            RespClient::Board(c) => (c.hits, c.misses),
            _ => (0, 0),
        }
    }
}

impl Exchange for RespClient<'_> {
    type Sent = Sent;

    fn connect(&mut self, now: Instant) -> bool {
        match self {
            RespClient::Keys(c) => c.connect(now),
            RespClient::Board(c) => c.connect(now),
            RespClient::Publisher(p) => p.connect(),
            RespClient::Subscriber(s) => s.connect(),
        }
    }

    fn greet(&mut self, stream: &mut dyn crate::driver::Blocking) -> std::io::Result<()> {
        match self {
            RespClient::Keys(c) => c.greet(stream),
            RespClient::Board(c) => c.encoding.greeting.send(stream),
            RespClient::Publisher(p) => p.greet(stream),
            RespClient::Subscriber(s) => s.greet(stream),
        }
    }

    fn request(&mut self, wire: &mut Vec<u8>) -> Option<(usize, Sent)> {
        match self {
            RespClient::Keys(c) => c.request(wire).map(|(op, s)| (op, Sent::Keys(s))),
            RespClient::Board(c) => c.request(wire).map(|(op, s)| (op, Sent::Board(s))),
            RespClient::Publisher(p) => p.request(wire).map(|(op, c)| (op, Sent::Publish(c))),
            RespClient::Subscriber(_) => None,
        }
    }

    fn reply(
        &mut self,
        input: &[u8],
        sent: &Sent,
        rx: Received,
        checks: &mut Checks,
    ) -> Result<Option<usize>, String> {
        match (self, sent) {
            (RespClient::Keys(c), Sent::Keys(s)) => c.reply(input, s, rx, checks),
            (RespClient::Board(c), Sent::Board(s)) => c.reply(input, s, rx, checks),
            (RespClient::Publisher(p), Sent::Publish(c)) => p.reply(input, *c, checks),
            // A client sends only its own workload's requests.
            _ => Err("a reply to another workload's request".into()),
        }
    }

    /// Neither client reads `unanswered`.
    fn failed(&mut self, failure: &Failure, _unanswered: Option<&Sent>) -> String {
        match self {
            RespClient::Keys(c) => c.failed(failure, None),
            RespClient::Board(c) => c.failed(failure, None),
            RespClient::Publisher(p) => p.failed(failure),
            RespClient::Subscriber(s) => s.failed(failure),
        }
    }

    fn label(&self) -> (&'static str, usize) {
        match self {
            RespClient::Keys(c) => c.label(),
            RespClient::Board(c) => c.label(),
            RespClient::Publisher(p) => p.label(),
            RespClient::Subscriber(s) => s.label(),
        }
    }

    fn listening(&self) -> bool {
        matches!(self, RespClient::Subscriber(_))
    }

    fn unasked(
        &mut self,
        input: &[u8],
        rx: Received,
        checks: &mut Checks,
    ) -> Result<Option<(usize, Option<Pushed>)>, String> {
        match self {
            RespClient::Subscriber(s) => s.unasked(input, rx, checks),
            _ => Err(crate::harness::NO_REQUEST.into()),
        }
    }

    fn window_closed(&mut self) {
        match self {
            RespClient::Publisher(p) => p.window_closed(),
            RespClient::Subscriber(s) => s.window_closed(),
            _ => {}
        }
    }

    fn awaiting(&self) -> bool {
        matches!(self, RespClient::Subscriber(s) if s.awaiting())
    }

    fn drained(&mut self) {
        if let RespClient::Subscriber(s) = self {
            s.drained();
        }
    }
}
