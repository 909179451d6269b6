//! Blocking pops (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP; and of
//! sorted sets, BZPOPMIN, BZPOPMAX, BZMPOP): a client whose lists (sorted
//! sets) are all empty waits, up to its timeout, until another connection
//! pushes (adds).
//!
//! The wait is the session's ([`Service::wait`](crate::Service::wait)):
//! a strategy waits its own way (a parked thread, a task, a connection
//! parked on a reactor or a ring) until the waker it gave the session is
//! woken or the pop's deadline passes, and asks again; nothing else of
//! the connection is applied meanwhile. No timer looks for it in between:
//! whatever can let the pop go wakes it. (A strategy that gives no waker
//! looks again every [`POLL`].)
//!
//! A waiting pop is served by the write that gives it something, as
//! Redis serves it: while any connection waits, every write runs alone
//! (a push too), and at its end, still alone, the waiting pops whose keys
//! it wrote are tried in the order they blocked, again and again while
//! one served makes another's key ready (an LMOVE into a key someone
//! waits on): their pops are part of the writer's step and of its log
//! record, and the writer's next command sees them done. The writer wakes
//! each connection it served, which finds its reply with the log's
//! ticket to wait for. Besides, each look tries the pop itself if a write
//! may have put elements in a list since its last look
//! ([`RespService::pushes`] moved), leaving the elements to an older
//! waiter: a push that took the fast path because nobody waited when it
//! began, but somebody did by its end, moves the count and wakes every
//! waiting pop ([`Blocked::kick`]) to look. CLIENT UNBLOCK wakes the pop
//! it ends; past its deadline a pop answers as Redis's timeout does.

use super::alone::Alone;
use super::keyspace::Keyspace;
use super::{Args, RespConn, RespService};
use crate::{Delay, Logged};
use parking_lot::Mutex;
use serverlab_proto::resp::command::Cmd;
use serverlab_proto::resp::name::{Family, Flags};
use serverlab_proto::resp::{reply, Name};
use serverlab_store::resp::{Coll, Held};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Waker;
use std::time::{Duration, Instant};

/// How long a blocked pop waits between looks where its strategy gave
/// no waker.
pub(crate) const POLL: Duration = Duration::from_millis(1);
/// How long a blocked pop without a deadline waits before it looks
/// again unasked, where its strategy gave a waker (every event that can
/// let it go wakes it: this only bounds the wait a strategy is asked
/// for, a safety net should a wake-up ever be lost).
pub(crate) const LOOK_AGAIN: Duration = Duration::from_secs(5);

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
    /// It pops sorted sets (BZPOPMIN, BZPOPMAX, BZMPOP), not lists.
    zset: bool,
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

    fn add(
        &self,
        id: u64,
        name: Name,
        request: &[u8],
        keys: Vec<Box<[u8]>>,
        waker: Option<&Waker>,
        db: usize,
    ) {
        let mut g = self.0.lock();
        g.0 += 1;
        let order = g.0;
        g.1.entry(id).or_insert(Entry {
            order,
            db,
            request: request.into(),
            keys,
            zset: name.facts().family == Family::Colls,
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

    /// A writer served `id`: its reply, and what it waits for. (Each
    /// waker here is woken once the lock is let go: a wake may be a
    /// system call, and other writers and waiting pops need the lock.
    /// The change is made first, under it, so the pop woken finds it;
    /// a wake that comes after the pop has left, for it or a connection
    /// now in its place, only makes it look again.)
    pub(crate) fn serve(&self, id: u64, reply: Vec<u8>, logged: Option<Logged>) {
        let waker = match self.0.lock().1.get_mut(&id) {
            Some(e) => {
                e.served = Some((reply, logged));
                e.waker.clone()
            }
            None => None,
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// A write may have made waiting pops ready without serving them (a
    /// fast-path push that began before they blocked): wake every one
    /// still waiting, to look for itself.
    pub(crate) fn kick(&self) {
        let wakers: Vec<Waker> = self
            .0
            .lock()
            .1
            .values()
            .filter(|e| !e.claimed && e.served.is_none() && e.unblock.is_none())
            .filter_map(|e| e.waker.clone())
            .collect();
        wakers.into_iter().for_each(Waker::wake);
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
        let waker = match self.0.lock().1.get_mut(&id) {
            Some(e) => {
                e.unblock = Some(how);
                e.waker.clone()
            }
            None => return false,
        };
        if let Some(w) = waker {
            w.wake();
        }
        true
    }

    fn unblocked(&self, id: u64) -> Option<Unblock> {
        self.0.lock().1.get(&id).and_then(|e| e.unblock)
    }

    /// Whether `id`'s wait was ended from elsewhere (served by a writer,
    /// or CLIENT UNBLOCK): its answer is waiting for it.
    fn answered(&self, id: u64) -> bool {
        self.0
            .lock()
            .1
            .get(&id)
            .is_some_and(|e| e.served.is_some() || e.unblock.is_some())
    }

    /// Whether `id`, blocked, may pop now: one of its keys holds a list
    /// (a sorted set, for a sorted-set pop; a key that became another type
    /// wakes nobody, as in Redis), and
    /// the first that does has no waiter older than it.
    pub(crate) fn first_in_line(&self, id: u64, ks: &Keyspace) -> bool {
        let g = self.0.lock();
        let Some(me) =
            g.1.get(&id)
                .filter(|e| !e.claimed && e.served.is_none() && e.unblock.is_none())
        else {
            return false;
        };
        let store = &ks.dbs[me.db].store;
        let ready = |k: &[u8]| {
            if me.zset {
                let mut z = false;
                store.peek(k, &mut |held| {
                    z = matches!(held, Held::Coll(Coll::ZSet(_)));
                });
                z
            } else {
                store.llen(k).is_ok_and(|n| n > 0)
            }
        };
        let Some(key) = me.keys.iter().find(|k| ready(k)) else {
            return false;
        };
        // An older waiter a writer already served, or CLIENT UNBLOCK
        // ended, is no longer ahead (it leaves without popping).
        !g.1.values().any(|e| {
            e.order < me.order
                && !e.claimed
                && e.served.is_none()
                && e.unblock.is_none()
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
        _ => super::alone::keys_of(name, a, |_| true)
            .unwrap_or_default()
            .into_iter()
            .map(Box::from)
            .collect(),
    }
}

/// Whether `name` may block (its row says [`Flags::BLOCKING`]).
pub(crate) fn is_blocking(name: Name) -> bool {
    name.facts().has(Flags::BLOCKING)
}

/// A blocking pop's timeout argument in seconds (0: for ever), if valid
/// (if not, the command runs and says why).
pub(crate) fn timeout(name: Name, a: &Args) -> Option<Option<Duration>> {
    let at = if matches!(name, Name::BLMPop | Name::BZMPop) {
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

/// A waiting pop's end that came from elsewhere: served by a writer, or
/// unblocked (its deadline's timer, CLIENT UNBLOCK).
fn answered_meanwhile(svc: &RespService, conn: &mut RespConn, name: Name) -> Option<Option<Delay>> {
    if let Some((reply, logged)) = svc.blocked.take_served(conn.id) {
        conn.logged = Logged::merge(conn.logged, logged);
        return Some(done(svc, conn, reply));
    }
    let how = svc.blocked.unblocked(conn.id)?;
    let mut r = Vec::new();
    match how {
        Unblock::Timeout => timed_out(name, &mut r),
        Unblock::Error => reply::error(&mut r, b"UNBLOCKED client unblocked via CLIENT UNBLOCK"),
    }
    Some(done(svc, conn, r))
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
        let keys = waits_on(name, &a);
        svc.blocked.add(conn.id, name, input, keys, waker, conn.db);
    }
    if let Some(answered) = answered_meanwhile(svc, conn, name) {
        return answered;
    }
    let now = Instant::now();
    let w = conn.block.as_mut().expect("waiting");
    let due = w.deadline.is_some_and(|d| now >= d);
    let pushes = svc.pushes.load(Ordering::Acquire);
    if w.seen != Some(pushes) || due {
        // (Every way out finishes it: the deadlines its start found passed
        // were deleted, and are logged as every deletion is.)
        let mut alone = Alone::begin(svc);
        // A writer may have served it while it waited for the gate, or
        // CLIENT UNBLOCK ended it: it pops nothing.
        if svc.blocked.answered(conn.id) {
            let _ = alone.finish(svc, conn);
            // (Answered stays answered: a look again, should it not.)
            return answered_meanwhile(svc, conn, name).unwrap_or(Some(Delay::Sleep(POLL)));
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
    // Woken, it looks again at once (a pop with a deadline at its
    // deadline at the latest, one without after [`LOOK_AGAIN`]); without
    // a waker it polls.
    Some(Delay::Sleep(match (waker, w.deadline) {
        (None, d) => d.map_or(POLL, |d| d.saturating_duration_since(now).min(POLL)),
        (Some(_), Some(d)) => d.saturating_duration_since(now),
        (Some(_), None) => LOOK_AGAIN,
    }))
}

/// The wait is over: `reply` is the pop's.
fn done(svc: &RespService, conn: &mut RespConn, reply: Vec<u8>) -> Option<Delay> {
    conn.ready = Some(reply);
    conn.block = None;
    svc.blocked.remove(conn.id);
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{run_all, Frame, Service};
    use serverlab_proto::resp::client;
    use serverlab_store::StoreKind;
    use std::sync::Arc;

    /// A waker that counts its wakes.
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl std::task::Wake for Count {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }

        fn wake_by_ref(self: &Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn service() -> RespService {
        let limits = serverlab_proto::resp::Limits::default();
        RespService::new(StoreKind::Sharded, limits, "test".into()).unwrap()
    }

    fn wire(args: &[&str]) -> Vec<u8> {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let mut w = Vec::new();
        client::command(&mut w, &args);
        w
    }

    /// Frames `args` on `conn`: the request and its bytes.
    fn framed(
        svc: &RespService,
        conn: &mut RespConn,
        args: &[&str],
    ) -> (super::super::RespRequest, Vec<u8>) {
        let w = wire(args);
        let Frame::Ready { len, request } = svc.frame(conn, &w, &mut Vec::new()) else {
            panic!("{args:?} frames")
        };
        assert_eq!(len, w.len());
        (request, w)
    }

    /// Runs `args` on a fresh connection, as the session does.
    fn run(svc: &RespService, args: &[&str]) -> String {
        let mut out = Vec::new();
        run_all(
            svc,
            &mut svc.open("127.0.0.1:1".parse::<std::net::SocketAddr>().unwrap()),
            &wire(args),
            &mut out,
        );
        String::from_utf8_lossy(&out).into_owned()
    }

    /// The pop blocks; what its wait asks of the strategy.
    fn blocks(svc: &RespService, conn: &mut RespConn, args: &[&str], waker: &Waker) -> Duration {
        let (req, w) = framed(svc, conn, args);
        match svc.wait(conn, &req, &w, Some(waker)) {
            Some(Delay::Sleep(d)) => d,
            other => panic!("{args:?} should block, not {other:?}"),
        }
    }

    /// Its next look: served, with this reply.
    fn served(svc: &RespService, conn: &mut RespConn, args: &[&str], waker: &Waker) -> String {
        let (req, w) = framed(svc, conn, args);
        assert!(svc.wait(conn, &req, &w, Some(waker)).is_none(), "served");
        let mut out = Vec::new();
        svc.apply(conn, req, &w, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Given a waker, a blocked pop is not polled for: it waits until
    /// its deadline (or, without one, long), and the push that serves it
    /// wakes it.
    #[test]
    fn a_pop_given_a_waker_waits_for_it_not_for_a_timer() {
        let svc = service();
        let count = Arc::new(Count::default());
        let waker = Waker::from(count.clone());
        let mut popper = svc.open("127.0.0.1:2".parse::<std::net::SocketAddr>().unwrap());
        let d = blocks(&svc, &mut popper, &["BLPOP", "q", "0"], &waker);
        assert!(d >= LOOK_AGAIN / 2, "no deadline: it waits long, not {d:?}");
        assert_eq!(run(&svc, &["RPUSH", "q", "x"]), ":1\r\n");
        assert!(count.0.load(Ordering::SeqCst) >= 1, "the push woke it");
        let reply = served(&svc, &mut popper, &["BLPOP", "q", "0"], &waker);
        assert_eq!(reply, "*2\r\n$1\r\nq\r\n$1\r\nx\r\n");
        // With a deadline, until the deadline.
        let d = blocks(&svc, &mut popper, &["BLPOP", "q", "100"], &waker);
        assert!(
            d > Duration::from_secs(50) && d <= Duration::from_secs(100),
            "{d:?}"
        );
    }

    /// A push on the fast path, dispatched before the pop blocked (so
    /// nobody waited when it began) but applied after, served nobody: it
    /// wakes the waiting pop, which pops for itself.
    #[test]
    fn a_push_that_began_before_the_pop_blocked_wakes_it() {
        let svc = service();
        let count = Arc::new(Count::default());
        let waker = Waker::from(count.clone());
        let mut popper = svc.open("127.0.0.1:2".parse::<std::net::SocketAddr>().unwrap());
        blocks(&svc, &mut popper, &["BLPOP", "q", "0"], &waker);
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        // The push, as dispatched while nobody waited: the fast path.
        let mut pusher = svc.open("127.0.0.1:3".parse::<std::net::SocketAddr>().unwrap());
        let (req, w) = framed(&svc, &mut pusher, &["RPUSH", "q", "x"]);
        let super::super::Req::Cmd(cmd) = req.0 else {
            panic!("a command")
        };
        let mut out = Vec::new();
        svc.fast(&mut pusher, cmd, &w, &mut out);
        assert_eq!(out, b":1\r\n");
        assert!(count.0.load(Ordering::SeqCst) >= 1, "the push woke it");
        let reply = served(&svc, &mut popper, &["BLPOP", "q", "0"], &waker);
        assert_eq!(reply, "*2\r\n$1\r\nq\r\n$1\r\nx\r\n");
        assert_eq!(run(&svc, &["LLEN", "q"]), ":0\r\n");
    }

    /// A pop CLIENT UNBLOCK ended, that has not yet run to leave, is no
    /// longer ahead of the pops after it: a push made alone meanwhile
    /// serves the next one in line (it does not sleep with the list
    /// full), and the unblocked one answers as a timeout, popping
    /// nothing.
    #[test]
    fn a_pop_unblocked_but_not_yet_gone_does_not_hold_the_line() {
        let svc = service();
        let count = Arc::new(Count::default());
        let waker = Waker::from(count.clone());
        let mut older = svc.open("127.0.0.1:2".parse::<std::net::SocketAddr>().unwrap());
        let mut newer = svc.open("127.0.0.1:3".parse::<std::net::SocketAddr>().unwrap());
        blocks(&svc, &mut older, &["BLPOP", "q", "0"], &waker);
        blocks(&svc, &mut newer, &["BLPOP", "q", "0"], &waker);
        let id = older.id.to_string();
        assert_eq!(run(&svc, &["CLIENT", "UNBLOCK", &id]), ":1\r\n");
        // Before the older one runs, a push (alone: someone waits).
        assert_eq!(run(&svc, &["RPUSH", "q", "x"]), ":1\r\n");
        let reply = served(&svc, &mut newer, &["BLPOP", "q", "0"], &waker);
        assert_eq!(reply, "*2\r\n$1\r\nq\r\n$1\r\nx\r\n");
        let reply = served(&svc, &mut older, &["BLPOP", "q", "0"], &waker);
        assert_eq!(reply, "*-1\r\n", "the unblocked pop times out");
        assert_eq!(run(&svc, &["LLEN", "q"]), ":0\r\n");
    }
}
