//! Eviction at the connection cap: which open connection has waited
//! longest for its next request, and telling it to close.
//!
//! Every session registers here when it opens and leaves when it
//! finishes. It marks itself *idle* when it has written every reply and
//! waits for its next request (a request arriving byte by byte, as in a
//! slowloris attack, still counts as waited for since the wait began), and
//! *busy* when a whole request has arrived. When a connection arrives and
//! `--max-connections` are open, admission evicts the one idle longest:
//! it is flagged and woken (each strategy says how, with
//! `Session::on_evict`), and closes at its next step, having nothing
//! unanswered. A lock-step client idles for microseconds between
//! requests, an idle or slowloris connection for as long as it exists, so
//! the clients doing work keep their connections and the new one is
//! served. Docs: docs/reliability.md ("Lock-out").
//!
//! A session becomes busy and is evicted by compare-and-swap on one state
//! word, so exactly one of the two happens: a session that won the race is
//! never closed under a request. A session that has received input it has
//! not yet framed says so (`holding`), and is not chosen. But the
//! eviction sees neither a request whose bytes a strategy has taken from
//! the socket before the session was told (uring's receive completes in
//! the kernel; a readiness loop reads before it frames) nor an idle
//! session's, so an evicted session answers the whole requests it then
//! finds received, reads nothing more, and closes: a request received is
//! never closed unanswered.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// A slot's state: busy.
const BUSY: u64 = 0;
/// A slot's state: evicted (it stays so).
const EVICTED: u64 = u64::MAX;
/// A bit of an idle state: the session holds input it received while it
/// waited and has not yet framed (its bytes have left the socket, where
/// `has_input` looks): not chosen until it waits again.
const HELD: u64 = 1 << 63;

type Wake = Box<dyn Fn() + Send + Sync>;

/// One connection's entry.
#[derive(Default)]
struct Slot {
    /// `BUSY`, `EVICTED`, or (idle) the coarse monotonic millisecond, plus
    /// one, when the connection began waiting for its next request. Every
    /// access is a single atomic step of this state machine and publishes
    /// nothing else (the waker has its own synchronisation), so `Relaxed`.
    state: AtomicU64,
    /// The connection's socket, and how to wake the connection so it sees
    /// the eviction; a connection without them is never chosen. The
    /// socket is open while the slot is in the table: a session leaves
    /// before its strategy closes the socket.
    wake: OnceLock<(RawFd, Wake)>,
}

/// A session's registration; hand it back with [`IdleTable::leave`].
pub(crate) struct Entry {
    key: u64,
    slot: Arc<Slot>,
}

/// How long a connection must have waited for a request to be evicted.
/// A connection with input unread is never evicted (its request arrived
/// while the server was busy: `has_input`), but one that has just begun
/// to wait may have its request still on its way — its client connected
/// and was descheduled before it sent, on a busy machine; evicting it
/// would close it unanswered. A client that truly idles at a full server
/// has said nothing for longer; a newcomer that finds none idle so long
/// waits in the backlog, and the accept loop looks again
/// (`accept::FULL_RECHECK`), so it is served within this and a recheck.
pub(crate) const MIN_IDLE: std::time::Duration = std::time::Duration::from_millis(500);

/// The open connections' idle states.
pub(crate) struct IdleTable {
    slots: Mutex<HashMap<u64, Arc<Slot>>>,
    next_key: AtomicU64,
    /// [`MIN_IDLE`], in milliseconds (tests lower it).
    min_idle_ms: u64,
}

impl Default for IdleTable {
    fn default() -> Self {
        IdleTable::with_min_idle(MIN_IDLE)
    }
}

impl IdleTable {
    /// A table that evicts only connections idle at least `min_idle`.
    pub(crate) fn with_min_idle(min_idle: std::time::Duration) -> Self {
        IdleTable {
            slots: Mutex::default(),
            next_key: AtomicU64::new(0),
            min_idle_ms: min_idle.as_millis() as u64,
        }
    }

    /// Register a connection just opened (busy until it first waits).
    pub(crate) fn join(&self) -> Entry {
        // Relaxed: only uniqueness matters.
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        let slot = Arc::new(Slot::default());
        self.slots.lock().insert(key, slot.clone());
        Entry { key, slot }
    }

    /// The connection is finished: it can no longer be chosen.
    pub(crate) fn leave(&self, entry: &Entry) {
        self.slots.lock().remove(&entry.key);
    }

    /// Evict the connection idle longest, if any has been idle at least
    /// the table's minimum: flag it, then wake it. Returns whether one
    /// was.
    pub(crate) fn evict_longest(&self) -> bool {
        // States are the wait's start plus one: idle long enough at or
        // below this.
        let since_at_most = (coarse_now_ms() + 1).saturating_sub(self.min_idle_ms);
        let victim = {
            let slots = self.slots.lock();
            let mut idle: Vec<(u64, &Arc<Slot>)> = slots
                .values()
                .filter_map(|s| Some((s.state.load(Ordering::Relaxed), s, s.wake.get()?)))
                .filter(|&(st, _, _)| {
                    st != BUSY && st != EVICTED && st & HELD == 0 && st <= since_at_most
                })
                .map(|(st, s, _)| (st, s))
                .collect();
            idle.sort_unstable_by_key(|&(st, _)| st);
            // Longest idle first. A session may turn busy between the scan
            // and the swap: the next is tried.
            idle.into_iter().find_map(|(since, slot)| {
                let (fd, _) = slot.wake.get()?;
                if has_input(*fd) {
                    return None;
                }
                slot.state
                    .compare_exchange(since, EVICTED, Ordering::Relaxed, Ordering::Relaxed)
                    .ok()
                    .map(|_| slot.clone())
            })
        };
        // Woken outside the table's lock: a waker may take its strategy's.
        match victim.as_ref().and_then(|s| s.wake.get()) {
            Some((_, wake)) => {
                wake();
                true
            }
            None => false,
        }
    }
}

impl Entry {
    /// The connection's socket, and how to wake the connection when it
    /// is evicted (set once).
    pub(crate) fn on_evict(&self, socket: RawFd, wake: Wake) {
        let _ = self.slot.wake.set((socket, wake));
    }

    /// The connection has written every reply and waits for a request.
    pub(crate) fn idle(&self) {
        let _ = self.slot.state.compare_exchange(
            BUSY,
            coarse_now_ms() + 1,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    /// Input arrived while it waits, not yet framed: not evictable until
    /// it [`waits_again`](Entry::waits_again) or turns busy. Its wait
    /// keeps its start (a slowloris's too).
    pub(crate) fn holding(&self) {
        let state = &self.slot.state;
        let mut now = state.load(Ordering::Relaxed);
        while now != BUSY && now & HELD == 0 {
            match state.compare_exchange(now, now | HELD, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return,
                Err(seen) => now = seen,
            }
        }
    }

    /// What it held was no whole request: it waits on, evictable again.
    pub(crate) fn waits_again(&self) {
        let state = &self.slot.state;
        let mut now = state.load(Ordering::Relaxed);
        while now != EVICTED && now & HELD != 0 {
            match state.compare_exchange(now, now & !HELD, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return,
                Err(seen) => now = seen,
            }
        }
    }

    /// A request has arrived: the connection is busy, unless it was
    /// evicted first (then false, and it must close without applying it).
    pub(crate) fn busy(&self) -> bool {
        let state = &self.slot.state;
        let mut now = state.load(Ordering::Relaxed);
        loop {
            if now == EVICTED {
                return false;
            }
            if now == BUSY {
                return true;
            }
            match state.compare_exchange(now, BUSY, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(seen) => now = seen,
            }
        }
    }

    /// Whether the connection was evicted.
    pub(crate) fn evicted(&self) -> bool {
        self.slot.state.load(Ordering::Relaxed) == EVICTED
    }
}

/// Whether a connection's socket has input unread (its request, arrived
/// while the server was busy, or its client's end of stream): then it is
/// not idle, whatever its state says. `fd` is open (see `Slot::wake`); a
/// negative one has none.
fn has_input(fd: RawFd) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, for the duration of the call.
    unsafe { libc::poll(&mut p, 1, 0) > 0 }
}

/// Milliseconds on the coarse monotonic clock (a few nanoseconds to read,
/// a few milliseconds fine: enough to tell a connection idle for seconds
/// from one idle between requests).
fn coarse_now_ms() -> u64 {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_MONOTONIC_COARSE)
        .map(|t| t.tv_sec() as u64 * 1000 + t.tv_nsec() as u64 / 1_000_000)
        .unwrap_or(0)
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn woken(e: &Entry) -> Arc<AtomicUsize> {
        let n = Arc::new(AtomicUsize::new(0));
        let m = n.clone();
        e.on_evict(
            -1,
            Box::new(move || {
                m.fetch_add(1, Ordering::Relaxed);
            }),
        );
        n
    }

    #[test]
    fn evicts_the_longest_idle_and_wakes_it() {
        let t = IdleTable::with_min_idle(std::time::Duration::ZERO);
        let (a, b, c) = (t.join(), t.join(), t.join());
        let (wa, wb, wc) = (woken(&a), woken(&b), woken(&c));
        assert!(!t.evict_longest(), "none is idle");
        b.idle();
        std::thread::sleep(std::time::Duration::from_millis(30));
        a.idle();
        assert!(t.evict_longest());
        assert!(b.evicted() && !a.evicted() && !c.evicted());
        assert_eq!(wb.load(Ordering::Relaxed), 1);
        assert!(!b.busy(), "an evicted connection cannot turn busy");
        assert!(a.busy(), "a busy one is not chosen");
        assert!(!t.evict_longest(), "none idle is left");
        assert_eq!(wa.load(Ordering::Relaxed) + wc.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_connection_idle_for_less_than_the_minimum_is_not_chosen() {
        let t = IdleTable::with_min_idle(std::time::Duration::from_millis(200));
        let a = t.join();
        let wa = woken(&a);
        a.idle();
        assert!(!t.evict_longest(), "its request may be on its way");
        std::thread::sleep(std::time::Duration::from_millis(250));
        assert!(t.evict_longest(), "idle long enough");
        assert_eq!(wa.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn connections_without_a_waker_or_gone_are_not_chosen() {
        let t = IdleTable::with_min_idle(std::time::Duration::ZERO);
        let a = t.join();
        a.idle();
        assert!(!t.evict_longest(), "no way to wake it");
        let b = t.join();
        let _ = woken(&b);
        b.idle();
        t.leave(&b);
        assert!(!t.evict_longest(), "it left");
    }

    /// Input received and not yet framed keeps a connection from being
    /// chosen (its bytes are no longer in the socket for `has_input` to
    /// see); once it waits again (a partial request), its wait counts
    /// from when it began.
    #[test]
    fn a_connection_holding_received_input_is_not_chosen() {
        let t = IdleTable::with_min_idle(std::time::Duration::ZERO);
        let a = t.join();
        let wa = woken(&a);
        a.idle();
        a.holding();
        assert!(!t.evict_longest(), "its request is in hand");
        a.waits_again();
        assert!(t.evict_longest(), "only part of a request: idle on");
        assert_eq!(wa.load(Ordering::Relaxed), 1);
        a.holding();
        assert!(a.evicted(), "evicted stays evicted");
        assert!(!a.busy());
        let b = t.join();
        let _wb = woken(&b);
        b.holding();
        assert!(b.busy(), "busy is not turned into held");
        b.idle();
        b.holding();
        assert!(b.busy(), "a held request turns busy");
        assert!(!t.evict_longest());
    }

    #[test]
    fn idle_then_busy_then_idle_restarts_the_wait() {
        let t = IdleTable::with_min_idle(std::time::Duration::ZERO);
        let (a, b) = (t.join(), t.join());
        let (_wa, _wb) = (woken(&a), woken(&b));
        a.idle();
        std::thread::sleep(std::time::Duration::from_millis(30));
        b.idle();
        assert!(a.busy());
        // Past the coarse clock's resolution, so the waits differ.
        std::thread::sleep(std::time::Duration::from_millis(30));
        a.idle();
        assert!(t.evict_longest());
        assert!(b.evicted() && !a.evicted(), "a's wait began anew");
    }
}
