//! The RESP service: Redis's protocol (docs/protocols/resp.md, section 5) applied
//! to a [`RespStore`].
//!
//! `frame` frames the next request with the connection's [`Framer`]
//! (resuming where it stopped: a request arriving in pieces is parsed
//! once) and parses it into a [`Cmd`]; the arguments stay spans of the
//! input, kept in the framer until `apply`, which runs the command and
//! encodes its reply straight into the output (a value is copied once,
//! from the store into the output, under the store's lock). A protocol
//! error is answered from `frame` with `-ERR Protocol error: …`, and
//! the connection closes.

mod admin;
mod log;
mod stats;
mod undo;

use crate::durable::{Refused, Touch};
use crate::{After, Common, Durable, Frame, Logged, Service};
use serverlab_proto::resp::command::{self, Cmd, ConnCmd, ListCmd, Rejection, ServerCmd, StrCmd};
use serverlab_proto::resp::frame::{Framed, ProtocolError};
use serverlab_proto::resp::{reply, Framer, Limits, Span};
use serverlab_store::resp::{IncrError, RespStore, WrongType};
use serverlab_wal::{ApplyError, Wal};
use stats::RespStats;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub struct RespService {
    store: Arc<dyn RespStore>,
    limits: Limits,
    stats: RespStats,
    common: Common,
    /// CLIENT ID's source. Relaxed: it only hands out distinct numbers.
    next_id: AtomicU64,
    /// What INFO says about the server (`store mutex`, …).
    about: String,
    /// The write-ahead log (`--durability` other than `none`).
    log: Option<Durable>,
}

/// Per connection: its framing state and its name.
pub struct RespConn {
    framer: Framer,
    id: u64,
    name: Option<Box<[u8]>>,
    /// What the writes applied since the session last asked came to.
    logged: Option<Logged>,
}

/// A framed request: the command, its arguments being the framer's.
/// Only [`RespService`]'s `frame` builds one.
#[derive(Debug)]
pub struct RespRequest(Req);

#[derive(Debug)]
enum Req {
    /// `*0`, `*-1` or a blank inline line: nothing to answer.
    Nothing,
    Cmd(Cmd),
}

impl RespService {
    /// `about` is shown in INFO's `# Server` (the store, the strategy).
    pub fn new(store: Arc<dyn RespStore>, limits: Limits, about: String) -> Self {
        RespService {
            store,
            limits,
            stats: RespStats::default(),
            common: Common::default(),
            next_id: AtomicU64::new(1),
            about,
            log: None,
        }
    }

    /// Applies one record of a log being replayed (see
    /// [`Wal::open`](serverlab_wal::Wal::open)): a record is the command
    /// as it arrived, run again (uncounted) in log order.
    pub fn replay(&self, record: &[u8]) -> Result<(), ApplyError> {
        let mut conn = self.open(SocketAddr::from(([0, 0, 0, 0], 0)));
        let mut out = Vec::new();
        match self.frame(&mut conn, record, &mut out) {
            Frame::Ready {
                len,
                request: RespRequest(Req::Cmd(cmd)),
            } if len == record.len() => {
                self.execute(&mut conn, cmd, record, &mut out);
                Ok(())
            }
            _ => Err("not a RESP command".into()),
        }
    }

    /// Logs every command that changes data from now on into `wal`,
    /// opened (and replayed into this service) by the caller.
    pub fn with_log(mut self, wal: Wal) -> Self {
        self.log = Some(Durable::new(wal));
        self
    }

    fn protocol_error(&self, e: ProtocolError, out: &mut Vec<u8>) {
        self.stats.protocol_error(e);
        reply::error(out, format!("ERR {}", e.message()).as_bytes());
    }

    fn reject(&self, r: Rejection, conn: &RespConn, input: &[u8], out: &mut Vec<u8>) {
        self.stats.rejected(r);
        let arg = |i: usize| conn.framer.arg(input, i);
        let msg = match r {
            Rejection::UnknownCommand => unknown_command(&conn.framer, input),
            Rejection::UnknownSubcommand(cmd) => format!(
                "ERR unknown subcommand '{}'. Try {cmd} HELP.",
                c_str(arg(1), 128)
            ),
            Rejection::WrongArity(name) => {
                format!("ERR wrong number of arguments for '{name}' command")
            }
            Rejection::Syntax => "ERR syntax error".into(),
            Rejection::NotInteger => return reply::error(out, reply::NOT_INTEGER),
            Rejection::NotPositive => "ERR value is out of range, must be positive".into(),
            Rejection::DbIndex => "ERR DB index is out of range".into(),
            Rejection::DecrementOverflow => "ERR decrement would overflow".into(),
            Rejection::BadClientName => {
                "ERR Client names cannot contain spaces, newlines or special characters.".into()
            }
            Rejection::UnknownSetInfo => {
                format!("ERR Unrecognized option '{}'", c_str(arg(2), 128))
            }
            Rejection::HelloVersion => "ERR Protocol version is not an integer or out of range".into(),
            Rejection::NoProto => {
                "NOPROTO unsupported protocol version".into()
            }
            Rejection::HelloOption { at } => {
                format!("ERR Syntax error in HELLO option '{}'", c_str(arg(at), 128))
            }
            Rejection::UnsupportedOption { at } => format!(
                "ERR unsupported option '{}': serverlab serves SET key value [NX|XX], with no expiry",
                c_str(arg(at), 128)
            ),
        };
        reply::error(out, msg.as_bytes());
    }

    fn wrongtype(&self, out: &mut Vec<u8>) {
        self.stats.wrongtype();
        reply::error(out, reply::WRONGTYPE);
    }

    /// Run `cmd` and append its reply; a command that changes data is
    /// logged (as it arrived) before the store applies it, in the order
    /// the store applies it, and refused once the log has failed; any
    /// other's reply waits for the writes it may have seen (`always`).
    fn run(&self, conn: &mut RespConn, cmd: Cmd, input: &[u8], out: &mut Vec<u8>) -> After {
        let Some(log) = &self.log else {
            return self.execute(conn, cmd, input, out);
        };
        if matches!(cmd, Cmd::Conn(_) | Cmd::Reject(_)) {
            return self.execute(conn, cmd, input, out);
        }
        let a = Args {
            framer: &conn.framer,
            input,
        };
        let mut keys = Vec::new();
        let touch = touches(&cmd, &a, &mut keys);
        if !changes_data(&cmd) {
            let (_, wait) = log.read(touch, || self.data(cmd, &a, out));
            conn.logged = Logged::merge(conn.logged, wait);
            return After::Continue;
        }
        let written = log.write(
            touch,
            |rec| {
                rec.extend_from_slice(input);
                true
            },
            || undo::of(&self.store, &cmd, &a),
            || self.data(cmd, &a, out),
        );
        match written {
            Ok((_, logged)) => {
                conn.logged = Logged::merge(conn.logged, logged);
                log::compact_if_due(log, &self.store, self.limits.max_args);
            }
            Err(Refused::Failed(why)) => {
                self.stats.refused();
                let msg = format!("MISCONF {why}; writes are refused");
                reply::error(out, one_line(&msg).as_bytes());
            }
            Err(Refused::TooLong(why)) => {
                reply::error(out, one_line(&format!("ERR {why}")).as_bytes());
            }
        }
        After::Continue
    }

    /// Run `cmd` and append its reply, unlogged.
    fn execute(&self, conn: &mut RespConn, cmd: Cmd, input: &[u8], out: &mut Vec<u8>) -> After {
        let a = Args {
            framer: &conn.framer,
            input,
        };
        match cmd {
            Cmd::Conn(c) => return connection(conn, c, input, out),
            Cmd::Reject(r) => self.reject(r, conn, input, out),
            data => self.data(data, &a, out),
        }
        After::Continue
    }

    /// Run a command on the data (strings, lists, the server's whole
    /// keyspace) and append its reply.
    fn data(&self, cmd: Cmd, a: &Args, out: &mut Vec<u8>) {
        match cmd {
            Cmd::Str(c) => self.strings(c, a, out),
            Cmd::List(c) => self.lists(c, a, out),
            Cmd::Server(c) => self.server(c, a, out),
            Cmd::Conn(_) | Cmd::Reject(_) => unreachable!("not a data command"),
        }
    }

    /// The string commands.
    fn strings(&self, cmd: StrCmd, a: &Args, out: &mut Vec<u8>) {
        match cmd {
            StrCmd::Get(k) => self.get(a.get(k), out),
            StrCmd::Set { key, value, cond } => {
                if self.store.set(a.get(key), a.get(value), cond) {
                    reply::ok(out)
                } else {
                    reply::null(out)
                }
            }
            StrCmd::Del => {
                let n = a.from(1).filter(|k| self.store.del(k)).count();
                reply::int(out, n as i64)
            }
            StrCmd::Exists => {
                let n = a.from(1).filter(|k| self.store.exists(k)).count();
                reply::int(out, n as i64)
            }
            StrCmd::IncrBy { key, by } => self.incr_by(a.get(key), by, out),
            StrCmd::MGet => {
                reply::array(out, a.count() - 1);
                for k in a.from(1) {
                    // A key holding a list answers nil, as Redis's MGET does.
                    if !matches!(self.store.get(k, &mut |v| reply::bulk(out, v)), Ok(true)) {
                        reply::null(out);
                    }
                }
            }
            StrCmd::MSet => {
                let mut kv = a.from(1);
                while let (Some(k), Some(v)) = (kv.next(), kv.next()) {
                    self.store.set(k, v, serverlab_proto::resp::SetCond::Always);
                }
                reply::ok(out)
            }
        }
    }

    fn incr_by(&self, key: &[u8], by: i64, out: &mut Vec<u8>) {
        match self.store.incr_by(key, by) {
            Ok(n) => reply::int(out, n),
            Err(IncrError::WrongType) => self.wrongtype(out),
            Err(e) => {
                self.stats.not_integer();
                let msg = match e {
                    IncrError::Overflow => reply::OVERFLOW,
                    _ => reply::NOT_INTEGER,
                };
                reply::error(out, msg)
            }
        }
    }

    /// The list commands; a key holding a string gets WRONGTYPE.
    fn lists(&self, cmd: ListCmd, a: &Args, out: &mut Vec<u8>) {
        if let Err(WrongType) = self.list_reply(cmd, a, out) {
            self.wrongtype(out)
        }
    }

    fn list_reply(&self, cmd: ListCmd, a: &Args, out: &mut Vec<u8>) -> Result<(), WrongType> {
        match cmd {
            ListCmd::Push { end, key } => {
                let n = self.store.push(a.get(key), end, &mut a.from(2))?;
                reply::int(out, n as i64)
            }
            ListCmd::Pop { end, key, count } => {
                match (self.store.pop(a.get(key), end, count.unwrap_or(1))?, count) {
                    (None, Some(_)) => reply::null_array(out),
                    (None, None) => reply::null(out),
                    (Some(items), None) => reply::bulk(out, &items[0]),
                    (Some(items), Some(_)) => {
                        reply::array(out, items.len());
                        items.iter().for_each(|i| reply::bulk(out, i));
                    }
                }
            }
            ListCmd::LLen(k) => reply::int(out, self.store.llen(a.get(k))? as i64),
            ListCmd::LIndex { key, index: None } => {
                // As Redis: the key first (nil, WRONGTYPE), then the
                // index. A list is never empty, so a length of 0 is no key.
                if self.store.llen(a.get(key))? == 0 {
                    reply::null(out)
                } else {
                    self.stats.rejected(Rejection::NotInteger);
                    reply::error(out, reply::NOT_INTEGER)
                }
            }
            ListCmd::LIndex {
                key,
                index: Some(index),
            } => {
                let found = self
                    .store
                    .lindex(a.get(key), index, &mut |v| reply::bulk(out, v))?;
                if !found {
                    reply::null(out)
                }
            }
            ListCmd::LRange { key, start, stop } => {
                self.store
                    .lrange(a.get(key), start, stop, &mut |n, items| {
                        reply::array(out, n);
                        items.for_each(|i| reply::bulk(out, i));
                    })?
            }
        }
        Ok(())
    }

    /// The commands about the server and its data as a whole.
    fn server(&self, cmd: ServerCmd, a: &Args, out: &mut Vec<u8>) {
        match cmd {
            ServerCmd::Ping(None) => reply::simple(out, b"PONG"),
            ServerCmd::Ping(Some(m)) | ServerCmd::Echo(m) => reply::bulk(out, a.get(m)),
            ServerCmd::DbSize => reply::int(out, self.store.len() as i64),
            ServerCmd::Flush => {
                self.store.clear();
                reply::ok(out)
            }
            ServerCmd::Select => reply::ok(out),
            ServerCmd::Info => self.info(a, out),
            ServerCmd::Command(q) => admin::command(q, a, out),
            ServerCmd::ConfigGet => admin::config_get(a, out),
        }
    }

    fn get(&self, key: &[u8], out: &mut Vec<u8>) {
        match self.store.get(key, &mut |v| reply::bulk(out, v)) {
            Ok(true) => {}
            Ok(false) => reply::null(out),
            Err(_) => self.wrongtype(out),
        }
    }

    fn info(&self, a: &Args, out: &mut Vec<u8>) {
        let sections: Vec<String> = a
            .from(1)
            .map(|s| String::from_utf8_lossy(s).to_ascii_lowercase())
            .collect();
        let text = admin::info(&admin::InfoFacts {
            sections: &sections,
            about: &self.about,
            common: &self.common,
            keys: self.store.len(),
            log: self.log.as_ref(),
        });
        reply::bulk(out, text.as_bytes());
    }
}

/// What `cmd` reads or writes, as the barrier of replies sees it
/// ([`crate::durable`]); several keys go into `keys`.
fn touches<'k>(cmd: &Cmd, a: &Args<'k>, keys: &'k mut Vec<&'k [u8]>) -> Touch<'k> {
    match *cmd {
        Cmd::Str(StrCmd::Get(key) | StrCmd::Set { key, .. } | StrCmd::IncrBy { key, .. })
        | Cmd::List(
            ListCmd::Push { key, .. }
            | ListCmd::Pop { key, .. }
            | ListCmd::LLen(key)
            | ListCmd::LIndex { key, .. }
            | ListCmd::LRange { key, .. },
        ) => Touch::Key(a.get(key)),
        Cmd::Str(StrCmd::Del | StrCmd::Exists | StrCmd::MGet) => {
            keys.extend(a.from(1));
            Touch::Keys(keys)
        }
        Cmd::Str(StrCmd::MSet) => {
            keys.extend(a.from(1).step_by(2));
            Touch::Keys(keys)
        }
        Cmd::Server(ServerCmd::DbSize | ServerCmd::Flush | ServerCmd::Info) => Touch::Every,
        Cmd::Server(_) | Cmd::Conn(_) | Cmd::Reject(_) => Touch::Nothing,
    }
}

/// Whether `cmd` may change data (and so is logged).
fn changes_data(cmd: &Cmd) -> bool {
    matches!(
        cmd,
        Cmd::Str(StrCmd::Set { .. } | StrCmd::Del | StrCmd::IncrBy { .. } | StrCmd::MSet)
            | Cmd::List(ListCmd::Push { .. } | ListCmd::Pop { .. })
            | Cmd::Server(ServerCmd::Flush)
    )
}

fn connection(conn: &mut RespConn, cmd: ConnCmd, input: &[u8], out: &mut Vec<u8>) -> After {
    match cmd {
        ConnCmd::ClientSetName(name) | ConnCmd::Hello(Some(name)) => {
            let name = conn.framer.get(input, name);
            conn.name = (!name.is_empty()).then(|| name.into());
            match cmd {
                ConnCmd::Hello(_) => admin::hello(conn.id, out),
                _ => reply::ok(out),
            }
        }
        ConnCmd::ClientGetName => match &conn.name {
            Some(n) => reply::bulk(out, n),
            None => reply::null(out),
        },
        ConnCmd::ClientSetInfo => reply::ok(out),
        ConnCmd::ClientId => reply::int(out, conn.id as i64),
        ConnCmd::Hello(None) => admin::hello(conn.id, out),
        ConnCmd::Quit => {
            reply::ok(out);
            return After::Close;
        }
    }
    After::Continue
}

/// A request's arguments, to read.
pub(crate) struct Args<'a> {
    framer: &'a Framer,
    input: &'a [u8],
}

impl<'a> Args<'a> {
    fn get(&self, s: Span) -> &'a [u8] {
        self.framer.get(self.input, s)
    }

    fn count(&self) -> usize {
        self.framer.args().len()
    }

    /// Arguments `i` and after.
    fn from(&self, i: usize) -> impl Iterator<Item = &'a [u8]> + 'a {
        let (framer, input) = (self.framer, self.input);
        framer.args()[i..]
            .iter()
            .map(move |&s| framer.get(input, s))
    }
}

/// `msg` as one line: an error reply cannot hold CR or LF.
fn one_line(msg: &str) -> String {
    msg.replace(['\r', '\n'], " ")
}

/// At most `max` bytes of `b`, up to any NUL (as C's `%.*s` prints it).
fn c_str(b: &[u8], max: usize) -> String {
    let b = &b[..b.len().min(max)];
    let b = memchr_nul(b);
    String::from_utf8_lossy(b).into_owned()
}

fn memchr_nul(b: &[u8]) -> &[u8] {
    match b.iter().position(|&c| c == 0) {
        Some(i) => &b[..i],
        None => b,
    }
}

/// Redis 7's `unknown command '<name>', with args beginning with: 'a' 'b' `
/// (each argument quoted and followed by a space, until 128 bytes).
fn unknown_command(framer: &Framer, input: &[u8]) -> String {
    let mut args = String::new();
    for i in 1..framer.args().len() {
        if args.len() >= 128 {
            break;
        }
        let room = 128 - args.len();
        args += &format!("'{}' ", c_str(framer.arg(input, i), room));
    }
    format!(
        "ERR unknown command '{}', with args beginning with: {args}",
        c_str(framer.arg(input, 0), 128)
    )
}

impl Service for RespService {
    type Conn = RespConn;
    type Request = RespRequest;

    fn open(&self, _peer: SocketAddr) -> RespConn {
        RespConn {
            framer: Framer::new(),
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            name: None,
            logged: None,
        }
    }

    fn input_limit(&self) -> usize {
        self.limits.max_query
    }

    fn frame(&self, conn: &mut RespConn, input: &[u8], out: &mut Vec<u8>) -> Frame<RespRequest> {
        match conn.framer.frame(input, &self.limits) {
            Framed::Incomplete => Frame::Incomplete,
            Framed::Empty { len } => Frame::Ready {
                len,
                request: RespRequest(Req::Nothing),
            },
            Framed::Request { len } => Frame::Ready {
                len,
                request: RespRequest(Req::Cmd(command::parse(&conn.framer, &input[..len]))),
            },
            Framed::Error(e) => {
                self.protocol_error(e, out);
                Frame::Close
            }
        }
    }

    fn apply(
        &self,
        conn: &mut RespConn,
        req: RespRequest,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> After {
        match req.0 {
            Req::Nothing => After::Continue,
            Req::Cmd(cmd) => {
                self.stats.command(&cmd);
                self.run(conn, cmd, input, out)
            }
        }
    }

    fn overflow(&self, _conn: &mut RespConn, out: &mut Vec<u8>) {
        self.protocol_error(ProtocolError::QueryBufferFull, out);
    }

    fn common(&self) -> &Common {
        &self.common
    }

    fn wal(&self) -> Option<&Wal> {
        self.log.as_ref().map(|l| &**l.wal())
    }

    fn logged(&self, conn: &mut RespConn) -> Option<Logged> {
        conn.logged.take()
    }

    fn report(&self) -> serde_json::Value {
        let mut v = self.stats.report(self.store.len());
        if let Some(log) = &self.log {
            v["durability"] = log.report();
        }
        v
    }

    /// The command families, as the report counts them, then `rejected`
    /// and `empty`.
    const OPS: &'static [&'static str] = &stats::OPS;

    fn op(&self, _conn: &RespConn, req: &RespRequest) -> usize {
        match &req.0 {
            Req::Nothing => stats::EMPTY_OP,
            Req::Cmd(cmd) => stats::index(cmd),
        }
    }

    fn store_size(&self) -> Option<(&'static str, u64)> {
        Some(("keys", self.store.len() as u64))
    }
}

#[cfg(test)]
mod tests;
