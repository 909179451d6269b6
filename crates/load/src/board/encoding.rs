//! How a board load's requests go on the wire and its replies come back.
//! The workload ([`super::client`]) decides what to ask and what each
//! answer must be; an [`Encoding`] only spells the question and reads the
//! answer: the board's own protocol ([`Lines`], NUL-terminated lines) or
//! RESP's lists (`crate::resp::board`).

use super::client::Expect;
use super::workload::{agent_topics, topic_name};
use super::{COUNT, LIST, POST, READ};
use crate::driver::take_line;
use crate::harness::Agent;
use serverlab_proto::board::{parse_list, Request};
use serverlab_proto::number::parse_u64;
use serverlab_proto::Terminator;

/// A board request, before it is spelled.
#[derive(Debug, Clone, Copy)]
pub enum Ask<'m> {
    Post { topic: usize, message: &'m [u8] },
    Read { topic: usize, id: u64 },
    Count { topic: usize },
}

/// A reply as the workload reads it, whatever the encoding.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer<'r> {
    /// A POST's id or a COUNT's count; None: not a number.
    Number(Option<u64>),
    /// A READ found this message.
    Found(&'r [u8]),
    /// A READ found none.
    Missing,
    /// A READ answered neither (an echo server's request sent back, an
    /// error).
    Neither,
    /// LIST's topics; None: not a list.
    Topics(Option<Vec<&'r [u8]>>),
}

/// One client's way of speaking to the board's server.
pub trait Encoding {
    /// Append `ask` to `wire`, and return its operation (an index into
    /// the load's `OPS`).
    fn encode(&mut self, ask: Ask, wire: &mut Vec<u8>) -> usize;

    /// Append a LIST to `wire`, and return its operation; None (nothing
    /// appended) where the encoding has no LIST: the reader READs instead.
    fn list(&mut self, wire: &mut Vec<u8>) -> Option<usize>;

    /// The whole reply to `expect` at the front of `input`, read, and its
    /// length; `Ok(None)` while it is incomplete. `Err`: the stream
    /// cannot be read on.
    fn decode<'r>(
        &mut self,
        input: &'r [u8],
        expect: &Expect,
    ) -> Result<Option<(Answer<'r>, usize)>, String>;

    /// Topic `t`'s name as LIST answers it.
    fn topic(&self, t: usize) -> &[u8];

    /// The request that `expect` answers, in a mismatch report
    /// (`POST to t3`, `RPUSH board:t3`).
    fn describe(&self, expect: &Expect) -> String;

    /// A whole reply, in a mismatch report.
    fn show(&self, reply: &[u8]) -> String;
}

/// The board's own protocol: requests and replies are NUL-terminated
/// lines (section 1 of the wire contract, docs/protocols/board.md).
pub struct Lines {
    topics: Vec<Vec<u8>>,
}

impl Lines {
    /// The board's `topics`, of which `agent` owns its share.
    pub fn new(topics: usize, agent: Agent) -> Self {
        Lines {
            topics: agent_topics(topics, agent).map(topic_name).collect(),
        }
    }
}

impl Encoding for Lines {
    fn encode(&mut self, ask: Ask, wire: &mut Vec<u8>) -> usize {
        let (request, op) = match ask {
            Ask::Post { topic, message } => {
                let topic = &self.topics[topic];
                (Request::Post { topic, message }, POST)
            }
            Ask::Read { topic, id } => {
                let topic = &self.topics[topic];
                (
                    Request::Read {
                        topic,
                        id: Some(id),
                    },
                    READ,
                )
            }
            Ask::Count { topic } => {
                let topic = &self.topics[topic];
                (Request::Count { topic }, COUNT)
            }
        };
        request.encode(wire, Terminator::Nul);
        op
    }

    fn list(&mut self, wire: &mut Vec<u8>) -> Option<usize> {
        Request::List.encode(wire, Terminator::Nul);
        Some(LIST)
    }

    fn decode<'r>(
        &mut self,
        input: &'r [u8],
        expect: &Expect,
    ) -> Result<Option<(Answer<'r>, usize)>, String> {
        let Some((line, len)) = take_line(input)? else {
            return Ok(None);
        };
        let answer = match expect {
            Expect::Post { .. } | Expect::Count { .. } => {
                Answer::Number(parse_u64(line).ok().flatten())
            }
            // An echo server (the transport ceiling) sends the request
            // back, reversed: neither a message found nor one missing.
            // The load's messages begin `p`, so never end `@DAER`.
            Expect::Read { .. } if line.is_empty() => Answer::Missing,
            Expect::Read { .. } if line.ends_with(b"@DAER") || line.starts_with(b"READ@") => {
                Answer::Neither
            }
            Expect::Read { .. } => Answer::Found(line),
            Expect::List { .. } => Answer::Topics(parse_list(line)),
        };
        Ok(Some((answer, len)))
    }

    fn topic(&self, t: usize) -> &[u8] {
        &self.topics[t]
    }

    fn describe(&self, expect: &Expect) -> String {
        match *expect {
            Expect::Post { topic, .. } => format!("POST to t{topic}"),
            Expect::Read { topic, id, .. } => format!("READ@t{topic}#{id}"),
            Expect::Count { topic, .. } => format!("COUNT@t{topic}"),
            Expect::List { .. } => "LIST".into(),
        }
    }

    fn show(&self, reply: &[u8]) -> String {
        let line = crate::driver::line(reply).map_or(reply, |(line, _)| line);
        format!("{:?}", lossy(line))
    }
}

/// At most 80 bytes of `bytes`, as text.
pub fn lossy(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]).into_owned();
    if bytes.len() > 80 {
        format!("{text}…")
    } else {
        text
    }
}
