//! One board connection's client: a poster or a reader. What it sends,
//! and what each reply must be.

use super::mirror::{AckError, Mirror};
use super::workload::{message_code, topic_name, write_message, ReaderOp};
use super::{BoardLoad, COUNT, LIST, POST, READ};
use crate::checks::Checks;
use crate::driver::{take_line, Failure};
use crate::harness::{Exchange, Received};
use serverlab_proto::board::{parse_list, Request};
use serverlab_proto::number::parse_u64;
use serverlab_proto::Terminator;
use std::collections::HashSet;
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Poster,
    Reader,
}

impl Role {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Role::Poster => "poster",
            Role::Reader => "reader",
        }
    }
}

/// What a reply must satisfy, decided when its request was sent.
pub enum Expect {
    Post {
        topic: usize,
        code: u64,
    },
    Read {
        topic: usize,
        id: u64,
        code: Option<u64>,
    },
    Count {
        topic: usize,
        floor: u64,
    },
    List {
        acked: Vec<usize>,
    },
}

pub struct BoardClient<'a> {
    cfg: &'a BoardLoad,
    mirror: &'a Mirror,
    pub(crate) role: Role,
    pub(crate) index: usize,
    rng: fastrand::Rng,
    topics: Vec<Vec<u8>>,
    seq: u64,
    pub(crate) hits: u64,
    pub(crate) misses: u64,
    last_count: Vec<u64>,
    scratch: Vec<u8>,
    /// Its one connection was opened.
    opened: bool,
}

impl<'a> BoardClient<'a> {
    pub(crate) fn new(cfg: &'a BoardLoad, mirror: &'a Mirror, role: Role, index: usize) -> Self {
        let salt = if role == Role::Poster {
            0x5EED_0001u64
        } else {
            0x5EED_1001
        };
        BoardClient {
            cfg,
            mirror,
            role,
            index,
            rng: fastrand::Rng::with_seed(
                cfg.seed ^ (salt + index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            topics: (0..cfg.topics).map(topic_name).collect(),
            seq: 0,
            hits: 0,
            misses: 0,
            last_count: vec![0; cfg.topics],
            scratch: Vec::new(),
            opened: false,
        }
    }
}

impl Exchange for BoardClient<'_> {
    type Sent = Expect;

    /// One persistent connection, opened before the run; none after it fails.
    fn connect(&mut self, _now: Instant) -> bool {
        !std::mem::replace(&mut self.opened, true)
    }

    /// Build the next request into `wire`, and what its reply must be.
    fn request(&mut self, wire: &mut Vec<u8>) -> Option<(usize, Expect)> {
        let topic = self.rng.usize(0..self.cfg.topics);
        Some(match self.role {
            Role::Poster => {
                let code = message_code(self.index, self.seq);
                self.seq += 1;
                self.scratch.clear();
                write_message(&mut self.scratch, code, self.cfg.message_size);
                Request::Post {
                    topic: &self.topics[topic],
                    message: &self.scratch,
                }
                .encode(wire, Terminator::Nul);
                (POST, Expect::Post { topic, code })
            }
            Role::Reader => self.reader_request(wire, topic),
        })
    }

    fn reply(
        &mut self,
        input: &[u8],
        expect: &Expect,
        _rx: Received,
        checks: &mut Checks,
    ) -> Result<Option<usize>, String> {
        let Some((reply, len)) = take_line(input)? else {
            return Ok(None);
        };
        match *expect {
            Expect::Post { topic, code } => self.post_reply(topic, code, reply, checks),
            Expect::Read { topic, id, code } => self.read_reply(topic, id, code, reply, checks),
            Expect::Count { topic, floor } => self.count_reply(topic, floor, reply, checks),
            Expect::List { ref acked } => self.list_reply(acked, reply, checks),
        }
        Ok(Some(len))
    }

    fn failed(&mut self, failure: &Failure, _unanswered: Option<&Expect>) -> String {
        format!("{}: {failure}", self.who())
    }

    fn label(&self) -> (&'static str, usize) {
        (self.role.name(), self.index)
    }
}

impl BoardClient<'_> {
    fn reader_request(&mut self, wire: &mut Vec<u8>, topic: usize) -> (usize, Expect) {
        match self.cfg.reader_mix.pick(&mut self.rng) {
            ReaderOp::Read => {
                let (id, code) = match self.mirror.pick(topic, &mut self.rng) {
                    Some((id, code)) => (id, Some(code)),
                    None => (self.mirror.base(topic), None),
                };
                Request::Read {
                    topic: &self.topics[topic],
                    id: Some(id),
                }
                .encode(wire, Terminator::Nul);
                (READ, Expect::Read { topic, id, code })
            }
            ReaderOp::Count => {
                let floor = self.mirror.high(topic);
                Request::Count {
                    topic: &self.topics[topic],
                }
                .encode(wire, Terminator::Nul);
                (COUNT, Expect::Count { topic, floor })
            }
            ReaderOp::List => {
                let acked = if self.cfg.verify {
                    (0..self.cfg.topics)
                        .filter(|&t| self.mirror.has_acks(t))
                        .collect()
                } else {
                    Vec::new()
                };
                Request::List.encode(wire, Terminator::Nul);
                (LIST, Expect::List { acked })
            }
        }
    }

    fn who(&self) -> String {
        format!("{} {}", self.role.name(), self.index)
    }

    fn post_reply(&mut self, topic: usize, code: u64, reply: &[u8], checks: &mut Checks) {
        let id = parse_u64(reply).ok().flatten();
        if !checks.enabled {
            if let Some(id) = id {
                let _ = self.mirror.ack(topic, id, code);
            }
            return;
        }
        checks.checked(1);
        match id.map(|id| (id, self.mirror.ack(topic, id, code))) {
            Some((_, Ok(()))) => {}
            Some((_, Err(AckError::Repeat { id }))) => {
                checks.mismatch(format!("{}: POST to t{topic} got id {id}, already handed out", self.who()))
            }
            Some((_, Err(AckError::BelowBase { id, base }))) => checks.mismatch(format!(
                "{}: POST to t{topic} got id {id}, below the {base} messages it held before the run",
                self.who()
            )),
            None => checks.mismatch(format!("{}: POST to t{topic} answered {:?}, not an id", self.who(), lossy(reply))),
        }
    }

    fn read_reply(
        &mut self,
        topic: usize,
        id: u64,
        code: Option<u64>,
        reply: &[u8],
        checks: &mut Checks,
    ) {
        if reply.is_empty() {
            self.misses += 1;
        } else {
            self.hits += 1;
        }
        let (true, Some(code)) = (checks.enabled, code) else {
            return;
        };
        checks.checked(1);
        self.scratch.clear();
        write_message(&mut self.scratch, code, self.cfg.message_size);
        if reply != self.scratch.as_slice() {
            checks.mismatch(format!(
                "{}: READ@t{topic}#{id} returned {:?}, but that id was acknowledged for {:?}",
                self.who(),
                lossy(reply),
                lossy(&self.scratch)
            ));
        }
    }

    fn count_reply(&mut self, topic: usize, floor: u64, reply: &[u8], checks: &mut Checks) {
        if !checks.enabled {
            return;
        }
        checks.checked(1);
        let Some(n) = parse_u64(reply).ok().flatten() else {
            return checks.mismatch(format!(
                "{}: COUNT@t{topic} answered {:?}",
                self.who(),
                lossy(reply)
            ));
        };
        if n < floor {
            checks.mismatch(format!(
                "{}: COUNT@t{topic} = {n}, but id {} was acknowledged before it was asked",
                self.who(),
                floor - 1
            ));
        }
        if n < self.last_count[topic] {
            checks.mismatch(format!(
                "{}: COUNT@t{topic} went backwards, {} then {n}",
                self.who(),
                self.last_count[topic]
            ));
        }
        self.last_count[topic] = self.last_count[topic].max(n);
    }

    fn list_reply(&mut self, acked: &[usize], reply: &[u8], checks: &mut Checks) {
        if !checks.enabled {
            return;
        }
        checks.checked(1);
        let Some(listed) = parse_list(reply) else {
            return checks.mismatch(format!("{}: LIST answered {:?}", self.who(), lossy(reply)));
        };
        let listed: HashSet<&[u8]> = listed.into_iter().collect();
        if let Some(&t) = acked
            .iter()
            .find(|&&t| !listed.contains(self.topics[t].as_slice()))
        {
            checks.mismatch(format!(
                "{}: LIST lacks t{t}, which had an acknowledged POST",
                self.who()
            ));
        }
    }
}

fn lossy(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]).into_owned();
    if bytes.len() > 80 {
        format!("{text}…")
    } else {
        text
    }
}
