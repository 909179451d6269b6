//! RESP's concurrency workload: over a few fresh keys, SET, GET, GETSET,
//! GETDEL and DEL (a register), INCRBY (a counter) and RPUSH, LINDEX,
//! LLEN and `LMOVE k k RIGHT LEFT` (a list that rotates), mostly each on
//! keys of its own kind and now and then across kinds, so WRONGTYPE is
//! checked too; one partition per key. GETSET, GETDEL and LMOVE are
//! Redis 6.2's; a server that runs them apart from its other commands (as
//! serverlab runs every command beyond its fast path alone) is checked
//! for making them one step with the rest.

use super::model::{Got, Key, Op};
use super::talk::{read, words};
use crate::concurrency::{Part, Record, Workload};
use crate::keyed;
use crate::wire::{show, Conn};
use serverlab_proto::resp::client::{self, Reply};
use std::collections::HashMap;

/// Keys the clients share: the first half mostly strings and counters,
/// the rest mostly lists.
pub const KEYS: usize = 4;

#[derive(Debug, Clone)]
pub enum Call {
    Set { key: usize, value: String },
    Get { key: usize },
    Del { key: usize },
    Incr { key: usize, by: i64 },
    RPush { key: usize, value: String },
    LIndex { key: usize, index: i64 },
    LLen { key: usize },
    GetSet { key: usize, value: String },
    GetDel { key: usize },
    Rotate { key: usize },
}

impl Call {
    fn key(&self) -> usize {
        match self {
            Call::Set { key, .. }
            | Call::Get { key }
            | Call::Del { key }
            | Call::Incr { key, .. }
            | Call::RPush { key, .. }
            | Call::LIndex { key, .. }
            | Call::LLen { key }
            | Call::GetSet { key, .. }
            | Call::GetDel { key }
            | Call::Rotate { key } => *key,
        }
    }
}

pub struct Load {
    pub keys: Vec<String>,
}

impl Load {
    pub fn new(nonce: &str) -> Load {
        Load {
            keys: (0..KEYS).map(|i| format!("{nonce}-k{i}")).collect(),
        }
    }

    fn wire(&self, call: &Call) -> Vec<u8> {
        let k = |i: &usize| self.keys[*i].as_str();
        match call {
            Call::Set { key, value } => words(&["SET", k(key), value]),
            Call::Get { key } => words(&["GET", k(key)]),
            Call::Del { key } => words(&["DEL", k(key)]),
            Call::Incr { key, by } => words(&["INCRBY", k(key), &by.to_string()]),
            Call::RPush { key, value } => words(&["RPUSH", k(key), value]),
            Call::LIndex { key, index } => words(&["LINDEX", k(key), &index.to_string()]),
            Call::LLen { key } => words(&["LLEN", k(key)]),
            Call::GetSet { key, value } => words(&["GETSET", k(key), value]),
            Call::GetDel { key } => words(&["GETDEL", k(key)]),
            Call::Rotate { key } => words(&["LMOVE", k(key), k(key), "RIGHT", "LEFT"]),
        }
    }
}

impl Workload for Load {
    type Conn = Conn;
    type Call = Call;
    /// The whole reply.
    type Reply = Vec<u8>;

    fn next(&self, rng: &mut fastrand::Rng, client: usize, seq: u64) -> Call {
        let key = rng.usize(..KEYS);
        let value = format!("c{client}-{seq}");
        // One in ten commands is of the other kind than the key's.
        let list = (key >= KEYS / 2) != (rng.u8(..10) == 0);
        if list {
            match rng.u8(..100) {
                0..35 => Call::RPush { key, value },
                35..65 => Call::LIndex {
                    key,
                    index: rng.i64(-3..20),
                },
                65..80 => Call::LLen { key },
                80..95 => Call::Rotate { key },
                _ => Call::Del { key },
            }
        } else {
            match rng.u8(..100) {
                0..25 => Call::Set { key, value },
                25..50 => Call::Get { key },
                50..75 => Call::Incr {
                    key,
                    by: rng.i64(1..4),
                },
                75..87 => Call::GetSet { key, value },
                87..94 => Call::GetDel { key },
                _ => Call::Del { key },
            }
        }
    }

    fn perform(&self, conn: &mut Conn, call: &Call) -> Result<Vec<u8>, String> {
        let wire = self.wire(call);
        conn.send(&wire);
        match read(conn).reply() {
            Some(r) => conn.nothing_unasked().map(|()| r.to_vec()),
            None => Err(format!("no reply to {}", show(&wire))),
        }
    }
}

/// A reply as the model reads it, values named by `values`.
fn got(values: &HashMap<&str, u32>, reply: &[u8]) -> Got {
    let other = || Got::Other(show(reply));
    match client::parse(reply) {
        Ok(Some((Reply::Simple(b"OK"), _))) => Got::Ok,
        Ok(Some((Reply::Bulk(None), _))) => Got::Nil,
        Ok(Some((Reply::Int(n), _))) => Got::Int(n),
        Ok(Some((Reply::Bulk(Some(b)), _))) => {
            let text = std::str::from_utf8(b).unwrap_or("");
            match (
                values.get(text),
                serverlab_proto::resp::number::parse_i64(b),
            ) {
                (Some(&v), _) => Got::Value(v),
                (None, Some(n)) => Got::Number(n),
                _ => other(),
            }
        }
        Ok(Some((Reply::Error(e), _))) if e.starts_with(b"WRONGTYPE ") => Got::WrongType,
        Ok(Some((Reply::Error(e), _))) if e.starts_with(b"ERR value is not an integer") => {
            Got::NotInteger
        }
        _ => other(),
    }
}

impl Load {
    /// One partition per key.
    pub fn partition(&self, history: &[Record<Call, Vec<u8>>]) -> Vec<Part<Key>> {
        let mut values: Vec<Vec<String>> = vec![Vec::new(); KEYS];
        for r in history {
            if let Call::Set { key, value }
            | Call::RPush { key, value }
            | Call::GetSet { key, value } = &r.call
            {
                values[*key].push(value.clone());
            }
        }
        let index: Vec<HashMap<&str, u32>> = values
            .iter()
            .map(|vs| {
                vs.iter()
                    .enumerate()
                    .map(|(i, v)| (v.as_str(), i as u32))
                    .collect()
            })
            .collect();
        let mut ops: Vec<Vec<_>> = (0..KEYS).map(|_| Vec::new()).collect();
        for r in history {
            let k = r.call.key();
            let g = got(&index[k], &r.reply);
            let op = match &r.call {
                Call::Set { value, .. } => Op::Set {
                    value: index[k][value.as_str()],
                    got: g,
                },
                Call::Get { .. } => Op::Get(g),
                Call::Del { .. } => Op::Del(g),
                Call::Incr { by, .. } => Op::Incr { by: *by, got: g },
                Call::RPush { value, .. } => Op::RPush {
                    value: index[k][value.as_str()],
                    got: g,
                },
                Call::LIndex { index: i, .. } => Op::LIndex { index: *i, got: g },
                Call::LLen { .. } => Op::LLen(g),
                Call::GetSet { value, .. } => Op::GetSet {
                    value: index[k][value.as_str()],
                    got: g,
                },
                Call::GetDel { .. } => Op::GetDel(g),
                Call::Rotate { .. } => Op::Rotate(g),
            };
            ops[k].push(r.op(op));
        }
        keyed::parts(&self.keys, values, ops)
    }
}
