//! Waiting, not failing, at the connection cap.
//!
//! When `--max-connections` are open (or as many as the descriptor limit
//! holds, `fds.rs`) and none is idle to evict (`idle.rs`), a new
//! connection is not accepted and closed: it is not accepted at all. Its
//! client's handshake has completed into the listen backlog (sized as the
//! system allows, `listen.rs`), and it waits there, its request queued in
//! the kernel, until a connection closes and the server accepts again — as
//! Apache's `MaxRequestWorkers` and most servers leave it. Only when the
//! backlog itself is full does the kernel drop handshakes, and the client
//! retries its SYN.
//!
//! An accept loop that finds the server full (`Accepted::Full`) stops
//! watching its listener — a readiness loop deregisters it or leaves it
//! unpolled, so a pending connection cannot wake it again and again;
//! uring stops re-arming its accept — and asks the room to wake it (the
//! waker it registered with [`Room::on_room`]) when a connection closes.
//!
//! The hand-off is lock-free on the closing side, which every connection
//! passes: a loop raises `waiting` and then looks at the open count
//! again; a closing connection lowers the count and then looks at
//! `waiting`. Each side's store and load are separated by a `SeqCst`
//! fence, so at least one of the two sees the other: either the loop sees
//! the room and accepts at once, or the closer sees the loop waiting and
//! wakes it. No wake-up is lost, and a close costs one fence and one load
//! while no loop waits.

use parking_lot::Mutex;
use std::sync::atomic::{fence, AtomicBool, Ordering};

type Wake = Box<dyn Fn() + Send + Sync>;

/// Accept loops waiting for a connection to close.
#[derive(Default)]
pub(crate) struct Room {
    /// Some loop waits. `Relaxed` accesses, ordered by the fences.
    waiting: AtomicBool,
    /// One per accept loop, registered when it starts.
    wakers: Mutex<Vec<Wake>>,
}

impl Room {
    /// How to wake an accept loop when a connection closes while it
    /// waits (a loop may be woken when it does not wait: it looks again).
    pub(crate) fn on_room(&self, wake: impl Fn() + Send + Sync + 'static) {
        self.wakers.lock().push(Box::new(wake));
    }

    /// An accept loop found the server full: ask to be woken when a
    /// connection closes. Returns whether it must wait: false if a
    /// connection closed meanwhile (`full` says no longer), then it
    /// accepts again at once.
    pub(crate) fn wait(&self, full: impl Fn() -> bool) -> bool {
        self.waiting.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        full()
    }

    /// A connection's close is counted: wake the loops if any waits.
    pub(crate) fn freed(&self) {
        fence(Ordering::SeqCst);
        if self.waiting.load(Ordering::Relaxed) && self.waiting.swap(false, Ordering::Relaxed) {
            for wake in self.wakers.lock().iter() {
                wake();
            }
        }
    }
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, AtomicUsize};
    use std::sync::Arc;

    #[test]
    fn a_close_wakes_a_waiting_loop_once_and_an_idle_one_not_at_all() {
        let room = Room::default();
        let woken = Arc::new(AtomicUsize::new(0));
        let w = woken.clone();
        room.on_room(move || {
            w.fetch_add(1, Ordering::Relaxed);
        });
        room.freed();
        assert_eq!(woken.load(Ordering::Relaxed), 0, "no loop waits");
        assert!(room.wait(|| true), "still full: wait");
        room.freed();
        room.freed();
        assert_eq!(woken.load(Ordering::Relaxed), 1, "woken once");
        assert!(!room.wait(|| false), "room already: accept at once");
    }

    /// A close racing the loop's decision to wait is never lost: either
    /// the loop sees the room, or the close wakes it.
    #[test]
    fn a_racing_close_is_never_lost() {
        for _ in 0..2000 {
            let room = Arc::new(Room::default());
            let open = Arc::new(AtomicU64::new(1));
            let woken = Arc::new(AtomicBool::new(false));
            let w = woken.clone();
            room.on_room(move || w.store(true, Ordering::Relaxed));
            let closer = {
                let (room, open) = (room.clone(), open.clone());
                std::thread::spawn(move || {
                    open.fetch_sub(1, Ordering::Relaxed);
                    room.freed();
                })
            };
            let waits = room.wait(|| open.load(Ordering::Relaxed) >= 1);
            closer.join().unwrap();
            assert!(!waits || woken.load(Ordering::Relaxed), "lost wake-up");
        }
    }
}
