//! What the RESP load sends: the mix of commands, the key spaces (strings,
//! counters, lists, and shared read-only strings), how keys are drawn,
//! and values that check themselves (the kv load's: a key, a nonce and a
//! checksum, so any reply can be checked on its own).

use crate::kv::workload::KeyDist;
use serde::Serialize;
use serverlab_proto::resp::Name;
use serverlab_util::Named;
use std::fmt;
use std::str::FromStr;

/// The data commands the load sends, by the keys they act on. Their
/// spellings are proto's [`Name`] table's; `Op::index` indexes [`OPS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Str(StrOp),
    List(ListOp),
}

/// The commands on string keys the load sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrOp {
    Get,
    Set,
    Del,
    Exists,
    Incr,
    MGet,
    MSet,
}

/// The commands on list keys the load sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListOp {
    LPush,
    RPush,
    LPop,
    RPop,
    LLen,
    LIndex,
    LRange,
}

impl StrOp {
    pub const fn sends(self) -> Name {
        match self {
            StrOp::Get => Name::Get,
            StrOp::Set => Name::Set,
            StrOp::Del => Name::Del,
            StrOp::Exists => Name::Exists,
            StrOp::Incr => Name::Incr,
            StrOp::MGet => Name::MGet,
            StrOp::MSet => Name::MSet,
        }
    }
}

impl ListOp {
    pub const fn sends(self) -> Name {
        match self {
            ListOp::LPush => Name::LPush,
            ListOp::RPush => Name::RPush,
            ListOp::LPop => Name::LPop,
            ListOp::RPop => Name::RPop,
            ListOp::LLen => Name::LLen,
            ListOp::LIndex => Name::LIndex,
            ListOp::LRange => Name::LRange,
        }
    }
}

/// Every operation, in recorder order.
const ALL: [Op; 14] = {
    use {ListOp::*, StrOp::*};
    [
        Op::Str(Get),
        Op::Str(Set),
        Op::Str(Del),
        Op::Str(Exists),
        Op::Str(Incr),
        Op::Str(MGet),
        Op::Str(MSet),
        Op::List(LPush),
        Op::List(RPush),
        Op::List(LPop),
        Op::List(RPop),
        Op::List(LLen),
        Op::List(LIndex),
        Op::List(LRange),
    ]
};

/// Operation names, in recorder order ([`Op::index`]): the commands'
/// wire spellings.
pub const OPS: [&str; ALL.len()] = {
    let mut names = [""; ALL.len()];
    let mut i = 0;
    while i < ALL.len() {
        names[i] = ALL[i].sends().facts().wire;
        i += 1;
    }
    names
};

impl Op {
    /// Its slot in [`OPS`]: the string commands first, in their order, then the list commands.
    pub const fn index(self) -> usize {
        match self {
            Op::Str(s) => s as usize,
            Op::List(l) => StrOp::MSet as usize + 1 + l as usize,
        }
    }

    /// The command it sends.
    pub const fn sends(self) -> Name {
        match self {
            Op::Str(s) => s.sends(),
            Op::List(l) => l.sends(),
        }
    }

    /// The command's name on the wire.
    pub fn command(self) -> &'static [u8] {
        self.sends().facts().wire.as_bytes()
    }

    /// Which key space it works on.
    pub fn space(self) -> Space {
        match self {
            Op::Str(StrOp::Incr) => Space::Counter,
            Op::Str(_) => Space::Str,
            Op::List(_) => Space::List,
        }
    }
}

impl Named for Op {
    const WHAT: &'static str = "command";
    const ALL: &'static [Op] = &ALL;

    fn name(self) -> &'static str {
        self.sends().facts().name
    }
}

/// Commands by weight (`get=80,set=20`).
pub type Mix = serverlab_util::Mix<Op>;

pub fn default_mix() -> Mix {
    Mix::of(&[(Op::Str(StrOp::Get), 80), (Op::Str(StrOp::Set), 20)]).expect("positive weights")
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

/// How keys are drawn (`--key-pattern`, or `--key-dist`): a
/// [`KeyDist`], or `zipf` (exponent 0.99).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeyPattern(pub KeyDist);

impl FromStr for KeyPattern {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s == "zipf" {
            return Ok(KeyPattern(KeyDist::Zipf(0.99)));
        }
        s.parse().map(KeyPattern)
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
    /// Publishers PUBLISH stamped messages to channels; subscribers time
    /// and check their delivery.
    Pubsub,
}

impl Named for Workload {
    const WHAT: &'static str = "workload";
    const ALL: &'static [Workload] = &[Workload::Keys, Workload::Board, Workload::Pubsub];

    fn name(self) -> &'static str {
        match self {
            Workload::Keys => "keys",
            Workload::Board => "board",
            Workload::Pubsub => "pubsub",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Workload::Keys => "connections send a mix of data commands over keys",
            Workload::Board => {
                "posters RPUSH messages to topic lists, readers LINDEX and LLEN them (the CAPS board)"
            }
            Workload::Pubsub => {
                "publishers PUBLISH stamped messages to channels, subscribers time and check their \
                 delivery"
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
        for (i, op) in Op::ALL.iter().enumerate() {
            assert_eq!(op.index(), i);
            assert_eq!(OPS[op.index()].to_ascii_lowercase(), op.name());
        }
        assert_eq!(OPS[..3], ["GET", "SET", "DEL"]);
        assert_eq!(OPS[13], "LRANGE");
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
