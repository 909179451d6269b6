//! The open connections, for CLIENT LIST and CLIENT INFO
//! (docs/protocols/resp.md, 5.2.7).
//!
//! Each connection has a [`Client`] record, shared with the [`Clients`]
//! registry: registered when the connection opens, removed when it
//! closes (the registry's lock is taken only then, and by CLIENT LIST).
//! A connection writes its own record's fields as it runs a command —
//! relaxed stores to atomics no other connection writes, no shared lock —
//! and CLIENT LIST reads every record. What serverlab does not measure
//! (file descriptors, buffer and memory sizes) is a fixed value, never an
//! estimate that would look measured: see the docs.

use super::{Args, RespConn};
use crate::Peer;
use parking_lot::Mutex;
use serverlab_proto::resp::name::SUBCOMMANDS;
use serverlab_proto::resp::number::parse_i64;
use serverlab_proto::resp::{reply, Name};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

/// Milliseconds on the coarse monotonic clock: a few nanoseconds to read
/// (no system call), a few milliseconds fine — CLIENT LIST shows seconds.
fn coarse_ms() -> u64 {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_MONOTONIC_COARSE)
        .map(|t| t.tv_sec() as u64 * 1000 + t.tv_nsec() as u64 / 1_000_000)
        .unwrap_or(0)
}

/// Every open connection's record, by id (CLIENT LIST's order, as Redis
/// lists its clients in the order they connected).
#[derive(Default)]
pub(crate) struct Clients {
    all: Mutex<BTreeMap<u64, Arc<Client>>>,
}

/// One connection as CLIENT LIST shows it.
pub(crate) struct Client {
    id: u64,
    addr: String,
    unix: bool,
    /// When it opened, in [`coarse_ms`].
    opened: u64,
    /// When its last command began, in [`coarse_ms`].
    last: AtomicU64,
    db: AtomicU32,
    sub: AtomicU32,
    psub: AtomicU32,
    /// Commands queued in its transaction; -1 outside one.
    multi: AtomicI64,
    /// [`MONITOR`], [`SUBSCRIBED`], [`IN_MULTI`].
    flags: AtomicU8,
    /// Its last command: [`cmd_code`].
    cmd: AtomicU32,
    name: Mutex<Option<Box<[u8]>>>,
}

const MONITOR: u8 = 1;
const SUBSCRIBED: u8 = 2;
const IN_MULTI: u8 = 4;

impl Clients {
    /// A new connection's record, registered.
    pub(crate) fn open(&self, id: u64, peer: Peer) -> Arc<Client> {
        let (addr, unix) = match peer {
            Peer::Tcp(a) => (a.to_string(), false),
            Peer::Unix => (String::new(), true),
        };
        let c = Arc::new(Client {
            id,
            addr,
            unix,
            opened: coarse_ms(),
            last: AtomicU64::new(coarse_ms()),
            db: AtomicU32::new(0),
            sub: AtomicU32::new(0),
            psub: AtomicU32::new(0),
            multi: AtomicI64::new(-1),
            flags: AtomicU8::new(0),
            cmd: AtomicU32::new(0),
            name: Mutex::new(None),
        });
        self.all.lock().insert(id, c.clone());
        c
    }

    pub(crate) fn close(&self, id: u64) {
        self.all.lock().remove(&id);
    }

    /// CLIENT LIST [TYPE normal|master|replica|slave|pubsub] [ID id…].
    /// CLIENT LIST's reply; with `ID id…`, one past `bound`
    /// (`--max-query`) bytes is refused, as MGET's is (the request sizes
    /// it: the same id named a million times).
    pub(crate) fn list(&self, a: &Args, out: &mut Vec<u8>, bound: usize) {
        let all = self.all.lock();
        let n = a.count();
        let mut text = String::new();
        if n == 2 {
            all.values().for_each(|c| c.line(&mut text));
        } else if n == 4 && a.arg(2).eq_ignore_ascii_case(b"type") {
            let t = a.arg(3).to_ascii_lowercase();
            // A monitor is a normal client (as Redis's getClientType has
            // it); no connection is a master or a replica.
            let pubsub = match &t[..] {
                b"normal" => false,
                b"pubsub" => true,
                b"master" | b"replica" | b"slave" => return reply::bulk(out, b""),
                _ => {
                    let msg = format!("ERR Unknown client type '{}'", super::c_str(&t, 128));
                    return reply::error(out, msg.as_bytes());
                }
            };
            all.values()
                .filter(|c| c.subscribed() == pubsub)
                .for_each(|c| c.line(&mut text));
        } else if n > 3 && a.arg(2).eq_ignore_ascii_case(b"id") {
            let mut ids = Vec::new();
            for s in a.from(3) {
                match parse_i64(s).filter(|&id| id >= 1) {
                    Some(id) => ids.push(id as u64),
                    None => return reply::error(out, b"ERR Invalid client ID"),
                }
            }
            for c in ids.iter().filter_map(|id| all.get(id)) {
                c.line(&mut text);
                if text.len() > bound {
                    return super::too_large(out, bound);
                }
            }
        } else {
            return reply::error(out, reply::SYNTAX.as_bytes());
        }
        reply::bulk(out, text.as_bytes())
    }
}

impl Client {
    /// Before a command runs: it is the last command, now.
    pub(crate) fn ran(&self, code: u32) {
        self.last.store(coarse_ms(), Ordering::Relaxed);
        self.cmd.store(code, Ordering::Relaxed);
    }

    /// After a command: the connection's state as it left it.
    pub(crate) fn state(&self, conn: &RespConn) {
        let (sub, psub) = conn.subs.counts();
        self.db.store(conn.db as u32, Ordering::Relaxed);
        self.sub.store(sub as u32, Ordering::Relaxed);
        self.psub.store(psub as u32, Ordering::Relaxed);
        let multi = conn.multi.as_ref().map_or(-1, |q| q.count() as i64);
        self.multi.store(multi, Ordering::Relaxed);
        let mut flags = 0;
        if conn.subs.monitoring() {
            flags |= MONITOR;
        }
        if sub + psub > 0 {
            flags |= SUBSCRIBED;
        }
        if multi >= 0 {
            flags |= IN_MULTI;
        }
        self.flags.store(flags, Ordering::Relaxed);
    }

    pub(crate) fn addr(&self) -> &str {
        &self.addr
    }

    pub(crate) fn unix(&self) -> bool {
        self.unix
    }

    pub(crate) fn set_name(&self, name: Option<&[u8]>) {
        *self.name.lock() = name.map(Into::into);
    }

    fn subscribed(&self) -> bool {
        self.flags.load(Ordering::Relaxed) & SUBSCRIBED != 0
    }

    /// Its line, Redis 7.0's fields in Redis's order.
    pub(crate) fn line(&self, text: &mut String) {
        let flags = self.flags.load(Ordering::Relaxed);
        let mut f = String::new();
        for (bit, c) in [(MONITOR, 'O'), (SUBSCRIBED, 'P'), (IN_MULTI, 'x')] {
            if flags & bit != 0 {
                f.push(c);
            }
        }
        if self.unix {
            f.push('U');
        }
        if f.is_empty() {
            f.push('N');
        }
        let now = coarse_ms();
        let age = now.saturating_sub(self.opened) / 1000;
        let idle = now.saturating_sub(self.last.load(Ordering::Relaxed)) / 1000;
        let name = self.name.lock().clone().unwrap_or_default();
        let r = Ordering::Relaxed;
        let _ = write!(
            text,
            "id={} addr={} laddr= fd=-1 name={} age={} idle={idle} flags={f} db={} sub={} \
             psub={} ssub=0 multi={} qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 \
             obl=0 oll=0 omem=0 tot-mem=0 events=r cmd={} user=default redir=-1 resp=2",
            self.id,
            self.addr,
            String::from_utf8_lossy(&name),
            age,
            self.db.load(r),
            self.sub.load(r),
            self.psub.load(r),
            self.multi.load(r),
            cmd_name(self.cmd.load(r)),
        );
        text.push('\n');
    }
}

/// A command's code for [`Client::ran`]: 0 for none (an unknown
/// command), else its name's number + 1, and for a container's served
/// subcommand its row in [`SUBCOMMANDS`] + 1 in the upper half.
pub(crate) fn cmd_code(name: Option<Name>, a: &Args) -> u32 {
    let Some(name) = name else { return 0 };
    let mut code = name as u32 + 1;
    if a.count() > 1 && name.has_subcommands() {
        let sub = a.arg(1);
        if let Some(i) = SUBCOMMANDS.iter().position(|(n, full, _)| {
            *n == name
                && full
                    .split_once('|')
                    .is_some_and(|(_, s)| sub.eq_ignore_ascii_case(s.as_bytes()))
        }) {
            code |= (i as u32 + 1) << 16;
        }
    }
    code
}

/// The name CLIENT LIST's `cmd=` gives a [`cmd_code`]: `NULL` for none,
/// `client|list` for a subcommand.
fn cmd_name(code: u32) -> &'static str {
    let (name, sub) = ((code & 0xffff) as usize, (code >> 16) as usize);
    if sub > 0 {
        return SUBCOMMANDS[sub - 1].1;
    }
    match name {
        0 => "NULL",
        n => Name::ALL[n - 1].facts().name,
    }
}
