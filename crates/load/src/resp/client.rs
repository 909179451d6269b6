//! One connection of the RESP load: a keys client (a command mix over
//! keys, checked against its own [`Mirror`] when verifying), or a board
//! poster or reader (RPUSH, LINDEX, LLEN over topic lists, checked
//! against the board load's shared mirror of acknowledged posts).

use super::mirror::Mirror;
use super::workload::{topic_key, write_key, Op, Space, MULTI, RANGE};
use super::{Resp, RespLoad};
use crate::board::workload::{message_code, write_message, ReaderOp};
use crate::checks::Checks;
use crate::driver::Failure;
use crate::harness::{Exchange, Received};
use crate::kv::workload::{write_value, KeyPicker};
use serverlab_proto::resp::client::{self, Reply};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Keys,
    Poster,
    Reader,
}

/// What a reply must be, decided when its request was made.
pub enum Expect {
    /// Anything well-formed (not verifying).
    Any,
    /// Exactly these bytes.
    Exact(Vec<u8>),
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
}

pub struct Sent {
    op: Op,
    expect: Expect,
}

pub struct RespClient<'a> {
    cfg: &'a RespLoad,
    run: &'a Resp,
    pub(crate) role: Role,
    pub(crate) index: usize,
    rng: fastrand::Rng,
    opened: bool,
    /// Draws this client's keys: its own (verifying) or any.
    picker: KeyPicker,
    /// Verifying: what its own keys hold.
    mirror: Option<Mirror>,
    args: Vec<Vec<u8>>,
    /// Not verifying: one value, written once.
    fixed_value: Vec<u8>,
    seq: u64,
    pub(crate) error_replies: u64,
    pub(crate) nulls: u64,
    pub(crate) hits: u64,
    pub(crate) misses: u64,
}

impl<'a> RespClient<'a> {
    pub(crate) fn new(cfg: &'a RespLoad, run: &'a Resp, role: Role, index: usize) -> Self {
        let clients = cfg.clients();
        let owned = if cfg.verify {
            (index..cfg.keys).step_by(clients).count()
        } else {
            cfg.keys
        };
        let mirror = (cfg.verify && role == Role::Keys).then(|| {
            Mirror::new(
                (index..cfg.keys).step_by(clients),
                cfg.preload,
                cfg.value_size,
                cfg.seed,
                cfg.shared_keys,
            )
        });
        let mut fixed_value = Vec::new();
        write_value(&mut fixed_value, b"key:", cfg.seed, cfg.value_size);
        let salt = match role {
            Role::Keys => 0x5EED_2001u64,
            Role::Poster => 0x5EED_0001,
            Role::Reader => 0x5EED_1001,
        };
        RespClient {
            cfg,
            run,
            role,
            index,
            rng: fastrand::Rng::with_seed(
                cfg.seed ^ (salt + index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            opened: false,
            picker: KeyPicker::new(owned.max(1), cfg.key_pattern.0),
            mirror,
            args: Vec::new(),
            fixed_value,
            seq: 0,
            error_replies: 0,
            nulls: 0,
            hits: 0,
            misses: 0,
        }
    }

    fn who(&self) -> String {
        let role = match self.role {
            Role::Keys => "connection",
            Role::Poster => "poster",
            Role::Reader => "reader",
        };
        format!("{role} {}", self.index)
    }

    /// A key index of this client's: one it owns when verifying.
    fn own_key(&mut self) -> usize {
        let r = self.picker.pick(&mut self.rng);
        if self.mirror.is_some() {
            r * self.cfg.clients() + self.index
        } else {
            r
        }
    }

    /// A key to read: a quarter of reads go to the shared keys, if any.
    fn read_key(&mut self) -> (Space, usize) {
        if self.cfg.verify && self.cfg.shared_keys > 0 && self.rng.u8(..4) == 0 {
            (Space::Shared, self.rng.usize(..self.cfg.shared_keys))
        } else {
            (Space::Str, self.own_key())
        }
    }

    fn arg_key(&mut self, space: Space, i: usize) {
        let mut k = Vec::new();
        write_key(&mut k, space, i);
        self.args.push(k);
    }

    /// A value for key `i` of `space` (its nonce is new): self-checking
    /// when verifying, else the client's one fixed value.
    fn arg_value(&mut self, space: Space, i: usize, nonce: u64) {
        if self.mirror.is_none() {
            self.args.push(self.fixed_value.clone());
            return;
        }
        let mut k = Vec::new();
        write_key(&mut k, space, i);
        let mut v = Vec::new();
        write_value(&mut v, &k, nonce, self.cfg.value_size);
        self.args.push(v);
    }

    /// Build a keys request's arguments into `self.args`, and its exact
    /// expected reply when verifying.
    fn keys_request(&mut self, op: Op) -> Expect {
        self.args.clear();
        self.args.push(op.command().to_vec());
        let mut want = Vec::new();
        let nonce = self.rng.u64(..);
        match op {
            Op::LPush | Op::RPush | Op::LPop | Op::RPop | Op::LLen | Op::LIndex | Op::LRange => {
                self.list_request(op, nonce, &mut want)
            }
            _ => self.string_request(op, nonce, &mut want),
        }
        if self.mirror.is_some() {
            Expect::Exact(want)
        } else {
            Expect::Any
        }
    }

    /// A string command's arguments, and (verifying) its reply into `want`.
    fn string_request(&mut self, op: Op, nonce: u64, want: &mut Vec<u8>) {
        match op {
            Op::Get | Op::Exists => {
                let (space, i) = self.read_key();
                self.arg_key(space, i);
                if let Some(m) = &mut self.mirror {
                    if op == Op::Get {
                        m.get(want, space, i);
                    } else {
                        m.exists(want, space, i);
                    }
                }
            }
            Op::Set => {
                let i = self.own_key();
                self.arg_key(Space::Str, i);
                self.arg_value(Space::Str, i, nonce);
                if let Some(m) = &mut self.mirror {
                    m.set(want, i, nonce);
                }
            }
            Op::Del => {
                let i = self.own_key();
                self.arg_key(Space::Str, i);
                if let Some(m) = &mut self.mirror {
                    m.del(want, i);
                }
            }
            Op::Incr => {
                let i = self.own_key();
                self.arg_key(Space::Counter, i);
                if let Some(m) = &mut self.mirror {
                    m.incr(want, i);
                }
            }
            Op::MGet => {
                let keys: Vec<(Space, usize)> = (0..MULTI).map(|_| self.read_key()).collect();
                serverlab_proto::resp::reply::array(want, MULTI);
                for (space, i) in keys {
                    self.arg_key(space, i);
                    if let Some(m) = &mut self.mirror {
                        m.get(want, space, i);
                    }
                }
            }
            Op::MSet => {
                for n in 0..MULTI as u64 {
                    let i = self.own_key();
                    let nonce = nonce.wrapping_add(n);
                    self.arg_key(Space::Str, i);
                    self.arg_value(Space::Str, i, nonce);
                    if let Some(m) = &mut self.mirror {
                        m.set(&mut Vec::new(), i, nonce);
                    }
                }
                serverlab_proto::resp::reply::ok(want);
            }
            _ => unreachable!("keys_request sends list commands to list_request"),
        }
    }

    /// A list command's arguments, and (verifying) its reply into `want`.
    fn list_request(&mut self, op: Op, nonce: u64, want: &mut Vec<u8>) {
        match op {
            Op::LPush | Op::RPush => {
                let i = self.own_key();
                self.arg_key(Space::List, i);
                self.arg_value(Space::List, i, nonce);
                if let Some(m) = &mut self.mirror {
                    m.push(want, i, op == Op::LPush, nonce);
                }
            }
            Op::LPop | Op::RPop => {
                let i = self.own_key();
                self.arg_key(Space::List, i);
                if let Some(m) = &mut self.mirror {
                    m.pop(want, i, op == Op::LPop);
                }
            }
            Op::LLen => {
                let i = self.own_key();
                self.arg_key(Space::List, i);
                if let Some(m) = &mut self.mirror {
                    m.llen(want, i);
                }
            }
            Op::LIndex => {
                let i = self.own_key();
                self.arg_key(Space::List, i);
                let len = self.mirror.as_ref().map_or(RANGE as usize, |m| m.len(i));
                // Now and then one past the end: a nil.
                let at = self.rng.usize(..=len);
                self.args.push(at.to_string().into_bytes());
                if let Some(m) = &mut self.mirror {
                    m.lindex(want, i, at);
                }
            }
            Op::LRange => {
                let i = self.own_key();
                self.arg_key(Space::List, i);
                self.args.push(b"0".to_vec());
                self.args.push((RANGE - 1).to_string().into_bytes());
                if let Some(m) = &mut self.mirror {
                    m.lrange(want, i);
                }
            }
            _ => unreachable!("keys_request sends string commands to string_request"),
        }
    }

    fn board_request(&mut self) -> (Op, Expect) {
        let topic = self.rng.usize(..self.cfg.topics);
        let board = self.run.board.as_ref().expect("a board run has its mirror");
        self.args.clear();
        match self.role {
            Role::Poster => {
                let code = message_code(self.index, self.seq);
                self.seq += 1;
                let mut m = Vec::new();
                write_message(&mut m, code, self.cfg.message_size);
                self.args.extend([b"RPUSH".to_vec(), topic_key(topic), m]);
                (Op::RPush, Expect::Post { topic, code })
            }
            _ => match self.cfg.reader_mix.pick(&mut self.rng) {
                ReaderOp::Count => {
                    let floor = board.mirror.high(topic);
                    self.args.extend([b"LLEN".to_vec(), topic_key(topic)]);
                    (Op::LLen, Expect::Count { topic, floor })
                }
                _ => {
                    let (id, code) = match board.mirror.pick(topic, &mut self.rng) {
                        Some((id, code)) => (id, Some(code)),
                        None => (board.mirror.base(topic), None),
                    };
                    self.args.extend([
                        b"LINDEX".to_vec(),
                        topic_key(topic),
                        id.to_string().into_bytes(),
                    ]);
                    (Op::LIndex, Expect::Read { topic, id, code })
                }
            },
        }
    }

    fn check_board(&mut self, expect: &Expect, reply: &Reply, checks: &mut Checks) {
        let board = self.run.board.as_ref().expect("a board run has its mirror");
        let who = self.who();
        match *expect {
            Expect::Post { topic, code } => {
                let Reply::Int(n) = *reply else {
                    checks.checked(u64::from(checks.enabled));
                    if checks.enabled {
                        checks.mismatch(format!(
                            "{who}: RPUSH to t{topic} answered {}",
                            reply.show()
                        ));
                    }
                    return;
                };
                let acked = board.mirror.ack(topic, (n - 1).max(0) as u64, code);
                if checks.enabled {
                    checks.checked(1);
                    if let Err(e) = acked {
                        checks.mismatch(format!("{who}: RPUSH to t{topic} answered {n}: {e:?}"));
                    }
                }
            }
            Expect::Read { topic, id, code } => {
                match reply {
                    Reply::Bulk(Some(_)) => self.hits += 1,
                    _ => self.misses += 1,
                }
                let (true, Some(code)) = (checks.enabled, code) else {
                    return;
                };
                checks.checked(1);
                let mut want = Vec::new();
                write_message(&mut want, code, self.cfg.message_size);
                if *reply != Reply::Bulk(Some(&want)) {
                    checks.mismatch(format!(
                        "{who}: LINDEX t{topic} {id} answered {}, but that id was acknowledged for another message",
                        reply.show()
                    ));
                }
            }
            Expect::Count { topic, floor } => {
                if !checks.enabled {
                    return;
                }
                checks.checked(1);
                match *reply {
                    Reply::Int(n) if n >= 0 && n as u64 >= floor => {}
                    _ => checks.mismatch(format!(
                        "{who}: LLEN t{topic} answered {}, but {floor} messages were acknowledged before it was asked",
                        reply.show()
                    )),
                }
            }
            Expect::Any | Expect::Exact(_) => {}
        }
    }
}

impl Exchange for RespClient<'_> {
    type Sent = Sent;

    /// One persistent connection, opened before the run; none after it fails.
    fn connect(&mut self, _now: std::time::Instant) -> bool {
        !std::mem::replace(&mut self.opened, true)
    }

    fn request(&mut self, wire: &mut Vec<u8>) -> Option<(usize, Sent)> {
        let (op, expect) = match self.role {
            Role::Keys => {
                let op = self.cfg.mix.pick(&mut self.rng);
                (op, self.keys_request(op))
            }
            _ => self.board_request(),
        };
        let refs: Vec<&[u8]> = self.args.iter().map(Vec::as_slice).collect();
        client::command(wire, &refs);
        Some((op.index(), Sent { op, expect }))
    }

    fn reply(
        &mut self,
        input: &[u8],
        sent: &Sent,
        _rx: Received,
        checks: &mut Checks,
    ) -> Result<Option<usize>, String> {
        let Some(len) = client::skip(input).map_err(|e| e.to_string())? else {
            return Ok(None);
        };
        let got = &input[..len];
        match got.first() {
            Some(b'-') => self.error_replies += 1,
            _ if got.starts_with(b"$-1") => self.nulls += 1,
            _ => {}
        }
        match &sent.expect {
            Expect::Any => {}
            Expect::Exact(want) => {
                checks.checked(1);
                if got != want.as_slice() {
                    let show = |b: &[u8]| match client::parse(b) {
                        Ok(Some((r, _))) => r.show(),
                        _ => format!("{:?}", String::from_utf8_lossy(b)),
                    };
                    checks.mismatch(format!(
                        "{}: {} answered {}, expected {}",
                        self.who(),
                        String::from_utf8_lossy(sent.op.command()),
                        show(got),
                        show(want)
                    ));
                }
            }
            board => {
                let reply = match client::parse(got) {
                    Ok(Some((r, _))) => r,
                    _ => return Err("a reply that is not RESP".into()),
                };
                self.check_board(board, &reply, checks);
            }
        }
        Ok(Some(len))
    }

    fn failed(&mut self, failure: &Failure, _unanswered: Option<&Sent>) -> String {
        format!("{}: {failure}", self.who())
    }

    fn label(&self) -> (&'static str, usize) {
        let role = match self.role {
            Role::Keys => "connection",
            Role::Poster => "poster",
            Role::Reader => "reader",
        };
        (role, self.index)
    }
}
