//! One board connection's client: a poster or a reader. What it sends,
//! and what each reply must be.

use super::mirror::{AckError, Mirror};
use super::workload::{message_code, topic_name, write_message, ReaderOp};
use super::{BoardLoad, COUNT, LIST, OPS, POST, READ};
use crate::checks::Checks;
use crate::driver::{take_line, Client, Failure};
use crate::record::Recorder;
use serverlab_proto::board::{parse_list, Request};
use serverlab_proto::number::parse_u64;
use serverlab_proto::Terminator;
use std::collections::{HashSet, VecDeque};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
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
enum Expect {
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

struct InFlight {
    op: usize,
    sent: Instant,
    expect: Expect,
}

pub(crate) struct BoardClient<'a> {
    cfg: &'a BoardLoad,
    mirror: &'a Mirror,
    checks: &'a Checks,
    pub(crate) role: Role,
    pub(crate) index: usize,
    rng: fastrand::Rng,
    topics: Vec<Vec<u8>>,
    seq: u64,
    pub(crate) rec: Recorder,
    pub(crate) hits: u64,
    pub(crate) misses: u64,
    /// Why this connection failed, if it did.
    pub(crate) error: Option<String>,
    last_count: Vec<u64>,
    inflight: VecDeque<InFlight>,
    scratch: Vec<u8>,
    start: Instant,
    /// Pacing: one request per `interval`, counted from `start`.
    interval: Option<Duration>,
    issued: u32,
    due: Option<Instant>,
}

impl<'a> BoardClient<'a> {
    pub(crate) fn new(
        cfg: &'a BoardLoad,
        mirror: &'a Mirror,
        checks: &'a Checks,
        role: Role,
        index: usize,
        start: Instant,
    ) -> Self {
        let salt = if role == Role::Poster {
            0x5EED_0001u64
        } else {
            0x5EED_1001
        };
        BoardClient {
            cfg,
            mirror,
            checks,
            role,
            index,
            rng: fastrand::Rng::with_seed(
                cfg.seed ^ (salt + index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            topics: (0..cfg.topics).map(topic_name).collect(),
            seq: 0,
            rec: Recorder::new(OPS.len(), start, Some(cfg.duration())),
            hits: 0,
            misses: 0,
            error: None,
            last_count: vec![0; cfg.topics],
            inflight: VecDeque::with_capacity(cfg.pipeline),
            scratch: Vec::new(),
            start,
            interval: (cfg.throttle > 0.0).then(|| Duration::from_secs_f64(1.0 / cfg.throttle)),
            issued: 0,
            due: None,
        }
    }
}

impl BoardClient<'_> {
    /// Count the window from `start` (set once every connection is open).
    pub(crate) fn restart(&mut self, start: Instant) {
        self.start = start;
        self.rec = Recorder::new(OPS.len(), start, Some(self.cfg.duration()));
    }
}

impl Client for BoardClient<'_> {
    fn fill(&mut self, wire: &mut Vec<u8>, now: Instant) -> usize {
        let mut n = 0;
        self.due = None;
        while self.inflight.len() < self.cfg.pipeline {
            if let Some(iv) = self.interval {
                let due = self.start + iv * self.issued;
                if due > now {
                    self.due = Some(due);
                    break;
                }
            }
            self.issue(wire, now);
            self.issued = self.issued.saturating_add(1);
            n += 1;
        }
        n
    }

    fn take(&mut self, input: &[u8], now: Instant) -> Result<Option<usize>, String> {
        let Some((reply, len)) = take_line(input)? else {
            return Ok(None);
        };
        self.reply(reply, now);
        Ok(Some(len))
    }

    fn in_flight(&self) -> usize {
        self.inflight.len()
    }

    /// One persistent connection, opened before the run.
    fn connect(&mut self, _now: Instant) -> bool {
        false
    }

    /// It serves until the window closes.
    fn connection_done(&self) -> bool {
        false
    }

    fn failed(&mut self, failure: Failure, _now: Instant) {
        self.error = Some(format!("{}: {failure}", self.who()));
    }

    fn next_due(&self) -> Option<Instant> {
        self.due
    }
}

impl BoardClient<'_> {
    /// Build the next request into `wire` and remember what its reply must
    /// be; it goes out at `sent`.
    fn issue(&mut self, wire: &mut Vec<u8>, sent: Instant) {
        let topic = self.rng.usize(0..self.cfg.topics);
        let (op, expect) = match self.role {
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
            Role::Reader => match self.cfg.reader_mix.pick(&mut self.rng) {
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
                    let acked = if self.checks.enabled {
                        (0..self.cfg.topics)
                            .filter(|&t| self.mirror.has_acks(t))
                            .collect()
                    } else {
                        Vec::new()
                    };
                    Request::List.encode(wire, Terminator::Nul);
                    (LIST, Expect::List { acked })
                }
            },
        };
        self.inflight.push_back(InFlight { op, sent, expect });
    }

    fn reply(&mut self, reply: &[u8], done: Instant) {
        let Some(f) = self.inflight.pop_front() else {
            self.checks.mismatch(format!(
                "{} {}: a reply nobody asked for",
                self.role.name(),
                self.index
            ));
            return;
        };
        self.rec.record(f.op, f.sent, done);
        match f.expect {
            Expect::Post { topic, code } => self.post_reply(topic, code, reply),
            Expect::Read { topic, id, code } => self.read_reply(topic, id, code, reply),
            Expect::Count { topic, floor } => self.count_reply(topic, floor, reply),
            Expect::List { acked } => self.list_reply(&acked, reply),
        }
    }

    fn who(&self) -> String {
        format!("{} {}", self.role.name(), self.index)
    }

    fn post_reply(&mut self, topic: usize, code: u64, reply: &[u8]) {
        let id = parse_u64(reply).ok().flatten();
        if !self.checks.enabled {
            if let Some(id) = id {
                let _ = self.mirror.ack(topic, id, code);
            }
            return;
        }
        self.checks.checked(1);
        match id.map(|id| (id, self.mirror.ack(topic, id, code))) {
            Some((_, Ok(()))) => {}
            Some((_, Err(AckError::Repeat { id }))) => {
                self.checks.mismatch(format!("{}: POST to t{topic} got id {id}, already handed out", self.who()))
            }
            Some((_, Err(AckError::BelowBase { id, base }))) => self.checks.mismatch(format!(
                "{}: POST to t{topic} got id {id}, below the {base} messages it held before the run",
                self.who()
            )),
            None => self.checks.mismatch(format!("{}: POST to t{topic} answered {:?}, not an id", self.who(), lossy(reply))),
        }
    }

    fn read_reply(&mut self, topic: usize, id: u64, code: Option<u64>, reply: &[u8]) {
        if reply.is_empty() {
            self.misses += 1;
        } else {
            self.hits += 1;
        }
        let (true, Some(code)) = (self.checks.enabled, code) else {
            return;
        };
        self.checks.checked(1);
        self.scratch.clear();
        write_message(&mut self.scratch, code, self.cfg.message_size);
        if reply != self.scratch.as_slice() {
            self.checks.mismatch(format!(
                "{}: READ@t{topic}#{id} returned {:?}, but that id was acknowledged for {:?}",
                self.who(),
                lossy(reply),
                lossy(&self.scratch)
            ));
        }
    }

    fn count_reply(&mut self, topic: usize, floor: u64, reply: &[u8]) {
        if !self.checks.enabled {
            return;
        }
        self.checks.checked(1);
        let Some(n) = parse_u64(reply).ok().flatten() else {
            return self.checks.mismatch(format!(
                "{}: COUNT@t{topic} answered {:?}",
                self.who(),
                lossy(reply)
            ));
        };
        if n < floor {
            self.checks.mismatch(format!(
                "{}: COUNT@t{topic} = {n}, but id {} was acknowledged before it was asked",
                self.who(),
                floor - 1
            ));
        }
        if n < self.last_count[topic] {
            self.checks.mismatch(format!(
                "{}: COUNT@t{topic} went backwards, {} then {n}",
                self.who(),
                self.last_count[topic]
            ));
        }
        self.last_count[topic] = self.last_count[topic].max(n);
    }

    fn list_reply(&mut self, acked: &[usize], reply: &[u8]) {
        if !self.checks.enabled {
            return;
        }
        self.checks.checked(1);
        let Some(listed) = parse_list(reply) else {
            return self.checks.mismatch(format!(
                "{}: LIST answered {:?}",
                self.who(),
                lossy(reply)
            ));
        };
        let listed: HashSet<&[u8]> = listed.into_iter().collect();
        if let Some(&t) = acked
            .iter()
            .find(|&&t| !listed.contains(self.topics[t].as_slice()))
        {
            self.checks.mismatch(format!(
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
