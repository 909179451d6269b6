//! One connection of the RESP load: a keys client ([`KeysClient`]) or a
//! board poster or reader (the board load's client, spelled in lists:
//! [`Lists`]).

use super::board::Lists;
use super::keys::{self, KeysClient};
use crate::board::client::{BoardClient, Expect};
use crate::checks::Checks;
use crate::driver::Failure;
use crate::harness::{Exchange, Received};
use std::time::Instant;

pub enum RespClient<'a> {
    Keys(KeysClient<'a>),
    Board(BoardClient<'a, Lists>),
}

/// What a reply needs from its request, by workload.
pub enum Sent {
    Keys(keys::Sent),
    Board(Expect),
}

impl RespClient<'_> {
    /// Replies that were errors, and that were the null bulk string.
    pub(crate) fn errors_and_nulls(&self) -> (u64, u64) {
        match self {
            RespClient::Keys(c) => (c.error_replies, c.nulls),
            RespClient::Board(c) => (c.encoding.error_replies, c.encoding.nulls),
        }
    }

    /// The error replies by prefix (the keys workload's; the board's
    /// only counts them).
    pub(crate) fn error_prefixes(&self) -> Vec<(&String, u64)> {
        match self {
            RespClient::Keys(c) => c.error_prefixes.iter().map(|(p, n)| (p, *n)).collect(),
            RespClient::Board(_) => Vec::new(),
        }
    }

    /// The board's reads that found a message, and that found none.
    pub(crate) fn hits_and_misses(&self) -> (u64, u64) {
        match self {
            RespClient::Keys(_) => (0, 0),
            RespClient::Board(c) => (c.hits, c.misses),
        }
    }
}

impl Exchange for RespClient<'_> {
    type Sent = Sent;

    fn connect(&mut self, now: Instant) -> bool {
        match self {
            RespClient::Keys(c) => c.connect(now),
            RespClient::Board(c) => c.connect(now),
        }
    }

    fn greet(&mut self, stream: &mut dyn crate::driver::Blocking) -> std::io::Result<()> {
        match self {
            RespClient::Keys(c) => c.greet(stream),
            RespClient::Board(c) => c.encoding.greeting.send(stream),
        }
    }

    fn request(&mut self, wire: &mut Vec<u8>) -> Option<(usize, Sent)> {
        match self {
            RespClient::Keys(c) => c.request(wire).map(|(op, s)| (op, Sent::Keys(s))),
            RespClient::Board(c) => c.request(wire).map(|(op, s)| (op, Sent::Board(s))),
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
            // A client sends only its own workload's requests.
            (RespClient::Keys(_), _) | (RespClient::Board(_), _) => {
                Err("a reply to another workload's request".into())
            }
        }
    }

    /// Neither client reads `unanswered`.
    fn failed(&mut self, failure: &Failure, _unanswered: Option<&Sent>) -> String {
        match self {
            RespClient::Keys(c) => c.failed(failure, None),
            RespClient::Board(c) => c.failed(failure, None),
        }
    }

    fn label(&self) -> (&'static str, usize) {
        match self {
            RespClient::Keys(c) => c.label(),
            RespClient::Board(c) => c.label(),
        }
    }
}
