//! The board's concurrency workload: random POST, READ, COUNT and LIST
//! over a few topics, so clients collide; and the history split into
//! one partition per topic.

use super::model::{Op, ReadReply, Topic};
use super::talk::{frame, reply_end, NUL};
use crate::concurrency::{Part, Record, Workload};
use crate::wire::{Conn, Got};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Topics the clients share.
pub const TOPICS: usize = 4;

#[derive(Debug, Clone)]
pub enum Call {
    Post { topic: usize, msg: String },
    Read { topic: usize, id: u64 },
    Count { topic: usize },
    List,
}

pub struct Load {
    pub topics: Vec<String>,
    /// Per topic, one past the highest id answered so far: where READs
    /// aim, so they find messages as often as not.
    answered: Vec<AtomicU64>,
}

impl Load {
    pub fn new(nonce: &str) -> Load {
        Load {
            topics: (0..TOPICS).map(|i| format!("{nonce}-t{i}")).collect(),
            answered: (0..TOPICS).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn wire(&self, call: &Call) -> Vec<u8> {
        let t = |i: &usize| &self.topics[*i];
        let request = match call {
            Call::Post { topic, msg } => format!("POST@{}#{msg}", t(topic)),
            Call::Read { topic, id } => format!("READ@{}#{id}", t(topic)),
            Call::Count { topic } => format!("COUNT@{}", t(topic)),
            Call::List => "LIST".into(),
        };
        frame(request.as_bytes(), NUL)
    }
}

impl Workload for Load {
    type Conn = Conn;
    type Call = Call;
    /// The reply without its terminator.
    type Reply = Vec<u8>;

    fn next(&self, rng: &mut fastrand::Rng, client: usize, seq: u64) -> Call {
        let topic = rng.usize(..TOPICS);
        match rng.u8(..100) {
            0..35 => Call::Post {
                topic,
                msg: format!("c{client}-{seq}"),
            },
            35..70 => {
                // Relaxed: only a hint for choosing ids.
                let hi = self.answered[topic].load(Ordering::Relaxed);
                Call::Read {
                    topic,
                    id: rng.u64(..=hi + 1),
                }
            }
            70..88 => Call::Count { topic },
            _ => Call::List,
        }
    }

    fn perform(&self, conn: &mut Conn, call: &Call) -> Result<Vec<u8>, String> {
        conn.send(&self.wire(call));
        match conn.read(Duration::ZERO, reply_end) {
            Got::Reply(mut r) => {
                conn.nothing_unasked()?;
                r.pop();
                if let (Call::Post { topic, .. }, Some(id)) = (call, number(&r)) {
                    self.answered[*topic].fetch_max(id + 1, Ordering::Relaxed);
                }
                Ok(r)
            }
            got => Err(format!(
                "no reply to {}: {}",
                crate::wire::show(&self.wire(call)),
                got.show()
            )),
        }
    }
}

fn number(reply: &[u8]) -> Option<u64> {
    if reply.is_empty() || !reply.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(reply).ok()?.parse().ok()
}

impl Load {
    /// One partition per topic; a LIST becomes one operation in each.
    pub fn partition(&self, history: &[Record<Call, Vec<u8>>]) -> Vec<Part<Topic>> {
        let mut parts: Vec<Part<Topic>> = self
            .topics
            .iter()
            .map(|name| Part {
                name: format!("topic {name}"),
                model: Topic { name: name.clone() },
                ops: Vec::new(),
            })
            .collect();
        // Which POST sent each message, and what it was answered.
        let mut posted: Vec<HashMap<&str, Option<u64>>> = vec![HashMap::new(); TOPICS];
        for r in history {
            if let Call::Post { topic, msg } = &r.call {
                posted[*topic].insert(msg, number(&r.reply));
            }
        }
        for r in history {
            match &r.call {
                Call::Post { topic, msg } => {
                    let id = number(&r.reply).ok_or_else(|| r.reply.clone());
                    parts[*topic].ops.push(r.op(Op::Post {
                        msg: msg.clone(),
                        id,
                    }));
                }
                Call::Read { topic, id } => {
                    let got = read_reply(&posted[*topic], &r.reply);
                    parts[*topic].ops.push(r.op(Op::Read { id: *id, got }));
                }
                Call::Count { topic } => {
                    let n = number(&r.reply).ok_or_else(|| r.reply.clone());
                    parts[*topic].ops.push(r.op(Op::Count(n)));
                }
                Call::List => {
                    let listed = serverlab_proto::board::parse_list(&r.reply);
                    for (i, part) in parts.iter_mut().enumerate() {
                        let op = match &listed {
                            Some(ts) => Ok(ts.iter().any(|t| *t == self.topics[i].as_bytes())),
                            None => Err(r.reply.clone()),
                        };
                        part.ops.push(r.op(Op::Listed(op)));
                    }
                }
            }
        }
        parts
    }
}

fn read_reply(posted: &HashMap<&str, Option<u64>>, reply: &[u8]) -> ReadReply {
    if reply.is_empty() {
        return ReadReply::Empty;
    }
    let by = std::str::from_utf8(reply)
        .ok()
        .and_then(|m| posted.get(m).map(|id| (m, id)));
    match by {
        Some((msg, Some(id))) => ReadReply::Posted {
            msg: msg.to_string(),
            id: *id,
        },
        _ => ReadReply::Foreign(reply.to_vec()),
    }
}
