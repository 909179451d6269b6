//! A framed request's arguments parsed into a typed command, with Redis
//! 7's arity (from the [`Name`] table) and argument checks: an unknown
//! command, a wrong number of arguments or a bad option becomes a
//! [`Rejection`] (answered with Redis's error, the connection going on).
//! A [`Cmd`] is split by what it acts on (strings, lists, the server, the
//! connection), so each part of the service matches only its own. Keys
//! and values stay [`Span`]s of the request; variadic commands (DEL,
//! MGET, RPUSH, …) read their spans from the framer's argument list.

use super::frame::{Framer, Span};
use super::name::{arity_ok, Name};
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
    /// `COMMAND GETKEYS command arg…`: the keys the command would name.
    GetKeys,
    /// `COMMAND LIST [FILTERBY MODULE m|ACLCAT c|PATTERN p]`: the names
    /// of the commands and subcommands served.
    List,
}

/// A parsed command, by what it acts on. Spans are the request's
/// arguments; "args from N" means the framer's arguments N and after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmd {
    Str(StrCmd),
    List(ListCmd),
    Server(ServerCmd),
    Conn(ConnCmd),
    /// A command beyond the fast path (APPEND, LINSERT, EXPIRE, SADD,
    /// MULTI, …): its arity is checked; its arguments are read where it
    /// is applied, by the part of the service that serves it.
    Ext(Name),
    /// Answered with an error; the connection goes on.
    Reject(Rejection),
}

/// The commands on string keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrCmd {
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
}

/// The commands on list keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListCmd {
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
    /// LINDEX: the index, `None` when it is not an integer — Redis looks
    /// the key up first, so a missing key is nil and a string WRONGTYPE
    /// whatever the index says.
    LIndex {
        key: Span,
        index: Option<i64>,
    },
    LRange {
        key: Span,
        start: i64,
        stop: i64,
    },
}

/// The commands about the server and its data as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerCmd {
    Ping(Option<Span>),
    Echo(Span),
    DbSize,
    /// INFO, sections from 1.
    Info,
    Command(CommandQuery),
    /// CONFIG GET, patterns from 2.
    ConfigGet,
}

/// The commands about the connection itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnCmd {
    ClientSetName(Span),
    ClientGetName,
    ClientSetInfo,
    ClientId,
    /// CLIENT LIST [TYPE t] [ID id…] (its options read where it runs).
    ClientList,
    ClientInfo,
    /// MONITOR: every command the others run, from now on.
    Monitor,
    /// SELECT db (0 to 15).
    Select(usize),
    /// HELLO [2 [SETNAME name]]: the name if given.
    Hello(Option<Span>),
    Quit,
    /// RESET: the connection back to its state when it opened.
    Reset,
}

impl Cmd {
    /// The name it was parsed from, or the one it is parsed as ([`Name::parsed_as`]:
    /// INCR is INCRBY); `None` for a rejection.
    pub fn name(&self) -> Option<Name> {
        Some(match self {
            Cmd::Str(c) => c.name(),
            Cmd::List(c) => c.name(),
            Cmd::Server(c) => c.name(),
            Cmd::Conn(c) => c.name(),
            Cmd::Ext(n) => *n,
            Cmd::Reject(_) => return None,
        })
    }
}

impl StrCmd {
    pub fn name(&self) -> Name {
        match self {
            StrCmd::Get(_) => Name::Get,
            StrCmd::Set { .. } => Name::Set,
            StrCmd::Del => Name::Del,
            StrCmd::Exists => Name::Exists,
            StrCmd::IncrBy { .. } => Name::IncrBy,
            StrCmd::MGet => Name::MGet,
            StrCmd::MSet => Name::MSet,
        }
    }
}

impl ListCmd {
    pub fn name(&self) -> Name {
        match self {
            ListCmd::Push { end: End::Left, .. } => Name::LPush,
            ListCmd::Push { .. } => Name::RPush,
            ListCmd::Pop { end: End::Left, .. } => Name::LPop,
            ListCmd::Pop { .. } => Name::RPop,
            ListCmd::LLen(_) => Name::LLen,
            ListCmd::LIndex { .. } => Name::LIndex,
            ListCmd::LRange { .. } => Name::LRange,
        }
    }
}

impl ServerCmd {
    pub fn name(&self) -> Name {
        match self {
            ServerCmd::Ping(_) => Name::Ping,
            ServerCmd::Echo(_) => Name::Echo,
            ServerCmd::DbSize => Name::DbSize,
            ServerCmd::Info => Name::Info,
            ServerCmd::Command(_) => Name::Command,
            ServerCmd::ConfigGet => Name::Config,
        }
    }
}

impl ConnCmd {
    pub fn name(&self) -> Name {
        match self {
            ConnCmd::ClientSetName(_)
            | ConnCmd::ClientGetName
            | ConnCmd::ClientSetInfo
            | ConnCmd::ClientId
            | ConnCmd::ClientList
            | ConnCmd::ClientInfo => Name::Client,
            ConnCmd::Monitor => Name::Monitor,
            ConnCmd::Select(_) => Name::Select,
            ConnCmd::Hello(_) => Name::Hello,
            ConnCmd::Quit => Name::Quit,
            ConnCmd::Reset => Name::Reset,
        }
    }
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
}

impl Rejection {
    /// Its name in the server's statistics.
    pub fn name(self) -> &'static str {
        match self {
            Rejection::UnknownCommand | Rejection::UnknownSubcommand(_) => "unknown_command",
            Rejection::WrongArity(_) => "wrong_arity",
            Rejection::Syntax => "syntax",
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

/// The request's arguments as the parser reads them (the service reads
/// them through its own `Args`).
pub struct Argv<'a> {
    pub framer: &'a Framer,
    pub input: &'a [u8],
}

impl Argv<'_> {
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
    let a = Argv { framer, input };
    let Some(name) = Name::find(a.bytes(0)) else {
        return Cmd::Reject(Rejection::UnknownCommand);
    };
    if !name.facts().arity_ok(a.argc()) {
        return Cmd::Reject(Rejection::WrongArity(name.facts().name));
    }
    if let Some((full, arity)) = (a.argc() >= 2)
        .then(|| name.subcommand(a.bytes(1)))
        .flatten()
    {
        if !arity_ok(arity, a.argc()) {
            return Cmd::Reject(Rejection::WrongArity(full));
        }
    }
    command(name, &a).unwrap_or_else(Cmd::Reject)
}

/// A known command with a valid arity: its arguments.
fn command(name: Name, a: &Argv) -> Result<Cmd, Rejection> {
    // Only commands with a first argument read it (arity checked).
    let key = || a.span(1);
    Ok(match name {
        Name::Ping => Cmd::Server(ping(a)?),
        Name::Echo => Cmd::Server(ServerCmd::Echo(key())),
        Name::Get => Cmd::Str(StrCmd::Get(key())),
        Name::Set => set(a)?,
        Name::Del => Cmd::Str(StrCmd::Del),
        Name::Exists => Cmd::Str(StrCmd::Exists),
        Name::Incr => Cmd::Str(StrCmd::IncrBy { key: key(), by: 1 }),
        Name::Decr => Cmd::Str(StrCmd::IncrBy { key: key(), by: -1 }),
        Name::IncrBy => Cmd::Str(StrCmd::IncrBy {
            key: key(),
            by: a.int(2)?,
        }),
        Name::DecrBy => Cmd::Str(decr_by(a)?),
        Name::MGet => Cmd::Str(StrCmd::MGet),
        Name::MSet => Cmd::Str(mset(a)?),
        Name::LPush => Cmd::List(ListCmd::Push {
            end: End::Left,
            key: key(),
        }),
        Name::RPush => Cmd::List(ListCmd::Push {
            end: End::Right,
            key: key(),
        }),
        Name::LPop => Cmd::List(pop(name, End::Left, a)?),
        Name::RPop => Cmd::List(pop(name, End::Right, a)?),
        Name::LLen => Cmd::List(ListCmd::LLen(key())),
        Name::LIndex => Cmd::List(ListCmd::LIndex {
            key: key(),
            index: a.int(2).ok(),
        }),
        Name::LRange => Cmd::List(lrange(a)?),
        Name::DbSize => Cmd::Server(ServerCmd::DbSize),
        Name::FlushAll | Name::FlushDb => flush(name, a)?,
        Name::Select => Cmd::Conn(select(a)?),
        Name::Info => Cmd::Server(ServerCmd::Info),
        Name::Command => Cmd::Server(command_query(a)?),
        Name::Config => config(a)?,
        Name::Client => client(a)?,
        Name::PubSub => pubsub(a)?,
        Name::Hello => Cmd::Conn(hello(a)?),
        Name::Quit => Cmd::Conn(ConnCmd::Quit),
        Name::Reset => Cmd::Conn(ConnCmd::Reset),
        Name::Monitor => Cmd::Conn(ConnCmd::Monitor),
        other => Cmd::Ext(other),
    })
}

fn ping(a: &Argv) -> Result<ServerCmd, Rejection> {
    match a.argc() {
        1 => Ok(ServerCmd::Ping(None)),
        2 => Ok(ServerCmd::Ping(Some(a.span(1)))),
        _ => Err(Rejection::WrongArity(Name::Ping.facts().name)),
    }
}

fn decr_by(a: &Argv) -> Result<StrCmd, Rejection> {
    let by = a.int(2)?;
    Ok(StrCmd::IncrBy {
        key: a.span(1),
        by: by.checked_neg().ok_or(Rejection::DecrementOverflow)?,
    })
}

/// MSET: an odd number of arguments, the name and pairs.
fn mset(a: &Argv) -> Result<StrCmd, Rejection> {
    if a.argc().is_multiple_of(2) {
        return Err(Rejection::WrongArity(Name::MSet.facts().name));
    }
    Ok(StrCmd::MSet)
}

fn lrange(a: &Argv) -> Result<ListCmd, Rejection> {
    Ok(ListCmd::LRange {
        key: a.span(1),
        start: a.int(2)?,
        stop: a.int(3)?,
    })
}

/// FLUSHALL, FLUSHDB [ASYNC|SYNC].
fn flush(name: Name, a: &Argv) -> Result<Cmd, Rejection> {
    match a.argc() {
        1 => Ok(Cmd::Ext(name)),
        2 if a.is(1, "async") || a.is(1, "sync") => Ok(Cmd::Ext(name)),
        _ => Err(Rejection::Syntax),
    }
}

/// How many databases SELECT, MOVE and SWAPDB number (0 to 15), as
/// Redis's default `databases 16`.
pub const DATABASES: usize = 16;

/// SELECT: databases 0 to 15.
fn select(a: &Argv) -> Result<ConnCmd, Rejection> {
    match a.int(1) {
        Ok(n) if (0..DATABASES as i64).contains(&n) => Ok(ConnCmd::Select(n as usize)),
        Ok(n) if n.abs() <= i64::from(i32::MAX) => Err(Rejection::DbIndex),
        _ => Err(Rejection::NotInteger),
    }
}

/// SET key value [NX|XX] on the fast path; with any other option
/// (GET, EX, PX, EXAT, PXAT, KEEPTTL), beyond it.
fn set(a: &Argv) -> Result<Cmd, Rejection> {
    let plain = (3..a.argc()).all(|i| a.is(i, "nx") || a.is(i, "xx"));
    if !plain {
        return Ok(Cmd::Ext(Name::Set));
    }
    set_plain(a).map(Cmd::Str)
}

fn set_plain(a: &Argv) -> Result<StrCmd, Rejection> {
    let mut cond = SetCond::Always;
    for i in 3..a.argc() {
        let want = if a.is(i, "nx") {
            SetCond::Absent
        } else if a.is(i, "xx") {
            SetCond::Present
        } else {
            return Err(Rejection::Syntax);
        };
        if cond != SetCond::Always && cond != want {
            return Err(Rejection::Syntax);
        }
        cond = want;
    }
    Ok(StrCmd::Set {
        key: a.span(1),
        value: a.span(2),
        cond,
    })
}

/// LPOP, RPOP [count].
fn pop(name: Name, end: End, a: &Argv) -> Result<ListCmd, Rejection> {
    let count = match a.argc() {
        2 => None,
        // Redis reads the count as a positive number or says so, for a
        // word as for a negative number.
        3 => match a.int(2) {
            Ok(n) if n >= 0 => Some(n as usize),
            _ => return Err(Rejection::NotPositive),
        },
        _ => return Err(Rejection::WrongArity(name.facts().name)),
    };
    Ok(ListCmd::Pop {
        end,
        key: a.span(1),
        count,
    })
}

fn command_query(a: &Argv) -> Result<ServerCmd, Rejection> {
    if a.argc() == 1 {
        return Ok(ServerCmd::Command(CommandQuery::All));
    }
    let (q, arity, full) = if a.is(1, "count") {
        (CommandQuery::Count, 2, "command|count")
    } else if a.is(1, "docs") {
        (CommandQuery::Docs, -2, "command|docs")
    } else if a.is(1, "info") {
        (CommandQuery::Info, -2, "command|info")
    } else if a.is(1, "getkeys") {
        (CommandQuery::GetKeys, -4, "command|getkeys")
    } else if a.is(1, "list") {
        (CommandQuery::List, -2, "command|list")
    } else {
        return Err(Rejection::UnknownSubcommand("COMMAND"));
    };
    if !arity_ok(arity, a.argc()) {
        return Err(Rejection::WrongArity(full));
    }
    Ok(ServerCmd::Command(q))
}

/// PUBSUB's subcommands, as Redis 7 knows them, and their arities (the
/// service reads their arguments).
fn pubsub(a: &Argv) -> Result<Cmd, Rejection> {
    const SUBS: [(&str, i64, &str); 6] = [
        ("channels", -2, "pubsub|channels"),
        ("numsub", -2, "pubsub|numsub"),
        ("numpat", 2, "pubsub|numpat"),
        ("shardchannels", -2, "pubsub|shardchannels"),
        ("shardnumsub", -2, "pubsub|shardnumsub"),
        ("help", 2, "pubsub|help"),
    ];
    let Some((_, arity, full)) = SUBS.iter().find(|(s, _, _)| a.is(1, s)) else {
        return Err(Rejection::UnknownSubcommand("PUBSUB"));
    };
    if !arity_ok(*arity, a.argc()) {
        return Err(Rejection::WrongArity(full));
    }
    Ok(Cmd::Ext(Name::PubSub))
}

/// CONFIG GET on the fast path; every other subcommand beyond it.
fn config(a: &Argv) -> Result<Cmd, Rejection> {
    if !a.is(1, "get") {
        return Ok(Cmd::Ext(Name::Config));
    }
    if a.argc() < 3 {
        return Err(Rejection::WrongArity("config|get"));
    }
    Ok(Cmd::Server(ServerCmd::ConfigGet))
}

/// HELLO: only protocol 2 is served; SETNAME is the one option.
fn hello(a: &Argv) -> Result<ConnCmd, Rejection> {
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
    Ok(ConnCmd::Hello(name))
}

/// CLIENT SETNAME, GETNAME, ID, SETINFO, INFO and LIST here; the rest
/// (UNBLOCK, …) beyond the fast path.
fn client(a: &Argv) -> Result<Cmd, Rejection> {
    client_conn(a).map(|c| c.map_or(Cmd::Ext(Name::Client), Cmd::Conn))
}

fn client_conn(a: &Argv) -> Result<Option<ConnCmd>, Rejection> {
    let argc = a.argc();
    let exact = |n: usize, full: &'static str, cmd: ConnCmd| {
        if argc == n {
            Ok(Some(cmd))
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
        Ok(Some(ConnCmd::ClientSetName(a.span(2))))
    } else if a.is(1, "getname") {
        exact(2, "client|getname", ConnCmd::ClientGetName)
    } else if a.is(1, "id") {
        exact(2, "client|id", ConnCmd::ClientId)
    } else if a.is(1, "info") {
        exact(2, "client|info", ConnCmd::ClientInfo)
    } else if a.is(1, "list") {
        Ok(Some(ConnCmd::ClientList))
    } else if a.is(1, "setinfo") {
        if argc != 4 {
            return Err(Rejection::WrongArity("client|setinfo"));
        }
        if !(a.is(2, "lib-name") || a.is(2, "lib-ver")) {
            return Err(Rejection::UnknownSetInfo);
        }
        Ok(Some(ConnCmd::ClientSetInfo))
    } else {
        Ok(None)
    }
}

#[cfg(test)]
mod tests;
