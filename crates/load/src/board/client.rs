//! One board client, a poster or a reader, whatever its [`Encoding`]:
//! what it asks next, and what each answer must be. `load board` speaks
//! the board's own protocol ([`super::encoding::Lines`]); `load resp
//! --workload board` maps the same workload onto lists.

use super::encoding::{lossy, Answer, Ask, Encoding};
use super::mirror::{AckError, Mirror};
use super::workload::{message_code, write_message, ReaderOp};
use super::ReaderMix;
use crate::checks::Checks;
use crate::driver::Failure;
use crate::harness::{Exchange, Received};
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
#[derive(Debug)]
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

/// The workload's settings, the same for both loads.
#[derive(Debug, Clone)]
pub struct Params {
    pub topics: usize,
    pub message_size: usize,
    pub reader_mix: ReaderMix,
    pub seed: u64,
    pub verify: bool,
}

pub struct BoardClient<'a, E> {
    params: Params,
    mirror: &'a Mirror,
    pub(crate) role: Role,
    pub(crate) index: usize,
    rng: fastrand::Rng,
    seq: u64,
    pub(crate) hits: u64,
    pub(crate) misses: u64,
    last_count: Vec<u64>,
    scratch: Vec<u8>,
    /// Its one connection was opened.
    opened: bool,
    pub(crate) encoding: E,
}

impl<'a, E: Encoding> BoardClient<'a, E> {
    pub(crate) fn new(
        params: Params,
        mirror: &'a Mirror,
        role: Role,
        index: usize,
        encoding: E,
    ) -> Self {
        let salt = match role {
            Role::Poster => 0x5EED_0001u64,
            Role::Reader => 0x5EED_1001,
        };
        BoardClient {
            rng: fastrand::Rng::with_seed(
                params.seed ^ (salt + index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            last_count: vec![0; params.topics],
            params,
            mirror,
            role,
            index,
            seq: 0,
            hits: 0,
            misses: 0,
            scratch: Vec::new(),
            opened: false,
            encoding,
        }
    }
}

impl<E: Encoding> Exchange for BoardClient<'_, E> {
    type Sent = Expect;

    /// One persistent connection, opened before the run; none after it fails.
    fn connect(&mut self, _now: Instant) -> bool {
        !std::mem::replace(&mut self.opened, true)
    }

    /// Build the next request into `wire`, and what its reply must be.
    fn request(&mut self, wire: &mut Vec<u8>) -> Option<(usize, Expect)> {
        let topic = self.rng.usize(0..self.params.topics);
        Some(match self.role {
            Role::Poster => {
                let code = message_code(self.index, self.seq);
                self.seq += 1;
                self.scratch.clear();
                write_message(&mut self.scratch, code, self.params.message_size);
                let message = &self.scratch;
                let op = self.encoding.encode(Ask::Post { topic, message }, wire);
                (op, Expect::Post { topic, code })
            }
            Role::Reader => self.reader_request(wire, topic),
        })
    }

    fn reply(
        &mut self,
        input: &[u8],
        expect: &Expect,
        rx: Received,
        checks: &mut Checks,
    ) -> Result<Option<usize>, String> {
        let Some((answer, len)) = self.encoding.decode(input, expect)? else {
            return Ok(None);
        };
        let check = Check {
            expect,
            answer,
            raw: &input[..len],
        };
        match *expect {
            Expect::Post { topic, code } => self.post_reply(topic, code, check, checks),
            Expect::Read { code, .. } => self.read_reply(code, check, rx.counted, checks),
            Expect::Count { topic, floor } => self.count_reply(topic, floor, check, checks),
            Expect::List { ref acked } => self.list_reply(acked, check, checks),
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

/// A reply to check: what it answered, and its bytes (for reports).
struct Check<'x> {
    expect: &'x Expect,
    answer: Answer<'x>,
    raw: &'x [u8],
}

impl<E: Encoding> BoardClient<'_, E> {
    fn reader_request(&mut self, wire: &mut Vec<u8>, topic: usize) -> (usize, Expect) {
        match self.params.reader_mix.pick(&mut self.rng) {
            ReaderOp::Count => {
                let floor = self.mirror.high(topic);
                let op = self.encoding.encode(Ask::Count { topic }, wire);
                (op, Expect::Count { topic, floor })
            }
            ReaderOp::List => match self.encoding.list(wire) {
                Some(op) => (
                    op,
                    Expect::List {
                        acked: self.acked(),
                    },
                ),
                None => self.read_request(wire, topic),
            },
            ReaderOp::Read => self.read_request(wire, topic),
        }
    }

    /// A READ of an acknowledged id of `topic`, if any; else of the first
    /// id past what it held before the run.
    fn read_request(&mut self, wire: &mut Vec<u8>, topic: usize) -> (usize, Expect) {
        let (id, code) = match self.mirror.pick(topic, &mut self.rng) {
            Some((id, code)) => (id, Some(code)),
            None => (self.mirror.base(topic), None),
        };
        let op = self.encoding.encode(Ask::Read { topic, id }, wire);
        (op, Expect::Read { topic, id, code })
    }

    /// The topics with an acknowledged POST, that a LIST must name
    /// (verifying; else none).
    fn acked(&self) -> Vec<usize> {
        if !self.params.verify {
            return Vec::new();
        }
        (0..self.params.topics)
            .filter(|&t| self.mirror.has_acks(t))
            .collect()
    }

    fn who(&self) -> String {
        format!("{} {}", self.role.name(), self.index)
    }

    /// `{who}: {request} {what}`, for a mismatch.
    fn says(&self, c: &Check, what: std::fmt::Arguments) -> String {
        format!(
            "{}: {} {what}",
            self.who(),
            self.encoding.describe(c.expect)
        )
    }

    fn post_reply(&mut self, topic: usize, code: u64, c: Check, checks: &mut Checks) {
        let Answer::Number(id) = c.answer else {
            return self.not_an_id(c, checks);
        };
        if !checks.enabled {
            if let Some(id) = id {
                let _ = self.mirror.ack(topic, id, code);
            }
            return;
        }
        let Some(id) = id else {
            return self.not_an_id(c, checks);
        };
        checks.checked(1);
        match self.mirror.ack(topic, id, code) {
            Ok(()) => {}
            Err(AckError::Repeat { id }) => {
                checks.mismatch(self.says(&c, format_args!("got id {id}, already handed out")))
            }
            Err(AckError::BelowBase { id, base }) => checks.mismatch(self.says(
                &c,
                format_args!("got id {id}, below the {base} messages it held before the run"),
            )),
        }
    }

    fn not_an_id(&self, c: Check, checks: &mut Checks) {
        if checks.enabled {
            checks.checked(1);
            let shown = self.encoding.show(c.raw);
            checks.mismatch(self.says(&c, format_args!("answered {shown}, not an id")));
        }
    }

    /// A READ's reply: a hit or a miss when it is `counted` (in the window,
    /// as the READ count beside it; the warm-up's are checked, not
    /// counted), and checked against the message acknowledged for its id.
    fn read_reply(&mut self, code: Option<u64>, c: Check, counted: bool, checks: &mut Checks) {
        match c.answer {
            Answer::Found(_) if counted => self.hits += 1,
            Answer::Missing if counted => self.misses += 1,
            _ => {}
        }
        let (true, Some(code)) = (checks.enabled, code) else {
            return;
        };
        checks.checked(1);
        self.scratch.clear();
        write_message(&mut self.scratch, code, self.params.message_size);
        if c.answer != Answer::Found(&self.scratch) {
            let (shown, want) = (self.encoding.show(c.raw), lossy(&self.scratch));
            checks.mismatch(self.says(
                &c,
                format_args!("returned {shown}, but that id was acknowledged for {want:?}"),
            ));
        }
    }

    fn count_reply(&mut self, topic: usize, floor: u64, c: Check, checks: &mut Checks) {
        if !checks.enabled {
            return;
        }
        checks.checked(1);
        let Answer::Number(Some(n)) = c.answer else {
            let shown = self.encoding.show(c.raw);
            return checks.mismatch(self.says(&c, format_args!("answered {shown}")));
        };
        if n < floor {
            checks.mismatch(self.says(
                &c,
                format_args!(
                    "= {n}, but id {} was acknowledged before it was asked",
                    floor - 1
                ),
            ));
        }
        let last = self.last_count[topic];
        if n < last {
            checks.mismatch(self.says(&c, format_args!("went backwards, {last} then {n}")));
        }
        self.last_count[topic] = last.max(n);
    }

    fn list_reply(&mut self, acked: &[usize], c: Check, checks: &mut Checks) {
        if !checks.enabled {
            return;
        }
        checks.checked(1);
        let Answer::Topics(Some(listed)) = &c.answer else {
            let shown = self.encoding.show(c.raw);
            return checks.mismatch(self.says(&c, format_args!("answered {shown}")));
        };
        let listed: HashSet<&[u8]> = listed.iter().copied().collect();
        if let Some(&t) = acked
            .iter()
            .find(|&&t| !listed.contains(self.encoding.topic(t)))
        {
            checks.mismatch(self.says(
                &c,
                format_args!("lacks t{t}, which had an acknowledged POST"),
            ));
        }
    }
}
