//! RESP as docs/protocols/resp.md (section 5) states it (and redis-server 7 where it
//! is silent), on plain collections: strings, integers and lists, with
//! Redis 7's arity and argument errors, WRONGTYPE, and the protocol
//! errors and limits (`--max-bulk`, `--max-args`, `--max-inline`,
//! `--max-query`) that close the connection.
//!
//! Requests are framed by [`resp_wire`](super::resp_wire), the framing
//! written a second time. Commands about the server and the connection
//! (INFO, COMMAND, CONFIG, CLIENT, HELLO) are checked for their arity and
//! for answering exactly one well-formed reply; the fast path's commands
//! are checked byte for byte, in the database SELECT chose, and queued
//! (`+QUEUED`) inside MULTI. The commands beyond the fast path (APPEND,
//! LINSERT, EXPIRE, SADD, EXEC, …) are checked for their arity and one
//! well-formed reply; the keys such a command may have written (by
//! proto's key specs) become unknown to the model, and a
//! command on an unknown key is checked for its shape only; after an
//! EXEC, a MOVE or a COPY to another database, every key is unknown
//! until FLUSHALL. (Deadlines make any key unknown in time: a command
//! that sets one makes the model give up on that key.) Publish/subscribe:
//! the connection's subscriptions are followed, SUBSCRIBE, UNSUBSCRIBE
//! (and their pattern forms) and RESET checked byte for byte, and a
//! subscribed connection's restricted commands (PING's `pong`, the
//! refusal of the rest); after an EXEC that may have subscribed, or a
//! MONITOR (whose own commands' lines follow their replies), nothing is
//! judged but the replies' shape (messages may come first) until RESET.

use super::resp_wire::{self, int, Wire};
use super::{Model, Next};
use crate::session::{Applied, Event};
use serverlab_proto::resp::name::Role;
use serverlab_proto::resp::{Limits, Name, ProtocolError};
use std::collections::{HashMap, VecDeque};

/// Why a command is refused before it runs: the statistics' name
/// (`Rejection::name`), and the exact error reply where the model knows
/// it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub kind: &'static str,
    pub reply: Option<String>,
}

fn refusal(kind: &'static str, reply: Option<String>) -> Refusal {
    Refusal { kind, reply }
}

fn arity(name: &str) -> Refusal {
    let text = format!("-ERR wrong number of arguments for '{name}' command\r\n");
    refusal("wrong_arity", Some(text))
}

fn not_integer() -> Refusal {
    let text = "-ERR value is not an integer or out of range\r\n".to_string();
    refusal("not_an_integer", Some(text))
}

/// The command's name in lower case and its arity (n: exactly n
/// arguments with the name; -n: at least n), if it is one served: the
/// names and arities are proto's table ([`Name`]), the one place they are
/// written; what the model does with them is its own.
pub fn known(args: &[Vec<u8>]) -> Option<(&'static str, i64)> {
    let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
    Name::ALL
        .iter()
        .map(|n| n.facts())
        .find(|f| f.name == name)
        .map(|f| (f.name, f.arity))
}

/// The refusal, if any, Redis 7 gives `args` before running it: unknown,
/// arity, and the argument checks of the commands modelled byte for byte.
/// `Ok` also for a server command whose subcommand checks are not
/// modelled.
pub fn refuse(args: &[Vec<u8>]) -> Result<&'static str, Refusal> {
    let Some((name, a)) = known(args) else {
        return Err(refusal("unknown_command", None));
    };
    let argc = args.len() as i64;
    if (a >= 0 && argc != a) || (a < 0 && argc < -a) {
        return Err(arity(name));
    }
    let is = |i: usize, w: &str| args[i].eq_ignore_ascii_case(w.as_bytes());
    let need_int = |i: usize| int(&args[i]).ok_or_else(not_integer);
    match name {
        "ping" if argc > 2 => return Err(arity(name)),
        "mset" if argc % 2 == 0 => return Err(arity(name)),
        "incrby" => drop(need_int(2)?),
        "decrby" if need_int(2)? == i64::MIN => {
            let text = "-ERR decrement would overflow\r\n".to_string();
            return Err(refusal("not_an_integer", Some(text)));
        }
        "lrange" => drop((need_int(2)?, need_int(3)?)),
        "lpop" | "rpop" if argc > 3 => return Err(arity(name)),
        "lpop" | "rpop" if argc == 3 && int(&args[2]).is_none_or(|n| n < 0) => {
            let text = "-ERR value is out of range, must be positive\r\n".to_string();
            return Err(refusal("not_an_integer", Some(text)));
        }
        // SET's options beyond NX and XX are judged where they are served.
        "set"
            if args[3..]
                .iter()
                .all(|a| a.eq_ignore_ascii_case(b"nx") || a.eq_ignore_ascii_case(b"xx")) =>
        {
            set_cond(args)?;
        }
        "pubsub" => pubsub(args)?,
        "flushall" | "flushdb" if argc > 2 || (argc == 2 && !is(1, "async") && !is(1, "sync")) => {
            return Err(refusal("syntax", Some("-ERR syntax error\r\n".into())));
        }
        _ => {}
    }
    Ok(name)
}

/// PUBSUB's subcommands and their arities, as Redis 7 knows them.
fn pubsub(args: &[Vec<u8>]) -> Result<(), Refusal> {
    let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    let exact = match sub.as_str() {
        "channels" | "numsub" | "shardchannels" | "shardnumsub" => false,
        "numpat" | "help" => true,
        // The name shown is cut and cleaned as Redis does; not modelled.
        _ => return Err(refusal("unknown_command", None)),
    };
    if exact && args.len() != 2 {
        return Err(arity(&format!("pubsub|{sub}")));
    }
    Ok(())
}

/// SET's options: `Some(true)` NX, `Some(false)` XX, `None` neither.
fn set_cond(args: &[Vec<u8>]) -> Result<Option<bool>, Refusal> {
    let mut cond = None;
    for a in &args[3..] {
        let a = String::from_utf8_lossy(a).to_ascii_lowercase();
        let want = match a.as_str() {
            "nx" => true,
            "xx" => false,
            _ => return Err(refusal("syntax", Some("-ERR syntax error\r\n".into()))),
        };
        if cond.is_some_and(|c| c != want) {
            return Err(refusal("syntax", Some("-ERR syntax error\r\n".into())));
        }
        cond = Some(want);
    }
    Ok(cond)
}

#[derive(Debug, Clone)]
enum Value {
    Str(Vec<u8>),
    List(VecDeque<Vec<u8>>),
    /// Written by a command the model does not follow.
    Unknown,
}

/// The keys of `args` whose role is `wanted`, by proto's key specs
/// ([`Name::facts`]): the model knows no key a command computes (SORT's
/// patterns), and none of one that touches every key.
fn keys_of<'a>(name: &str, args: &'a [Vec<u8>], wanted: fn(Role) -> bool) -> Vec<&'a Vec<u8>> {
    let Some(n) = Name::find(name.as_bytes()) else {
        return Vec::new();
    };
    let mut keys = Vec::new();
    n.facts().each_key(
        args.len(),
        |i| &args[i],
        |i, role| {
            if wanted(role) {
                keys.push(&args[i]);
            }
        },
    );
    keys
}

const WRONGTYPE: &str = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";

fn bulk(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(format!("${}\r\n", b.len()).as_bytes());
    out.extend_from_slice(b);
    out.extend_from_slice(b"\r\n");
}

fn integer(out: &mut Vec<u8>, n: i64) {
    out.extend_from_slice(format!(":{n}\r\n").as_bytes());
}

/// One connection's view of a RESP server.
pub struct Resp {
    pub limits: Limits,
    /// The selected database.
    db: HashMap<Vec<u8>, Value>,
    /// Every database, the selected one's place empty.
    others: Vec<HashMap<Vec<u8>, Value>>,
    at: usize,
    /// MULTI is open: commands are queued.
    multi: bool,
    /// The bytes queued since MULTI, if known.
    queued: Option<usize>,
    /// Every key is unknown (after an EXEC, a MOVE, a COPY).
    lost: bool,
    /// Its subscriptions, channels and patterns, in the order made; `None`
    /// once unknown (after an EXEC that may have subscribed, until RESET).
    subs: Option<Subs>,
    /// A pub/sub command is queued in the open transaction.
    pubsub_queued: bool,
    /// MONITOR answered OK (until RESET): a second MONITOR is answered
    /// with nothing, as Redis ignores it.
    monitoring: bool,
}

/// A connection's subscriptions (docs/protocols/resp.md 5.2.6).
#[derive(Debug, Clone, Default)]
struct Subs {
    channels: Vec<Vec<u8>>,
    patterns: Vec<Vec<u8>>,
}

impl Subs {
    fn count(&self) -> usize {
        self.channels.len() + self.patterns.len()
    }
}

/// A subscription reply: `*3 $word $name :count` (a nil name for none).
fn confirm(out: &mut Vec<u8>, word: &str, name: Option<&[u8]>, count: usize) {
    out.extend_from_slice(b"*3\r\n");
    bulk(out, word.as_bytes());
    match name {
        Some(n) => bulk(out, n),
        None => out.extend_from_slice(b"$-1\r\n"),
    }
    integer(out, count as i64);
}

/// The commands a subscribed connection may run (RESP2).
fn allowed_subscribed(name: &str) -> bool {
    matches!(
        name,
        "subscribe" | "psubscribe" | "unsubscribe" | "punsubscribe" | "ping" | "quit" | "reset"
    )
}

impl Resp {
    pub fn new(limits: Limits) -> Self {
        Resp {
            limits,
            db: HashMap::new(),
            others: vec![HashMap::new(); 16],
            at: 0,
            multi: false,
            queued: Some(0),
            lost: false,
            subs: Some(Subs::default()),
            pubsub_queued: false,
            monitoring: false,
        }
    }

    /// In subscribe mode (known): the reply to a command there, or `None`
    /// where the model does not judge it (a container's subcommand).
    fn subscribed(&mut self, name: &str, args: &[Vec<u8>]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        match name {
            "ping" => {
                out.extend_from_slice(b"*2\r\n$4\r\npong\r\n");
                bulk(&mut out, args.get(1).map_or(&b""[..], |a| &a[..]));
            }
            "quit" => out.extend_from_slice(b"+OK\r\n"),
            _ if allowed_subscribed(name) => return self.pubsub(name, args),
            "client" | "config" | "command" | "object" | "memory" | "function" | "pubsub" => {
                return None
            }
            _ => {
                let why = format!(
                    "Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
                );
                let text = if name == "exec" {
                    format!("-EXECABORT Transaction discarded because of: {why}\r\n")
                } else {
                    format!("-ERR {why}\r\n")
                };
                out.extend_from_slice(text.as_bytes());
            }
        }
        Some(out)
    }

    /// SUBSCRIBE, PSUBSCRIBE, UNSUBSCRIBE, PUNSUBSCRIBE and RESET, with the
    /// subscriptions known; `None` for the rest.
    fn pubsub(&mut self, name: &str, args: &[Vec<u8>]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let subs = self.subs.as_mut()?;
        let pattern = name.starts_with('p');
        match name {
            "subscribe" | "psubscribe" => {
                for n in &args[1..] {
                    let mine = if pattern {
                        &mut subs.patterns
                    } else {
                        &mut subs.channels
                    };
                    if !mine.contains(n) {
                        mine.push(n.clone());
                    }
                    confirm(&mut out, name, Some(n), subs.count());
                }
            }
            "unsubscribe" | "punsubscribe" => {
                let mine = if pattern {
                    &subs.patterns
                } else {
                    &subs.channels
                };
                let names: Vec<Vec<u8>> = if args.len() > 1 {
                    args[1..].to_vec()
                } else {
                    mine.clone()
                };
                if names.is_empty() {
                    confirm(&mut out, name, None, subs.count());
                }
                for n in names {
                    let mine = if pattern {
                        &mut subs.patterns
                    } else {
                        &mut subs.channels
                    };
                    mine.retain(|m| *m != n);
                    confirm(&mut out, name, Some(&n), subs.count());
                }
            }
            "reset" => {
                self.reset();
                out.extend_from_slice(b"+RESET\r\n");
            }
            _ => return None,
        }
        Some(out)
    }

    /// RESET: no transaction or subscriptions, database 0.
    fn reset(&mut self) {
        self.multi = false;
        self.monitoring = false;
        self.pubsub_queued = false;
        self.subs = Some(Subs::default());
        self.select(0);
    }

    fn select(&mut self, n: usize) {
        std::mem::swap(&mut self.db, &mut self.others[self.at]);
        std::mem::swap(&mut self.db, &mut self.others[n]);
        self.at = n;
    }

    /// [`refuse`], but in subscribe mode (or perhaps in it) a command's
    /// own argument checks come after the mode's (Redis makes them as it
    /// runs the command): only an unknown name or subcommand, or a wrong
    /// arity, is refused before it.
    fn refused_first(&self, args: &[Vec<u8>]) -> Result<&'static str, Refusal> {
        let refused = refuse(args);
        // Unknown subscriptions (`None`): perhaps subscribed; judged by
        // the reply's shape alone.
        let subscribed = self.subs.as_ref().is_none_or(|s| s.count() > 0);
        match (&refused, known(args)) {
            (Err(r), Some((name, _)))
                if subscribed
                    && !matches!(r.kind, "unknown_command" | "wrong_arity")
                    && !allowed_subscribed(name) =>
            {
                Ok(name)
            }
            _ => refused,
        }
    }

    /// The reply the model expects, if it knows it.
    fn expect(&mut self, name: &str, args: &[Vec<u8>], len: usize) -> Option<Vec<u8>> {
        match &self.subs {
            // What a transaction that subscribed left is not modelled.
            None => return None,
            Some(s) if s.count() > 0 => return self.subscribed(name, args),
            Some(_) => {}
        }
        let control = matches!(
            name,
            "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
        );
        let pubsub = matches!(
            name,
            "subscribe" | "psubscribe" | "unsubscribe" | "punsubscribe" | "publish"
        );
        if self.multi && !control && pubsub {
            self.pubsub_queued = true;
        }
        // The server and connection commands' argument checks are not
        // modelled: queued, or refused (and the transaction with them);
        // after one, the queue's length is not known either.
        let unjudged = matches!(
            name,
            "select"
                | "command"
                | "config"
                | "client"
                | "hello"
                | "info"
                | "function"
                | "object"
                | "memory"
        );
        if self.multi && !control {
            let Some(queued) = self.queued.filter(|_| !unjudged) else {
                self.queued = None;
                return None;
            };
            // The queue holds at most --max-query bytes.
            if queued + len > self.limits.max_query {
                self.queued = Some(0);
                let e = "-ERR the queued commands pass --max-query: the transaction will be discarded\r\n";
                return Some(e.as_bytes().to_vec());
            }
            self.queued = Some(queued + len);
            return Some(b"+QUEUED\r\n".to_vec());
        }
        if name == "flushall" {
            self.lost = false;
        }
        if matches!(
            name,
            "subscribe" | "psubscribe" | "unsubscribe" | "punsubscribe" | "reset"
        ) {
            return self.pubsub(name, args);
        }
        let unknown = keys_of(name, args, |_| true)
            .iter()
            .any(|k| matches!(self.db.get(*k), Some(Value::Unknown)));
        if (self.lost && name != "flushall") || unknown {
            return None;
        }
        self.run(name, args)
    }

    /// What a command the model did not follow did, judged by its reply.
    fn followed(&mut self, name: &str, args: &[Vec<u8>], reply: &[u8]) {
        let ok = !reply.starts_with(b"-");
        // Messages may come before its OK (unknown subscriptions).
        if name == "monitor" && !self.multi && reply.windows(5).any(|w| w == b"+OK\r\n") {
            self.monitoring = true;
        }
        if self.subs.is_none() {
            // Until RESET (whose reply may follow messages).
            if name == "reset" && reply.ends_with(b"+RESET\r\n") {
                self.reset();
            }
            return;
        }
        let control = matches!(
            name,
            "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
        );
        if self.multi && !control {
            return;
        }
        match name {
            "multi" if ok => {
                self.multi = true;
                self.queued = Some(0);
            }
            "discard" if ok => {
                self.multi = false;
                self.pubsub_queued = false;
            }
            // The transaction discarded, database 0 again.
            "reset" if ok => {
                self.reset();
            }
            "exec" => {
                self.multi = false;
                if std::mem::take(&mut self.pubsub_queued) && reply.starts_with(b"*") {
                    self.subs = None;
                }
                self.lost |= reply.starts_with(b"*") && !reply.starts_with(b"*-1");
            }
            "select" if ok => self.select(int(&args[1]).expect("SELECT said OK") as usize),
            "swapdb" if ok => {
                let (x, y) = (
                    int(&args[1]).unwrap() as usize,
                    int(&args[2]).unwrap() as usize,
                );
                // Every database in `others` while they swap.
                std::mem::swap(&mut self.db, &mut self.others[self.at]);
                self.others.swap(x, y);
                std::mem::swap(&mut self.db, &mut self.others[self.at]);
            }
            "move" | "copy" if ok => self.lost = true,
            // A monitor is sent a line for each of its own commands
            // after its reply: only the replies' shape until RESET.
            "monitor" if ok => self.subs = None,
            _ => {
                let write = Name::find(name.as_bytes()).is_some_and(|n| n.facts().writes());
                if write && ok {
                    for k in keys_of(name, args, Role::writes) {
                        self.db.insert(k.clone(), Value::Unknown);
                    }
                }
            }
        }
    }

    /// The reply to a command [`refuse`] let through, applied to the
    /// model; `None` for a server command checked only for its shape.
    fn run(&mut self, name: &str, args: &[Vec<u8>]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        match name {
            "ping" if args.len() == 2 => bulk(&mut out, &args[1]),
            "ping" => out.extend_from_slice(b"+PONG\r\n"),
            "echo" => bulk(&mut out, &args[1]),
            "get" => match self.db.get(&args[1]) {
                None => out.extend_from_slice(b"$-1\r\n"),
                Some(Value::Str(v)) => bulk(&mut out, v),
                Some(Value::List(_)) => out.extend_from_slice(WRONGTYPE.as_bytes()),
                Some(Value::Unknown) => return None,
            },
            "set" if set_cond(args).is_err() => return None,
            "set" => self.set(args, &mut out),
            "del" => {
                let n = args[1..]
                    .iter()
                    .filter(|k| self.db.remove(*k).is_some())
                    .count();
                integer(&mut out, n as i64);
            }
            "exists" => {
                let n = args[1..]
                    .iter()
                    .filter(|k| self.db.contains_key(*k))
                    .count();
                integer(&mut out, n as i64);
            }
            "incr" | "decr" | "incrby" | "decrby" => self.incr(name, args, &mut out),
            "mget" => self.mget(args, &mut out),
            "mset" => {
                for kv in args[1..].chunks(2) {
                    self.db.insert(kv[0].clone(), Value::Str(kv[1].clone()));
                }
                out.extend_from_slice(b"+OK\r\n");
            }
            "dbsize" if self.db.values().any(|v| matches!(v, Value::Unknown)) => return None,
            "dbsize" => integer(&mut out, self.db.len() as i64),
            "flushdb" => {
                self.db.clear();
                out.extend_from_slice(b"+OK\r\n");
            }
            "flushall" => {
                self.db.clear();
                self.others.iter_mut().for_each(HashMap::clear);
                out.extend_from_slice(b"+OK\r\n");
            }
            "quit" => out.extend_from_slice(b"+OK\r\n"),
            "lpush" | "rpush" | "lpop" | "rpop" | "llen" | "lindex" | "lrange" => {
                match self.db.get_mut(&args[1]) {
                    Some(Value::Str(_)) => out.extend_from_slice(WRONGTYPE.as_bytes()),
                    _ => self.list(name, args, &mut out),
                }
            }
            _ => return None,
        }
        Some(out)
    }

    /// SET with NX or XX, as [`refuse`] let it through.
    fn set(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) {
        let cond = set_cond(args).expect("refuse checked SET's options");
        let exists = self.db.contains_key(&args[1]);
        if cond.is_none_or(|nx| nx != exists) {
            self.db.insert(args[1].clone(), Value::Str(args[2].clone()));
            out.extend_from_slice(b"+OK\r\n");
        } else {
            out.extend_from_slice(b"$-1\r\n");
        }
    }

    /// MGET: a key holding a list answers nil.
    /// MGET's reply; one past `--max-query` bytes is refused with the
    /// error that says so (the request sizes it, not the data).
    fn mget(&self, args: &[Vec<u8>], out: &mut Vec<u8>) {
        let mut reply = format!("*{}\r\n", args.len() - 1).into_bytes();
        for k in &args[1..] {
            match self.db.get(k) {
                Some(Value::Str(v)) => bulk(&mut reply, v),
                _ => reply.extend_from_slice(b"$-1\r\n"),
            }
        }
        if reply.len() > self.limits.max_query {
            let bound = self.limits.max_query;
            reply =
                format!("-ERR the reply would pass --max-query ({bound} bytes)\r\n").into_bytes();
        }
        out.extend_from_slice(&reply);
    }

    fn incr(&mut self, name: &str, args: &[Vec<u8>], out: &mut Vec<u8>) {
        let by = match name {
            "incr" => 1,
            "decr" => -1,
            "incrby" => int(&args[2]).expect("refused otherwise"),
            _ => -int(&args[2]).expect("refused otherwise"),
        };
        let old = match self.db.get(&args[1]) {
            None => Some(0),
            Some(Value::Str(v)) => int(v),
            Some(Value::List(_)) => return out.extend_from_slice(WRONGTYPE.as_bytes()),
            Some(Value::Unknown) => unreachable!("an unknown key is not modelled"),
        };
        let Some(old) = old else {
            return out.extend_from_slice(not_integer().reply.expect("text").as_bytes());
        };
        match old.checked_add(by) {
            Some(n) => {
                self.db
                    .insert(args[1].clone(), Value::Str(n.to_string().into_bytes()));
                integer(out, n);
            }
            None => out.extend_from_slice(b"-ERR increment or decrement would overflow\r\n"),
        }
    }

    /// The list commands, on a key that holds a list or nothing.
    fn list(&mut self, name: &str, args: &[Vec<u8>], out: &mut Vec<u8>) {
        let empty = VecDeque::new();
        let list = match self.db.get(&args[1]) {
            Some(Value::List(l)) => l,
            _ => &empty,
        };
        let len = list.len() as i64;
        match name {
            "llen" => integer(out, len),
            // Redis looks the key up before it reads the index.
            "lindex" if len == 0 => out.extend_from_slice(b"$-1\r\n"),
            "lindex" => {
                let Some(i) = int(&args[2]) else {
                    return out.extend_from_slice(not_integer().reply.unwrap().as_bytes());
                };
                let i = if i < 0 { len + i } else { i };
                match usize::try_from(i).ok().and_then(|i| list.get(i)) {
                    Some(v) => bulk(out, v),
                    None => out.extend_from_slice(b"$-1\r\n"),
                }
            }
            "lrange" => {
                let (start, stop) = (int(&args[2]).unwrap(), int(&args[3]).unwrap());
                let start = if start < 0 {
                    (len + start).max(0)
                } else {
                    start
                };
                let stop = if stop < 0 {
                    len + stop
                } else {
                    stop.min(len - 1)
                };
                let items: Vec<&Vec<u8>> = if start > stop || start >= len {
                    Vec::new()
                } else {
                    list.range(start as usize..=stop as usize).collect()
                };
                out.extend_from_slice(format!("*{}\r\n", items.len()).as_bytes());
                items.iter().for_each(|v| bulk(out, v));
            }
            "lpush" | "rpush" => {
                let mut list = list.clone();
                for v in &args[2..] {
                    if name == "lpush" {
                        list.push_front(v.clone());
                    } else {
                        list.push_back(v.clone());
                    }
                }
                integer(out, list.len() as i64);
                self.db.insert(args[1].clone(), Value::List(list));
            }
            _ => self.pop(name, args, out),
        }
    }

    /// LPOP/RPOP, with or without a count; a list popped empty is gone.
    fn pop(&mut self, name: &str, args: &[Vec<u8>], out: &mut Vec<u8>) {
        let count = args
            .get(2)
            .map(|c| int(c).expect("refused otherwise") as usize);
        let Some(Value::List(list)) = self.db.get_mut(&args[1]) else {
            let nil: &[u8] = if count.is_some() {
                b"*-1\r\n"
            } else {
                b"$-1\r\n"
            };
            return out.extend_from_slice(nil);
        };
        let n = count.unwrap_or(1).min(list.len());
        let popped: Vec<Vec<u8>> = (0..n)
            .filter_map(|_| {
                if name == "lpop" {
                    list.pop_front()
                } else {
                    list.pop_back()
                }
            })
            .collect();
        if list.is_empty() {
            self.db.remove(&args[1]);
        }
        match count {
            None => bulk(out, &popped[0]),
            Some(_) => {
                out.extend_from_slice(format!("*{}\r\n", popped.len()).as_bytes());
                popped.iter().for_each(|v| bulk(out, v));
            }
        }
    }
}

/// Exactly one whole reply, as a client reads it.
fn one_reply(out: &[u8]) -> bool {
    serverlab_proto::resp::client::parse(out).is_ok_and(|r| r.is_some_and(|(_, n)| n == out.len()))
}

/// One or more whole replies, as a client reads them.
fn whole_replies(mut out: &[u8]) -> bool {
    while !out.is_empty() {
        match serverlab_proto::resp::client::parse(out) {
            Ok(Some((_, n))) if n > 0 => out = &out[n..],
            _ => return false,
        }
    }
    true
}

/// The last of one or more whole replies (`None` if they are not whole).
fn last_reply(mut out: &[u8]) -> Option<&[u8]> {
    let mut last = None;
    while !out.is_empty() {
        match serverlab_proto::resp::client::parse(out) {
            Ok(Some((_, n))) if n > 0 => {
                last = Some(&out[..n]);
                out = &out[n..];
            }
            _ => return None,
        }
    }
    last
}

fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(&b[..b.len().min(300)]).into_owned()
}

impl Model for Resp {
    fn next(&mut self, rest: &[u8]) -> Next {
        // The session holds at most --max-query unconsumed bytes: a
        // request not whole within them overflows (once they are all
        // there, whether or not more would come).
        let room = rest.len().min(self.limits.max_query);
        match resp_wire::frame(&rest[..room], &self.limits) {
            Wire::Request { len, .. } => Next::Request(len),
            Wire::Wait if room == self.limits.max_query => Next::Refuse,
            Wire::Wait => Next::Wait,
            Wire::Error(_) => Next::Refuse,
        }
    }

    fn silent(&self, request: &[u8]) -> bool {
        matches!(
            resp_wire::frame(request, &self.limits),
            Wire::Request { args, .. } if args.is_empty()
                || (self.monitoring && args.len() == 1 && args[0].eq_ignore_ascii_case(b"monitor"))
        )
    }

    fn answer(&mut self, a: &Applied) -> bool {
        let Wire::Request { args, .. } = resp_wire::frame(a.request, &self.limits) else {
            panic!("applied {:?}, not a request", show(a.request));
        };
        assert_eq!(a.delay, None, "RESP has no delays");
        if args.is_empty() {
            assert!(
                a.reply.is_empty(),
                "a request of nothing answered {:?}",
                show(a.reply)
            );
            return false;
        }
        let req = || args.iter().map(|a| show(a)).collect::<Vec<_>>();
        match self.refused_first(&args) {
            Err(r) => {
                // Shape only (a monitor, unknown subscriptions): lines and
                // messages may come before the refusal, which is last.
                let reply = match self.subs {
                    None => last_reply(a.reply)
                        .unwrap_or_else(|| panic!("{:?} answered {:?}", req(), show(a.reply))),
                    Some(_) => a.reply,
                };
                match &r.reply {
                    Some(text) => assert_eq!(show(reply), *text, "{:?}", req()),
                    None => assert!(
                        reply.starts_with(b"-ERR ") && one_reply(reply),
                        "{:?} refused with {:?}",
                        req(),
                        show(a.reply)
                    ),
                }
                if r.kind == "unknown_command" {
                    assert!(
                        reply.starts_with(b"-ERR unknown command '")
                            || reply.starts_with(b"-ERR unknown subcommand '"),
                        "{:?}",
                        show(a.reply)
                    );
                }
                false
            }
            Ok(name) => {
                match self.expect(name, &args, a.request.len()) {
                    Some(want) => assert_eq!(show(a.reply), show(&want), "reply to {:?}", req()),
                    None => {
                        // Unknown subscriptions: messages may come first.
                        let whole = match self.subs {
                            None => whole_replies(a.reply),
                            Some(_) => one_reply(a.reply),
                        };
                        assert!(whole, "{:?} answered {:?}", req(), show(a.reply));
                        self.followed(name, &args, a.reply);
                    }
                }
                name == "quit"
            }
        }
    }

    fn refused(&self, refusal: Option<&Event>, seen: &[u8]) {
        let room = seen.len().min(self.limits.max_query);
        let want = match resp_wire::frame(&seen[..room], &self.limits) {
            Wire::Error(e) => e,
            _ => ProtocolError::QueryBufferFull,
        };
        let text = format!("-ERR {}\r\n", want.message());
        match refusal {
            Some(Event::Overflow { out }) if want == ProtocolError::QueryBufferFull => {
                assert_eq!(show(out), text)
            }
            _ => assert_eq!(
                show(super::framing_refusal(refusal)),
                text,
                "{:?}",
                show(seen)
            ),
        }
    }
}
