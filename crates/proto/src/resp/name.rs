//! Every command served, written once: its spelling and Redis 7's facts
//! about it, where its keys are and what it does to each, and the
//! family that runs it. Every list of commands and every fact about one
//! is derived from [`Name`]: the parser's lookup and arity check,
//! COMMAND's reply, the server's statistics, the load's operations, the
//! service's key lists, its log marks and the family it dispatches to,
//! and the fuzz model's table.

/// What a command does to one of its keys (Redis's key-spec flags,
/// coarsely).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Read, never changed (GET's, COPY's source, SORT's key).
    Read,
    /// Written without being read first: replaced or removed (SET's,
    /// DEL's, COPY's and SORT … STORE's destination).
    Write,
    /// Read and changed (INCR's, a push's, SADD's, LMOVE's two keys).
    Both,
}

impl Role {
    /// Whether the command may change the key.
    pub const fn writes(self) -> bool {
        !matches!(self, Role::Read)
    }
}

/// How to find some of a command's keys among its arguments (argument
/// 0 is the command's name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Find {
    /// Arguments `first` to `last` (negative: counted from the end, -1
    /// the last argument), every `step`-th.
    Range { first: i64, last: i64, step: i64 },
    /// A count of keys at argument `at`, then that many keys (LMPOP's
    /// `numkeys`; one that is no number, or negative, counts none, and
    /// the count stops at the last argument).
    Counted { at: usize },
    /// The argument of option `word` among the options from argument
    /// `from`, each option taking as many arguments as `options` says
    /// (SORT's `STORE destination`); the last one given counts. As
    /// Redis's `sortGetKeys` reads them: a word not in `options` is
    /// passed over (the command then fails with a syntax error), and
    /// `word` last, without its argument, names nothing.
    Option {
        word: &'static str,
        from: usize,
        options: &'static [(&'static str, usize)],
    },
    /// Keys the command computes from the data as it runs (SORT's `BY`
    /// and `GET` patterns): its family names them as it reads them.
    Computed,
}

/// One part of a command's key spec: where some keys are, and what the
/// command does to them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub find: Find,
    pub role: Role,
}

/// The key specs of the table's rows, each named by what it covers.
pub mod specs {
    use super::{Find, Key, Role};

    const fn range(first: i64, last: i64, step: i64, role: Role) -> Key {
        Key {
            find: Find::Range { first, last, step },
            role,
        }
    }

    /// No keys.
    pub const NONE: &[Key] = &[];
    /// The first argument, read.
    pub const READ_ONE: &[Key] = &[range(1, 1, 1, Role::Read)];
    /// The first argument, replaced or removed.
    pub const WRITE_ONE: &[Key] = &[range(1, 1, 1, Role::Write)];
    /// The first argument, read and changed.
    pub const CHANGE_ONE: &[Key] = &[range(1, 1, 1, Role::Both)];
    /// Every argument, read.
    pub const READ_EVERY: &[Key] = &[range(1, -1, 1, Role::Read)];
    /// Every argument, removed.
    pub const WRITE_EVERY: &[Key] = &[range(1, -1, 1, Role::Write)];
    /// Every other argument from the first (key/value pairs), replaced.
    pub const WRITE_PAIRS: &[Key] = &[range(1, -1, 2, Role::Write)];
    /// The first two arguments, read.
    pub const READ_TWO: &[Key] = &[range(1, 2, 1, Role::Read)];
    /// The first two arguments, read and changed (a source and a
    /// destination list).
    pub const CHANGE_TWO: &[Key] = &[range(1, 2, 1, Role::Both)];
    /// Every argument but the last, read and changed (a blocking pop's
    /// keys, then its timeout).
    pub const CHANGE_BUT_LAST: &[Key] = &[range(1, -2, 1, Role::Both)];
    /// The second argument, read (a subcommand's key: OBJECT ENCODING
    /// key).
    pub const READ_SECOND: &[Key] = &[range(2, 2, 1, Role::Read)];
    /// RENAME: the source moved away, the destination replaced.
    pub const RENAME: &[Key] = &[range(1, 1, 1, Role::Both), range(2, 2, 1, Role::Write)];
    /// COPY: the source read, the destination replaced.
    pub const COPY: &[Key] = &[range(1, 1, 1, Role::Read), range(2, 2, 1, Role::Write)];
    /// SINTERSTORE destination key… (SUNIONSTORE, SDIFFSTORE): the
    /// destination replaced, the other keys read.
    pub const STORE_REST: &[Key] = &[range(1, 1, 1, Role::Write), range(2, -1, 1, Role::Read)];
    /// SINTERCARD numkeys key… : the counted keys, read.
    pub const SINTERCARD: &[Key] = &[Key {
        find: Find::Counted { at: 1 },
        role: Role::Read,
    }];
    /// ZRANGESTORE destination source …: the destination replaced, the
    /// source read.
    pub const RANGESTORE: &[Key] = &[range(1, 1, 1, Role::Write), range(2, 2, 1, Role::Read)];
    /// ZUNIONSTORE destination numkeys key… (ZINTERSTORE, ZDIFFSTORE):
    /// the destination replaced, the counted keys read.
    pub const ZSTORE: &[Key] = &[
        range(1, 1, 1, Role::Write),
        Key {
            find: Find::Counted { at: 2 },
            role: Role::Read,
        },
    ];
    /// LMPOP numkeys key… : the counted keys.
    pub const LMPOP: &[Key] = &[Key {
        find: Find::Counted { at: 1 },
        role: Role::Both,
    }];
    /// BLMPOP timeout numkeys key… : the counted keys.
    pub const BLMPOP: &[Key] = &[Key {
        find: Find::Counted { at: 2 },
        role: Role::Both,
    }];
    /// SORT key [BY pattern] [LIMIT offset count] [GET pattern …]
    /// [ASC|DESC] [ALPHA] [STORE destination]: the key read, STORE's
    /// destination replaced, and the keys its patterns name read.
    pub const SORT: &[Key] = &[
        range(1, 1, 1, Role::Read),
        Key {
            find: Find::Option {
                word: "store",
                from: 2,
                options: &[
                    ("asc", 0),
                    ("desc", 0),
                    ("alpha", 0),
                    ("limit", 2),
                    ("store", 1),
                    ("by", 1),
                    ("get", 1),
                ],
            },
            role: Role::Write,
        },
        Key {
            find: Find::Computed,
            role: Role::Read,
        },
    ];
    /// SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern …]
    /// [ASC|DESC] [ALPHA]: the key read, and the keys its patterns name.
    pub const SORT_RO: &[Key] = &[
        range(1, 1, 1, Role::Read),
        Key {
            find: Find::Computed,
            role: Role::Read,
        },
    ];
}

/// COMMAND's first key, last key (-1: the last argument) and step, all
/// 0 for none: Redis's "legacy" key range, derived from the key spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keys {
    pub first: i64,
    pub last: i64,
    pub step: i64,
}

/// Whether a command may change the data (COMMAND's `write` flag, else
/// `readonly`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// A command's flags beyond its access, as a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flags(u8);

impl Flags {
    pub const NONE: Flags = Flags(0);
    /// It may wait for a key to be written (a blocking pop).
    pub const BLOCKING: Flags = Flags(1);
    /// It reads or writes every key of a database, or of all of them
    /// (KEYS, SCAN, DBSIZE, FLUSHALL, SWAPDB, …): its key spec names
    /// none.
    pub const ALL_KEYS: Flags = Flags(2);
    /// It is about the server's administration (CONFIG, CLIENT).
    pub const ADMIN: Flags = Flags(4);
    /// What it changed may be logged as other commands than it arrived
    /// as: a relative deadline as an absolute one (`EXPIRE` as
    /// `PEXPIREAT`), a random pick as what was picked (`SPOP` as
    /// `SREM`), a blocking pop as the pop it came to. Every other write
    /// is logged as it arrived.
    pub const LOGGED_AS_OTHER: Flags = Flags(8);

    pub const fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    pub const fn has(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
}

/// The part of the service that runs a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Parsed into a typed [`Cmd`](super::Cmd) and run on the fast path,
    /// beside every other command (or on the connection itself: SELECT,
    /// HELLO, QUIT).
    Fast,
    /// MULTI, EXEC, DISCARD, WATCH, UNWATCH.
    Transaction,
    /// The rest run alone, each family a module of the service: the
    /// string commands (and SET's options beyond NX and XX).
    Strings,
    /// The list commands beyond the fast path, the blocking pops'
    /// tries among them.
    Lists,
    /// The keyspace and deadlines.
    Keys,
    /// Sets, hashes and sorted sets.
    Colls,
    Sort,
    /// DUMP and RESTORE.
    Dump,
    /// FLUSHALL, FLUSHDB, SWAPDB, CONFIG (but GET), FUNCTION, CLIENT
    /// (but its connection's own subcommands), OBJECT, MEMORY, TIME.
    Server,
    /// Publish/subscribe (SUBSCRIBE, PUBLISH, PUBSUB, …) and RESET: run
    /// on the connection and the channels' registry, never on the data.
    PubSub,
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
    pub flags: Flags,
    /// Where its keys are, and what it does to each (none with
    /// [`Flags::ALL_KEYS`]).
    pub keys: &'static [Key],
    pub family: Family,
    /// COMMAND lists it (Redis 7 does not list QUIT).
    pub listed: bool,
}

impl Facts {
    /// Whether `argc` arguments (the name among them) fit the arity.
    pub fn arity_ok(&self, argc: usize) -> bool {
        arity_ok(self.arity, argc)
    }

    pub const fn writes(&self) -> bool {
        matches!(self.access, Access::Write)
    }

    pub const fn has(&self, flag: Flags) -> bool {
        self.flags.has(flag)
    }

    /// COMMAND's first key, last key and step: the leading ranges of the
    /// key spec, joined where one follows the other (COPY's source and
    /// destination are 1, 2, 1); all 0 when the spec starts otherwise
    /// (LMPOP's counted keys).
    pub fn legacy_keys(&self) -> Keys {
        self.legacy().0
    }

    /// Whether some keys are beyond the legacy range (COMMAND's
    /// `movablekeys` flag): counted (ZUNIONSTORE's), an option's
    /// argument or computed (SORT's), or a range not joined to the first.
    pub fn movable_keys(&self) -> bool {
        self.legacy().1 < self.keys.len()
    }

    /// The legacy range, and how many of the key spec's parts it covers.
    fn legacy(&self) -> (Keys, usize) {
        let mut k = Keys {
            first: 0,
            last: 0,
            step: 0,
        };
        let mut covered = 0;
        for key in self.keys {
            let Find::Range { first, last, step } = key.find else {
                break;
            };
            if k.step == 0 {
                k = Keys { first, last, step };
            } else if step == k.step && k.last >= 0 && first == k.last + step {
                k.last = last;
            } else {
                break;
            }
            covered += 1;
        }
        (k, covered)
    }

    /// COMMAND GETKEYS: the index of each key the arguments name (`argc`
    /// of them, `arg` reading one), as Redis's `getKeysFromCommand`
    /// finds them, or `None` where Redis says the arguments are invalid
    /// (a count of keys that is no number, below 1 or past the
    /// arguments; no key found). The arity is checked before.
    pub fn key_indices<'a>(
        &self,
        argc: usize,
        arg: impl Fn(usize) -> &'a [u8],
    ) -> Option<Vec<usize>> {
        for key in self.keys {
            if let Find::Counted { at } = key.find {
                let n = super::number::parse_i64(arg(at))?;
                if n < 1 || n > (argc - at - 1) as i64 {
                    return None;
                }
            }
        }
        let mut found = Vec::new();
        self.each_key(argc, arg, |i, _| found.push(i));
        (!found.is_empty()).then_some(found)
    }

    /// Each key the arguments name (`argc` of them, `arg` reading one),
    /// as its argument's index and role, in the spec's order: [`Find::Computed`]
    /// keys are not among them (their family names them as it reads
    /// them), nor, with [`Flags::ALL_KEYS`], any (it touches every key).
    pub fn each_key<'a>(
        &self,
        argc: usize,
        arg: impl Fn(usize) -> &'a [u8],
        mut each: impl FnMut(usize, Role),
    ) {
        for key in self.keys {
            match key.find {
                Find::Range { first, last, step } => {
                    let last = if last < 0 {
                        argc as i64 + last
                    } else {
                        last.min(argc as i64 - 1)
                    };
                    let mut i = first;
                    while i <= last && step > 0 {
                        each(i as usize, key.role);
                        i += step;
                    }
                }
                Find::Counted { at } => {
                    if at >= argc {
                        continue;
                    }
                    let n = super::number::parse_i64(arg(at))
                        .unwrap_or(0)
                        .clamp(0, argc as i64) as usize;
                    (at + 1..argc).take(n).for_each(|i| each(i, key.role));
                }
                Find::Option {
                    word,
                    from,
                    options,
                } => {
                    if let Some(i) = option_arg(argc, &arg, word, from, options) {
                        each(i, key.role);
                    }
                }
                Find::Computed => {}
            }
        }
    }

    /// Whether some keys are computed as the command runs
    /// ([`Find::Computed`]).
    pub fn computes_keys(&self) -> bool {
        self.keys.iter().any(|k| k.find == Find::Computed)
    }
}

/// The argument of option `word` (see [`Find::Option`]).
fn option_arg<'a>(
    argc: usize,
    arg: &impl Fn(usize) -> &'a [u8],
    word: &str,
    from: usize,
    options: &[(&str, usize)],
) -> Option<usize> {
    let mut found = None;
    let mut j = from;
    while j < argc {
        let given = arg(j);
        if let Some((name, takes)) = options
            .iter()
            .find(|(o, _)| given.eq_ignore_ascii_case(o.as_bytes()))
        {
            if *name == word && j + takes < argc {
                found = Some(j + 1);
            }
            j += takes;
        }
        j += 1;
    }
    found
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
    ($($variant:ident $name:literal $wire:literal $arity:literal $access:ident $keys:ident
       [$($flag:ident)*] $family:ident $listed:literal;)*) => {
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
                        flags: Flags(0 $(| Flags::$flag.0)*),
                        keys: specs::$keys,
                        family: Family::$family,
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
//  variant      name           wire           arity  access  keys             flags                       family       listed
    Ping         "ping"         "PING"         -1  Read   NONE             []                          Fast         true;
    Echo         "echo"         "ECHO"         2   Read   NONE             []                          Fast         true;
    Get          "get"          "GET"          2   Read   READ_ONE         []                          Fast         true;
    Set          "set"          "SET"          -3  Write  WRITE_ONE        [LOGGED_AS_OTHER]           Strings      true;
    Del          "del"          "DEL"          -2  Write  WRITE_EVERY      []                          Fast         true;
    Exists       "exists"       "EXISTS"       -2  Read   READ_EVERY       []                          Fast         true;
    Incr         "incr"         "INCR"         2   Write  CHANGE_ONE       []                          Fast         true;
    Decr         "decr"         "DECR"         2   Write  CHANGE_ONE       []                          Fast         true;
    IncrBy       "incrby"       "INCRBY"       3   Write  CHANGE_ONE       []                          Fast         true;
    DecrBy       "decrby"       "DECRBY"       3   Write  CHANGE_ONE       []                          Fast         true;
    MGet         "mget"         "MGET"         -2  Read   READ_EVERY       []                          Fast         true;
    MSet         "mset"         "MSET"         -3  Write  WRITE_PAIRS      []                          Fast         true;
    LPush        "lpush"        "LPUSH"        -3  Write  CHANGE_ONE       []                          Fast         true;
    RPush        "rpush"        "RPUSH"        -3  Write  CHANGE_ONE       []                          Fast         true;
    LPop         "lpop"         "LPOP"         -2  Write  CHANGE_ONE       []                          Fast         true;
    RPop         "rpop"         "RPOP"         -2  Write  CHANGE_ONE       []                          Fast         true;
    LLen         "llen"         "LLEN"         2   Read   READ_ONE         []                          Fast         true;
    LIndex       "lindex"       "LINDEX"       3   Read   READ_ONE         []                          Fast         true;
    LRange       "lrange"       "LRANGE"       4   Read   READ_ONE         []                          Fast         true;
    DbSize       "dbsize"       "DBSIZE"       1   Read   NONE             [ALL_KEYS]                  Fast         true;
    FlushAll     "flushall"     "FLUSHALL"     -1  Write  NONE             [ALL_KEYS]                  Server       true;
    FlushDb      "flushdb"      "FLUSHDB"      -1  Write  NONE             [ALL_KEYS]                  Server       true;
    Select       "select"       "SELECT"       2   Read   NONE             []                          Fast         true;
    Info         "info"         "INFO"         -1  Read   NONE             [ALL_KEYS]                  Fast         true;
    Command      "command"      "COMMAND"      -1  Read   NONE             []                          Fast         true;
    Config       "config"       "CONFIG"       -2  Read   NONE             [ADMIN]                     Server       true;
    Client       "client"       "CLIENT"       -2  Read   NONE             [ADMIN]                     Server       true;
    Hello        "hello"        "HELLO"        -1  Read   NONE             []                          Fast         true;
    Quit         "quit"         "QUIT"         -1  Read   NONE             []                          Fast         false;
    Reset        "reset"        "RESET"        1   Read   NONE             []                          Fast         true;
    GetEx        "getex"        "GETEX"        -2  Write  CHANGE_ONE       [LOGGED_AS_OTHER]           Strings      true;
    GetDel       "getdel"       "GETDEL"       2   Write  CHANGE_ONE       [LOGGED_AS_OTHER]           Strings      true;
    GetSet       "getset"       "GETSET"       3   Write  CHANGE_ONE       [LOGGED_AS_OTHER]           Strings      true;
    SetNx        "setnx"        "SETNX"        3   Write  WRITE_ONE        []                          Strings      true;
    SetEx        "setex"        "SETEX"        4   Write  WRITE_ONE        [LOGGED_AS_OTHER]           Strings      true;
    PSetEx       "psetex"       "PSETEX"       4   Write  WRITE_ONE        [LOGGED_AS_OTHER]           Strings      true;
    MSetNx       "msetnx"       "MSETNX"       -3  Write  WRITE_PAIRS      []                          Strings      true;
    SetRange     "setrange"     "SETRANGE"     4   Write  CHANGE_ONE       []                          Strings      true;
    GetRange     "getrange"     "GETRANGE"     4   Read   READ_ONE         []                          Strings      true;
    Substr       "substr"       "SUBSTR"       4   Read   READ_ONE         []                          Strings      true;
    StrLen       "strlen"       "STRLEN"       2   Read   READ_ONE         []                          Strings      true;
    Append       "append"       "APPEND"       3   Write  CHANGE_ONE       []                          Strings      true;
    IncrByFloat  "incrbyfloat"  "INCRBYFLOAT"  3   Write  CHANGE_ONE       [LOGGED_AS_OTHER]           Strings      true;
    SetBit       "setbit"       "SETBIT"       4   Write  CHANGE_ONE       []                          Strings      true;
    GetBit       "getbit"       "GETBIT"       3   Read   READ_ONE         []                          Strings      true;
    Lcs          "lcs"          "LCS"          -3  Read   READ_TWO         []                          Strings      true;
    LMove        "lmove"        "LMOVE"        5   Write  CHANGE_TWO       []                          Lists        true;
    RPopLPush    "rpoplpush"    "RPOPLPUSH"    3   Write  CHANGE_TWO       []                          Lists        true;
    LRem         "lrem"         "LREM"         4   Write  CHANGE_ONE       []                          Lists        true;
    LPos         "lpos"         "LPOS"         -3  Read   READ_ONE         []                          Lists        true;
    LMPop        "lmpop"        "LMPOP"        -4  Write  LMPOP            [LOGGED_AS_OTHER]           Lists        true;
    LSet         "lset"         "LSET"         4   Write  CHANGE_ONE       []                          Lists        true;
    LTrim        "ltrim"        "LTRIM"        4   Write  CHANGE_ONE       []                          Lists        true;
    LInsert      "linsert"      "LINSERT"      5   Write  CHANGE_ONE       []                          Lists        true;
    LPushX       "lpushx"       "LPUSHX"       -3  Write  CHANGE_ONE       []                          Lists        true;
    RPushX       "rpushx"       "RPUSHX"       -3  Write  CHANGE_ONE       []                          Lists        true;
    BLPop        "blpop"        "BLPOP"        -3  Write  CHANGE_BUT_LAST  [BLOCKING LOGGED_AS_OTHER]  Lists        true;
    BRPop        "brpop"        "BRPOP"        -3  Write  CHANGE_BUT_LAST  [BLOCKING LOGGED_AS_OTHER]  Lists        true;
    BLMove       "blmove"       "BLMOVE"       6   Write  CHANGE_TWO       [BLOCKING LOGGED_AS_OTHER]  Lists        true;
    BRPopLPush   "brpoplpush"   "BRPOPLPUSH"   4   Write  CHANGE_TWO       [BLOCKING LOGGED_AS_OTHER]  Lists        true;
    BLMPop       "blmpop"       "BLMPOP"       -5  Write  BLMPOP           [BLOCKING LOGGED_AS_OTHER]  Lists        true;
    Keys         "keys"         "KEYS"         2   Read   NONE             [ALL_KEYS]                  Keys         true;
    Scan         "scan"         "SCAN"         -2  Read   NONE             [ALL_KEYS]                  Keys         true;
    Rename       "rename"       "RENAME"       3   Write  RENAME           []                          Keys         true;
    RenameNx     "renamenx"     "RENAMENX"     3   Write  RENAME           []                          Keys         true;
    Copy         "copy"         "COPY"         -3  Write  COPY             []                          Keys         true;
    Move         "move"         "MOVE"         3   Write  CHANGE_ONE       []                          Keys         true;
    RandomKey    "randomkey"    "RANDOMKEY"    1   Read   NONE             [ALL_KEYS]                  Keys         true;
    Type         "type"         "TYPE"         2   Read   READ_ONE         []                          Keys         true;
    Touch        "touch"        "TOUCH"        -2  Read   READ_EVERY       []                          Keys         true;
    Unlink       "unlink"       "UNLINK"       -2  Write  WRITE_EVERY      []                          Keys         true;
    Expire       "expire"       "EXPIRE"       -3  Write  CHANGE_ONE       [LOGGED_AS_OTHER]           Keys         true;
    PExpire      "pexpire"      "PEXPIRE"      -3  Write  CHANGE_ONE       [LOGGED_AS_OTHER]           Keys         true;
    ExpireAt     "expireat"     "EXPIREAT"     -3  Write  CHANGE_ONE       [LOGGED_AS_OTHER]           Keys         true;
    PExpireAt    "pexpireat"    "PEXPIREAT"    -3  Write  CHANGE_ONE       [LOGGED_AS_OTHER]           Keys         true;
    Ttl          "ttl"          "TTL"          2   Read   READ_ONE         []                          Keys         true;
    PTtl         "pttl"         "PTTL"         2   Read   READ_ONE         []                          Keys         true;
    ExpireTime   "expiretime"   "EXPIRETIME"   2   Read   READ_ONE         []                          Keys         true;
    PExpireTime  "pexpiretime"  "PEXPIRETIME"  2   Read   READ_ONE         []                          Keys         true;
    Persist      "persist"      "PERSIST"      2   Write  CHANGE_ONE       []                          Keys         true;
    SwapDb       "swapdb"       "SWAPDB"       3   Write  NONE             [ALL_KEYS]                  Server       true;
    Multi        "multi"        "MULTI"        1   Read   NONE             []                          Transaction  true;
    Exec         "exec"         "EXEC"         1   Write  NONE             []                          Transaction  true;
    Discard      "discard"      "DISCARD"      1   Read   NONE             []                          Transaction  true;
    Watch        "watch"        "WATCH"        -2  Read   READ_EVERY       []                          Transaction  true;
    Unwatch      "unwatch"      "UNWATCH"      1   Read   NONE             []                          Transaction  true;
    Function     "function"     "FUNCTION"     -2  Write  NONE             []                          Server       true;
    Object       "object"       "OBJECT"       -2  Read   READ_SECOND      []                          Server       true;
    Time         "time"         "TIME"         1   Read   NONE             []                          Server       true;
    Memory       "memory"       "MEMORY"       -2  Read   READ_SECOND      []                          Server       true;
    Sort         "sort"         "SORT"         -2  Write  SORT             []                          Sort         true;
    SortRo       "sort_ro"      "SORT_RO"      -2  Read   SORT_RO          []                          Sort         true;
    Dump         "dump"         "DUMP"         2   Read   READ_ONE         []                          Dump         true;
    Restore      "restore"      "RESTORE"      -4  Write  WRITE_ONE        [LOGGED_AS_OTHER]           Dump         true;
    SAdd         "sadd"         "SADD"         -3  Write  CHANGE_ONE       []                          Colls        true;
    SRem         "srem"         "SREM"         -3  Write  CHANGE_ONE       []                          Colls        true;
    SIsMember    "sismember"    "SISMEMBER"    3   Read   READ_ONE         []                          Colls        true;
    SMembers     "smembers"     "SMEMBERS"     2   Read   READ_ONE         []                          Colls        true;
    SCard        "scard"        "SCARD"        2   Read   READ_ONE         []                          Colls        true;
    SPop         "spop"         "SPOP"         -2  Write  CHANGE_ONE       [LOGGED_AS_OTHER]           Colls        true;
    SRandMember  "srandmember"  "SRANDMEMBER"  -2  Read   READ_ONE         []                          Colls        true;
    SMove        "smove"        "SMOVE"        4   Write  CHANGE_TWO       []                          Colls        true;
    SMIsMember   "smismember"   "SMISMEMBER"   -3  Read   READ_ONE         []                          Colls        true;
    SInter       "sinter"       "SINTER"       -2  Read   READ_EVERY       []                          Colls        true;
    SInterCard   "sintercard"   "SINTERCARD"   -3  Read   SINTERCARD       []                          Colls        true;
    SInterStore  "sinterstore"  "SINTERSTORE"  -3  Write  STORE_REST       []                          Colls        true;
    SUnion       "sunion"       "SUNION"       -2  Read   READ_EVERY       []                          Colls        true;
    SUnionStore  "sunionstore"  "SUNIONSTORE"  -3  Write  STORE_REST       []                          Colls        true;
    SDiff        "sdiff"        "SDIFF"        -2  Read   READ_EVERY       []                          Colls        true;
    SDiffStore   "sdiffstore"   "SDIFFSTORE"   -3  Write  STORE_REST       []                          Colls        true;
    HSet         "hset"         "HSET"         -4  Write  CHANGE_ONE       []                          Colls        true;
    HMSet        "hmset"        "HMSET"        -4  Write  CHANGE_ONE       []                          Colls        true;
    HGet         "hget"         "HGET"         3   Read   READ_ONE         []                          Colls        true;
    HMGet        "hmget"        "HMGET"        -3  Read   READ_ONE         []                          Colls        true;
    HGetAll      "hgetall"      "HGETALL"      2   Read   READ_ONE         []                          Colls        true;
    HDel         "hdel"         "HDEL"         -3  Write  CHANGE_ONE       []                          Colls        true;
    HLen         "hlen"         "HLEN"         2   Read   READ_ONE         []                          Colls        true;
    HIncrBy      "hincrby"      "HINCRBY"      4   Write  CHANGE_ONE       []                          Colls        true;
    HExists      "hexists"      "HEXISTS"      3   Read   READ_ONE         []                          Colls        true;
    HSetNx       "hsetnx"       "HSETNX"       4   Write  CHANGE_ONE       []                          Colls        true;
    HStrLen      "hstrlen"      "HSTRLEN"      3   Read   READ_ONE         []                          Colls        true;
    HIncrByFloat "hincrbyfloat" "HINCRBYFLOAT" 4   Write  CHANGE_ONE       [LOGGED_AS_OTHER]           Colls        true;
    HKeys        "hkeys"        "HKEYS"        2   Read   READ_ONE         []                          Colls        true;
    HVals        "hvals"        "HVALS"        2   Read   READ_ONE         []                          Colls        true;
    HRandField   "hrandfield"   "HRANDFIELD"   -2  Read   READ_ONE         []                          Colls        true;
    ZAdd         "zadd"         "ZADD"         -4  Write  CHANGE_ONE       []                          Colls        true;
    ZRem         "zrem"         "ZREM"         -3  Write  CHANGE_ONE       []                          Colls        true;
    ZScore       "zscore"       "ZSCORE"       3   Read   READ_ONE         []                          Colls        true;
    ZCard        "zcard"        "ZCARD"        2   Read   READ_ONE         []                          Colls        true;
    ZRange       "zrange"       "ZRANGE"       -4  Read   READ_ONE         []                          Colls        true;
    ZPopMin      "zpopmin"      "ZPOPMIN"      -2  Write  CHANGE_ONE       []                          Colls        true;
    ZPopMax      "zpopmax"      "ZPOPMAX"      -2  Write  CHANGE_ONE       []                          Colls        true;
    ZIncrBy      "zincrby"      "ZINCRBY"      4   Write  CHANGE_ONE       []                          Colls        true;
    ZRevRange    "zrevrange"    "ZREVRANGE"    -4  Read   READ_ONE         []                          Colls        true;
    ZRangeByScore "zrangebyscore" "ZRANGEBYSCORE" -4  Read   READ_ONE         []                          Colls        true;
    ZRevRangeByScore "zrevrangebyscore" "ZREVRANGEBYSCORE" -4  Read   READ_ONE         []                          Colls        true;
    ZRangeByLex  "zrangebylex"  "ZRANGEBYLEX"  -4  Read   READ_ONE         []                          Colls        true;
    ZRevRangeByLex "zrevrangebylex" "ZREVRANGEBYLEX" -4  Read   READ_ONE         []                          Colls        true;
    ZRangeStore  "zrangestore"  "ZRANGESTORE"  -5  Write  RANGESTORE       []                          Colls        true;
    ZCount       "zcount"       "ZCOUNT"       4   Read   READ_ONE         []                          Colls        true;
    ZLexCount    "zlexcount"    "ZLEXCOUNT"    4   Read   READ_ONE         []                          Colls        true;
    ZRank        "zrank"        "ZRANK"        3   Read   READ_ONE         []                          Colls        true;
    ZRevRank     "zrevrank"     "ZREVRANK"     3   Read   READ_ONE         []                          Colls        true;
    ZMScore      "zmscore"      "ZMSCORE"      -3  Read   READ_ONE         []                          Colls        true;
    ZRandMember  "zrandmember"  "ZRANDMEMBER"  -2  Read   READ_ONE         []                          Colls        true;
    ZRemRangeByScore "zremrangebyscore" "ZREMRANGEBYSCORE" 4   Write  CHANGE_ONE       []                          Colls        true;
    ZRemRangeByRank "zremrangebyrank" "ZREMRANGEBYRANK" 4   Write  CHANGE_ONE       []                          Colls        true;
    ZRemRangeByLex "zremrangebylex" "ZREMRANGEBYLEX" 4   Write  CHANGE_ONE       []                          Colls        true;
    ZMPop        "zmpop"        "ZMPOP"        -4  Write  LMPOP            [LOGGED_AS_OTHER]           Colls        true;
    ZUnion       "zunion"       "ZUNION"       -3  Read   SINTERCARD       []                          Colls        true;
    ZInter       "zinter"       "ZINTER"       -3  Read   SINTERCARD       []                          Colls        true;
    ZDiff        "zdiff"        "ZDIFF"        -3  Read   SINTERCARD       []                          Colls        true;
    ZInterCard   "zintercard"   "ZINTERCARD"   -3  Read   SINTERCARD       []                          Colls        true;
    ZUnionStore  "zunionstore"  "ZUNIONSTORE"  -4  Write  ZSTORE           []                          Colls        true;
    ZInterStore  "zinterstore"  "ZINTERSTORE"  -4  Write  ZSTORE           []                          Colls        true;
    ZDiffStore   "zdiffstore"   "ZDIFFSTORE"   -4  Write  ZSTORE           []                          Colls        true;
    BZPopMin     "bzpopmin"     "BZPOPMIN"     -3  Write  CHANGE_BUT_LAST  [BLOCKING LOGGED_AS_OTHER]  Colls        true;
    BZPopMax     "bzpopmax"     "BZPOPMAX"     -3  Write  CHANGE_BUT_LAST  [BLOCKING LOGGED_AS_OTHER]  Colls        true;
    BZMPop       "bzmpop"       "BZMPOP"       -5  Write  BLMPOP           [BLOCKING LOGGED_AS_OTHER]  Colls        true;
    GeoAdd       "geoadd"       "GEOADD"       -5  Write  CHANGE_ONE       [LOGGED_AS_OTHER]           Colls        true;
    SScan        "sscan"        "SSCAN"        -3  Read   READ_ONE         []                          Colls        true;
    HScan        "hscan"        "HSCAN"        -3  Read   READ_ONE         []                          Colls        true;
    ZScan        "zscan"        "ZSCAN"        -3  Read   READ_ONE         []                          Colls        true;
    Subscribe    "subscribe"    "SUBSCRIBE"    -2  Read   NONE             []                          PubSub       true;
    Unsubscribe  "unsubscribe"  "UNSUBSCRIBE"  -1  Read   NONE             []                          PubSub       true;
    PSubscribe   "psubscribe"   "PSUBSCRIBE"   -2  Read   NONE             []                          PubSub       true;
    PUnsubscribe "punsubscribe" "PUNSUBSCRIBE" -1  Read   NONE             []                          PubSub       true;
    Publish      "publish"      "PUBLISH"      3   Read   NONE             []                          PubSub       true;
    PubSub       "pubsub"       "PUBSUB"       -2  Read   NONE             []                          PubSub       true;
    Monitor      "monitor"      "MONITOR"      1   Read   NONE             [ADMIN]                     Fast         true;
}

impl Name {
    /// The name whose parsed command this one's is ([`super::Cmd::name`]):
    /// INCR, DECR and DECRBY parse as INCRBY with an increment; every
    /// other name is its own.
    pub const fn parsed_as(self) -> Name {
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

/// The subcommands served, under their command, by their full name and
/// with Redis 7's arity (the command's name and the subcommand's both
/// counted): the parser refuses a wrong number of arguments as Redis
/// does (`wrong number of arguments for 'object|encoding' command`),
/// COMMAND LIST names each, COMMAND GETKEYS checks its arity. A
/// subcommand's keys are its command's row's (OBJECT's and MEMORY
/// USAGE's key is the second argument).
pub const SUBCOMMANDS: &[(Name, &str, i64)] = &[
    (Name::Command, "command|count", 2),
    (Name::Command, "command|docs", -2),
    (Name::Command, "command|info", -2),
    (Name::Command, "command|getkeys", -4),
    (Name::Command, "command|list", -2),
    (Name::Config, "config|get", -3),
    (Name::Config, "config|set", -4),
    (Name::Config, "config|resetstat", 2),
    (Name::Config, "config|rewrite", 2),
    (Name::Client, "client|setname", 3),
    (Name::Client, "client|getname", 2),
    (Name::Client, "client|id", 2),
    (Name::Client, "client|setinfo", 4),
    (Name::Client, "client|unblock", -3),
    (Name::Client, "client|list", -2),
    (Name::Client, "client|info", 2),
    (Name::Function, "function|flush", -2),
    (Name::Function, "function|list", -2),
    (Name::Object, "object|encoding", 3),
    (Name::Object, "object|freq", 3),
    (Name::Object, "object|idletime", 3),
    (Name::Object, "object|refcount", 3),
    (Name::Memory, "memory|usage", -3),
];

impl Name {
    /// Whether the command is a container of subcommands (CONFIG, …).
    pub fn has_subcommands(self) -> bool {
        SUBCOMMANDS.iter().any(|(n, _, _)| *n == self)
    }

    /// Its subcommand `sub` (any case), if served: its full name
    /// (`config|get`) and arity.
    pub fn subcommand(self, sub: &[u8]) -> Option<(&'static str, i64)> {
        SUBCOMMANDS
            .iter()
            .find(|(n, full, _)| {
                *n == self
                    && full
                        .split_once('|')
                        .is_some_and(|(_, s)| sub.eq_ignore_ascii_case(s.as_bytes()))
            })
            .map(|(_, full, a)| (*full, *a))
    }
}

/// Each row's two spellings are one word (letters, or `_` as SORT_RO's);
/// a read changes none of its
/// keys; a command that touches every key names none; a blocking
/// command is a list or sorted-set write. Checked when compiled.
const _: () = {
    let mut i = 0;
    while i < Name::ALL.len() {
        let f = Name::ALL[i].facts();
        let (name, wire) = (f.name.as_bytes(), f.wire.as_bytes());
        assert!(name.len() == wire.len() && name.len() <= 16);
        let mut j = 0;
        while j < name.len() {
            assert!(
                (name[j].is_ascii_lowercase() && name[j].to_ascii_uppercase() == wire[j])
                    || (name[j] == b'_' && wire[j] == b'_')
            );
            j += 1;
        }
        let mut k = 0;
        while k < f.keys.len() {
            assert!(f.writes() || !f.keys[k].role.writes());
            k += 1;
        }
        assert!(!f.has(Flags::ALL_KEYS) || f.keys.is_empty());
        assert!(
            !f.has(Flags::BLOCKING)
                || (f.writes() && matches!(f.family, Family::Lists | Family::Colls))
        );
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
        assert!(Name::ALL
            .iter()
            .all(|n| n.parsed_as().parsed_as() == n.parsed_as()));
    }

    /// The keys of `args` (the name first) by the table, with their roles.
    fn keys<'a>(args: &[&'a str]) -> Vec<(&'a str, Role)> {
        let n = Name::find(args[0].as_bytes()).unwrap();
        let mut keys = Vec::new();
        n.facts().each_key(
            args.len(),
            |i| args[i].as_bytes(),
            |i, r| keys.push((args[i], r)),
        );
        keys
    }

    #[test]
    fn keys_are_found_by_range_count_and_option() {
        use Role::*;
        assert_eq!(keys(&["GET", "k"]), [("k", Read)]);
        assert_eq!(
            keys(&["MSET", "a", "1", "b", "2"]),
            [("a", Write), ("b", Write)]
        );
        assert_eq!(keys(&["BLPOP", "a", "b", "0"]), [("a", Both), ("b", Both)]);
        assert_eq!(
            keys(&["COPY", "s", "d", "DB", "1"]),
            [("s", Read), ("d", Write)]
        );
        assert_eq!(keys(&["OBJECT", "ENCODING", "k"]), [("k", Read)]);
        assert_eq!(
            keys(&["LMPOP", "2", "a", "b", "LEFT"]),
            [("a", Both), ("b", Both)]
        );
        assert_eq!(keys(&["BLMPOP", "0", "1", "a", "b", "LEFT"]), [("a", Both)]);
        // A count past the arguments stops at the last; a bad one is none.
        assert_eq!(keys(&["LMPOP", "9", "a", "LEFT"]).len(), 2);
        assert_eq!(keys(&["LMPOP", "x", "a", "LEFT"]), []);
        assert_eq!(keys(&["LMPOP", "-1", "a", "LEFT"]), []);
        assert_eq!(keys(&["SORT", "k"]), [("k", Read)]);
        assert_eq!(
            keys(&["SORT", "k", "by", "w_*", "GET", "#", "store", "d", "ALPHA"]),
            [("k", Read), ("d", Write)]
        );
        // The last STORE counts; a pattern named "store" is no option.
        assert_eq!(
            keys(&["SORT", "k", "STORE", "a", "STORE", "b"])[1],
            ("b", Write)
        );
        assert_eq!(keys(&["SORT", "k", "GET", "store", "by", "store"]).len(), 1);
        // As Redis's sortGetKeys: an unknown word is passed over, LIMIT
        // one short ends the search, STORE last names nothing.
        assert_eq!(keys(&["SORT", "k", "NOPE", "STORE", "d"]).len(), 2);
        assert_eq!(keys(&["SORT", "k", "STORE", "d", "LIMIT", "0"]).len(), 2);
        assert_eq!(keys(&["SORT", "k", "LIMIT", "STORE", "d"]).len(), 1);
        assert_eq!(keys(&["SORT", "k", "STORE"]).len(), 1);
        assert!(Name::Sort.facts().computes_keys());
        assert_eq!(keys(&["KEYS", "*"]), []);
    }

    /// COMMAND's first key, last key and step, from the key specs, as
    /// Redis 7 gives them.
    #[test]
    fn legacy_key_ranges_are_redis_s() {
        let k = |n: Name| {
            let k = n.facts().legacy_keys();
            (k.first, k.last, k.step)
        };
        assert_eq!(k(Name::Get), (1, 1, 1));
        assert_eq!(k(Name::MSet), (1, -1, 2));
        assert_eq!(k(Name::Copy), (1, 2, 1));
        assert_eq!(k(Name::Rename), (1, 2, 1));
        assert_eq!(k(Name::BLPop), (1, -2, 1));
        assert_eq!(k(Name::Object), (2, 2, 1));
        assert_eq!(k(Name::Sort), (1, 1, 1));
        assert_eq!(k(Name::LMPop), (0, 0, 0));
        assert_eq!(k(Name::FlushAll), (0, 0, 0));
        let movable: Vec<Name> = Name::ALL
            .into_iter()
            .filter(|n| n.facts().movable_keys())
            .collect();
        for n in [
            Name::Sort,
            Name::SortRo,
            Name::ZUnionStore,
            Name::LMPop,
            Name::SInterCard,
        ] {
            assert!(movable.contains(&n), "{n:?}");
        }
        for n in [
            Name::Get,
            Name::MSet,
            Name::Copy,
            Name::SInterStore,
            Name::BLPop,
        ] {
            assert!(!movable.contains(&n), "{n:?}");
        }
    }

    /// INCR, DECR and DECRBY, parsed as INCRBY, have its facts but their
    /// names and arities.
    #[test]
    fn a_parsed_as_name_shares_its_keys_and_access() {
        for n in Name::ALL {
            let (f, p) = (n.facts(), n.parsed_as().facts());
            assert_eq!((f.keys, f.access, f.family), (p.keys, p.access, p.family));
        }
    }
}
