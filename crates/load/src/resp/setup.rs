//! The RESP load's state around a run, on a blocking connection of its
//! own: the keys a verified run owns are deleted and the shared ones (and,
//! with `--preload`, every string key) written before it; the board's
//! topics are counted (LLEN) before and after.

use super::mirror::preload_nonce;
use super::workload::{key, topic_key, Space};
use super::RespLoad;
use crate::kv::workload::write_value;
use crate::LoadError;
use serverlab_proto::resp::client::{self, Reply};
use serverlab_util::InputBuf;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// Commands sent before their replies are read.
const BATCH: usize = 1000;
/// Keys per DEL.
const DEL_KEYS: usize = 100;

/// A blocking RESP connection for the few commands around a run.
pub struct Conn {
    stream: TcpStream,
    buf: InputBuf,
}

impl Conn {
    pub fn connect(addr: SocketAddr, timeout: Duration) -> Result<Conn, LoadError> {
        let stream = TcpStream::connect_timeout(&addr, timeout)
            .map_err(|error| LoadError::Connect { addr, error })?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(Conn {
            stream,
            buf: InputBuf::new(),
        })
    }

    /// Send `wire` (`n` commands) and return their replies, each whole.
    pub fn call(&mut self, wire: &[u8], n: usize) -> Result<Vec<Vec<u8>>, LoadError> {
        self.stream.write_all(wire)?;
        let mut replies = Vec::with_capacity(n);
        while replies.len() < n {
            match client::skip(self.buf.data()) {
                Ok(Some(len)) => {
                    replies.push(self.buf.data()[..len].to_vec());
                    self.buf.consume(len);
                }
                Ok(None) => self.fill()?,
                Err(e) => return Err(invalid(e.to_string())),
            }
        }
        Ok(replies)
    }

    fn fill(&mut self) -> Result<(), LoadError> {
        self.buf.reserve(64 * 1024);
        match self.stream.read(self.buf.spare())? {
            0 => Err(invalid("the server closed the connection".into())),
            n => {
                self.buf.filled(n);
                Ok(())
            }
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
    let mut conn = Conn::connect(cfg.addr, super::CONNECT_TIMEOUT)?;
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
pub fn topic_lengths(
    addr: SocketAddr,
    topics: usize,
    agent: crate::harness::Agent,
) -> Result<Result<Vec<u64>, String>, LoadError> {
    let mut conn = Conn::connect(addr, super::CONNECT_TIMEOUT)?;
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
