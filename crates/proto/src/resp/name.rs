//! Every command served, written once: its spelling and Redis 7's facts
//! about it. Every list of commands is derived from [`Name`]: the
//! parser's lookup and arity check, COMMAND's reply, the server's
//! statistics, the load's operations and the fuzz model's table.

/// Where a command's keys are among its arguments: COMMAND's first key,
/// last key (-1: the last argument) and step; all 0 for none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keys {
    pub first: i64,
    pub last: i64,
    pub step: i64,
}

impl Keys {
    /// No keys.
    pub const NONE: Keys = Keys::new(0, 0, 0);
    /// The first argument.
    pub const ONE: Keys = Keys::new(1, 1, 1);
    /// Every argument.
    pub const EVERY: Keys = Keys::new(1, -1, 1);
    /// Every other argument, from the first (key/value pairs).
    pub const PAIRS: Keys = Keys::new(1, -1, 2);
    /// The first two arguments (a source and a destination).
    pub const TWO: Keys = Keys::new(1, 2, 1);
    /// Every argument but the last (a blocking pop's keys, then its
    /// timeout).
    pub const BUT_LAST: Keys = Keys::new(1, -2, 1);
    /// The second argument (a subcommand's key: OBJECT ENCODING key).
    pub const SECOND: Keys = Keys::new(2, 2, 1);

    const fn new(first: i64, last: i64, step: i64) -> Keys {
        Keys { first, last, step }
    }
}

/// Whether a command may change the data (COMMAND's `write` flag, else
/// `readonly`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// What is known of one command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// Lower case, as COMMAND lists it and error replies name it.
    pub name: &'static str,
    /// Upper case, as clients send it (the same word: checked when
    /// compiled).
    pub wire: &'static str,
    /// Redis's arity: n, exactly n arguments with the name; -n, at least n.
    pub arity: i64,
    pub access: Access,
    pub keys: Keys,
    /// COMMAND lists it (Redis 7 does not list QUIT).
    pub listed: bool,
}

impl Facts {
    /// Whether `argc` arguments (the name among them) fit the arity.
    pub fn arity_ok(&self, argc: usize) -> bool {
        arity_ok(self.arity, argc)
    }
}

/// Whether `argc` arguments fit Redis's arity `a`.
pub(crate) fn arity_ok(a: i64, argc: usize) -> bool {
    if a >= 0 {
        argc as i64 == a
    } else {
        argc as i64 >= -a
    }
}

/// The enum, its table and its lookup, from one row per command.
macro_rules! names {
    ($($variant:ident $name:literal $wire:literal $arity:literal $access:ident $keys:ident $listed:literal;)*) => {
        /// A command served, by name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Name {
            $($variant,)*
        }

        impl Name {
            /// Every name, in the order COMMAND lists them.
            pub const ALL: [Name; [$($name),*].len()] = [$(Name::$variant),*];

            pub const fn facts(self) -> &'static Facts {
                match self {
                    $(Name::$variant => &Facts {
                        name: $name,
                        wire: $wire,
                        arity: $arity,
                        access: Access::$access,
                        keys: Keys::$keys,
                        listed: $listed,
                    },)*
                }
            }

            /// The command spelled `upper` (upper case), if one is served:
            /// by a match, not a search.
            pub fn from_upper(upper: &[u8]) -> Option<Name> {
                match std::str::from_utf8(upper).ok()? {
                    $($wire => Some(Name::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

names! {
//  variant  name        wire        arity  access keys   listed
    Ping     "ping"      "PING"      -1     Read   NONE   true;
    Echo     "echo"      "ECHO"      2      Read   NONE   true;
    Get      "get"       "GET"       2      Read   ONE    true;
    Set      "set"       "SET"       -3     Write  ONE    true;
    Del      "del"       "DEL"       -2     Write  EVERY  true;
    Exists   "exists"    "EXISTS"    -2     Read   EVERY  true;
    Incr     "incr"      "INCR"      2      Write  ONE    true;
    Decr     "decr"      "DECR"      2      Write  ONE    true;
    IncrBy   "incrby"    "INCRBY"    3      Write  ONE    true;
    DecrBy   "decrby"    "DECRBY"    3      Write  ONE    true;
    MGet     "mget"      "MGET"      -2     Read   EVERY  true;
    MSet     "mset"      "MSET"      -3     Write  PAIRS  true;
    LPush    "lpush"     "LPUSH"     -3     Write  ONE    true;
    RPush    "rpush"     "RPUSH"     -3     Write  ONE    true;
    LPop     "lpop"      "LPOP"      -2     Write  ONE    true;
    RPop     "rpop"      "RPOP"      -2     Write  ONE    true;
    LLen     "llen"      "LLEN"      2      Read   ONE    true;
    LIndex   "lindex"    "LINDEX"    3      Read   ONE    true;
    LRange   "lrange"    "LRANGE"    4      Read   ONE    true;
    DbSize   "dbsize"    "DBSIZE"    1      Read   NONE   true;
    FlushAll "flushall"  "FLUSHALL"  -1     Write  NONE   true;
    FlushDb  "flushdb"   "FLUSHDB"   -1     Write  NONE   true;
    Select   "select"    "SELECT"    2      Read   NONE   true;
    Info     "info"      "INFO"      -1     Read   NONE   true;
    Command  "command"   "COMMAND"   -1     Read   NONE   true;
    Config   "config"    "CONFIG"    -2     Read   NONE   true;
    Client   "client"    "CLIENT"    -2     Read   NONE   true;
    Hello    "hello"     "HELLO"     -1     Read   NONE   true;
    Quit     "quit"      "QUIT"      -1     Read   NONE   false;
    GetEx    "getex"     "GETEX"     -2     Write  ONE    true;
    GetDel   "getdel"    "GETDEL"    2      Write  ONE    true;
    GetSet   "getset"    "GETSET"    3      Write  ONE    true;
    SetNx    "setnx"     "SETNX"     3      Write  ONE    true;
    SetEx    "setex"     "SETEX"     4      Write  ONE    true;
    PSetEx   "psetex"    "PSETEX"    4      Write  ONE    true;
    MSetNx   "msetnx"    "MSETNX"    -3     Write  PAIRS  true;
    SetRange "setrange"  "SETRANGE"  4      Write  ONE    true;
    GetRange "getrange"  "GETRANGE"  4      Read   ONE    true;
    Substr   "substr"    "SUBSTR"    4      Read   ONE    true;
    StrLen   "strlen"    "STRLEN"    2      Read   ONE    true;
    Append   "append"    "APPEND"    3      Write  ONE    true;
    IncrByFloat "incrbyfloat" "INCRBYFLOAT" 3 Write ONE  true;
    SetBit   "setbit"    "SETBIT"    4      Write  ONE    true;
    GetBit   "getbit"    "GETBIT"    3      Read   ONE    true;
    Lcs      "lcs"       "LCS"       -3     Read   TWO    true;
    LMove    "lmove"     "LMOVE"     5      Write  TWO    true;
    RPopLPush "rpoplpush" "RPOPLPUSH" 3     Write  TWO    true;
    LRem     "lrem"      "LREM"      4      Write  ONE    true;
    LPos     "lpos"      "LPOS"      -3     Read   ONE    true;
    LMPop    "lmpop"     "LMPOP"     -4     Write  NONE   true;
    LSet     "lset"      "LSET"      4      Write  ONE    true;
    LTrim    "ltrim"     "LTRIM"     4      Write  ONE    true;
    LInsert  "linsert"   "LINSERT"   5      Write  ONE    true;
    LPushX   "lpushx"    "LPUSHX"    -3     Write  ONE    true;
    RPushX   "rpushx"    "RPUSHX"    -3     Write  ONE    true;
    BLPop    "blpop"     "BLPOP"     -3     Write  BUT_LAST true;
    BRPop    "brpop"     "BRPOP"     -3     Write  BUT_LAST true;
    BLMove   "blmove"    "BLMOVE"    6      Write  TWO    true;
    BRPopLPush "brpoplpush" "BRPOPLPUSH" 4  Write  TWO    true;
    BLMPop   "blmpop"    "BLMPOP"    -5     Write  NONE   true;
    Keys     "keys"      "KEYS"      2      Read   NONE   true;
    Scan     "scan"      "SCAN"      -2     Read   NONE   true;
    Rename   "rename"    "RENAME"    3      Write  TWO    true;
    RenameNx "renamenx"  "RENAMENX"  3      Write  TWO    true;
    Copy     "copy"      "COPY"      -3     Write  TWO    true;
    Move     "move"      "MOVE"      3      Write  ONE    true;
    RandomKey "randomkey" "RANDOMKEY" 1     Read   NONE   true;
    Type     "type"      "TYPE"      2      Read   ONE    true;
    Touch    "touch"     "TOUCH"     -2     Read   EVERY  true;
    Unlink   "unlink"    "UNLINK"    -2     Write  EVERY  true;
    Expire   "expire"    "EXPIRE"    -3     Write  ONE    true;
    PExpire  "pexpire"   "PEXPIRE"   -3     Write  ONE    true;
    ExpireAt "expireat"  "EXPIREAT"  -3     Write  ONE    true;
    PExpireAt "pexpireat" "PEXPIREAT" -3    Write  ONE    true;
    Ttl      "ttl"       "TTL"       2      Read   ONE    true;
    PTtl     "pttl"      "PTTL"      2      Read   ONE    true;
    ExpireTime "expiretime" "EXPIRETIME" 2  Read   ONE    true;
    PExpireTime "pexpiretime" "PEXPIRETIME" 2 Read ONE    true;
    Persist  "persist"   "PERSIST"   2      Write  ONE    true;
    SwapDb   "swapdb"    "SWAPDB"    3      Write  NONE   true;
    Multi    "multi"     "MULTI"     1      Read   NONE   true;
    Exec     "exec"      "EXEC"      1      Write  NONE   true;
    Discard  "discard"   "DISCARD"   1      Read   NONE   true;
    Watch    "watch"     "WATCH"     -2     Read   EVERY  true;
    Unwatch  "unwatch"   "UNWATCH"   1      Read   NONE   true;
    Function "function"  "FUNCTION"  -2     Write  NONE   true;
    Object   "object"    "OBJECT"    -2     Read   SECOND true;
    Time     "time"      "TIME"      1      Read   NONE   true;
    Sort     "sort"      "SORT"      -2     Write  ONE    true;
    Dump     "dump"      "DUMP"      2      Read   ONE    true;
    Restore  "restore"   "RESTORE"   -4     Write  ONE    true;
    SAdd     "sadd"      "SADD"      -3     Write  ONE    true;
    SRem     "srem"      "SREM"      -3     Write  ONE    true;
    SIsMember "sismember" "SISMEMBER" 3     Read   ONE    true;
    SMembers "smembers"  "SMEMBERS"  2      Read   ONE    true;
    SCard    "scard"     "SCARD"     2      Read   ONE    true;
    SPop     "spop"      "SPOP"      -2     Write  ONE    true;
    SRandMember "srandmember" "SRANDMEMBER" -2 Read ONE   true;
    HSet     "hset"      "HSET"      -4     Write  ONE    true;
    HMSet    "hmset"     "HMSET"     -4     Write  ONE    true;
    HGet     "hget"      "HGET"      3      Read   ONE    true;
    HMGet    "hmget"     "HMGET"     -3     Read   ONE    true;
    HGetAll  "hgetall"   "HGETALL"   2      Read   ONE    true;
    HDel     "hdel"      "HDEL"      -3     Write  ONE    true;
    HLen     "hlen"      "HLEN"      2      Read   ONE    true;
    HIncrBy  "hincrby"   "HINCRBY"   4      Write  ONE    true;
    HExists  "hexists"   "HEXISTS"   3      Read   ONE    true;
    ZAdd     "zadd"      "ZADD"      -4     Write  ONE    true;
    ZRem     "zrem"      "ZREM"      -3     Write  ONE    true;
    ZScore   "zscore"    "ZSCORE"    3      Read   ONE    true;
    ZCard    "zcard"     "ZCARD"     2      Read   ONE    true;
    ZRange   "zrange"    "ZRANGE"    -4     Read   ONE    true;
    ZPopMin  "zpopmin"   "ZPOPMIN"   -2     Write  ONE    true;
}

impl Name {
    /// The name whose parsed command this one's is ([`super::Cmd::name`]):
    /// INCR, DECR and DECRBY parse as INCRBY with an increment; every
    /// other name is its own.
    pub const fn family(self) -> Name {
        match self {
            Name::Incr | Name::Decr | Name::DecrBy => Name::IncrBy,
            n => n,
        }
    }

    /// The names COMMAND lists.
    pub fn listed() -> impl Iterator<Item = Name> {
        Name::ALL.into_iter().filter(|n| n.facts().listed)
    }

    /// The command named `name` in any case, if one is served.
    pub fn find(name: &[u8]) -> Option<Name> {
        let mut buf = [0u8; 16];
        let upper = buf.get_mut(..name.len())?;
        for (o, c) in upper.iter_mut().zip(name) {
            *o = c.to_ascii_uppercase();
        }
        Name::from_upper(upper)
    }
}

/// Each row's two spellings are one word.
const _: () = {
    let mut i = 0;
    while i < Name::ALL.len() {
        let f = Name::ALL[i].facts();
        let (name, wire) = (f.name.as_bytes(), f.wire.as_bytes());
        assert!(name.len() == wire.len() && name.len() <= 16);
        let mut j = 0;
        while j < name.len() {
            assert!(name[j].is_ascii_lowercase() && name[j].to_ascii_uppercase() == wire[j]);
            j += 1;
        }
        i += 1;
    }
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_found_in_any_case() {
        for n in Name::ALL {
            assert_eq!(Name::find(n.facts().name.as_bytes()), Some(n));
            assert_eq!(Name::from_upper(n.facts().wire.as_bytes()), Some(n));
        }
        assert_eq!(Name::find(b"GeT"), Some(Name::Get));
        assert_eq!(Name::find(b"get "), None);
        assert_eq!(Name::find(b"averyveryverylongname"), None);
        assert_eq!(Name::listed().count(), Name::ALL.len() - 1, "all but QUIT");
        assert!(Name::ALL.iter().all(|n| n.family().family() == n.family()));
    }
}
