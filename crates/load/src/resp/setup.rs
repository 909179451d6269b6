//! The RESP load's state around a run, on a blocking connection of its
//! own: the keys a verified run owns are deleted and the shared ones (and,
//! with `--preload`, every string key) written before it; the board's
//! topics are counted (LLEN) before and after.

use super::mirror::preload_nonce;
use super::workload::{key, topic_key, Space};
use super::RespLoad;
use crate::conn::FramedConn;
use crate::kv::workload::write_value;
use crate::LoadError;
use serverlab_proto::resp::client::{self, Reply};
use std::time::Duration;

/// Commands sent before their replies are read.
const BATCH: usize = 1000;
/// Bytes of commands sent before their replies are read. A server that
/// writes its replies before it reads on (serverlab's do) answers a batch
/// a few replies per write while the batch is still being sent; over a
/// Unix socket the kernel charges each write some 760 bytes of the
/// server's send buffer (212,992 bytes by default) however few it
/// carries, so a 2 MB batch (1000 DELs of 100 keys) filled it after some
/// 280 writes, the server stopped reading, and the batch was never sent
/// (docs/load-http.md, "Serving one"). 64 KiB of commands is answered in
/// a few dozen writes.
const BATCH_BYTES: usize = 64 * 1024;
/// Keys per DEL.
const DEL_KEYS: usize = 100;

/// A blocking RESP connection for the few commands around a run: the
/// load's framed connection ([`FramedConn`]: its deadline in all, its
/// reply limit), with RESP's framing.
pub struct Conn {
    framed: FramedConn,
    /// How long each batch of commands may take in all, with its replies.
    within: Duration,
}

impl Conn {
    /// A connection for `cfg`'s server: each [`Conn::call`] must be done
    /// within its `--reply-timeout`, each reply within its reply limit.
    pub fn connect(cfg: &RespLoad) -> Result<Conn, LoadError> {
        let addr = &cfg.addr;
        let mut framed = FramedConn::connect(addr, super::CONNECT_TIMEOUT)
            .map_err(LoadError::connecting(addr))?;
        framed.set_max_reply(cfg.reply_limit());
        let mut conn = Conn {
            framed,
            within: cfg.reply_timeout,
        };
        let greeting = super::commands::Greeting::new(cfg.auth.as_ref(), cfg.db);
        if !greeting.is_empty() {
            let (wire, n) = greeting.wire();
            let replies = conn.call(wire, n)?;
            greeting
                .check(&replies)
                .map_err(|e| LoadError::Io(std::io::Error::other(e)))?;
        }
        Ok(conn)
    }

    /// Send `wire` (`n` commands) and return their replies, each whole,
    /// all within the connection's time.
    pub fn call(&mut self, wire: &[u8], n: usize) -> Result<Vec<Vec<u8>>, LoadError> {
        self.framed.set_deadline(self.within);
        self.framed.send(wire)?;
        let whole = |buf: &[u8]| client::skip(buf).map_err(|e| super::not_resp(&e, buf));
        let mut replies = Vec::with_capacity(n);
        for _ in 0..n {
            replies.push(self.framed.recv_by(whole)?.to_vec());
        }
        Ok(replies)
    }
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
        if n == BATCH || wire.len() >= BATCH_BYTES {
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
        let nonce = preload_nonce(cfg.seed, i);
        write_value(&mut v, &k, nonce, cfg.value_size.for_nonce(nonce));
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
