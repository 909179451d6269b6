//! The RESP load's state around a run, on a blocking connection of its
//! own: the keys a verified run owns are deleted and the shared ones (and,
//! with `--preload`, every string key) written before it; the board's
//! topics are counted (LLEN) before and after.

use super::mirror::preload_nonce;
use super::workload::{key, topic_key, Space};
use super::RespLoad;
use crate::driver::{no_reply_within, reply_too_long};
use crate::kv::workload::write_value;
use crate::LoadError;
use serverlab_proto::resp::client::{self, Reply};
use serverlab_util::InputBuf;
use std::io::{self, Read, Write};
use std::net::TcpStream;

use std::time::{Duration, Instant};

/// Commands sent before their replies are read.
const BATCH: usize = 1000;
/// Keys per DEL.
const DEL_KEYS: usize = 100;

/// A blocking RESP connection for the few commands around a run.
pub struct Conn {
    stream: TcpStream,
    buf: InputBuf,
    /// How long each batch of commands may take in all, with its replies.
    within: Duration,
    /// The longest reply accepted.
    max_reply: usize,
}

/// Room made for each read.
const READ_CHUNK: usize = 64 * 1024;

impl Conn {
    /// A connection for `cfg`'s server: each [`Conn::call`] must be done
    /// within its `--reply-timeout`, each reply within its reply limit.
    pub fn connect(cfg: &RespLoad) -> Result<Conn, LoadError> {
        let addr = cfg.addr;
        let stream = TcpStream::connect_timeout(&addr, super::CONNECT_TIMEOUT)
            .map_err(|error| LoadError::Connect { addr, error })?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buf: InputBuf::new(),
            within: cfg.reply_timeout,
            max_reply: cfg.reply_limit(),
        })
    }

    /// Send `wire` (`n` commands) and return their replies, each whole,
    /// all within the connection's time. A reply is looked for again
    /// only once the buffer has doubled since the last look, or the
    /// socket had no more for now: a long reply is not re-walked on every
    /// read.
    pub fn call(&mut self, wire: &[u8], n: usize) -> Result<Vec<Vec<u8>>, LoadError> {
        let by = Instant::now() + self.within;
        self.stream.set_write_timeout(Some(self.within))?;
        self.stream.write_all(wire).map_err(|e| self.timed_out(e))?;
        let mut replies = Vec::with_capacity(n);
        let mut look_at = 0;
        while replies.len() < n {
            if self.buf.len() < look_at {
                if self.fill(by)? {
                    look_at = 0;
                }
                continue;
            }
            match client::skip(self.buf.data()) {
                Ok(Some(len)) => {
                    replies.push(self.buf.data()[..len].to_vec());
                    self.buf.consume(len);
                }
                Ok(None) if self.buf.len() > self.max_reply => {
                    return Err(invalid(reply_too_long(self.max_reply)))
                }
                Ok(None) => {
                    look_at = self.buf.len() * 2;
                    if self.fill(by)? {
                        look_at = 0;
                    }
                }
                Err(e) => return Err(invalid(e.to_string())),
            }
        }
        Ok(replies)
    }

    /// Read what comes by `by`. True when the read took all there was
    /// for now (so look for replies at once).
    fn fill(&mut self, by: Instant) -> Result<bool, LoadError> {
        let left = by.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(self.timed_out(io::ErrorKind::TimedOut.into()).into());
        }
        self.stream.set_read_timeout(Some(left))?;
        self.buf.reserve(READ_CHUNK);
        let room = self.buf.spare().len();
        match self.stream.read(self.buf.spare()) {
            Ok(0) => Err(invalid("the server closed the connection".into())),
            Ok(n) => {
                self.buf.filled(n);
                Ok(n < room || !self.more_ready())
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(false),
            Err(e) => Err(self.timed_out(e).into()),
        }
    }

    /// Whether more bytes can be read at once (without waiting).
    fn more_ready(&self) -> bool {
        if self.stream.set_nonblocking(true).is_err() {
            return false;
        }
        let mut one = [0u8; 1];
        let ready = matches!(self.stream.peek(&mut one), Ok(n) if n > 0);
        let _ = self.stream.set_nonblocking(false);
        ready
    }

    /// A read or write that waited out the time, said as such.
    fn timed_out(&self, e: io::Error) -> io::Error {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                io::Error::new(io::ErrorKind::TimedOut, no_reply_within(self.within))
            }
            _ => e,
        }
    }
}

fn invalid(why: String) -> LoadError {
    LoadError::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, why))
}

/// Every reply must be one of `ok`; else the first that is not, shown.
fn expect_all(replies: &[Vec<u8>], what: &str, ok: impl Fn(&Reply) -> bool) -> Result<(), String> {
    for r in replies {
        match client::parse(r) {
            Ok(Some((reply, _))) if ok(&reply) => {}
            Ok(Some((reply, _))) => {
                return Err(format!("{what}: the server answered {}", reply.show()))
            }
            _ => return Err(format!("{what}: a reply that is not RESP")),
        }
    }
    Ok(())
}

/// Run `commands` in pipelined batches; every reply must pass `ok`.
fn batches(
    conn: &mut Conn,
    commands: impl Iterator<Item = Vec<Vec<u8>>>,
    what: &str,
    ok: impl Fn(&Reply) -> bool + Copy,
) -> Result<Result<(), String>, LoadError> {
    let mut wire = Vec::new();
    let mut n = 0;
    let mut flush = |wire: &mut Vec<u8>, n: &mut usize| -> Result<Result<(), String>, LoadError> {
        let replies = conn.call(wire, *n)?;
        wire.clear();
        *n = 0;
        Ok(expect_all(&replies, what, ok))
    };
    for args in commands {
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        client::command(&mut wire, &refs);
        n += 1;
        if n == BATCH {
            if let Err(e) = flush(&mut wire, &mut n)? {
                return Ok(Err(e));
            }
        }
    }
    if n > 0 {
        return flush(&mut wire, &mut n);
    }
    Ok(Ok(()))
}

/// Before a keys run: with `verify`, delete every key it may write and
/// write the shared keys; with `preload`, write every string key. Returns
/// how many keys were written; a refused command is pushed to `errors`.
pub fn keys(cfg: &RespLoad, errors: &mut Vec<String>) -> Result<usize, LoadError> {
    let mut conn = Conn::connect(cfg)?;
    let mut result = Ok(());
    // A split load's agent prepares only the keys its connections own
    // (connection k owns keys k, k + connections, …): the others' are
    // theirs, and may be in use.
    let clients = cfg.clients().max(1);
    let mine: Vec<usize> = (0..cfg.keys)
        .filter(|&i| cfg.agent.owns(i % clients))
        .collect();
    if cfg.verify {
        let mine = &mine;
        let dels = [Space::Str, Space::Counter, Space::List]
            .into_iter()
            .flat_map(move |space| {
                mine.chunks(DEL_KEYS).map(move |chunk| {
                    let mut args = vec![b"DEL".to_vec()];
                    args.extend(chunk.iter().map(|&i| key(space, i)));
                    args
                })
            });
        result = batches(&mut conn, dels, "DEL before the run", |r| {
            matches!(r, Reply::Int(_))
        })?;
    }
    let set = |space: Space, i: usize| {
        let k = key(space, i);
        let mut v = Vec::new();
        write_value(&mut v, &k, preload_nonce(cfg.seed, i), cfg.value_size);
        vec![b"SET".to_vec(), k, v]
    };
    let ok = |r: &Reply| *r == Reply::Simple(b"OK");
    let mut written = 0;
    if result.is_ok() && cfg.verify {
        result = batches(
            &mut conn,
            (0..cfg.shared_keys).map(|i| set(Space::Shared, i)),
            "SET of a shared key",
            ok,
        )?;
        written += cfg.shared_keys;
    }
    if result.is_ok() && cfg.preload {
        result = batches(
            &mut conn,
            mine.iter().map(|&i| set(Space::Str, i)),
            "preload SET",
            ok,
        )?;
        written += mine.len();
    }
    if let Err(e) = result {
        errors.push(e);
    }
    Ok(written)
}

/// Every board topic's length (LLEN), on one connection.
pub fn topic_lengths(cfg: &RespLoad) -> Result<Result<Vec<u64>, String>, LoadError> {
    let topics = cfg.topics;
    let mut conn = Conn::connect(cfg)?;
    let agent = cfg.agent;
    let mut wire = Vec::new();
    for t in crate::board::workload::agent_topics(topics, agent) {
        client::command(&mut wire, &[b"LLEN", &topic_key(t)]);
    }
    let replies = conn.call(&wire, agent.share(topics))?;
    Ok(replies
        .iter()
        .map(|r| match client::parse(r) {
            Ok(Some((Reply::Int(n), _))) if n >= 0 => Ok(n as u64),
            Ok(Some((other, _))) => Err(format!("LLEN of a topic answered {}", other.show())),
            _ => Err("LLEN of a topic: a reply that is not RESP".into()),
        })
        .collect())
}
