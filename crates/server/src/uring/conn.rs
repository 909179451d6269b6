//! One connection on a ring: its socket, its session, the bytes received
//! ahead of the session asking for them, and what it waits for. It carries
//! out the session's I/O as submissions, and folds completions back in.
//!
//! Input arrives through one multishot receive, armed when the session
//! first asks to read and left armed: completions land in the session
//! directly when it is waiting for input, and in `stash` otherwise (while
//! it writes or spends a delay). A stash past `STASH_LIMIT` cancels the
//! receive, so a client that sends without reading is held back by TCP's
//! flow control instead of our memory; the receive is armed again once the
//! session has taken the stash and asks for more. At most one receive is
//! ever in flight, so bytes arrive in order.
//!
//! Delays: a sleep is a timer on the ring, cancelled (and the delay
//! abandoned) when a tick finds the client gone or the server aborts;
//! spinning and CPU work run on another thread, which gives them up itself
//! the same way (`delay::perform`) and posts whether they were spent.
//! A commit is waited for like the latter: the log's thread posts the
//! token when it is settled.
//!
//! A blocked pop waits on a timer on the ring until its deadline: its
//! writer posts the token ([`wait_waker`]), and the ring cancels the
//! timer, whose completion runs the connection. So does a client that
//! leaves meanwhile (a receive that ends, or the tick's look), and the
//! session, told, drops the pop.

use super::mailbox::{Mailbox, Post};
use super::sys::{Completion, EventFd, Lent, Op, Uring};
use crate::io::{gone, peer_closed, shutdown_write};
use crate::session::{Io, Session};
use serverlab_service::wal::Ticket;
use serverlab_service::{Delay, Service};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes received ahead of the session beyond which receiving stops.
const STASH_LIMIT: usize = 64 * 1024;

/// What a connection waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wait {
    /// Nothing: it is queued to run.
    Ready,
    /// Input, end of stream or an error, or the deadline (checked by the
    /// ring's tick), or the stop.
    Input(Option<Instant>),
    /// Its send's completion (the write timeout cancels it).
    Output,
    /// Its delay: a timer on the ring (`timer`), or a thread's post.
    Delay { timer: bool },
    /// Its blocked pop: a timer on the ring until the pop's deadline,
    /// cancelled when the pop may go or the client leaves.
    Blocked,
    /// Its replies wait for a commit the ring itself makes at the end of
    /// the pass (`Committer::Caller`).
    Commit,
    /// Closed by the session: the last completions of what is in flight,
    /// then the socket is closed.
    Closing,
}

/// The state of its receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recv {
    Idle,
    /// The multishot receive is armed.
    Armed,
    /// It was cancelled; its last completion is to come.
    Cancelling,
}

/// Why [`Conn::drive`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Parked {
    /// Something was submitted (or a thread spends its delay): its
    /// completion runs the connection again.
    Waiting,
    /// Its budget is spent: run it again after the others.
    Yield,
    /// Its replies wait for the ring's commit at the end of this pass.
    Commit,
    /// The session is finished: close the socket (`reset`: with a reset).
    Closed { reset: bool },
}

/// How a delay is spent: on the ring's timer, or by another thread.
pub(super) trait Delays {
    /// Start `delay` for connection `token` on `stream`; true if it is the
    /// ring's timer (`Op::Sleep`), false if a thread will post its end
    /// (spent, or abandoned because the client has gone or the stop
    /// passed its drain limit).
    fn start(&mut self, delay: Delay, token: u32, stream: &TcpStream, io: &mut Uring) -> bool;
}

pub(super) struct Conn<S: Service> {
    token: u32,
    stream: TcpStream,
    sess: Lent<Session<S>>,
    /// Received, not yet taken by the session.
    stash: Vec<u8>,
    recv: Recv,
    /// The peer ended its side (a receive completed with 0).
    eof: bool,
    /// A receive failed: the connection is gone.
    broken: bool,
    /// A send failed: the connection is gone.
    write_failed: bool,
    pub(super) wait: Wait,
    /// Operations (and delays on other threads) not yet over, each of
    /// which will name this connection's token once more.
    pub(super) in_flight: u32,
    /// When the send in flight was submitted, unless it was cancelled.
    sending_since: Option<Instant>,
    /// The send in flight was cancelled by a subscriber's wake (a
    /// message, or it was cut off), not by the write timeout.
    woke_send: bool,
}

impl<S: Service> Conn<S> {
    pub(super) fn new(token: u32, stream: TcpStream, sess: Session<S>) -> Self {
        Conn {
            token,
            stream,
            sess: Lent::new(sess),
            stash: Vec::new(),
            recv: Recv::Idle,
            eof: false,
            broken: false,
            write_failed: false,
            wait: Wait::Ready,
            in_flight: 0,
            sending_since: None,
            woke_send: false,
        }
    }

    /// Carry out the session's I/O until it waits for a completion,
    /// yields, or is finished. Only when `wait` is `Ready`.
    pub(super) fn drive(
        &mut self,
        io: &mut Uring,
        delays: &mut impl Delays,
        now: Instant,
    ) -> Parked {
        debug_assert_eq!(self.wait, Wait::Ready);
        if self.write_failed {
            return Parked::Closed { reset: false };
        }
        self.unstash();
        loop {
            let sess = self.sess.get_mut().expect("no send holds a ready session");
            let parked = match sess.next() {
                Io::Delay(d) => Some(self.delay(d, io, delays)),
                // A wait is a timer too, which a wake cancels.
                Io::Wait(d) => self.block(d, io),
                Io::Commit(t) => self.commit(t),
                Io::Write => Some(self.send(io, now)),
                Io::Read { deadline } => self.read(io, deadline),
                Io::ShutdownWrite => {
                    shutdown_write(&self.stream);
                    None
                }
                Io::Yield => Some(Parked::Yield),
                Io::Close => Some(Parked::Closed { reset: false }),
                Io::Reset => Some(Parked::Closed { reset: true }),
            };
            if let Some(parked) = parked {
                return parked;
            }
        }
    }

    /// Hand the session what was received while it was not waiting for
    /// input (as far as it has room), before it decides its next step: a
    /// session evicted at the cap reads nothing more but answers the
    /// requests it holds, and bytes the receive took from the socket
    /// before the eviction are held, whether or not they reached it yet.
    /// Once the server stops, nothing more is handed over (the stop reads
    /// nothing more; a client still sending would hold the drain).
    fn unstash(&mut self) {
        if self.stash.is_empty() {
            return;
        }
        if let Some(sess) = self.sess.get_mut().filter(|s| s.takes_held_input()) {
            let n = sess.receive(&self.stash);
            self.stash.drain(..n);
        }
    }

    /// Start the delay the session asked for: on the ring's timer, or on
    /// another thread.
    fn delay(&mut self, d: Delay, io: &mut Uring, delays: &mut impl Delays) -> Parked {
        let timer = delays.start(d, self.token, &self.stream, io);
        self.in_flight += 1;
        self.wait = Wait::Delay { timer };
        Parked::Waiting
    }

    /// Wait for a blocked pop: a timer until its deadline, unless the
    /// client has left (the session then drops the pop and resets).
    fn block(&mut self, d: Duration, io: &mut Uring) -> Option<Parked> {
        let sess = self.sess.get_mut().expect("no send holds a ready session");
        if self.eof || self.broken || peer_closed(&self.stream) {
            sess.abandon_wait();
            return None;
        }
        io.sleep(d, self.token);
        self.in_flight += 1;
        self.wait = Wait::Blocked;
        Some(Parked::Waiting)
    }

    /// Its blocked pop may go (its writer posted it), or its client left:
    /// cancel the timer, whose completion runs the connection.
    pub(super) fn wake_blocked(&mut self, io: &mut Uring) {
        if self.wait == Wait::Blocked {
            io.cancel(Op::Sleep, self.token);
        }
    }

    /// Wait for the commit the session asked for, as for a delay spent
    /// on another thread: the log's thread posts the token (see
    /// [`commit_waker`]) and the ring runs the connection again. `None`:
    /// it is settled already; ask the session again.
    fn commit(&mut self, t: Ticket) -> Option<Parked> {
        let sess = self.sess.get_mut().expect("no send holds a ready session");
        if sess.commits_in_pass() {
            if sess.commit_settled(t) {
                return None;
            }
            self.wait = Wait::Commit;
            return Some(Parked::Commit);
        }
        if !sess.register_commit(t) {
            return None;
        }
        self.in_flight += 1;
        self.wait = Wait::Delay { timer: false };
        Some(Parked::Waiting)
    }

    /// Submit a send of the session's unwritten replies, lending it to the
    /// kernel until the send completes.
    fn send(&mut self, io: &mut Uring, now: Instant) -> Parked {
        let sess = self.sess.get_mut().expect("no send holds a ready session");
        let then_waits = self.stash.is_empty() && sess.reads_next();
        io.send(
            self.stream.as_raw_fd(),
            &mut self.sess,
            self.token,
            then_waits,
        );
        self.in_flight += 1;
        self.sending_since = Some(now);
        self.wait = Wait::Output;
        Parked::Waiting
    }

    /// A read: from the stash, or the end, or submit (or wait for) a
    /// receive. `None`: the session has something new; ask it again.
    fn read(&mut self, io: &mut Uring, deadline: Option<Instant>) -> Option<Parked> {
        let sess = self.sess.get_mut().expect("no send holds a ready session");
        if !self.stash.is_empty() {
            let n = sess.receive(&self.stash);
            if n == 0 {
                // A session asks to read only with room to read into.
                debug_assert!(false, "a read with no room");
                return Some(Parked::Closed { reset: true });
            }
            self.stash.drain(..n);
            return None;
        }
        if self.broken {
            return Some(Parked::Closed { reset: false });
        }
        if self.eof {
            sess.set_eof();
            return None;
        }
        // A cancelled receive must end before another starts.
        if self.recv == Recv::Idle {
            io.recv_multi(self.stream.as_raw_fd(), self.token);
            self.recv = Recv::Armed;
            self.in_flight += 1;
        }
        self.wait = Wait::Input(deadline);
        Some(Parked::Waiting)
    }

    /// Fold in a completion of one of its operations (its in-flight count
    /// already settled). True: run it now.
    pub(super) fn complete(&mut self, c: Completion, io: &mut Uring) -> bool {
        match c.op {
            Op::Recv => self.received(c, io),
            Op::Send => self.sent(c),
            // A blocked pop's timer: expired, or cancelled by a wake;
            // the session looks again either way.
            Op::Sleep if self.wait == Wait::Blocked => true,
            Op::Sleep => {
                // Cancelled: the client has gone (`abandon_if_gone`) or
                // the server aborts.
                if c.result == -libc::ECANCELED {
                    self.abandon_delay();
                }
                self.wait == Wait::Delay { timer: true }
            }
            Op::Accept | Op::Wake | Op::Tick | Op::Cancel | Op::Backoff | Op::Readable => false,
        }
    }

    fn received(&mut self, mut c: Completion, io: &mut Uring) -> bool {
        if !c.more {
            self.recv = Recv::Idle;
        }
        if let Some(buf) = c.received.take() {
            io.take(buf, |bytes| self.keep(bytes));
        }
        match c.result {
            n if n > 0 => {}
            0 => self.eof = true,
            // Out of provided buffers, or cancelled: asked again at the
            // next read.
            e if e == -libc::ENOBUFS || e == -libc::ECANCELED || e == -libc::EAGAIN => {}
            _ => self.broken = true,
        }
        // The client left while its pop waits: the session is told.
        if self.eof || self.broken {
            self.wake_blocked(io);
        }
        if self.stash.len() >= STASH_LIMIT && self.recv == Recv::Armed {
            io.cancel(Op::Recv, self.token);
            self.recv = Recv::Cancelling;
        }
        matches!(self.wait, Wait::Input(_))
    }

    /// Received bytes: into the session if it is waiting for them, else
    /// into the stash (in order behind what is there); dropped once the
    /// session is finished.
    fn keep(&mut self, bytes: &[u8]) {
        if self.wait == Wait::Closing {
            return;
        }
        let mut rest = bytes;
        if self.stash.is_empty() && matches!(self.wait, Wait::Input(_)) {
            if let Some(sess) = self.sess.get_mut() {
                rest = &bytes[sess.receive(bytes)..];
            }
        }
        self.stash.extend_from_slice(rest);
    }

    fn sent(&mut self, mut c: Completion) -> bool {
        let back = c
            .returned
            .take()
            .expect("a send's completion returns its session");
        self.sess.give_back(back);
        self.sending_since = None;
        let woke = std::mem::take(&mut self.woke_send);
        let sess = self.sess.get_mut().expect("just given back");
        match c.result {
            n if n > 0 => sess.wrote(n as usize),
            // Cancelled by a subscriber's wake: `next` closes it if it was
            // cut off, or sends again.
            e if e == -libc::ECANCELED && woke => {}
            // Cancelled: the write timeout expired (or the server aborts,
            // where the session resets anyway).
            e if e == -libc::ECANCELED => sess.write_timed_out(),
            _ => self.write_failed = true,
        }
        true
    }

    /// The send in flight made no progress for `limit` by `now`: cancel it
    /// (its completion then reports `ECANCELED`, or its progress if it
    /// raced the cancel).
    pub(super) fn expire_send(&mut self, io: &mut Uring, limit: Duration, now: Instant) {
        if self
            .sending_since
            .is_some_and(|t| now.saturating_duration_since(t) >= limit)
        {
            self.cancel_send(io);
        }
    }

    /// A subscriber's wake while its send waits (the client does not
    /// read): cancel the send, so that `next` sees whether it was cut off.
    pub(super) fn wake_sending(&mut self, io: &mut Uring) {
        if self.wait == Wait::Output && self.sending_since.is_some() {
            self.woke_send = true;
            self.cancel_send(io);
        }
    }

    /// Its delay was given up part way: the session drops the request
    /// (counted) and resets.
    pub(super) fn abandon_delay(&mut self) {
        if let Some(sess) = self.sess.get_mut() {
            sess.abandon_delay();
        }
    }

    /// A delay on the ring's timer is given up once the client is gone
    /// both ways (`io::gone`, one `poll` asking for nothing): cancel it.
    /// A delay on another thread is told by the ring's tick.
    pub(super) fn abandon_if_gone(&mut self, io: &mut Uring) {
        if self.wait == (Wait::Delay { timer: true }) && gone(&self.stream, 0) {
            io.cancel(Op::Sleep, self.token);
        }
    }

    /// A blocked pop whose client has left (its receive may not be armed
    /// to tell): run it, so the session drops the pop.
    pub(super) fn left_while_blocked(&mut self, io: &mut Uring) {
        if self.wait == Wait::Blocked && peer_closed(&self.stream) {
            io.cancel(Op::Sleep, self.token);
        }
    }

    /// Whether the connection waits for a delay spent on another thread
    /// and its client has gone both ways (the ring then tells the thread,
    /// `ring::OffRing::client_gone`).
    pub(super) fn gone_during_delay_off_ring(&self) -> bool {
        self.wait == (Wait::Delay { timer: false }) && gone(&self.stream, 0)
    }

    /// Cancel whatever the connection waits on in the ring (the server
    /// aborts); a delay on another thread cannot be cancelled.
    pub(super) fn cancel_all(&mut self, io: &mut Uring) {
        match self.wait {
            Wait::Output => self.cancel_send(io),
            Wait::Delay { timer: true } | Wait::Blocked => io.cancel(Op::Sleep, self.token),
            _ => {}
        }
    }

    fn cancel_send(&mut self, io: &mut Uring) {
        if self.sending_since.take().is_some() {
            io.cancel_send(&self.sess, self.token);
        }
    }

    /// The session finished: reset first if asked, stop receiving, and
    /// wait for what is in flight. True: nothing is, close it now.
    pub(super) fn close(&mut self, io: &mut Uring, reset: bool) -> bool {
        if reset {
            crate::io::reset_on_close(&self.stream);
        }
        self.wait = Wait::Closing;
        if self.recv == Recv::Armed {
            io.cancel(Op::Recv, self.token);
            self.recv = Recv::Cancelling;
        }
        self.in_flight == 0
    }

    /// Count the connection closed; dropping it then closes the socket.
    pub(super) fn finish(&mut self) {
        if let Some(sess) = self.sess.get_mut() {
            sess.finish();
        }
    }
}

/// Posts a connection's token to its ring once a commit it waits for is
/// settled (woken once, from the log's thread), as a delay's thread posts
/// a spent delay.
struct CommitPost {
    mailbox: Arc<Mailbox<EventFd>>,
    token: u32,
}

impl std::task::Wake for CommitPost {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.mailbox.post(Post::Spent(self.token));
    }
}

/// The waker a ring's connection waits for its commits with.
pub(super) fn commit_waker(mailbox: Arc<Mailbox<EventFd>>, token: u32) -> std::task::Waker {
    std::task::Waker::from(Arc::new(CommitPost { mailbox, token }))
}

/// Posts a connection's token to its ring when its blocked pop may go (a
/// writer served it, CLIENT UNBLOCK ended it), from the writer's thread.
struct WaitPost {
    mailbox: Arc<Mailbox<EventFd>>,
    token: u32,
}

impl std::task::Wake for WaitPost {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.mailbox.post(Post::Woken(self.token));
    }
}

/// The waker a ring's connection waits for its blocked pops with.
pub(super) fn wait_waker(mailbox: Arc<Mailbox<EventFd>>, token: u32) -> std::task::Waker {
    std::task::Waker::from(Arc::new(WaitPost { mailbox, token }))
}
