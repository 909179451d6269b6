//! The one module of `--strategy uring` with `unsafe`: an io_uring and the
//! operations the strategy submits to it (here), the provided-buffer ring
//! its receives land in (`buffers.rs`), the guard that lends a session's
//! unwritten replies to the kernel while a send reads them (`lent.rs`),
//! accepted descriptors, and the eventfd other threads wake a ring with
//! (`eventfd.rs`). Everything it exports is safe to call.
//!
//! Who owns what while the kernel holds it (every `unsafe` block below
//! argues from these rules):
//!
//! 1. Memory the kernel writes (the provided buffers, their ring of
//!    descriptors, the 8 bytes an eventfd read lands in) or reads (a
//!    sleep's timespec, a lent reply) belongs to a [`Uring`] or to a
//!    [`Lent`], and stays allocated and in place until the completion that
//!    ends the operation has been reaped.
//! 2. A provided buffer belongs to the kernel from when its descriptor is
//!    published on the buffer ring until a completion names it; then to
//!    the caller, through a [`Received`], until [`Uring::take`] hands it
//!    back. Only a buffer the caller owns is ever made into a slice.
//! 3. A lent session's unwritten replies are read by the kernel from the
//!    send's submission until its completion yields a [`Returned`]; until
//!    that is handed to [`Lent::give_back`], `Lent` gives shared access
//!    only (`Session`'s output changes only through `&mut`), and dropping
//!    a `Lent` that is still lent leaks the session rather than free memory
//!    the kernel may read.
//! 4. Nothing is freed while an operation might still use it: dropping a
//!    `Uring` cancels everything in flight and reaps every completion
//!    before it unregisters the buffer ring and closes the ring; what does
//!    not complete within a bound is leaked, never freed.
//!
//! A descriptor named in an operation must stay open until the operation's
//! last completion: that is the strategy's to keep (it closes a connection
//! only when nothing of it is in flight), and not a memory-safety matter
//! here, since the kernel holds its own reference to the open file.

mod buffers;
mod eventfd;
mod lent;

pub(crate) use buffers::Received;
pub(crate) use eventfd::EventFd;
pub(crate) use lent::{Lent, Returned};

use crate::session::Session;
use buffers::BufRing;
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use serverlab_service::Service;
use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::TcpStream;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// The buffer group every receive selects from (one per ring).
pub(super) const BUFFER_GROUP: u16 = 0;
/// How long the kernel's submission-polling thread spins without work
/// before it sleeps (and the next submission must wake it).
const SQPOLL_IDLE_MS: u32 = 100;
/// At most this many of a submission's sends are waited for (see
/// `Uring::submit`).
const MAX_WAIT_SENDS: usize = 64;
/// How long dropping a ring waits for cancelled operations to complete
/// before it leaks their memory instead.
const DROP_PATIENCE: Duration = Duration::from_secs(5);

/// What an operation is, in the top byte of its user data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Op {
    /// Multishot accept on the ring's listener.
    Accept = 1,
    /// A read of the ring's eventfd: another thread woke it.
    Wake,
    /// Multishot receive into provided buffers.
    Recv,
    /// A send of a lent session's unwritten replies.
    Send,
    /// A timer (a delay the session asked for).
    Sleep,
    /// The ring's periodic tick.
    Tick,
    /// A cancellation of another operation.
    Cancel,
    /// A pause before accepting again, when accepting failed.
    Backoff,
    /// A wait until the listener has a connection to accept.
    Readable,
}

impl Op {
    const ALL: [Op; 9] = [
        Op::Accept,
        Op::Wake,
        Op::Recv,
        Op::Send,
        Op::Sleep,
        Op::Tick,
        Op::Cancel,
        Op::Backoff,
        Op::Readable,
    ];

    fn decode(user_data: u64) -> Op {
        let byte = (user_data >> 56) as u8;
        Op::ALL
            .into_iter()
            .find(|op| *op as u8 == byte)
            .expect("every submitted operation carries its kind")
    }
}

/// User data: the kind in the top byte, a sequence number in the next
/// three (sends only, so a completion can be matched to its loan), the
/// caller's token in the low four.
fn user_data(op: Op, seq: u32, token: u32) -> u64 {
    (op as u64) << 56 | u64::from(seq & 0x00ff_ffff) << 32 | u64::from(token)
}

/// How a ring is set up.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// Submission queue entries (the completion queue gets 8 times as
    /// many, since multishot operations complete many times).
    pub entries: u32,
    /// Provided buffers (a power of two) and the size of each.
    pub buffers: u16,
    pub buffer_len: u32,
    /// A kernel thread polls the submission queue, pinned to this CPU if
    /// one is given.
    pub sqpoll: Option<Option<usize>>,
    /// Pin the kernel's io-wq worker threads for this ring to these CPUs.
    pub workers_on: Option<Vec<usize>>,
    /// The period of `Uring::tick`.
    pub tick: Duration,
    /// How long a wait that looks past its sends' completions may take
    /// before it settles for what has completed (see `Uring::submit`).
    pub send_wait: Duration,
}

/// Why a ring could not be set up.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SetupError {
    #[error("io_uring_setup failed: {0}")]
    Ring(io::Error),
    #[error("registering a provided-buffer ring failed: {0}")]
    Buffers(io::Error),
    #[error("pinning io_uring's worker threads failed: {0}")]
    Workers(io::Error),
}

/// One completion, decoded.
pub(crate) struct Completion {
    pub op: Op,
    pub token: u32,
    /// The kernel's result: a count or a descriptor, or a negated errno.
    pub result: i32,
    /// A multishot operation is still armed: more completions will come.
    pub more: bool,
    /// The provided buffer a receive filled (`result` bytes of it).
    pub received: Option<Received>,
    /// The connection an accept made.
    pub accepted: Option<TcpStream>,
    /// A send is over: its session may be handed back.
    pub returned: Option<Returned>,
}

/// An io_uring with a provided-buffer ring, and the memory its operations
/// use. Dropping it waits for every operation to end (rule 4).
pub(crate) struct Uring {
    // Declared first, so it is closed before the memory below is freed.
    ring: IoUring,
    bufs: BufRing,
    /// Entries the submission queue had no room for, in order.
    backlog: VecDeque<squeue::Entry>,
    /// Each pending timer's timespec (sleeps, the backoff), by its
    /// operation's user data (rule 1).
    timers: HashMap<u64, Box<types::Timespec>>,
    /// Where the eventfd read lands (rule 1); never read.
    wake_buf: Box<[u8; 8]>,
    /// The tick's period (rule 1).
    tick: Box<types::Timespec>,
    send_wait: types::Timespec,
    /// Operations submitted (or in the backlog) whose last completion has
    /// not been reaped.
    in_flight: usize,
    /// The next send's sequence number.
    seq: u32,
    /// Sends queued since the last submission.
    sends_queued: usize,
    /// The kernel can bound a wait by time (`IORING_FEAT_EXT_ARG`, 5.11).
    timed_wait: bool,
    sqpoll: bool,
}

impl Uring {
    pub(crate) fn new(cfg: &Config) -> Result<Uring, SetupError> {
        let ring = build(cfg).map_err(SetupError::Ring)?;
        if let Some(cpus) = &cfg.workers_on {
            pin_workers(&ring, cpus).map_err(SetupError::Workers)?;
        }
        let mut bufs = BufRing::new(cfg.buffers, cfg.buffer_len);
        bufs.register(&ring).map_err(SetupError::Buffers)?;
        let timed_wait = ring.params().is_feature_ext_arg();
        Ok(Uring {
            ring,
            bufs,
            backlog: VecDeque::new(),
            timers: HashMap::new(),
            wake_buf: Box::new([0; 8]),
            tick: Box::new(timespec(cfg.tick)),
            send_wait: timespec(cfg.send_wait),
            in_flight: 0,
            seq: 0,
            sends_queued: 0,
            timed_wait,
            sqpoll: cfg.sqpoll.is_some(),
        })
    }

    /// Operations not yet over.
    #[cfg(all(test, not(serverlab_loom)))]
    fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Queue an entry for the next submission.
    ///
    /// # Safety
    /// Every buffer or timespec the entry points to stays valid (and, if
    /// the kernel reads it, unchanged) until the entry's last completion
    /// is reaped.
    unsafe fn push(&mut self, entry: squeue::Entry) {
        self.in_flight += 1;
        if self.backlog.is_empty() {
            // SAFETY: the caller's promise covers the entry.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return;
            }
        }
        self.backlog.push_back(entry);
    }

    /// Move backlogged entries into the submission queue, submitting to
    /// make room while it is full.
    fn drain_backlog(&mut self) -> io::Result<()> {
        while let Some(entry) = self.backlog.front() {
            // SAFETY: pushed through `push`, whose caller promised the
            // entry's memory stays valid until its completion.
            if unsafe { self.ring.submission().push(entry) }.is_ok() {
                self.backlog.pop_front();
                continue;
            }
            match self.ring.submit() {
                Ok(0) if !self.sqpoll => return Ok(()),
                Ok(_) => {}
                Err(e) if transient(&e) => return Ok(()),
                Err(e) => return Err(e),
            }
            if self.sqpoll {
                self.ring.submitter().squeue_wait()?;
            }
        }
        Ok(())
    }

    /// Start a multishot accept on `listener`, which must stay open until
    /// the accept's last completion.
    pub(crate) fn accept_multi(&mut self, listener: &impl AsRawFd) {
        let entry = opcode::AcceptMulti::new(types::Fd(listener.as_raw_fd()))
            .flags(libc::SOCK_CLOEXEC)
            .build()
            .user_data(user_data(Op::Accept, 0, 0));
        // SAFETY: an accept names no memory.
        unsafe { self.push(entry) }
    }

    /// Complete once `listener` has a connection to accept (a one-shot
    /// poll); it must stay open until then.
    pub(crate) fn readable(&mut self, listener: &impl AsRawFd) {
        let entry = opcode::PollAdd::new(types::Fd(listener.as_raw_fd()), libc::POLLIN as u32)
            .build()
            .user_data(user_data(Op::Readable, 0, 0));
        // SAFETY: a poll names no memory.
        unsafe { self.push(entry) }
    }

    /// Start a multishot receive on `fd` into the provided buffers.
    pub(crate) fn recv_multi(&mut self, fd: RawFd, token: u32) {
        let entry = opcode::RecvMulti::new(types::Fd(fd), BUFFER_GROUP)
            .build()
            .user_data(user_data(Op::Recv, 0, token));
        // SAFETY: it writes only into provided buffers, which this ring
        // owns and keeps until its last completion (rules 1, 2).
        unsafe { self.push(entry) }
    }

    /// Send the session's unwritten replies on `fd`, lending it to the
    /// kernel until the completion returns it. Panics if it is lent.
    /// `then_waits`: once it completes, the connection waits for the
    /// kernel (its next request), not for work of ours (see `submit`).
    pub(crate) fn send<S: Service>(
        &mut self,
        fd: RawFd,
        sess: &mut Lent<Session<S>>,
        token: u32,
        then_waits: bool,
    ) {
        assert!(!sess.is_lent(), "a session lent to two sends");
        self.seq = self.seq.wrapping_add(1);
        let ud = user_data(Op::Send, self.seq, token);
        let out = sess.get().unwritten();
        let len = u32::try_from(out.len()).unwrap_or(u32::MAX);
        let entry = opcode::Send::new(types::Fd(fd), out.as_ptr(), len)
            .flags(libc::MSG_NOSIGNAL)
            .build()
            .user_data(ud);
        sess.lent_to = Some(ud);
        self.sends_queued += usize::from(then_waits);
        // SAFETY: the bytes are the boxed session's output buffer. From
        // here until the completion's `Returned` is given back, the `Lent`
        // hands out only `&Session`, and `Session` changes its output only
        // through `&mut self`, so they stay allocated and unchanged; if the
        // `Lent` is dropped meanwhile it leaks the session (rule 3).
        unsafe { self.push(entry) }
    }

    /// Complete after `d` (`-ETIME`), unless cancelled first.
    pub(crate) fn sleep(&mut self, d: Duration, token: u32) {
        self.timer(user_data(Op::Sleep, 0, token), d);
    }

    /// Complete (`Op::Backoff`, `-ETIME`) after `d`. One at a time.
    pub(crate) fn backoff(&mut self, d: Duration) {
        self.timer(user_data(Op::Backoff, 0, 0), d);
    }

    fn timer(&mut self, ud: u64, d: Duration) {
        // One timer per user data at a time: replacing the first's
        // timespec would free it while the kernel may still read it.
        assert!(
            !self.timers.contains_key(&ud),
            "two timers for {:?} {}",
            Op::decode(ud),
            ud as u32
        );
        let ts = Box::new(timespec(d));
        let ptr: *const types::Timespec = &*ts;
        self.timers.insert(ud, ts);
        let entry = opcode::Timeout::new(ptr).build().user_data(ud);
        // SAFETY: the boxed timespec stays in `timers` (moving the box
        // does not move it) until this timer's completion is reaped
        // (rule 1).
        unsafe { self.push(entry) }
    }

    /// Complete (`-ETIME`) one tick from now.
    pub(crate) fn tick(&mut self) {
        let ptr: *const types::Timespec = &*self.tick;
        let entry = opcode::Timeout::new(ptr)
            .build()
            .user_data(user_data(Op::Tick, 0, 0));
        // SAFETY: the tick's timespec is this ring's, never changed, and
        // lives until it is dropped, after every completion is reaped
        // (rules 1, 4).
        unsafe { self.push(entry) }
    }

    /// Read the eventfd: completes once another thread signals it.
    pub(crate) fn read_wake(&mut self, efd: &EventFd) {
        let entry = opcode::Read::new(types::Fd(efd.raw()), self.wake_buf.as_mut_ptr(), 8)
            .build()
            .user_data(user_data(Op::Wake, 0, 0));
        // SAFETY: `wake_buf` is this ring's and lives until it is dropped,
        // after every completion is reaped (rules 1, 4); nothing reads it.
        unsafe { self.push(entry) }
    }

    /// Cancel the operation of this kind and token (not a send: see
    /// `cancel_send`). Its own completion reports how it ended.
    pub(crate) fn cancel(&mut self, op: Op, token: u32) {
        self.cancel_user_data(user_data(op, 0, token), token);
    }

    /// Cancel the send `sess` is lent to, if it is.
    pub(crate) fn cancel_send<T>(&mut self, sess: &Lent<T>, token: u32) {
        if let Some(ud) = sess.lent_to {
            self.cancel_user_data(ud, token);
        }
    }

    fn cancel_user_data(&mut self, target: u64, token: u32) {
        let entry = opcode::AsyncCancel2::new(types::CancelBuilder::user_data(target))
            .build()
            .user_data(user_data(Op::Cancel, 0, token));
        // SAFETY: a cancellation names no memory.
        unsafe { self.push(entry) }
    }

    /// Submit what is queued; with `wait`, also wait for at least one
    /// completion. If sends were submitted after which their connections
    /// wait for their next requests, wait for one completion beyond
    /// theirs: a send to a socket with room completes within the
    /// submission itself, and waiting for "one completion" would return at
    /// once with it, needing a second system call to wait for the request.
    /// That longer wait is bounded (`Config::send_wait`), since a send may
    /// also find no room, and a connection's next step may be ours after
    /// all.
    pub(crate) fn submit(&mut self, wait: bool) -> io::Result<()> {
        self.bufs.publish();
        self.drain_backlog()?;
        let sends = std::mem::take(&mut self.sends_queued).min(MAX_WAIT_SENDS);
        // Sends still in the backlog are not submitted, so cannot complete.
        let all_in = self.backlog.is_empty();
        let submitted = match (wait, sends) {
            (false, _) => self.ring.submit(),
            (true, sends) if sends > 0 && all_in && self.timed_wait => {
                let args = types::SubmitArgs::new().timespec(&self.send_wait);
                self.ring.submitter().submit_with_args(1 + sends, &args)
            }
            (true, _) => self.ring.submit_and_wait(1),
        };
        match submitted {
            Ok(_) => Ok(()),
            Err(e) if transient(&e) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Submit what is queued and wait, at most `left`, until `want`
    /// completions are in the queue (without a timed wait, not at all):
    /// the loop committer gathering the rest of a pass's writers.
    pub(crate) fn gather(&mut self, want: usize, left: Duration) -> io::Result<()> {
        self.bufs.publish();
        self.drain_backlog()?;
        self.sends_queued = 0;
        let submitted = if self.timed_wait && want > 0 {
            let until = timespec(left);
            let args = types::SubmitArgs::new().timespec(&until);
            self.ring.submitter().submit_with_args(want, &args)
        } else {
            self.ring.submit()
        };
        match submitted {
            Ok(_) => Ok(()),
            Err(e) if transient(&e) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Every completion now in the queue, decoded, in order.
    pub(crate) fn reap(&mut self, out: &mut Vec<Completion>) {
        let Uring {
            ring,
            timers,
            in_flight,
            ..
        } = self;
        for cqe in ring.completion() {
            let c = decode(&cqe);
            if !c.more {
                *in_flight -= 1;
            }
            if matches!(c.op, Op::Sleep | Op::Backoff) {
                timers.remove(&cqe.user_data());
            }
            out.push(c);
        }
    }

    /// Read a received buffer, then hand it back to the kernel (it is
    /// published at the next submission).
    pub(crate) fn take<R>(&mut self, received: Received, read: impl FnOnce(&[u8]) -> R) -> R {
        let (bid, len) = (received.bid, received.len);
        std::mem::forget(received);
        assert!(bid < self.bufs.count && len <= self.bufs.len as usize);
        // SAFETY: the completion that named `bid` made the buffer ours
        // until it is pushed back below (rule 2): the kernel wrote `len`
        // bytes into it before posting that completion, and reading the
        // completion queue's tail (acquire) orders those writes before
        // this read. The slice does not outlive `read`.
        let bytes = unsafe { std::slice::from_raw_parts(self.bufs.buffer(bid), len) };
        let out = read(bytes);
        self.bufs.push(bid);
        out
    }

    /// Cancel every operation and reap until none is in flight, or the
    /// patience runs out. True if none is left.
    fn quiesce(&mut self) -> bool {
        let give_up = Instant::now() + DROP_PATIENCE;
        self.in_flight -= self.backlog.len();
        self.backlog.clear();
        let mut done = Vec::new();
        while self.in_flight > 0 && Instant::now() < give_up {
            let entry = opcode::AsyncCancel2::new(types::CancelBuilder::any())
                .build()
                .user_data(user_data(Op::Cancel, 0, 0));
            // SAFETY: a cancellation names no memory.
            unsafe { self.push(entry) };
            if self.submit(true).is_err() {
                break;
            }
            self.reap(&mut done);
            for c in done.drain(..) {
                if let Some(r) = c.received {
                    self.take(r, |_| ());
                }
            }
        }
        self.in_flight == 0
    }
}

impl Drop for Uring {
    fn drop(&mut self) {
        if self.quiesce() {
            // Nothing can select a buffer any more.
            let _ = self.ring.submitter().unregister_buf_ring(BUFFER_GROUP);
        } else {
            // Some operation may still touch this memory: leak it (rule 4).
            self.bufs.leak = true;
            std::mem::forget(std::mem::take(&mut self.timers));
            std::mem::forget(std::mem::replace(&mut self.wake_buf, Box::new([0; 8])));
            std::mem::forget(std::mem::replace(
                &mut self.tick,
                Box::new(timespec(Duration::ZERO)),
            ));
        }
    }
}

/// The ring, with the cheapest completion handling the kernel offers:
/// completions are processed only when this thread asks for them
/// (`DEFER_TASKRUN`, one submitting thread), unless a polling thread
/// submits for it.
fn build(cfg: &Config) -> io::Result<IoUring> {
    let mut b = IoUring::builder();
    b.setup_cqsize(cfg.entries * 8);
    match cfg.sqpoll {
        Some(cpu) => {
            b.setup_sqpoll(SQPOLL_IDLE_MS);
            if let Some(cpu) = cpu {
                b.setup_sqpoll_cpu(cpu as u32);
            }
            b.build(cfg.entries)
        }
        None => {
            let mut fast = b.clone();
            fast.setup_single_issuer()
                .setup_defer_taskrun()
                .setup_taskrun_flag();
            match fast.build(cfg.entries) {
                // Before 6.1: plain task work.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => b.build(cfg.entries),
                other => other,
            }
        }
    }
}

/// Pin the ring's io-wq workers (created for operations that must block)
/// to `cpus`, so `--cpus` holds for the kernel threads working for us too.
fn pin_workers(ring: &IoUring, cpus: &[usize]) -> io::Result<()> {
    // SAFETY: `cpu_set_t` is plain bits; all zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
            return Err(io::ErrorKind::InvalidInput.into());
        }
        // SAFETY: `cpu` is within the set, checked above.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    ring.submitter().register_iowq_aff(&set)
}

fn decode(cqe: &cqueue::Entry) -> Completion {
    let ud = cqe.user_data();
    let op = Op::decode(ud);
    let result = cqe.result();
    let mut c = Completion {
        op,
        token: ud as u32,
        result,
        more: cqueue::more(cqe.flags()),
        received: None,
        accepted: None,
        returned: None,
    };
    match op {
        Op::Recv => {
            c.received = cqueue::buffer_select(cqe.flags()).map(|bid| Received {
                bid,
                len: result.max(0) as usize,
            });
        }
        Op::Accept if result >= 0 => {
            // SAFETY: an accept's result is a descriptor the kernel just
            // created for us; nothing else owns it.
            let fd = unsafe { OwnedFd::from_raw_fd(result) };
            c.accepted = Some(TcpStream::from(fd));
        }
        Op::Send => c.returned = Some(Returned(ud)),
        _ => {}
    }
    c
}

/// Errors after which the loop simply goes on: a wait timed out, a signal
/// arrived, or completions must be reaped before more submissions.
fn transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ETIME | libc::EINTR | libc::EBUSY | libc::EAGAIN)
    )
}

fn timespec(d: Duration) -> types::Timespec {
    types::Timespec::new()
        .sec(d.as_secs())
        .nsec(d.subsec_nanos())
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests;
