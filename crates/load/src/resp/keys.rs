//! One connection of the RESP load's keys workload: a command mix over
//! keys, checked against its own [`Mirror`] when verifying.

use super::commands::{count_prefix, Fill};
use super::mirror::Mirror;
use super::workload::{write_key, ListOp, Op, Space, StrOp, MULTI, OPS, RANGE};
use super::RespLoad;
use crate::checks::Checks;
use crate::driver::Failure;
use crate::harness::{Exchange, Received};
use crate::keyspace::{KeyPicker, KeyWalk};
use crate::kv::workload::write_value;
use serverlab_proto::resp::client;
use std::collections::BTreeMap;

/// What a reply must be, decided when its request was made.
pub enum Expect {
    /// Anything well-formed (not verifying).
    Any,
    /// Exactly these bytes.
    Exact(Vec<u8>),
}

pub struct Sent {
    /// Its operation's index: in [`super::workload::OPS`], or with
    /// `--command`, among the user's own commands.
    op: usize,
    expect: Expect,
    /// With a ledger: the writes this request makes, each a key and the
    /// value it holds after (`None`: deleted), acknowledged by a reply
    /// that is exactly the one expected.
    writes: Vec<Write>,
}

/// A key and the value a write leaves in it (`None`: deleted).
type Write = (Vec<u8>, Option<Vec<u8>>);

pub struct KeysClient<'a> {
    cfg: &'a RespLoad,
    pub(crate) index: usize,
    rng: fastrand::Rng,
    opened: bool,
    /// Draws this client's keys: its own (verifying) or any.
    picker: KeyPicker,
    /// Its place when keys are drawn in sequence.
    walk: KeyWalk,
    /// Verifying: what its own keys hold.
    mirror: Option<Mirror>,
    args: Vec<Vec<u8>>,
    /// Not verifying: one value of the largest size, written once; each
    /// write sends as much of it as its size.
    fixed_value: Vec<u8>,
    /// Scratch for a command of the user's own: its key and value.
    key: Vec<u8>,
    pub(crate) error_replies: u64,
    pub(crate) error_prefixes: BTreeMap<String, u64>,
    pub(crate) nulls: u64,
}

impl<'a> KeysClient<'a> {
    pub(crate) fn new(cfg: &'a RespLoad, index: usize) -> Self {
        let clients = cfg.clients();
        let owned = if cfg.verify {
            (index..cfg.keys).step_by(clients).count()
        } else {
            cfg.keys
        };
        let mirror = cfg.verify.then(|| {
            Mirror::new(
                (index..cfg.keys).step_by(clients),
                cfg.preload,
                cfg.value_size.clone(),
                cfg.seed,
                cfg.shared_keys,
            )
        });
        let mut fixed_value = Vec::new();
        write_value(&mut fixed_value, b"key:", cfg.seed, cfg.value_size.max());
        let salt = 0x5EED_2001u64;
        // Verifying, a connection draws from its own keys (k, k + n, …):
        // a sequential walk takes them in order, which is its stride.
        let (picker, walk) = if cfg.verify {
            let picker = KeyPicker::of_share(owned.max(1), cfg.key_pattern.0, cfg.keys);
            (picker, KeyWalk::new(0, 1))
        } else {
            (
                KeyPicker::new(owned.max(1), cfg.key_pattern.0),
                KeyWalk::new(index, clients),
            )
        };
        KeysClient {
            cfg,
            index,
            rng: fastrand::Rng::with_seed(
                cfg.seed ^ (salt + index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            opened: false,
            picker,
            walk,
            mirror,
            args: Vec::new(),
            fixed_value,
            key: Vec::new(),
            error_replies: 0,
            error_prefixes: BTreeMap::new(),
            nulls: 0,
        }
    }

    fn who(&self) -> String {
        format!("connection {}", self.index)
    }

    /// A key index of this client's: one it owns when verifying.
    fn own_key(&mut self) -> usize {
        let r = self.picker.pick_walking(&mut self.rng, &mut self.walk);
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
            let size = self.cfg.value_size.pick(&mut self.rng);
            self.args.push(self.fixed_value[..size].to_vec());
            return;
        }
        let mut k = Vec::new();
        write_key(&mut k, space, i);
        let mut v = Vec::new();
        write_value(&mut v, &k, nonce, self.cfg.value_size.for_nonce(nonce));
        self.args.push(v);
    }

    /// A command of the user's own (`--command`), picked by weight, into
    /// `self.args`; its index among the commands.
    fn own_command(&mut self) -> usize {
        let cfg: &'a RespLoad = self.cfg;
        let commands = &cfg.commands;
        let total: u64 = commands.iter().map(|c| u64::from(c.weight)).sum();
        let mut at = self.rng.u64(..total.max(1));
        let k = commands
            .iter()
            .position(|c| {
                let hit = at < u64::from(c.weight);
                at = at.saturating_sub(u64::from(c.weight));
                hit
            })
            .unwrap_or(0);
        let c = &commands[k];
        let (uses_key, uses_data) = c.uses();
        if uses_key {
            let i = self.own_key();
            write_key(&mut self.key, Space::Str, i);
        }
        let size = if uses_data {
            self.cfg.value_size.pick(&mut self.rng)
        } else {
            0
        };
        let fill = Fill {
            key: &self.key,
            data: &self.fixed_value[..size],
        };
        c.build(&fill, &mut self.args);
        k
    }

    /// Build a keys request's arguments into `self.args`, and its exact
    /// expected reply when verifying.
    fn keys_request(&mut self, op: Op) -> Expect {
        self.args.clear();
        self.args.push(op.command().to_vec());
        let mut want = Vec::new();
        let nonce = self.rng.u64(..);
        match op {
            Op::Str(op) => self.string_request(op, nonce, &mut want),
            Op::List(op) => self.list_request(op, nonce, &mut want),
        }
        if self.mirror.is_some() {
            Expect::Exact(want)
        } else {
            Expect::Any
        }
    }

    /// A string command's arguments, and (verifying) its reply into `want`.
    fn string_request(&mut self, op: StrOp, nonce: u64, want: &mut Vec<u8>) {
        match op {
            StrOp::Get | StrOp::Exists => {
                let (space, i) = self.read_key();
                self.arg_key(space, i);
                if let Some(m) = &mut self.mirror {
                    if op == StrOp::Get {
                        m.get(want, space, i);
                    } else {
                        m.exists(want, space, i);
                    }
                }
            }
            StrOp::Set => {
                let i = self.own_key();
                self.arg_key(Space::Str, i);
                self.arg_value(Space::Str, i, nonce);
                if let Some(m) = &mut self.mirror {
                    m.set(want, i, nonce);
                }
            }
            StrOp::Del => {
                let i = self.own_key();
                self.arg_key(Space::Str, i);
                if let Some(m) = &mut self.mirror {
                    m.del(want, i);
                }
            }
            StrOp::Incr => {
                let i = self.own_key();
                self.arg_key(Space::Counter, i);
                if let Some(m) = &mut self.mirror {
                    m.incr(want, i);
                }
            }
            StrOp::MGet => {
                let keys: Vec<(Space, usize)> = (0..MULTI).map(|_| self.read_key()).collect();
                serverlab_proto::resp::reply::array(want, MULTI);
                for (space, i) in keys {
                    self.arg_key(space, i);
                    if let Some(m) = &mut self.mirror {
                        m.get(want, space, i);
                    }
                }
            }
            StrOp::MSet => {
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
        }
    }

    /// A list command's arguments, and (verifying) its reply into `want`.
    fn list_request(&mut self, op: ListOp, nonce: u64, want: &mut Vec<u8>) {
        match op {
            ListOp::LPush | ListOp::RPush => {
                let i = self.own_key();
                self.arg_key(Space::List, i);
                self.arg_value(Space::List, i, nonce);
                if let Some(m) = &mut self.mirror {
                    m.push(want, i, op == ListOp::LPush, nonce);
                }
            }
            ListOp::LPop | ListOp::RPop => {
                let i = self.own_key();
                self.arg_key(Space::List, i);
                if let Some(m) = &mut self.mirror {
                    m.pop(want, i, op == ListOp::LPop);
                }
            }
            ListOp::LLen => {
                let i = self.own_key();
                self.arg_key(Space::List, i);
                if let Some(m) = &mut self.mirror {
                    m.llen(want, i);
                }
            }
            ListOp::LIndex => {
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
            ListOp::LRange => {
                let i = self.own_key();
                self.arg_key(Space::List, i);
                self.args.push(b"0".to_vec());
                self.args.push((RANGE - 1).to_string().into_bytes());
                if let Some(m) = &mut self.mirror {
                    m.lrange(want, i);
                }
            }
        }
    }
}

impl KeysClient<'_> {
    /// The writes the request in `self.args` makes, for the ledger: a SET's
    /// and an MSET's values, a DEL's absence, and the count an INCR
    /// leaves (the integer its expected reply carries). List commands
    /// write nothing a GET can read back; `--ledger` refuses them.
    fn writes(&self, op: Op, expect: &Expect) -> Vec<Write> {
        let a = &self.args;
        match op {
            Op::Str(StrOp::Set) | Op::Str(StrOp::MSet) => a[1..]
                .chunks_exact(2)
                .map(|kv| (kv[0].clone(), Some(kv[1].clone())))
                .collect(),
            Op::Str(StrOp::Del) => vec![(a[1].clone(), None)],
            Op::Str(StrOp::Incr) => {
                let Expect::Exact(want) = expect else {
                    return Vec::new();
                };
                let n = want
                    .strip_prefix(b":")
                    .and_then(|w| w.strip_suffix(b"\r\n"));
                n.map(|n| vec![(a[1].clone(), Some(n.to_vec()))])
                    .unwrap_or_default()
            }
            _ => Vec::new(),
        }
    }
}

impl Exchange for KeysClient<'_> {
    type Sent = Sent;

    /// One persistent connection, opened before the run; none after it fails.
    fn connect(&mut self, _now: std::time::Instant) -> bool {
        !std::mem::replace(&mut self.opened, true)
    }

    /// `AUTH` and `SELECT`, as asked.
    fn greet(&mut self, stream: &mut dyn crate::driver::Blocking) -> std::io::Result<()> {
        super::commands::Greeting::new(self.cfg.auth.as_ref(), self.cfg.db).send(stream)
    }

    fn request(&mut self, wire: &mut Vec<u8>) -> Option<(usize, Sent)> {
        if !self.cfg.commands.is_empty() {
            let op = self.own_command();
            let refs: Vec<&[u8]> = self.args.iter().map(Vec::as_slice).collect();
            client::command(wire, &refs);
            let sent = Sent {
                op,
                expect: Expect::Any,
                writes: Vec::new(),
            };
            return Some((op, sent));
        }
        let op = self.cfg.mix.pick(&mut self.rng);
        let expect = self.keys_request(op);
        let refs: Vec<&[u8]> = self.args.iter().map(Vec::as_slice).collect();
        client::command(wire, &refs);
        let writes = match &self.cfg.ledger {
            Some(ledger) => {
                let writes = self.writes(op, &expect);
                for (k, v) in &writes {
                    ledger.sent(k, v.as_deref());
                }
                writes
            }
            None => Vec::new(),
        };
        let sent = Sent {
            op: op.index(),
            expect,
            writes,
        };
        Some((op.index(), sent))
    }

    fn reply(
        &mut self,
        input: &[u8],
        sent: &Sent,
        _rx: Received,
        checks: &mut Checks,
    ) -> Result<Option<usize>, String> {
        let Some(len) = client::skip(input).map_err(|e| super::not_resp(&e, input))? else {
            return Ok(None);
        };
        let got = &input[..len];
        match got.first() {
            Some(b'-') => {
                self.error_replies += 1;
                count_prefix(&mut self.error_prefixes, got);
            }
            _ if got.starts_with(b"$-1") => self.nulls += 1,
            _ => {}
        }
        match &sent.expect {
            Expect::Any => {}
            Expect::Exact(want) => {
                checks.checked(1);
                if got == want.as_slice() {
                    if let Some(ledger) = &self.cfg.ledger {
                        for (k, v) in &sent.writes {
                            ledger.acked(k, v.as_deref());
                        }
                    }
                } else {
                    let show = |b: &[u8]| match client::parse(b) {
                        Ok(Some((r, _))) => r.show(),
                        _ => format!("{:?}", String::from_utf8_lossy(b)),
                    };
                    checks.mismatch(format!(
                        "{}: {} answered {}, expected {}",
                        self.who(),
                        OPS[sent.op],
                        show(got),
                        show(want)
                    ));
                }
            }
        }
        Ok(Some(len))
    }

    fn failed(&mut self, failure: &Failure, _unanswered: Option<&Sent>) -> String {
        format!("{}: {failure}", self.who())
    }

    fn label(&self) -> (&'static str, usize) {
        ("connection", self.index)
    }
}
