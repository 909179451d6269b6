//! A ring's accepting: how connections come in on its listener, with the
//! duties every strategy's accept has (docs/design.md, "Adding a
//! strategy").
//!
//! While there is room, one multishot accept yields every connection, a
//! completion each, never re-armed. Each goes through the server's
//! admission (`Ctx::accept`): admitted under the cap, or by evicting the
//! connection idle longest (on whichever ring holds it: the eviction is
//! posted to that ring's mailbox), or closed at once.
//!
//! The ring's own accepts go through `Ctx::accept`, which accepts only
//! with room under the cap (or an idle connection evicted for the one
//! pending): at the cap with none idle, the ring arms nothing on its
//! listener, so pending connections wait in the backlog, until a
//! connection closes (the room wakes the ring through its mailbox) or
//! `FULL_RECHECK` passes (a backoff timer), then accepts again.
//!
//! A multishot accept takes a descriptor for every connection of a burst
//! before admission sees any of them. Near the cap, where each newcomer
//! costs an eviction or is refused, such a burst could run the process out
//! of descriptors that admission would have given straight back — and one
//! ring's accept can run out because another ring's completions, not yet
//! reaped, hold them; and past the cap, what it made can only be refused,
//! not left waiting. So from a listen backlog's worth of connections short
//! of the cap (`listen::backlog`: a burst that fits in the backlog fits
//! under the cap; under a tight cap, such as one the descriptor limit
//! sets, the multishot accept is never armed), and
//! while accepts are out of descriptors, the ring waits for the listener's
//! readiness (a one-shot poll) and accepts the backlog itself, one
//! connection at a time (`accept(2)` on the non-blocking listener, through
//! `Ctx::accept`, which sheds connections when out of descriptors), as the
//! readiness strategies do; then it waits again, or arms the multishot
//! accept once there is room. (Out of descriptors, a multishot accept would
//! fail at once anyway: the kernel takes the descriptor before it looks at
//! the backlog.)
//!
//! The kernel ends a multishot accept on any error. Out of descriptors
//! (`EMFILE`, `ENFILE`), the backlog may fill and no new connection would
//! ever make the listener heard from again: the ring pauses (`BACKOFF`, in
//! which another ring may give back the descriptors its completions hold),
//! then accepts the backlog itself as above, shedding if still out. Other
//! errors go through `Ctx::accept` like any accept's. And a multishot
//! accept keeps the descriptor limit of when it was armed: a connection it
//! makes past the limit now in force (lowered since, by `prlimit`) is shed,
//! and the accept is cancelled and armed anew under the new limit. So the
//! listener is never left unwatched with connections in its backlog.

use super::{Ring, Stop, BUDGET};
use crate::accept::{Accepted, BACKOFF, FULL_RECHECK};
use crate::session::Session;
use crate::uring::mailbox::Post;
use crate::uring::sys::{Completion, Op};
use serverlab_service::{Peer, Service};
use std::io;
use std::net::TcpStream;
use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;

/// How the ring waits for connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Accepting {
    /// Nothing armed: the ring accepts itself, or waits for a backoff,
    /// or has stopped accepting.
    Off,
    /// The multishot accept is armed.
    Multishot,
    /// The multishot accept was cancelled (near the cap, or past a lowered
    /// descriptor limit); its last completion is to come.
    Ending,
    /// A poll waits for the listener to have a connection.
    Waiting,
}

/// Whether a ring accepting its backlog goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Go {
    On,
    /// The backlog is empty.
    Drained,
    /// Not now: a backoff, or waiting for room, is pending.
    Pause,
}

/// What the ring accepts: a connection and its peer, or why not.
type AcceptResult = io::Result<(TcpStream, Peer)>;

impl<S: Service> Ring<S> {
    /// The backlog is empty: arm the multishot accept, or, near the cap or
    /// out of descriptors, wait for the next connection.
    pub(super) fn arm_accept(&mut self) {
        let Some(listener) = &self.listener else {
            return;
        };
        if self.ctx.accept.out_of_fds() || self.near_cap() {
            self.io.readable(listener);
            self.accepting = Accepting::Waiting;
        } else {
            self.io.accept_multi(listener);
            self.accepting = Accepting::Multishot;
        }
    }

    fn near_cap(&self) -> bool {
        // A burst the multishot accept takes in before admission sees it
        // should fit under the cap (see the module's doc).
        self.ctx.conns().active() + u64::from(crate::listen::backlog()) >= self.ctx.max_connections
    }

    /// Cancel the multishot accept, if it is armed.
    fn end_multishot(&mut self) {
        if self.accepting == Accepting::Multishot {
            self.io.cancel(Op::Accept, 0);
            self.accepting = Accepting::Ending;
        }
    }

    /// A completion of the multishot accept.
    pub(super) fn accepted(&mut self, c: Completion) {
        if !c.more {
            self.accepting = Accepting::Off;
        }
        let first = match c.accepted {
            Some(stream) if crate::fds::past_limit(stream.as_raw_fd()) => {
                self.ctx.shed_accepted(stream);
                self.end_multishot();
                None
            }
            Some(stream) => Some(match crate::listen::peer_of(&stream) {
                Ok(peer) => Ok((stream, peer)),
                // Gone already: an error of that connection, not of the
                // listener.
                Err(_) => Err(io::Error::from_raw_os_error(libc::ECONNABORTED)),
            }),
            // Cancelled: by the stop, or ended by the ring.
            None if c.result == -libc::ECANCELED => None,
            None if c.result == -libc::EMFILE || c.result == -libc::ENFILE => {
                self.backoff(BACKOFF);
                None
            }
            None => Some(Err(io::Error::from_raw_os_error(-c.result))),
        };
        self.accept_backlog(first);
        if self.accepting == Accepting::Multishot && self.near_cap() {
            self.end_multishot();
        }
        self.let_go();
    }

    /// The listener has a connection (or the poll was cancelled).
    pub(super) fn readable(&mut self) {
        self.accepting = Accepting::Off;
        self.accept_backlog(None);
        self.let_go();
    }

    /// The backoff is over: accept again.
    pub(super) fn backoff_over(&mut self) {
        self.backoff = false;
        self.full = false;
        self.accept_backlog(None);
    }

    /// The ring was woken: if it waited for room at the cap, accept again
    /// (a connection may have closed; if not, it waits again). Its backoff
    /// timer, still pending, finds accepting armed, or tries again.
    pub(super) fn room_made(&mut self) {
        if self.full {
            self.full = false;
            self.accept_own(None, true);
        }
    }

    /// Stopping, with nothing armed on it: close the listener.
    fn let_go(&mut self) {
        if self.accepting == Accepting::Off && self.stop != Stop::Running {
            self.listener = None;
        }
    }

    /// Accept again after `d` (unless a backoff is already pending).
    fn backoff(&mut self, d: Duration) {
        if !self.backoff {
            self.io.backoff(d);
            self.backoff = true;
        }
    }

    /// The stop: cancel what waits for connections, or close the listener.
    pub(super) fn stop_accepting(&mut self) {
        match self.accepting {
            Accepting::Multishot => self.io.cancel(Op::Accept, 0),
            Accepting::Waiting => self.io.cancel(Op::Readable, 0),
            // Its cancel is on the way.
            Accepting::Ending => {}
            Accepting::Off => self.listener = None,
        }
    }

    /// Run accepts through admission: `first` (a completion's, through
    /// `Ctx::accepted`), then, if nothing is armed and no backoff pending,
    /// accepts of the ring's own (`Ctx::accept`) until the backlog is
    /// empty (then it arms what waits for the next connection), until
    /// nothing can be done for a moment (then a backoff), or until the
    /// server is full (then it waits for room).
    fn accept_backlog(&mut self, first: Option<AcceptResult>) {
        self.accept_own(first, false);
    }

    /// [`Ring::accept_backlog`]; `room`: the ring waited for room at the
    /// cap and was woken, so it accepts though its recheck timer (a
    /// backoff) is still pending.
    fn accept_own(&mut self, first: Option<AcceptResult>, room: bool) {
        let ours = self.accepting == Accepting::Off
            && self.stop == Stop::Running
            && (room || !self.backoff);
        if first.is_none() && !ours {
            return;
        }
        let Some(listener) = self.listener.take() else {
            return;
        };
        let mut next = Go::On;
        if let Some(made) = first {
            next = self.follow(self.ctx.accepted(made));
        }
        while ours && next == Go::On {
            next = self.follow(self.ctx.accept(listener.as_fd(), || listener.accept()));
        }
        self.listener = Some(listener);
        if next == Go::Drained && ours {
            self.arm_accept();
        }
    }

    /// Carry out what admission said, and whether to accept on.
    fn follow(&mut self, next: Accepted<TcpStream>) -> Go {
        match next {
            Accepted::Serve(stream, peer) => self.serve_conn(stream, peer),
            Accepted::Again => {}
            Accepted::Drained => return Go::Drained,
            Accepted::RetryIn(d) => {
                self.backoff(d);
                return Go::Pause;
            }
            // Unless a connection closed meanwhile (then accept again):
            // nothing armed, the room or the recheck wakes the ring.
            Accepted::Full => {
                if self.ctx.wait_for_room() {
                    self.full = true;
                    self.backoff(FULL_RECHECK);
                    return Go::Pause;
                }
            }
        }
        Go::On
    }

    /// A connection admitted: its session, woken through this ring's
    /// mailbox if another thread evicts it, run at once.
    fn serve_conn(&mut self, stream: TcpStream, peer: Peer) {
        let mut sess = Session::new(&self.ctx, peer).with_budget(BUDGET);
        let entry = self.conns.vacant_entry();
        let token = u32::try_from(entry.key()).expect("fewer than 2^32 connections");
        sess.on_commit(super::super::conn::commit_waker(
            self.mailbox.clone(),
            token,
        ));
        sess.on_wait(super::super::conn::wait_waker(self.mailbox.clone(), token));
        let mailbox = self.mailbox.clone();
        sess.on_evict(stream.as_fd(), move || mailbox.post(Post::Evicted(token)));
        entry.insert(super::Conn::new(token, stream, sess));
        self.ready.push_back(token);
    }
}
