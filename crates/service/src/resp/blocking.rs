//! Blocking pops (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP): a client
//! whose lists are all empty waits, up to its timeout, until another
//! connection pushes.
//!
//! The wait is the session's ([`Service::wait`](crate::Service::wait)):
//! a strategy waits its own way (a sleeping thread, a timer on a reactor
//! or a runtime, a timeout on the ring), [`POLL`] at a time, and asks
//! again; nothing else of the connection is applied meanwhile.
//!
//! A waiting pop is served by the write that gives it something, as
//! Redis serves it: while any connection waits, every write runs alone
//! (a push too), and at its end, still alone, the waiting pops whose keys
//! it wrote are tried in the order they blocked, again and again while
//! one served makes another's key ready (an LMOVE into a key someone
//! waits on): their pops are part of the writer's step and of its log
//! record, and the writer's next command sees them done. The served
//! connection finds its reply at its next look (within [`POLL`]), with
//! the log's ticket to wait for. Besides, each look tries the pop itself
//! if a write may have put elements in a list since its last look
//! ([`RespService::pushes`] moved), leaving the elements to an older
//! waiter; and past its deadline it answers as Redis's timeout does.

use super::ext::Alone;
use super::keyspace::Keyspace;
use super::{Args, RespConn, RespService};
use crate::{Delay, Logged};
use parking_lot::Mutex;
use serverlab_proto::resp::command::Cmd;
use serverlab_proto::resp::{reply, Name};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Waker;
use std::time::{Duration, Instant};

/// How long a blocked pop waits between looks.
pub(crate) const POLL: Duration = Duration::from_millis(1);

/// A blocked pop's wait.
pub(crate) struct Waiting {
    deadline: Option<Instant>,
    /// [`RespService::pushes`] at its last look.
    seen: Option<u64>,
}

/// How CLIENT UNBLOCK ends a wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unblock {
    /// As if it timed out.
    Timeout,
    /// With `-UNBLOCKED`.
    Error,
}

/// A blocked connection: when it blocked (an order), its request, on
/// which keys, how CLIENT UNBLOCK asked it to end, and its reply once a
/// writer served it.
struct Entry {
    order: u64,
    db: usize,
    request: Box<[u8]>,
    keys: Vec<Box<[u8]>>,
    unblock: Option<Unblock>,
    served: Option<(Vec<u8>, Option<Logged>)>,
    /// A writer popped for it (its reply follows once the log has it).
    claimed: bool,
    /// Runs the connection again at once, where its strategy gave one.
    waker: Option<Waker>,
}

/// A waiting pop a writer may serve: its connection, database and
/// request.
pub(crate) struct Waiter {
    pub id: u64,
    pub db: usize,
    pub request: Box<[u8]>,
}

/// The connections blocked now, by id (and how many: a load for the
/// fast path, which asks after every push).
#[derive(Default)]
pub(crate) struct Blocked(Mutex<(u64, HashMap<u64, Entry>)>, AtomicUsize);

impl Blocked {
    /// INFO's `blocked_clients`.
    pub(crate) fn len(&self) -> usize {
        self.1.load(Ordering::SeqCst)
    }

    fn add(&self, id: u64, db: usize, request: &[u8], keys: Vec<Box<[u8]>>, waker: Option<&Waker>) {
        let mut g = self.0.lock();
        g.0 += 1;
        let order = g.0;
        g.1.entry(id).or_insert(Entry {
            order,
            db,
            request: request.into(),
            keys,
            unblock: None,
            served: None,
            claimed: false,
            waker: waker.cloned(),
        });
        self.1.store(g.1.len(), Ordering::SeqCst);
    }

    /// The waiting pops not yet served on any of `keys` (every one:
    /// `None`), in the order they blocked.
    pub(crate) fn waiting_on(&self, keys: Option<&[Vec<u8>]>) -> Vec<Waiter> {
        let g = self.0.lock();
        let mut w: Vec<(u64, Waiter)> =
            g.1.iter()
                .filter(|(_, e)| !e.claimed && e.served.is_none() && e.unblock.is_none())
                .filter(|(_, e)| {
                    keys.is_none_or(|ks| e.keys.iter().any(|k| ks.iter().any(|w| **w == **k)))
                })
                .map(|(&id, e)| {
                    let w = Waiter {
                        id,
                        db: e.db,
                        request: e.request.clone(),
                    };
                    (e.order, w)
                })
                .collect();
        w.sort_by_key(|(order, _)| *order);
        w.into_iter().map(|(_, w)| w).collect()
    }

    /// A writer popped for `id`: the waiters after it go ahead.
    pub(crate) fn claim(&self, id: u64) {
        if let Some(e) = self.0.lock().1.get_mut(&id) {
            e.claimed = true;
        }
    }

    /// The log refused the writer's step: those it popped for wait on.
    pub(crate) fn unclaim(&self, ids: &[u64]) {
        let mut g = self.0.lock();
        for id in ids {
            if let Some(e) = g.1.get_mut(id) {
                e.claimed = false;
            }
        }
    }

    /// A writer served `id`: its reply, and what it waits for.
    pub(crate) fn serve(&self, id: u64, reply: Vec<u8>, logged: Option<Logged>) {
        if let Some(e) = self.0.lock().1.get_mut(&id) {
            e.served = Some((reply, logged));
            if let Some(w) = &e.waker {
                w.wake_by_ref();
            }
        }
    }

    fn take_served(&self, id: u64) -> Option<(Vec<u8>, Option<Logged>)> {
        self.0.lock().1.get_mut(&id)?.served.take()
    }

    pub(crate) fn remove(&self, id: u64) {
        let mut g = self.0.lock();
        g.1.remove(&id);
        self.1.store(g.1.len(), Ordering::SeqCst);
    }

    /// CLIENT UNBLOCK: whether `id` was blocked.
    pub(crate) fn unblock(&self, id: u64, how: Unblock) -> bool {
        match self.0.lock().1.get_mut(&id) {
            Some(e) => {
                e.unblock = Some(how);
                if let Some(w) = &e.waker {
                    w.wake_by_ref();
                }
                true
            }
            None => false,
        }
    }

    fn unblocked(&self, id: u64) -> Option<Unblock> {
        self.0.lock().1.get(&id).and_then(|e| e.unblock)
    }

    /// Whether `id`, blocked, may pop now: one of its keys holds a list
    /// (a key that became another type wakes nobody, as in Redis), and
    /// the first that does has no waiter older than it.
    pub(crate) fn first_in_line(&self, id: u64, ks: &Keyspace) -> bool {
        let g = self.0.lock();
        let Some(me) = g.1.get(&id).filter(|e| !e.claimed && e.served.is_none()) else {
            return false;
        };
        let store = &ks.dbs[me.db].store;
        let Some(key) = me.keys.iter().find(|k| store.llen(k).is_ok_and(|n| n > 0)) else {
            return false;
        };
        // An older waiter a writer already served is no longer ahead.
        !g.1.values().any(|e| {
            e.order < me.order
                && !e.claimed
                && e.served.is_none()
                && e.db == me.db
                && e.keys.contains(key)
        })
    }
}

/// The keys a blocking pop waits on: BLPOP's and BRPOP's all but the
/// timeout, BLMPOP's counted ones, BLMOVE's and BRPOPLPUSH's source.
fn waits_on(name: Name, a: &Args) -> Vec<Box<[u8]>> {
    match name {
        Name::BLMove | Name::BRPopLPush => vec![a.arg(1).into()],
        _ => super::ext::keys_of(name, a)
            .unwrap_or_default()
            .into_iter()
            .map(Box::from)
            .collect(),
    }
}

pub(crate) fn is_blocking(name: Name) -> bool {
    matches!(
        name,
        Name::BLPop | Name::BRPop | Name::BLMove | Name::BRPopLPush | Name::BLMPop
    )
}

/// A blocking pop's timeout argument in seconds (0: for ever), if valid
/// (if not, the command runs and says why).
pub(crate) fn timeout(name: Name, a: &Args) -> Option<Option<Duration>> {
    let at = if name == Name::BLMPop {
        1
    } else {
        a.count() - 1
    };
    let secs: f64 = std::str::from_utf8(a.try_arg(at)?).ok()?.parse().ok()?;
    if !secs.is_finite() || secs < 0.0 {
        return None;
    }
    Some((secs > 0.0).then(|| Duration::from_secs_f64(secs.min(1e9))))
}

/// What a blocking pop answers when its time is up.
pub(crate) fn timed_out(name: Name, out: &mut Vec<u8>) {
    match name {
        Name::BLMove | Name::BRPopLPush => reply::null(out),
        _ => reply::null_array(out),
    }
}

/// The service's `wait` for a blocking pop (and `None` for anything
/// else, or inside a transaction, where it does not block).
pub(crate) fn wait(
    svc: &RespService,
    conn: &mut RespConn,
    name: Name,
    input: &[u8],
    waker: Option<&Waker>,
) -> Option<Delay> {
    if !is_blocking(name) || conn.multi.is_some() || conn.ready.is_some() {
        return None;
    }
    if conn.block.is_none() {
        let a = Args {
            framer: &conn.framer,
            input,
        };
        let t = timeout(name, &a)?;
        conn.block = Some(Waiting {
            deadline: t.map(|d| Instant::now() + d),
            seen: None,
        });
        svc.blocked
            .add(conn.id, conn.db, input, waits_on(name, &a), waker);
    }
    if let Some((reply, logged)) = svc.blocked.take_served(conn.id) {
        conn.logged = Logged::merge(conn.logged, logged);
        return done(svc, conn, reply);
    }
    if let Some(how) = svc.blocked.unblocked(conn.id) {
        let mut r = Vec::new();
        match how {
            Unblock::Timeout => timed_out(name, &mut r),
            Unblock::Error => {
                reply::error(&mut r, b"UNBLOCKED client unblocked via CLIENT UNBLOCK")
            }
        }
        return done(svc, conn, r);
    }
    let now = Instant::now();
    let w = conn.block.as_mut().expect("waiting");
    let due = w.deadline.is_some_and(|d| now >= d);
    let pushes = svc.pushes.load(Ordering::Acquire);
    if w.seen != Some(pushes) || due {
        // (Every way out finishes it: the deadlines its start found passed
        // were deleted, and are logged as every deletion is.)
        let mut alone = Alone::begin(svc);
        // A writer may have served it while it waited for the gate.
        if let Some((reply, logged)) = svc.blocked.take_served(conn.id) {
            let _ = alone.finish(svc, conn);
            conn.logged = Logged::merge(conn.logged, logged);
            return done(svc, conn, reply);
        }
        let mut r = Vec::new();
        // Past the deadline it tries without blocking: nothing is the
        // timeout's reply. An older waiter goes first.
        let first_look = w.seen.is_none();
        let mine = due || first_look || svc.blocked.first_in_line(conn.id, alone.keyspace());
        conn.block.as_mut().expect("waiting").seen = Some(pushes);
        if mine && !alone.one(svc, conn, Cmd::Ext(name), input, &mut r, !due) {
            // Served: no longer a waiter the writer's end may serve.
            svc.blocked.remove(conn.id);
            if let Err(e) = alone.finish(svc, conn) {
                r.clear();
                svc.refused(e, &mut r);
            }
            return done(svc, conn, r);
        }
        // Blocked again; a refusal takes its deletions back, and the
        // pop goes on waiting.
        let _ = alone.finish(svc, conn);
    }
    let w = conn.block.as_ref().expect("waiting");
    let left = w
        .deadline
        .map_or(POLL, |d| d.saturating_duration_since(now));
    Some(Delay::Sleep(left.min(POLL)))
}

/// The wait is over: `reply` is the pop's.
fn done(svc: &RespService, conn: &mut RespConn, reply: Vec<u8>) -> Option<Delay> {
    conn.ready = Some(reply);
    conn.block = None;
    svc.blocked.remove(conn.id);
    None
}
