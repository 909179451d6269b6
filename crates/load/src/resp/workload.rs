//! What the RESP load sends: the mix of commands, the key spaces (strings,
//! counters, lists, and shared read-only strings), how keys are drawn,
//! and values that check themselves (the kv load's: a key, a nonce and a
//! checksum, so any reply can be checked on its own).

use crate::kv::workload::KeyDist;
use serde::Serialize;
use serverlab_util::Named;
use std::fmt;
use std::str::FromStr;

/// The data commands the load sends; `Op as usize` indexes [`super::OPS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Get,
    Set,
    Del,
    Exists,
    Incr,
    MGet,
    MSet,
    LPush,
    RPush,
    LPop,
    RPop,
    LLen,
    LIndex,
    LRange,
}

impl Op {
    pub fn index(self) -> usize {
        self as usize
    }

    /// The command's name on the wire.
    pub fn command(self) -> &'static [u8] {
        super::OPS[self.index()].as_bytes()
    }

    /// Which key space it works on.
    pub fn space(self) -> Space {
        match self {
            Op::Get | Op::Set | Op::Del | Op::Exists | Op::MGet | Op::MSet => Space::Str,
            Op::Incr => Space::Counter,
            _ => Space::List,
        }
    }
}

impl Named for Op {
    const WHAT: &'static str = "command";
    const ALL: &'static [Op] = &[
        Op::Get,
        Op::Set,
        Op::Del,
        Op::Exists,
        Op::Incr,
        Op::MGet,
        Op::MSet,
        Op::LPush,
        Op::RPush,
        Op::LPop,
        Op::RPop,
        Op::LLen,
        Op::LIndex,
        Op::LRange,
    ];

    fn name(self) -> &'static str {
        match self {
            Op::Get => "get",
            Op::Set => "set",
            Op::Del => "del",
            Op::Exists => "exists",
            Op::Incr => "incr",
            Op::MGet => "mget",
            Op::MSet => "mset",
            Op::LPush => "lpush",
            Op::RPush => "rpush",
            Op::LPop => "lpop",
            Op::RPop => "rpop",
            Op::LLen => "llen",
            Op::LIndex => "lindex",
            Op::LRange => "lrange",
        }
    }
}

/// Commands by weight (`get=80,set=20`).
pub type Mix = serverlab_util::Mix<Op>;

pub fn default_mix() -> Mix {
    Mix::of(&[(Op::Get, 80), (Op::Set, 20)]).expect("positive weights")
}

/// Keys MGET and MSET name at once (as redis-benchmark's MSET: 10).
pub const MULTI: usize = 10;
/// LRANGE reads the first this many elements (redis-benchmark's lrange_100).
pub const RANGE: i64 = 100;

/// The key spaces: each command works on one, so kinds never meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    /// `key:<12 digits>`, as redis-benchmark names its keys.
    Str,
    /// `counter:<12 digits>`: INCR.
    Counter,
    /// `list:<12 digits>`.
    List,
    /// `shared:<12 digits>`: strings written before the run and only read.
    Shared,
}

impl Space {
    fn prefix(self) -> &'static [u8] {
        match self {
            Space::Str => b"key:",
            Space::Counter => b"counter:",
            Space::List => b"list:",
            Space::Shared => b"shared:",
        }
    }
}

/// Put the name of key `i` of `space` in `out` (reusing its allocation).
pub fn write_key(out: &mut Vec<u8>, space: Space, i: usize) {
    out.clear();
    out.extend_from_slice(space.prefix());
    let digits = format!("{i:012}");
    out.extend_from_slice(digits.as_bytes());
}

pub fn key(space: Space, i: usize) -> Vec<u8> {
    let mut k = Vec::new();
    write_key(&mut k, space, i);
    k
}

/// How keys are drawn (`--key-pattern`): `uniform`, `zipf` (exponent
/// 0.99) or `zipf:S`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeyPattern(pub KeyDist);

impl FromStr for KeyPattern {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s == "zipf" {
            return Ok(KeyPattern(KeyDist::Zipf(0.99)));
        }
        s.parse()
            .map(KeyPattern)
            .map_err(|_| format!("'{s}' is not uniform, zipf or zipf:S (example: zipf:1.2)"))
    }
}

impl fmt::Display for KeyPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for KeyPattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// What the load does: keys under a command mix, or the message board
/// mapped onto lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    Keys,
    /// Posters RPUSH to topic lists (the new length is the id + 1);
    /// readers LINDEX an acknowledged id, or LLEN a topic (COUNT).
    Board,
}

impl Named for Workload {
    const WHAT: &'static str = "workload";
    const ALL: &'static [Workload] = &[Workload::Keys, Workload::Board];

    fn name(self) -> &'static str {
        match self {
            Workload::Keys => "keys",
            Workload::Board => "board",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Workload::Keys => "connections send a mix of data commands over keys",
            Workload::Board => {
                "posters RPUSH messages to topic lists, readers LINDEX and LLEN them (the CAPS board)"
            }
        }
    }
}

serverlab_util::named_enum_impls!(Workload);

impl Serialize for Workload {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The name of board topic `t`'s list.
pub fn topic_key(t: usize) -> Vec<u8> {
    format!("board:t{t}").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_parsing() {
        assert_eq!(key(Space::Str, 7), b"key:000000000007");
        assert_eq!(key(Space::List, 1234), b"list:000000001234");
        for op in Op::ALL {
            assert_eq!(
                super::super::OPS[op.index()].to_ascii_lowercase(),
                op.name()
            );
        }
        assert_eq!("get=80,set=20".parse::<Mix>(), Ok(default_mix()));
        assert!("get=1,hset=1".parse::<Mix>().is_err());
        assert_eq!(
            "zipf".parse::<KeyPattern>().unwrap().to_string(),
            "zipf:0.99"
        );
        assert_eq!(
            "uniform".parse::<KeyPattern>(),
            Ok(KeyPattern(KeyDist::Uniform))
        );
        assert!("normal".parse::<KeyPattern>().is_err());
        assert_eq!("board".parse::<Workload>(), Ok(Workload::Board));
    }
}
