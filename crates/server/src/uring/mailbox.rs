//! The one cross-thread hand-off of `--strategy uring`: a thread that
//! spent a delay off the ring (spin or CPU work) posts the connection's
//! token back to the ring that owns it; a thread that evicted one of the
//! ring's idle connections at the connection cap (admission runs on
//! whichever ring accepted the newcomer) posts its token too; and a stop
//! wakes every ring.
//!
//! A post pushes the token under a lock, then signals (an eventfd the ring
//! always has a read pending on). The ring takes the tokens only after
//! that read completed, so every token whose signal the read consumed is
//! already in the box; a token pushed later signals again, the counter
//! stays above zero, and the ring's next read completes at once. No post
//! is lost between a take and the next read (the loom model below checks
//! it with the eventfd as a counter that a read swaps to zero).

#[cfg(serverlab_loom)]
use loom::sync::Mutex;
#[cfg(not(serverlab_loom))]
use std::sync::Mutex;

/// How a post wakes the ring: an eventfd in the server.
pub(crate) trait Signal: Send + Sync {
    fn signal(&self);
}

impl Signal for super::sys::EventFd {
    fn signal(&self) {
        super::sys::EventFd::signal(self);
    }
}

/// What another thread tells a ring about one of its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Post {
    /// Its delay is spent.
    Spent(u32),
    /// Its delay was given up part way: the client has gone, or the stop
    /// passed its drain limit.
    Abandoned(u32),
    /// Its blocked pop may go: a writer served it, or CLIENT UNBLOCK
    /// ended it (by token, as an eviction: a newer connection with it is
    /// woken for nothing).
    Woken(u32),
    /// It was evicted at the connection cap (by token: if it closed
    /// meanwhile, the token may name a newer connection, which is then
    /// run once for nothing).
    Evicted(u32),
}

pub(crate) struct Mailbox<W> {
    posted: Mutex<Vec<Post>>,
    signal: W,
}

impl<W: Signal> Mailbox<W> {
    pub(crate) fn new(signal: W) -> Self {
        Mailbox {
            posted: Mutex::new(Vec::new()),
            signal,
        }
    }

    /// Tell the ring. Push, then signal: the read that consumes this
    /// signal happens after the push.
    pub(crate) fn post(&self, post: Post) {
        self.posted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(post);
        self.signal.signal();
    }

    /// Wake the ring with nothing posted (the stop started).
    pub(crate) fn wake(&self) {
        self.signal.signal();
    }

    /// After the ring's read of the signal completed: everything posted
    /// before the signals that read consumed (and perhaps some after).
    pub(crate) fn take(&self, into: &mut Vec<Post>) {
        into.append(&mut self.posted.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// What the ring reads to be woken.
    pub(crate) fn signal(&self) -> &W {
        &self.signal
    }
}

#[cfg(all(test, serverlab_loom))]
mod loom_tests {
    use super::*;
    use loom::sync::atomic::{AtomicU64, Ordering};
    use loom::sync::Arc;

    /// The eventfd: a post adds to the counter, the ring's read takes it
    /// all (a syscall each: at least acquire/release).
    struct Counter(AtomicU64);

    impl Signal for Counter {
        fn signal(&self) {
            self.0.fetch_add(1, Ordering::Release);
        }
    }

    /// Two threads post (a delay spent, an eviction) while the ring reads
    /// and takes: the ring gets each post exactly once, and never waits on
    /// a read while a post sits in the box unsignalled.
    #[test]
    fn no_post_is_lost() {
        loom::model(|| {
            let mailbox = Arc::new(Mailbox::new(Counter(AtomicU64::new(0))));
            let posters: Vec<_> = [Post::Spent(7), Post::Evicted(9)]
                .into_iter()
                .map(|post| {
                    let m = mailbox.clone();
                    loom::thread::spawn(move || m.post(post))
                })
                .collect();
            let mut got = Vec::new();
            while got.len() < 2 {
                // The ring's read completes only when the counter is
                // above zero, taking it all.
                if mailbox.signal().0.swap(0, Ordering::Acquire) > 0 {
                    mailbox.take(&mut got);
                } else {
                    loom::thread::yield_now();
                }
            }
            for p in posters {
                p.join().unwrap();
            }
            // Nothing left behind, nothing twice.
            mailbox.take(&mut got);
            got.sort_unstable();
            assert_eq!(got, vec![Post::Spent(7), Post::Evicted(9)]);
        });
    }
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    struct Counter(AtomicU64);

    impl Signal for Counter {
        fn signal(&self) {
            self.0.fetch_add(1, Ordering::Release);
        }
    }

    #[test]
    fn posts_signal_and_are_taken_in_order() {
        let m = Mailbox::new(Counter(AtomicU64::new(0)));
        m.post(Post::Spent(3));
        m.post(Post::Evicted(1));
        m.wake();
        assert_eq!(m.signal().0.load(Ordering::Acquire), 3);
        let mut got = vec![];
        m.take(&mut got);
        assert_eq!(got, vec![Post::Spent(3), Post::Evicted(1)]);
        m.take(&mut got);
        assert_eq!(got, vec![Post::Spent(3), Post::Evicted(1)], "taken once");
    }
}
