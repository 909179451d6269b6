//! Transactions: MULTI queues the commands that follow (each answered
//! `+QUEUED`), EXEC runs them alone, one after another, as one step
//! (see [`super::alone`]: nothing else runs in between, whichever store
//! holds the keys, and the log gets them as one record, so a crash keeps
//! all of them or none), DISCARD drops them. A command refused while
//! queued (unknown, wrong arity, bad arguments) makes EXEC refuse the
//! lot (`EXECABORT`), as Redis's does; so does a queue that would pass
//! `--max-query` bytes (a bound of serverlab's: the queue is dropped at
//! once). EXEC's replies together are bounded by `--max-query` too: each
//! reply past it is an error instead ([`bounded`]).
//!
//! WATCH is optimistic: it notes the keys (in [`super::watch`]), and any
//! write to one of them afterwards, from any connection, makes this
//! connection's next EXEC run nothing and answer a null array.

use super::alone::Alone;
use super::watch::Dirty;
use super::{RespConn, RespService};
use crate::After;
use serverlab_proto::resp::command::{self, Cmd, ConnCmd};
use serverlab_proto::resp::frame::Framed;
use serverlab_proto::resp::name::Family;
use serverlab_proto::resp::{reply, Framer, Name};
use std::sync::atomic::Ordering;

/// The commands queued since MULTI, as they arrived.
impl Queued {
    /// Commands queued.
    pub(crate) fn count(&self) -> usize {
        self.lens.len()
    }
}

#[derive(Default)]
pub(crate) struct Queued {
    bytes: Vec<u8>,
    lens: Vec<usize>,
    /// A command was refused while queued.
    refused: bool,
}

/// WATCH's keys (database, key) and the flag writes to them set.
#[derive(Default)]
pub(crate) struct Watching {
    keys: Vec<(usize, Box<[u8]>)>,
    dirty: Dirty,
    /// The deadline (ms since the epoch) of each watched key that had one
    /// still ahead when it was watched: one passed by EXEC means the key
    /// expired meanwhile, which aborts the EXEC as Redis's does (the key
    /// deleted as it expired touches its watchers there, and one expired
    /// but not yet deleted fails `isWatchedKeyExpired`).
    deadlines: Vec<i64>,
}

/// Whether `name` is MULTI, EXEC, DISCARD, WATCH or UNWATCH (its row's
/// family: [`Family::Transaction`]).
pub(crate) fn is_transaction(name: Name) -> bool {
    name.facts().family == Family::Transaction
}

/// While a transaction is open: queues `cmd` (`+QUEUED`), refuses it
/// (and so the transaction), or returns `None` for a command that runs
/// now (EXEC, DISCARD, a nested MULTI or a WATCH to refuse, QUIT, RESET).
pub(crate) fn queue(
    svc: &RespService,
    conn: &mut RespConn,
    cmd: Cmd,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Option<After> {
    if !queues(&cmd) {
        return None;
    }
    match cmd {
        Cmd::Reject(r) => {
            conn.multi.as_mut().expect("a transaction").refused = true;
            svc.reject(r, conn, input, out);
            Some(After::Continue)
        }
        _ => {
            let q = conn.multi.as_mut().expect("a transaction");
            if q.bytes.len() + input.len() > svc.limits.max_query {
                // A bound Redis does not have: what one connection may make
                // the server hold stays --max-query, queued or not.
                q.refused = true;
                q.bytes = Vec::new();
                q.lens = Vec::new();
                reply::error(
                    out,
                    b"ERR the queued commands pass --max-query: the transaction will be discarded",
                );
                return Some(After::Continue);
            }
            q.bytes.extend_from_slice(input);
            q.lens.push(input.len());
            reply::simple(out, b"QUEUED");
            Some(After::Continue)
        }
    }
}

/// MULTI, EXEC, DISCARD, WATCH, UNWATCH.
/// Whether `cmd`, in a transaction, is queued (or, refused, refuses
/// it) rather than run: all but MULTI, EXEC, DISCARD, WATCH, QUIT and
/// RESET.
pub(crate) fn queues(cmd: &Cmd) -> bool {
    !matches!(cmd, Cmd::Ext(n) if is_transaction(*n) && *n != Name::Unwatch)
        && !matches!(cmd, Cmd::Conn(ConnCmd::Quit | ConnCmd::Reset))
}

pub(crate) fn run(
    svc: &RespService,
    conn: &mut RespConn,
    name: Name,
    input: &[u8],
    out: &mut Vec<u8>,
) {
    let in_multi = conn.multi.is_some();
    match name {
        Name::Multi if in_multi => reply::error(out, b"ERR MULTI calls can not be nested"),
        Name::Multi => {
            conn.multi = Some(Queued::default());
            reply::ok(out)
        }
        Name::Discard if !in_multi => reply::error(out, b"ERR DISCARD without MULTI"),
        Name::Discard => {
            conn.multi = None;
            unwatch(svc, &conn.watching);
            conn.watching = Watching::default();
            reply::ok(out)
        }
        Name::Exec => exec(svc, conn, out),
        Name::Watch if in_multi => reply::error(out, b"ERR WATCH inside MULTI is not allowed"),
        Name::Watch => {
            // Alone: no write is half done while the keys are noted.
            let alone = svc.keyspace.write().unwrap_or_else(|e| e.into_inner());
            let a = super::Args {
                framer: &conn.framer,
                input,
            };
            let now = super::expires::now_ms();
            for k in a.from(1) {
                svc.watches.watch(conn.db, k, &conn.watching.dirty);
                conn.watching.keys.push((conn.db, k.into()));
                match alone.dbs[conn.db].expires.get(k) {
                    Some(at) if at > now => conn.watching.deadlines.push(at),
                    _ => {}
                }
            }
            reply::ok(out)
        }
        Name::Unwatch => {
            unwatch(svc, &conn.watching);
            conn.watching = Watching::default();
            reply::ok(out)
        }
        _ => unreachable!("not a transaction command"),
    }
}

/// Forgets a connection's watches.
pub(crate) fn unwatch(svc: &RespService, w: &Watching) {
    if !w.keys.is_empty() {
        svc.watches.unwatch(&w.keys, &w.dirty);
    }
}

fn exec(svc: &RespService, conn: &mut RespConn, out: &mut Vec<u8>) {
    let Some(q) = conn.multi.take() else {
        return reply::error(out, b"ERR EXEC without MULTI");
    };
    let watching = std::mem::take(&mut conn.watching);
    if q.refused {
        unwatch(svc, &watching);
        return reply::error(
            out,
            b"EXECABORT Transaction discarded because of previous errors.",
        );
    }
    let mut alone = Alone::begin(svc);
    let now = super::expires::now_ms();
    let dirty =
        watching.dirty.load(Ordering::Acquire) || watching.deadlines.iter().any(|at| *at <= now);
    unwatch(svc, &watching);
    if dirty {
        // The abort shows that a watched key was written: its reply waits,
        // as a read of the keys does, for that write's commit. (And the
        // deadlines the gate's start found passed were deleted: logged as
        // every deletion is.)
        let keys: Vec<&[u8]> = watching.keys.iter().map(|(_, k)| &k[..]).collect();
        alone.saw(Some(&keys));
        return match alone.finish(svc, conn) {
            Ok(()) => reply::null_array(out),
            Err(e) => svc.refused(e, out),
        };
    }
    let mut replies = Vec::new();
    reply::array(&mut replies, q.lens.len());
    let mut one = Vec::new();
    // The queued commands are framed again, each by a framer of its own
    // (the connection's is the EXEC's).
    let exec_framer = std::mem::replace(&mut conn.framer, Framer::new());
    let mut at = 0;
    for len in q.lens {
        let bytes = &q.bytes[at..at + len];
        at += len;
        conn.framer = Framer::new();
        let cmd = match conn.framer.frame(bytes, &svc.limits) {
            Framed::Request { .. } => command::parse(&conn.framer, bytes),
            _ => unreachable!("a queued command framed once already"),
        };
        one.clear();
        let shown = svc.pubsub.monitored() && {
            let a = super::Args {
                framer: &conn.framer,
                input: bytes,
            };
            super::monitor::shown(super::stats::called_name(&cmd, a.arg(0)), &a)
        };
        alone.one(svc, conn, cmd, bytes, &mut one, false);
        if shown {
            svc.feed(conn, bytes);
        }
        bounded(&mut replies, &one, svc.limits.max_query);
    }
    conn.framer = exec_framer;
    match alone.finish(svc, conn) {
        Ok(()) => out.append(&mut replies),
        Err(e) => svc.refused(e, out),
    }
}

/// Appends a queued command's reply (`one`) to EXEC's, unless the replies
/// would pass `bound` (`--max-query`) bytes: a transaction's reply is
/// made whole, under the gate, so it is bounded (a client that queues
/// GETs of one large value and never reads must not make the server
/// hold every copy). Past the bound every command still runs (the
/// transaction stays one step, and its writes stay written), and each
/// reply that does not fit is an error instead.
fn bounded(replies: &mut Vec<u8>, one: &[u8], bound: usize) {
    if replies.len() + one.len() <= bound {
        replies.extend_from_slice(one);
    } else {
        // Short: a queue of many such commands makes many of these.
        reply::error(replies, b"ERR reply dropped: past --max-query");
    }
}
