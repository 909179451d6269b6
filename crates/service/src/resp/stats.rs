//! The RESP server's own statistics: requests per command, errors by
//! kind, protocol errors (each closed a connection) and the keys held.
//! Connections and service time are every protocol's ([`crate::Common`]).
//!
//! Counts go to the calling thread's stripe of [`Counters`]; reading sums.

use crate::stats::Counters;
use serde_json::{json, Map, Value};
use serverlab_proto::resp::command::{Cmd, Rejection};
use serverlab_proto::resp::frame::ProtocolError;
use serverlab_proto::resp::End;

/// Commands as the statistics count them (INCR, DECR, INCRBY and DECRBY
/// together as `incrby`; FLUSHALL and FLUSHDB as `flushall`).
const COMMANDS: [&str; 26] = [
    "ping", "echo", "get", "set", "del", "exists", "incrby", "mget", "mset", "lpush", "rpush",
    "lpop", "rpop", "llen", "lindex", "lrange", "dbsize", "flushall", "select", "info", "command",
    "config", "client", "hello", "quit", "rejected",
];

const ERRORS: usize = COMMANDS.len();
const WRONGTYPE: usize = ERRORS + Rejection::NAMES.len();
const NOT_INTEGER_VALUE: usize = WRONGTYPE + 1;
const PROTOCOL: usize = NOT_INTEGER_VALUE + 1;
const SLOTS: usize = PROTOCOL + ProtocolError::NAMES.len();

#[derive(Default)]
pub struct RespStats {
    counters: Counters<SLOTS>,
}

fn slot(all: &[&str], name: &str) -> usize {
    all.iter()
        .position(|n| *n == name)
        .expect("every name has a slot")
}

/// Its slot in [`COMMANDS`], by a match: no search per request.
fn index(cmd: &Cmd) -> usize {
    match cmd {
        Cmd::Ping(_) => 0,
        Cmd::Echo(_) => 1,
        Cmd::Get(_) => 2,
        Cmd::Set { .. } => 3,
        Cmd::Del => 4,
        Cmd::Exists => 5,
        Cmd::IncrBy { .. } => 6,
        Cmd::MGet => 7,
        Cmd::MSet => 8,
        Cmd::Push { end: End::Left, .. } => 9,
        Cmd::Push { .. } => 10,
        Cmd::Pop { end: End::Left, .. } => 11,
        Cmd::Pop { .. } => 12,
        Cmd::LLen(_) => 13,
        Cmd::LIndex { .. } => 14,
        Cmd::LRange { .. } => 15,
        Cmd::DbSize => 16,
        Cmd::Flush => 17,
        Cmd::Select => 18,
        Cmd::Info => 19,
        Cmd::Command(_) => 20,
        Cmd::ConfigGet => 21,
        Cmd::ClientSetName(_) | Cmd::ClientGetName | Cmd::ClientSetInfo | Cmd::ClientId => 22,
        Cmd::Hello(_) => 23,
        Cmd::Quit => 24,
        Cmd::Reject(_) => 25,
    }
}

impl RespStats {
    pub fn command(&self, cmd: &Cmd) {
        self.counters.add(index(cmd), 1);
    }

    pub fn rejected(&self, r: Rejection) {
        self.counters
            .add(ERRORS + slot(&Rejection::NAMES, r.name()), 1);
    }

    pub fn wrongtype(&self) {
        self.counters.add(WRONGTYPE, 1);
    }

    /// INCR of a value that is not an integer (or would overflow).
    pub fn not_integer(&self) {
        self.counters.add(NOT_INTEGER_VALUE, 1);
    }

    pub fn protocol_error(&self, e: ProtocolError) {
        self.counters
            .add(PROTOCOL + slot(&ProtocolError::NAMES, e.name()), 1);
    }

    /// The protocol's part of the final statistics.
    pub fn report(&self, keys: usize) -> Value {
        let named = |names: &[&str], base: usize| -> Map<String, Value> {
            names
                .iter()
                .enumerate()
                .filter(|(_, n)| !n.is_empty() && **n != "other")
                .map(|(i, n)| (n.to_string(), self.counters.get(base + i).into()))
                .collect()
        };
        let mut requests = Map::new();
        let total: u64 = (0..COMMANDS.len()).map(|i| self.counters.get(i)).sum();
        requests.insert("total".into(), total.into());
        requests.extend(named(&COMMANDS, 0));
        let mut errors = named(&Rejection::NAMES, ERRORS);
        errors.insert("wrongtype".into(), self.counters.get(WRONGTYPE).into());
        errors.insert(
            "not_an_integer_value".into(),
            self.counters.get(NOT_INTEGER_VALUE).into(),
        );
        json!({
            "requests": requests,
            "errors": errors,
            "protocol_errors": named(&ProtocolError::NAMES, PROTOCOL),
            "keys": keys,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_command_counts_under_its_name() {
        let s = RespStats::default();
        s.command(&Cmd::Quit);
        s.command(&Cmd::Push {
            end: End::Right,
            key: serverlab_proto::resp::Span::default(),
        });
        let r = s.report(0);
        assert_eq!(
            (
                r["requests"]["quit"].as_u64(),
                r["requests"]["rpush"].as_u64()
            ),
            (Some(1), Some(1))
        );
        assert_eq!(r["requests"]["total"], 2);
    }
}
