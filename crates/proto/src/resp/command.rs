//! A framed request's arguments parsed into a typed command, with Redis
//! 7's arity and argument checks: an unknown command, a wrong number of
//! arguments or a bad option becomes a [`Rejection`] (answered with
//! Redis's error, the connection going on). Keys and values stay
//! [`Span`]s of the request; variadic commands (DEL, MGET, RPUSH, …)
//! read their spans from the framer's argument list.

use super::frame::{Framer, Span};
use super::number::parse_i64;

/// Which end of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Left,
    Right,
}

/// SET's condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetCond {
    Always,
    /// NX: only if the key does not exist.
    Absent,
    /// XX: only if it exists.
    Present,
}

/// COMMAND's forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandQuery {
    /// `COMMAND`: every command's details.
    All,
    /// `COMMAND COUNT`.
    Count,
    /// `COMMAND DOCS [name…]`: an empty array (there are no docs).
    Docs,
    /// `COMMAND INFO name…` (names from argument 2).
    Info,
}

/// A parsed command. Spans are the request's arguments; "args from N"
/// means the framer's arguments N and after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmd {
    Ping(Option<Span>),
    Echo(Span),
    Get(Span),
    Set {
        key: Span,
        value: Span,
        cond: SetCond,
    },
    /// DEL, keys from 1.
    Del,
    /// EXISTS, keys from 1.
    Exists,
    /// INCR, DECR, INCRBY, DECRBY: add `by`.
    IncrBy {
        key: Span,
        by: i64,
    },
    /// MGET, keys from 1.
    MGet,
    /// MSET, key/value pairs from 1.
    MSet,
    /// LPUSH, RPUSH: values from 2.
    Push {
        end: End,
        key: Span,
    },
    /// LPOP, RPOP, with COUNT's count if given.
    Pop {
        end: End,
        key: Span,
        count: Option<usize>,
    },
    LLen(Span),
    LIndex {
        key: Span,
        index: i64,
    },
    LRange {
        key: Span,
        start: i64,
        stop: i64,
    },
    DbSize,
    /// FLUSHALL, FLUSHDB.
    Flush,
    /// SELECT 0.
    Select,
    /// INFO, sections from 1.
    Info,
    Command(CommandQuery),
    /// CONFIG GET, patterns from 2.
    ConfigGet,
    ClientSetName(Span),
    ClientGetName,
    ClientSetInfo,
    ClientId,
    /// HELLO [2 [SETNAME name]]: the name if given.
    Hello(Option<Span>),
    Quit,
    /// Answered with an error; the connection goes on.
    Reject(Rejection),
}

/// A request refused before it touches the store, with Redis's error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// `unknown command '<name>', with args beginning with: …`
    UnknownCommand,
    /// `unknown subcommand '<sub>'. Try <CMD> HELP.`
    UnknownSubcommand(&'static str),
    /// `wrong number of arguments for '<name>' command`
    WrongArity(&'static str),
    /// `syntax error`
    Syntax,
    /// `value is not an integer or out of range`
    NotInteger,
    /// `value is out of range, must be positive`
    NotPositive,
    /// `DB index is out of range`
    DbIndex,
    /// `decrement would overflow`
    DecrementOverflow,
    /// `Client names cannot contain spaces, newlines or special characters.`
    BadClientName,
    /// `Unrecognized option '<arg 2>'` (CLIENT SETINFO)
    UnknownSetInfo,
    /// HELLO's protocol version is not an integer.
    HelloVersion,
    /// HELLO 3 (or any version but 2): `NOPROTO …`.
    NoProto,
    /// HELLO's options: `Syntax error in HELLO option '<arg>'`.
    HelloOption { at: usize },
    /// A SET option serverlab does not serve (EX, PX, GET, …): the option
    /// is argument `at`.
    UnsupportedOption { at: usize },
}

impl Rejection {
    /// Its name in the server's statistics.
    pub fn name(self) -> &'static str {
        match self {
            Rejection::UnknownCommand | Rejection::UnknownSubcommand(_) => "unknown_command",
            Rejection::WrongArity(_) => "wrong_arity",
            Rejection::Syntax | Rejection::UnsupportedOption { .. } => "syntax",
            Rejection::NotInteger | Rejection::NotPositive | Rejection::DecrementOverflow => {
                "not_an_integer"
            }
            Rejection::DbIndex
            | Rejection::BadClientName
            | Rejection::UnknownSetInfo
            | Rejection::HelloVersion
            | Rejection::NoProto
            | Rejection::HelloOption { .. } => "bad_argument",
        }
    }

    /// Every name, in a fixed order (for counters).
    pub const NAMES: [&'static str; 5] = [
        "unknown_command",
        "wrong_arity",
        "syntax",
        "not_an_integer",
        "bad_argument",
    ];
}

/// Every command served, lower case, with Redis's arity (n: exactly n
/// arguments with the name; -n: at least n). `COMMAND` lists them.
/// (`quit` is served too, but Redis 7 does not list it.)
pub const COMMANDS: [(&str, i64); 28] = [
    ("ping", -1),
    ("echo", 2),
    ("get", 2),
    ("set", -3),
    ("del", -2),
    ("exists", -2),
    ("incr", 2),
    ("decr", 2),
    ("incrby", 3),
    ("decrby", 3),
    ("mget", -2),
    ("mset", -3),
    ("lpush", -3),
    ("rpush", -3),
    ("lpop", -2),
    ("rpop", -2),
    ("llen", 2),
    ("lindex", 3),
    ("lrange", 4),
    ("dbsize", 1),
    ("flushall", -1),
    ("flushdb", -1),
    ("select", 2),
    ("info", -1),
    ("command", -1),
    ("config", -2),
    ("client", -2),
    ("hello", -1),
];

fn arity_ok(a: i64, argc: usize) -> bool {
    if a >= 0 {
        argc as i64 == a
    } else {
        argc as i64 >= -a
    }
}

/// `name` upper-cased into `buf`, if it fits (no command is longer).
fn upper<'b>(name: &[u8], buf: &'b mut [u8; 16]) -> Option<&'b [u8]> {
    let b = buf.get_mut(..name.len())?;
    for (o, c) in b.iter_mut().zip(name) {
        *o = c.to_ascii_uppercase();
    }
    Some(b)
}

/// The request's arguments as the service sees them.
pub struct Args<'a> {
    pub framer: &'a Framer,
    pub input: &'a [u8],
}

impl Args<'_> {
    fn argc(&self) -> usize {
        self.framer.args().len()
    }

    fn span(&self, i: usize) -> Span {
        self.framer.args()[i]
    }

    fn bytes(&self, i: usize) -> &[u8] {
        self.framer.arg(self.input, i)
    }

    fn int(&self, i: usize) -> Result<i64, Rejection> {
        parse_i64(self.bytes(i)).ok_or(Rejection::NotInteger)
    }

    fn is(&self, i: usize, word: &str) -> bool {
        self.bytes(i).eq_ignore_ascii_case(word.as_bytes())
    }
}

/// Parse a framed request (at least one argument) into a command.
pub fn parse(framer: &Framer, input: &[u8]) -> Cmd {
    let a = Args { framer, input };
    let mut buf = [0u8; 16];
    let Some(name) = upper(a.bytes(0), &mut buf) else {
        return Cmd::Reject(Rejection::UnknownCommand);
    };
    // The name and Redis's arity in one match: no table search per request.
    let (name, arity): (&'static str, i64) = match name {
        b"PING" => ("ping", -1),
        b"ECHO" => ("echo", 2),
        b"GET" => ("get", 2),
        b"SET" => ("set", -3),
        b"DEL" => ("del", -2),
        b"EXISTS" => ("exists", -2),
        b"INCR" => ("incr", 2),
        b"DECR" => ("decr", 2),
        b"INCRBY" => ("incrby", 3),
        b"DECRBY" => ("decrby", 3),
        b"MGET" => ("mget", -2),
        b"MSET" => ("mset", -3),
        b"LPUSH" => ("lpush", -3),
        b"RPUSH" => ("rpush", -3),
        b"LPOP" => ("lpop", -2),
        b"RPOP" => ("rpop", -2),
        b"LLEN" => ("llen", 2),
        b"LINDEX" => ("lindex", 3),
        b"LRANGE" => ("lrange", 4),
        b"DBSIZE" => ("dbsize", 1),
        b"FLUSHALL" => ("flushall", -1),
        b"FLUSHDB" => ("flushdb", -1),
        b"SELECT" => ("select", 2),
        b"INFO" => ("info", -1),
        b"COMMAND" => ("command", -1),
        b"CONFIG" => ("config", -2),
        b"CLIENT" => ("client", -2),
        b"HELLO" => ("hello", -1),
        b"QUIT" => ("quit", -1),
        _ => return Cmd::Reject(Rejection::UnknownCommand),
    };
    if !arity_ok(arity, a.argc()) {
        return Cmd::Reject(Rejection::WrongArity(name));
    }
    command(name, &a).unwrap_or_else(Cmd::Reject)
}

/// A known command with a valid arity: its arguments.
fn command(name: &'static str, a: &Args) -> Result<Cmd, Rejection> {
    let argc = a.argc();
    Ok(match name {
        "ping" if argc > 2 => return Err(Rejection::WrongArity("ping")),
        "ping" => Cmd::Ping((argc == 2).then(|| a.span(1))),
        "echo" => Cmd::Echo(a.span(1)),
        "get" => Cmd::Get(a.span(1)),
        "set" => set(a)?,
        "del" => Cmd::Del,
        "exists" => Cmd::Exists,
        "incr" => Cmd::IncrBy {
            key: a.span(1),
            by: 1,
        },
        "decr" => Cmd::IncrBy {
            key: a.span(1),
            by: -1,
        },
        "incrby" => Cmd::IncrBy {
            key: a.span(1),
            by: a.int(2)?,
        },
        "decrby" => Cmd::IncrBy {
            key: a.span(1),
            by: a
                .int(2)?
                .checked_neg()
                .ok_or(Rejection::DecrementOverflow)?,
        },
        "mget" => Cmd::MGet,
        "mset" if argc.is_multiple_of(2) => return Err(Rejection::WrongArity("mset")),
        "mset" => Cmd::MSet,
        "lpush" => Cmd::Push {
            end: End::Left,
            key: a.span(1),
        },
        "rpush" => Cmd::Push {
            end: End::Right,
            key: a.span(1),
        },
        "lpop" | "rpop" => pop(name, a)?,
        "llen" => Cmd::LLen(a.span(1)),
        "lindex" => Cmd::LIndex {
            key: a.span(1),
            index: a.int(2)?,
        },
        "lrange" => Cmd::LRange {
            key: a.span(1),
            start: a.int(2)?,
            stop: a.int(3)?,
        },
        "dbsize" => Cmd::DbSize,
        "flushall" | "flushdb"
            if argc > 2 || (argc == 2 && !(a.is(1, "async") || a.is(1, "sync"))) =>
        {
            return Err(Rejection::Syntax)
        }
        "flushall" | "flushdb" => Cmd::Flush,
        "select" => match a.int(1) {
            Ok(0) => Cmd::Select,
            Ok(n) if n.abs() <= i64::from(i32::MAX) => return Err(Rejection::DbIndex),
            _ => return Err(Rejection::NotInteger),
        },
        "info" => Cmd::Info,
        "command" => command_query(a)?,
        "config" => config(a)?,
        "client" => client(a)?,
        "hello" => hello(a)?,
        "quit" => Cmd::Quit,
        _ => unreachable!("every name above is handled"),
    })
}

fn set(a: &Args) -> Result<Cmd, Rejection> {
    let mut cond = SetCond::Always;
    for i in 3..a.argc() {
        let want = if a.is(i, "nx") {
            SetCond::Absent
        } else if a.is(i, "xx") {
            SetCond::Present
        } else if ["get", "keepttl", "ex", "px", "exat", "pxat"]
            .iter()
            .any(|w| a.is(i, w))
        {
            return Err(Rejection::UnsupportedOption { at: i });
        } else {
            return Err(Rejection::Syntax);
        };
        if cond != SetCond::Always && cond != want {
            return Err(Rejection::Syntax);
        }
        cond = want;
    }
    Ok(Cmd::Set {
        key: a.span(1),
        value: a.span(2),
        cond,
    })
}

fn pop(name: &'static str, a: &Args) -> Result<Cmd, Rejection> {
    let end = if name == "lpop" {
        End::Left
    } else {
        End::Right
    };
    let count = match a.argc() {
        2 => None,
        3 => match a.int(2)? {
            n if n < 0 => return Err(Rejection::NotPositive),
            n => Some(n as usize),
        },
        _ => return Err(Rejection::WrongArity(name)),
    };
    Ok(Cmd::Pop {
        end,
        key: a.span(1),
        count,
    })
}

fn command_query(a: &Args) -> Result<Cmd, Rejection> {
    if a.argc() == 1 {
        return Ok(Cmd::Command(CommandQuery::All));
    }
    let (q, arity, full) = if a.is(1, "count") {
        (CommandQuery::Count, 2, "command|count")
    } else if a.is(1, "docs") {
        (CommandQuery::Docs, -2, "command|docs")
    } else if a.is(1, "info") {
        (CommandQuery::Info, -2, "command|info")
    } else {
        return Err(Rejection::UnknownSubcommand("COMMAND"));
    };
    if !arity_ok(arity, a.argc()) {
        return Err(Rejection::WrongArity(full));
    }
    Ok(Cmd::Command(q))
}

fn config(a: &Args) -> Result<Cmd, Rejection> {
    if !a.is(1, "get") {
        return Err(Rejection::UnknownSubcommand("CONFIG"));
    }
    if a.argc() < 3 {
        return Err(Rejection::WrongArity("config|get"));
    }
    Ok(Cmd::ConfigGet)
}

/// HELLO: only protocol 2 is served; SETNAME is the one option.
fn hello(a: &Args) -> Result<Cmd, Rejection> {
    if a.argc() >= 2 {
        match a.int(1) {
            Ok(2) => {}
            Ok(_) => return Err(Rejection::NoProto),
            Err(_) => return Err(Rejection::HelloVersion),
        }
    }
    let mut name = None;
    let mut i = 2;
    while i < a.argc() {
        if a.is(i, "setname") && i + 1 < a.argc() {
            name = Some(a.span(i + 1));
            i += 2;
        } else {
            return Err(Rejection::HelloOption { at: i });
        }
    }
    Ok(Cmd::Hello(name))
}

fn client(a: &Args) -> Result<Cmd, Rejection> {
    let argc = a.argc();
    let exact = |n: usize, full: &'static str, cmd: Cmd| {
        if argc == n {
            Ok(cmd)
        } else {
            Err(Rejection::WrongArity(full))
        }
    };
    if a.is(1, "setname") {
        if argc != 3 {
            return Err(Rejection::WrongArity("client|setname"));
        }
        if !a.bytes(2).iter().all(|&c| (b'!'..=b'~').contains(&c)) {
            return Err(Rejection::BadClientName);
        }
        Ok(Cmd::ClientSetName(a.span(2)))
    } else if a.is(1, "getname") {
        exact(2, "client|getname", Cmd::ClientGetName)
    } else if a.is(1, "id") {
        exact(2, "client|id", Cmd::ClientId)
    } else if a.is(1, "setinfo") {
        if argc != 4 {
            return Err(Rejection::WrongArity("client|setinfo"));
        }
        if !(a.is(2, "lib-name") || a.is(2, "lib-ver")) {
            return Err(Rejection::UnknownSetInfo);
        }
        Ok(Cmd::ClientSetInfo)
    } else {
        Err(Rejection::UnknownSubcommand("CLIENT"))
    }
}

#[cfg(test)]
mod tests;
