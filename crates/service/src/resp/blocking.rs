//! Blocking pops (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP): a client
//! whose lists are all empty waits, up to its timeout, until another
//! connection pushes.
//!
//! The wait is the session's ([`Service::wait`](crate::Service::wait)):
//! a strategy waits its own way (a sleeping thread, a timer on a reactor
//! or a runtime, a timeout on the ring), [`POLL`] at a time, and asks
//! again; nothing else of the connection is applied meanwhile. Each
//! time, the pop looks at its keys only if a write may have put elements
//! in a list since its last look ([`RespService::pushes`] moved); then
//! it tries once, alone (the pop and its log record as the pop it came
//! to: `BLPOP` as `LPOP`). A client woken first does not pop first: when
//! several wait on one key, the first to look after the push takes it
//! (Redis serves them in the order they blocked).

use super::ext::Alone;
use super::{Args, RespConn, RespService};
use crate::Delay;
use parking_lot::Mutex;
use serverlab_proto::resp::command::Cmd;
use serverlab_proto::resp::{reply, Name};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
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

/// The connections blocked now, by id, and how CLIENT UNBLOCK asked each
/// to end.
#[derive(Default)]
pub(crate) struct Blocked(Mutex<HashMap<u64, Option<Unblock>>>);

impl Blocked {
    /// INFO's `blocked_clients`.
    pub(crate) fn len(&self) -> usize {
        self.0.lock().len()
    }

    fn add(&self, id: u64) {
        self.0.lock().entry(id).or_insert(None);
    }

    pub(crate) fn remove(&self, id: u64) {
        self.0.lock().remove(&id);
    }

    /// CLIENT UNBLOCK: whether `id` was blocked.
    pub(crate) fn unblock(&self, id: u64, how: Unblock) -> bool {
        match self.0.lock().get_mut(&id) {
            Some(h) => {
                *h = Some(how);
                true
            }
            None => false,
        }
    }

    fn unblocked(&self, id: u64) -> Option<Unblock> {
        self.0.lock().get(&id).copied().flatten()
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
        svc.blocked.add(conn.id);
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
        w.seen = Some(pushes);
        let mut alone = Alone::begin(svc);
        let mut r = Vec::new();
        // Past the deadline it tries without blocking: nothing is the
        // timeout's reply.
        if !alone.one(svc, conn, Cmd::Ext(name), input, &mut r, !due) {
            if let Err(e) = alone.finish(svc, conn) {
                r.clear();
                svc.refused(e, &mut r);
            }
            return done(svc, conn, r);
        }
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
