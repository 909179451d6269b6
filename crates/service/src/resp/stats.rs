//! The RESP server's own statistics: requests per command, errors by
//! kind, protocol errors (each closed a connection) and the keys held.
//! Connections and service time are every protocol's ([`crate::Common`]).
//!
//! Counts go to the calling thread's stripe of [`Counters`]; reading sums.

use crate::stats::Counters;
use serde_json::{json, Map, Value};
use serverlab_proto::resp::command::{Cmd, Rejection};
use serverlab_proto::resp::frame::ProtocolError;
use serverlab_proto::resp::Name;

/// A slot per name (`Name as usize`): a command counts under its
/// family's ([`Name::family`]: INCR, DECR and DECRBY as `incrby`,
/// ); then the rejected requests.
const REJECTED: usize = Name::ALL.len();
const ERRORS: usize = REJECTED + 1;
const WRONGTYPE: usize = ERRORS + Rejection::NAMES.len();
const NOT_INTEGER_VALUE: usize = WRONGTYPE + 1;
const MISCONF: usize = NOT_INTEGER_VALUE + 1;
const PROTOCOL: usize = MISCONF + 1;
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

/// Its slot, by a match: no search per request. It is the command's op
/// too ([`OPS`]).
pub(crate) fn index(cmd: &Cmd) -> usize {
    cmd.name().map_or(REJECTED, |n| n as usize)
}

/// The op of an empty request (`*0`, a blank line): applied and timed,
/// counted under no command.
pub(crate) const EMPTY_OP: usize = REJECTED + 1;

/// The ops service time is recorded by: each name's (a command counts
/// under its family's, so INCR's slot is never used), `rejected`, `empty`.
pub(crate) const OPS: [&str; EMPTY_OP + 1] = {
    let mut ops = [""; EMPTY_OP + 1];
    let mut i = 0;
    while i < Name::ALL.len() {
        ops[i] = Name::ALL[i].facts().name;
        i += 1;
    }
    ops[REJECTED] = "rejected";
    ops[EMPTY_OP] = "empty";
    ops
};

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

    /// A write refused because the log failed (`-MISCONF`).
    pub fn refused(&self) {
        self.counters.add(MISCONF, 1);
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
        let total: u64 = (0..=REJECTED).map(|i| self.counters.get(i)).sum();
        requests.insert("total".into(), total.into());
        for n in Name::ALL.into_iter().filter(|n| n.family() == *n) {
            let count = self.counters.get(n as usize);
            requests.insert(n.facts().name.into(), count.into());
        }
        requests.insert("rejected".into(), self.counters.get(REJECTED).into());
        let mut errors = named(&Rejection::NAMES, ERRORS);
        errors.insert("wrongtype".into(), self.counters.get(WRONGTYPE).into());
        errors.insert(
            "not_an_integer_value".into(),
            self.counters.get(NOT_INTEGER_VALUE).into(),
        );
        errors.insert("misconf".into(), self.counters.get(MISCONF).into());
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
    use serverlab_proto::resp::{ConnCmd, End, ListCmd};

    #[test]
    fn each_command_counts_under_its_name() {
        let s = RespStats::default();
        s.command(&Cmd::Conn(ConnCmd::Quit));
        s.command(&Cmd::List(ListCmd::Push {
            end: End::Right,
            key: serverlab_proto::resp::Span::default(),
        }));
        let r = s.report(0);
        assert_eq!(
            (
                r["requests"]["quit"].as_u64(),
                r["requests"]["rpush"].as_u64()
            ),
            (Some(1), Some(1))
        );
        assert_eq!(r["requests"]["total"], 2);
        // Every command as the statistics name them (INCR, DECR and
        // DECRBY as INCRBY), the rejected and the total.
        assert_eq!(
            r["requests"].as_object().unwrap().len(),
            Name::ALL.len() - 3 + 2
        );
        assert!(r["requests"].get("incr").is_none() && r["requests"]["incrby"] == 0);
    }
}
