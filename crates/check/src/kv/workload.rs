//! kv's concurrency workload: GET, HEAD, conditional GET, PUT, POST and
//! DELETE over a few keys, so clients collide; one partition per key.

use super::http::{read, request, request_with, tag_of, Read, Resp};
use super::model::{Cond, Key, Op, Reply};
use crate::concurrency::{Part, Record, Workload};
use crate::keyed;
use crate::wire::Conn;
use serverlab_proto::kv::client::Tag;
use serverlab_proto::kv::{digest, Digest, Method};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

/// Keys the clients share.
pub const KEYS: usize = 4;

#[derive(Debug, Clone)]
pub enum Call {
    Write {
        key: usize,
        method: Method,
        value: String,
    },
    Get {
        key: usize,
    },
    Head {
        key: usize,
    },
    /// GET with `If-None-Match` of `value`'s ETag.
    Cond {
        key: usize,
        value: String,
    },
    Delete {
        key: usize,
    },
}

impl Call {
    fn key(&self) -> usize {
        match self {
            Call::Write { key, .. }
            | Call::Get { key }
            | Call::Head { key }
            | Call::Cond { key, .. }
            | Call::Delete { key } => *key,
        }
    }
}

pub struct Load {
    pub keys: Vec<String>,
    host: String,
    /// Per key, the last value a client wrote: what conditional GETs ask
    /// about, so they match as often as not.
    last: Vec<Mutex<Option<String>>>,
}

impl Load {
    pub fn new(nonce: &str, addr: SocketAddr) -> Load {
        Load {
            keys: (0..KEYS).map(|i| format!("{nonce}-k{i}")).collect(),
            host: addr.to_string(),
            last: (0..KEYS).map(|_| Mutex::new(None)).collect(),
        }
    }

    fn wire(&self, call: &Call) -> (Vec<u8>, Method) {
        let key = self.keys[call.key()].as_bytes();
        match call {
            Call::Write { method, value, .. } => (
                request(*method, key, Some(value.as_bytes()), &self.host),
                *method,
            ),
            Call::Get { .. } => (request(Method::Get, key, None, &self.host), Method::Get),
            Call::Head { .. } => (request(Method::Head, key, None, &self.host), Method::Head),
            Call::Cond { value, .. } => {
                let inm = format!("If-None-Match: {}", tag_of(value.as_bytes()));
                (
                    request_with(Method::Get, key, &self.host, &[inm]),
                    Method::Get,
                )
            }
            Call::Delete { .. } => (
                request(Method::Delete, key, None, &self.host),
                Method::Delete,
            ),
        }
    }
}

impl Workload for Load {
    type Conn = Conn;
    type Call = Call;
    type Reply = Resp;

    fn next(&self, rng: &mut fastrand::Rng, client: usize, seq: u64) -> Call {
        let key = rng.usize(..KEYS);
        let value = format!("c{client}-{seq}");
        match rng.u8(..100) {
            0..25 => Call::Write {
                key,
                method: Method::Put,
                value,
            },
            25..35 => Call::Write {
                key,
                method: Method::Post,
                value,
            },
            35..60 => Call::Get { key },
            60..70 => Call::Head { key },
            70..85 => match self.last[key].lock().expect("not poisoned").clone() {
                Some(value) => Call::Cond { key, value },
                None => Call::Get { key },
            },
            _ => Call::Delete { key },
        }
    }

    fn perform(&self, conn: &mut Conn, call: &Call) -> Result<Resp, String> {
        let (wire, method) = self.wire(call);
        conn.send(&wire);
        let resp = match read(conn, method, Duration::ZERO) {
            Read::Resp(r) => r,
            Read::Bad(why) => {
                return Err(format!(
                    "no response to {}: {why}",
                    crate::wire::show(&wire)
                ))
            }
        };
        conn.nothing_unasked()?;
        if resp.close {
            return Err(format!(
                "the server closed the connection after {}",
                resp.show()
            ));
        }
        if let Call::Write { key, value, .. } = call {
            *self.last[*key].lock().expect("not poisoned") = Some(value.clone());
        }
        Ok(resp)
    }
}

/// One key's written values, by value and by MD5.
#[derive(Default)]
struct Values {
    list: Vec<String>,
    by_value: HashMap<String, u32>,
    by_digest: HashMap<Digest, u32>,
}

impl Values {
    fn add(&mut self, v: &str) -> u32 {
        if let Some(&i) = self.by_value.get(v) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(v.to_string());
        self.by_value.insert(v.to_string(), i);
        self.by_digest.insert(digest(v.as_bytes()), i);
        i
    }

    /// A 200's body as one of the values, its ETag checked.
    fn body(&self, r: &Resp) -> Reply<u32> {
        let Some(&i) = std::str::from_utf8(&r.body)
            .ok()
            .and_then(|b| self.by_value.get(b))
        else {
            return Err(format!(
                "200 {}, a value no write sent",
                crate::wire::show(&r.body)
            ));
        };
        if !r.etag_is_md5_of(&r.body) {
            return Err(format!(
                "200 {} with an ETag that is not its MD5",
                crate::wire::show(&r.body)
            ));
        }
        Ok(i)
    }
}

impl Load {
    /// One partition per key.
    pub fn partition(&self, history: &[Record<Call, Resp>]) -> Vec<Part<Key>> {
        let mut values: Vec<Values> = (0..KEYS).map(|_| Values::default()).collect();
        for r in history {
            if let Call::Write { key, value, .. } | Call::Cond { key, value } = &r.call {
                values[*key].add(value);
            }
        }
        let mut ops: Vec<Vec<_>> = (0..KEYS).map(|_| Vec::new()).collect();
        for r in history {
            let k = r.call.key();
            ops[k].push(r.op(op(&values[k], &r.call, &r.reply)));
        }
        let values = values.into_iter().map(|v| v.list).collect();
        keyed::parts(&self.keys, values, ops)
    }
}

fn unexpected(r: &Resp) -> String {
    format!("{}, which this request cannot answer", r.show())
}

/// The model's view of one request and its response.
fn op(values: &Values, call: &Call, r: &Resp) -> Op {
    match call {
        Call::Write { method, value, .. } => Op::Write {
            method: method.name(),
            value: values.by_value[value],
            created: match r.status {
                _ if !r.etag_is_md5_of(value.as_bytes()) => Err(format!(
                    "{} with an ETag that is not the MD5 of the value sent",
                    r.status
                )),
                201 => Ok(true),
                200 => Ok(false),
                _ => Err(unexpected(r)),
            },
        },
        Call::Get { .. } => Op::Get(match r.status {
            200 => values.body(r).map(Some),
            404 => Ok(None),
            _ => Err(unexpected(r)),
        }),
        Call::Head { .. } => Op::Head(match (r.status, r.etag) {
            (200, Tag::Digest(d)) => match values.by_digest.get(&d) {
                Some(&i) if r.content_length == Some(values.list[i as usize].len() as u64) => {
                    Ok(Some(i))
                }
                Some(_) => Err(format!(
                    "{}: a Content-Length that is not its value's",
                    r.show()
                )),
                None => Err(format!("{}: the ETag of no value written", r.show())),
            },
            (404, _) => Ok(None),
            _ => Err(unexpected(r)),
        }),
        Call::Cond { value, .. } => Op::GetIfNoneMatch {
            tag: values.by_value[value],
            got: match r.status {
                304 => Ok(Cond::NotModified),
                200 => values.body(r).map(Cond::Value),
                404 => Ok(Cond::Missing),
                _ => Err(unexpected(r)),
            },
        },
        Call::Delete { .. } => Op::Delete(match r.status {
            200 => Ok(true),
            404 => Ok(false),
            _ => Err(unexpected(r)),
        }),
    }
}
