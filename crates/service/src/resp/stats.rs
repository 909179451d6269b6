//! The RESP server's own statistics: requests per command, errors by
//! kind, protocol errors (each closed a connection) and the keys held.
//! Connections and service time are every protocol's ([`crate::Common`]).
//!
//! INFO's `commandstats` and `errorstats`, and `total_error_replies`,
//! are counted as Redis counts them, from each command's reply
//! ([`RespCounters::replied`]).
//!
//! Counts go to the calling thread's stripe of [`Counters`]; reading sums.

use crate::durable::DurabilityStats;
use crate::protocol_stats::{Counts, ErrorCount, ProtocolStats};
use crate::stats::Counters;
use serverlab_proto::resp::command::{Cmd, Rejection, StrCmd};
use serverlab_proto::resp::frame::ProtocolError;
use serverlab_proto::resp::Name;
use std::collections::BTreeMap;

/// A slot per name (`Name as usize`): a command counts under the
/// name it is parsed as ([`Name::parsed_as`]: INCR, DECR and DECRBY as `incrby`,
/// ); then the rejected requests.
const REJECTED: usize = Name::ALL.len();
const ERRORS: usize = REJECTED + 1;
const WRONGTYPE: usize = ERRORS + Rejection::NAMES.len();
const NOT_INTEGER_VALUE: usize = WRONGTYPE + 1;
const MISCONF: usize = NOT_INTEGER_VALUE + 1;
const PROTOCOL: usize = MISCONF + 1;
/// INFO's commandstats, a slot per name as called (INCR apart from
/// INCRBY): the calls run, the calls refused before they ran (Redis's
/// `rejected_calls`: a wrong number of arguments, MISCONF), the calls
/// that ran and answered an error (`failed_calls`).
const CALLS: usize = PROTOCOL + ProtocolError::NAMES.len();
const REJECTED_CALLS: usize = CALLS + Name::ALL.len();
const FAILED_CALLS: usize = REJECTED_CALLS + Name::ALL.len();
/// Every error reply (INFO's `total_error_replies`).
const ERROR_REPLIES: usize = FAILED_CALLS + Name::ALL.len();
const SLOTS: usize = ERROR_REPLIES + 1;

#[derive(Default)]
pub struct RespCounters {
    counters: Counters<SLOTS>,
    /// INFO's commandstats and `total_error_replies` as they were at the
    /// last CONFIG RESETSTAT (a slot per counter from [`CALLS`]): INFO
    /// answers the counts since. The final statistics count from the
    /// start.
    reset_at: parking_lot::Mutex<Vec<u64>>,
    /// Error replies by their first word (`ERR`, `WRONGTYPE`, …), in
    /// byte order as INFO's errorstats lists them. Locked only to answer
    /// an error.
    errors: parking_lot::Mutex<BTreeMap<Box<[u8]>, u64>>,
}

/// At most this many kinds of error are counted apart (Redis 7.2's
/// bound; every reply of this server has one of a few).
const ERROR_KINDS: usize = 128;

/// An error reply's kind, as Redis takes it: the word after `-`, up to a
/// space within the first 32 bytes; `ERR` if there is none.
pub(crate) fn error_kind(reply: &[u8]) -> &[u8] {
    let head = &reply[..reply.len().min(32)];
    match head.iter().position(|&c| c == b' ') {
        Some(space) if space > 1 => &head[1..space],
        _ => b"ERR",
    }
}

/// How a command's error counts in its commandstats line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Called {
    /// It ran: an error is a failed call.
    Ran(Name),
    /// Refused before it ran: an error is a rejected call, and no call.
    Refused(Name),
    /// No command: an unknown name (or subcommand) counts only as an
    /// error.
    Unknown,
}

/// The name `cmd` was called by (`first`, its first argument, tells
/// INCR from INCRBY), and whether it ran.
fn called(cmd: &Cmd, first: &[u8]) -> Called {
    let by_name = || Name::find(first);
    let name = match cmd {
        Cmd::Reject(Rejection::UnknownCommand | Rejection::UnknownSubcommand(_)) => None,
        Cmd::Reject(Rejection::WrongArity(_)) => {
            return by_name().map_or(Called::Unknown, Called::Refused)
        }
        // Redis finds these errors as the command runs.
        Cmd::Reject(_) | Cmd::Str(StrCmd::IncrBy { .. }) => by_name(),
        _ => cmd.name(),
    };
    name.map_or(Called::Unknown, Called::Ran)
}

/// The name `cmd` was called by, if it is one served (`None`: an
/// unknown command or subcommand).
pub(crate) fn called_name(cmd: &Cmd, first: &[u8]) -> Option<Name> {
    match called(cmd, first) {
        Called::Ran(n) | Called::Refused(n) => Some(n),
        Called::Unknown => None,
    }
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

impl RespCounters {
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

    /// A protocol error; its reply (`-ERR Protocol error: …`) is an
    /// error reply of no command.
    pub fn protocol_error(&self, e: ProtocolError) {
        self.counters
            .add(PROTOCOL + slot(&ProtocolError::NAMES, e.name()), 1);
        self.error_reply(b"-ERR");
    }

    /// `cmd`, whose first argument is `first`, was answered `reply`:
    /// counted for INFO's commandstats, errorstats and
    /// `total_error_replies`. A write refused by a failed log (MISCONF)
    /// is a rejected call, as Redis counts a write refused after a failed
    /// save.
    pub fn replied(&self, cmd: &Cmd, first: &[u8], reply: &[u8]) {
        let error = reply.first() == Some(&b'-');
        let mut called = called(cmd, first);
        if let Called::Ran(name) = called {
            if error && error_kind(reply) == b"MISCONF" {
                called = Called::Refused(name);
            } else {
                self.counters.add(CALLS + name as usize, 1);
            }
        }
        if !error {
            return;
        }
        self.error_reply(reply);
        match called {
            Called::Ran(name) => self.counters.add(FAILED_CALLS + name as usize, 1),
            Called::Refused(name) => self.counters.add(REJECTED_CALLS + name as usize, 1),
            Called::Unknown => {}
        }
    }

    fn error_reply(&self, reply: &[u8]) {
        self.counters.add(ERROR_REPLIES, 1);
        let kind = error_kind(reply);
        let mut errors = self.errors.lock();
        if let Some(n) = errors.get_mut(kind) {
            *n += 1;
        } else if errors.len() < ERROR_KINDS {
            errors.insert(kind.into(), 1);
        }
    }

    /// INFO's `total_error_replies`.
    pub fn error_replies(&self) -> u64 {
        self.since_reset(ERROR_REPLIES)
    }

    /// CONFIG RESETSTAT: INFO's commandstats, errorstats and
    /// `total_error_replies` start again from 0, as Redis's do.
    pub fn reset_info(&self) {
        let mut at = self.reset_at.lock();
        *at = (CALLS..SLOTS).map(|i| self.counters.get(i)).collect();
        self.errors.lock().clear();
    }

    /// Counter `i` (one of INFO's, from [`CALLS`]) since the last reset.
    fn since_reset(&self, i: usize) -> u64 {
        let base = self.reset_at.lock().get(i - CALLS).copied().unwrap_or(0);
        self.counters.get(i).saturating_sub(base)
    }

    /// INFO's errorstats: each kind of error and its count, in byte
    /// order.
    pub fn error_kinds(&self) -> Vec<(String, u64)> {
        let errors = self.errors.lock();
        errors
            .iter()
            .map(|(k, n)| (String::from_utf8_lossy(k).into_owned(), *n))
            .collect()
    }

    /// INFO's commandstats: each command called, refused or failed at
    /// least once, as (name, calls, rejected calls, failed calls), in
    /// the table's order.
    pub fn command_calls(&self) -> Vec<(&'static str, u64, u64, u64)> {
        Name::ALL
            .into_iter()
            .map(|n| {
                let i = n as usize;
                (
                    n.facts().name,
                    self.since_reset(CALLS + i),
                    self.since_reset(REJECTED_CALLS + i),
                    self.since_reset(FAILED_CALLS + i),
                )
            })
            .filter(|&(_, calls, rejected, failed)| calls + rejected + failed > 0)
            .collect()
    }

    /// The protocol's part of the final statistics, but the log's.
    pub fn stats(&self, keys: usize) -> RespStats {
        let named = |names: &[&'static str], base: usize| -> Counts {
            let counts = names
                .iter()
                .enumerate()
                .filter(|(_, n)| !n.is_empty() && **n != "other")
                .map(|(i, &n)| (n, self.counters.get(base + i)));
            Counts(counts.collect())
        };
        let by_command: Vec<_> = Name::ALL
            .into_iter()
            .filter(|n| n.parsed_as() == *n)
            .map(|n| (n.facts().name, self.counters.get(n as usize)))
            .collect();
        let rejected = self.counters.get(REJECTED);
        RespStats {
            requests: RespRequests {
                total: (0..=REJECTED).map(|i| self.counters.get(i)).sum(),
                by_command: Counts(by_command),
                rejected,
            },
            errors: RespErrors {
                rejected: named(&Rejection::NAMES, ERRORS),
                wrongtype: self.counters.get(WRONGTYPE),
                not_an_integer_value: self.counters.get(NOT_INTEGER_VALUE),
                misconf: self.counters.get(MISCONF),
            },
            protocol_errors: named(&ProtocolError::NAMES, PROTOCOL),
            keys,
            durability: None,
            pubsub: PubSubStats::default(),
        }
    }
}

/// The RESP server's own statistics.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RespStats {
    pub requests: RespRequests,
    pub errors: RespErrors,
    /// Protocol errors by kind: each closed its connection.
    pub protocol_errors: Counts,
    /// Keys in the store, every database's.
    pub keys: usize,
    /// The log's, under `--durability` other than `none`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub durability: Option<DurabilityStats>,
    pub pubsub: PubSubStats,
}

/// Publish/subscribe: what is subscribed to now, what was delivered, and
/// the subscribers cut off for falling behind (`--pubsub-limit`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct PubSubStats {
    /// Channels with subscribers now.
    pub channels: u64,
    /// Patterns subscribed to now.
    pub patterns: u64,
    /// Messages delivered, one per subscription a PUBLISH reached.
    pub messages_delivered: u64,
    /// Subscribers disconnected for falling past --pubsub-limit.
    pub slow_subscribers_disconnected: u64,
}

/// Requests by command, as the statistics name them (INCR, DECR and
/// DECRBY as `incrby`), and the rejected.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RespRequests {
    pub total: u64,
    #[serde(flatten)]
    pub by_command: Counts,
    /// Refused before they ran: unknown, or their arguments wrong.
    pub rejected: u64,
}

/// Error replies by reason.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RespErrors {
    /// The rejections, by their names.
    #[serde(flatten)]
    pub rejected: Counts,
    pub wrongtype: u64,
    /// INCR of a value that is not an integer (or would overflow).
    pub not_an_integer_value: u64,
    /// Writes refused because the log failed.
    pub misconf: u64,
}

impl ProtocolStats for RespStats {
    fn more(&self) -> Vec<crate::protocol_stats::Metric> {
        use crate::protocol_stats::Metric;
        let p = &self.pubsub;
        vec![
            Metric::gauge(
                "serverlab_resp_pubsub_channels",
                "Pub/sub channels with subscribers now.",
                p.channels,
            ),
            Metric::gauge(
                "serverlab_resp_pubsub_patterns",
                "Pub/sub patterns subscribed to now.",
                p.patterns,
            ),
            Metric::counter(
                "serverlab_resp_pubsub_messages_delivered",
                "Pub/sub messages delivered, one per subscription a PUBLISH reached.",
                p.messages_delivered,
            ),
            Metric::counter(
                "serverlab_resp_pubsub_slow_subscribers_disconnected",
                "Pub/sub subscribers disconnected for falling behind past --pubsub-limit.",
                p.slow_subscribers_disconnected,
            ),
        ]
    }

    fn requests(&self) -> Vec<(&'static str, u64)> {
        self.requests.by_command.0.clone()
    }

    fn errors(&self) -> Vec<ErrorCount> {
        let e = &self.errors;
        let mut out = e.rejected.errors(|reason| Some(reason.into()));
        out.extend([
            ErrorCount::any("wrongtype", e.wrongtype),
            ErrorCount::any("not_an_integer_value", e.not_an_integer_value),
            ErrorCount::any("misconf", e.misconf),
        ]);
        out.extend(
            self.protocol_errors
                .errors(|kind| Some(format!("protocol_{kind}"))),
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverlab_proto::resp::{ConnCmd, End, ListCmd, Span};

    #[test]
    fn an_errors_kind_is_its_first_word_as_redis_takes_it() {
        assert_eq!(error_kind(b"-ERR syntax error\r\n"), b"ERR");
        assert_eq!(
            error_kind(b"-WRONGTYPE Operation against a key"),
            b"WRONGTYPE"
        );
        assert_eq!(
            error_kind(b"-EXECABORT Transaction discarded"),
            b"EXECABORT"
        );
        // No space within 32 bytes, or none after a word: ERR.
        assert_eq!(error_kind(b"-NOSPACE\r\n"), b"ERR");
        assert_eq!(
            error_kind(&[b"-".as_slice(), &[b'X'; 40], b" x"].concat()),
            b"ERR"
        );
        assert_eq!(error_kind(b"- x"), b"ERR");
    }

    /// The counts INFO's commandstats shows for `name`.
    fn calls(s: &RespCounters, name: &str) -> Option<(u64, u64, u64)> {
        s.command_calls()
            .into_iter()
            .find(|c| c.0 == name)
            .map(|(_, calls, rejected, failed)| (calls, rejected, failed))
    }

    #[test]
    fn replies_count_calls_rejections_failures_and_errors_as_redis_does() {
        let s = RespCounters::default();
        let key = Span::default();
        let get = Cmd::Str(StrCmd::Get(key));
        s.replied(&get, b"GET", b"$1\r\nv\r\n");
        s.replied(&get, b"get", b"-WRONGTYPE Operation against a key\r\n");
        // INCR and DECR parse as INCRBY; Redis counts each by its name.
        let incr = Cmd::Str(StrCmd::IncrBy { key, by: 1 });
        s.replied(&incr, b"incr", b":1\r\n");
        s.replied(&incr, b"INCRBY", b":2\r\n");
        s.replied(
            &Cmd::Str(StrCmd::IncrBy { key, by: -1 }),
            b"DECR",
            b":1\r\n",
        );
        // A wrong number of arguments: refused before it ran.
        let arity = Cmd::Reject(Rejection::WrongArity("set"));
        s.replied(
            &arity,
            b"SET",
            b"-ERR wrong number of arguments for 'set' command\r\n",
        );
        // A syntax error: Redis finds it as SET runs.
        s.replied(
            &Cmd::Reject(Rejection::Syntax),
            b"set",
            b"-ERR syntax error\r\n",
        );
        // An unknown command counts only as an error.
        let unknown = Cmd::Reject(Rejection::UnknownCommand);
        s.replied(&unknown, b"nosuch", b"-ERR unknown command 'nosuch'\r\n");
        // A write refused by a failed log: rejected, as Redis's MISCONF.
        let set = Cmd::Str(StrCmd::Set {
            key,
            value: key,
            cond: serverlab_proto::resp::SetCond::Always,
        });
        s.replied(
            &set,
            b"SET",
            b"-MISCONF the log failed; writes are refused\r\n",
        );
        s.protocol_error(ProtocolError::UnbalancedQuotes);
        assert_eq!(calls(&s, "get"), Some((2, 0, 1)));
        assert_eq!(calls(&s, "incr"), Some((1, 0, 0)));
        assert_eq!(calls(&s, "incrby"), Some((1, 0, 0)));
        assert_eq!(calls(&s, "decr"), Some((1, 0, 0)));
        assert_eq!(calls(&s, "set"), Some((1, 2, 1)));
        assert_eq!(calls(&s, "lpush"), None, "never called: no line");
        assert_eq!(s.error_replies(), 6);
        assert_eq!(
            s.error_kinds(),
            vec![
                ("ERR".into(), 4),
                ("MISCONF".into(), 1),
                ("WRONGTYPE".into(), 1)
            ]
        );
    }

    #[test]
    fn each_command_counts_under_its_name() {
        let s = RespCounters::default();
        s.command(&Cmd::Conn(ConnCmd::Quit));
        s.command(&Cmd::List(ListCmd::Push {
            end: End::Right,
            key: serverlab_proto::resp::Span::default(),
        }));
        let r = serde_json::to_value(s.stats(0)).unwrap();
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
