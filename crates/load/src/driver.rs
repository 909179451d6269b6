//! The driver every load runs on: one event loop per client CPU
//! multiplexes many client connections on non-blocking sockets
//! (edge-triggered epoll via mio).
//!
//! A thread per connection would cost the client a context switch per
//! request, as much CPU as a good server spends, and the client would set
//! the pace it claims to measure. One loop per client core keeps the
//! client's cost per request to a write and a read (shared with every
//! other reply that arrived in the same read).
//!
//! The driver owns sockets, buffers, timeouts, wake-ups and the run's
//! window, and hands each loop's replies a sink of that loop's own (the
//! harness's recorder); the [`Client`] in each [`Slot`] (the harness's runner around a
//! protocol's exchange) decides what to send and when, how replies are
//! framed (lines for board, echo and bucket, HTTP responses for kv), what
//! each must be, and when its connection has done its work. A slot's
//! connection may end and be replaced (a kv session, a bucket request on
//! its own connection): the driver then asks the client for the next one.

use crate::Progress;
use mio::{Events, Interest, Poll, Registry, Token};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use serverlab_util::InputBuf;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd};
use std::time::{Duration, Instant};

/// How long to busy-poll for replies before sleeping in the kernel. A
/// sleeping CPU (above all a virtual one, which the hypervisor parks) can
/// take milliseconds to wake: a client that sleeps between replies
/// measures its own wake-ups, not the server. Time spent polling in vain
/// is reported apart from real work.
const SPIN: Duration = Duration::from_millis(1);
/// The token of the loop's kernel timer (no slot has it).
const TIMER: Token = Token(usize::MAX);
/// How often timeouts are looked for: they are seconds long, so a sweep
/// over every slot this often costs nothing per request.
const SWEEP: Duration = Duration::from_millis(50);
/// A connection's input buffer to begin with; it grows for longer replies.
const INPUT: usize = 16 * 1024;

/// One slot's protocol logic. A slot holds at most one connection at a
/// time; its client may span many connections, one after another.
pub trait Client {
    /// What replies are recorded into: one per event loop, shared by the
    /// loop's clients on its thread only.
    type Sink;
    /// The slot has no connection: start one at `now`? False when this
    /// client is finished. Not called once the run's window has closed.
    fn connect(&mut self, now: Instant) -> bool;
    /// Append as many requests as may go out at `now` (up to any pipeline
    /// depth, and none before it is due) and note `now` as their send
    /// time. Returns how many were appended.
    fn fill(&mut self, wire: &mut Vec<u8>, now: Instant) -> usize;
    /// If a whole reply is at the front of `input`, take it (received at
    /// `now`, recorded into `sink`) and return how many bytes it took
    /// (never 0); `Ok(None)` if the reply is still incomplete. `Err`: the
    /// stream cannot be read on (the connection fails with that
    /// description).
    fn take(
        &mut self,
        input: &[u8],
        now: Instant,
        sink: &mut Self::Sink,
    ) -> Result<Option<usize>, String>;
    /// Requests sent on this connection and not yet answered.
    fn in_flight(&self) -> usize;
    /// This connection has done its work: nothing in flight and nothing
    /// more to send on it. The driver closes it and calls `connect`.
    fn connection_done(&self) -> bool;
    /// The connection failed and was closed; what was in flight on it is
    /// lost. The driver then calls `connect` (unless the window closed).
    fn failed(&mut self, failure: Failure, now: Instant);
    /// When a paced client waiting for its slot (or its request's
    /// intended send time) wants to send.
    fn next_due(&self) -> Option<Instant> {
        None
    }
    /// When a client without a connection wants its next one, if not
    /// now: a paced request that opens its own connection opens it when
    /// the request is due.
    fn connect_at(&self) -> Option<Instant> {
        None
    }
}

/// Why a connection failed.
#[derive(Debug)]
pub enum Failure {
    /// It could not be opened.
    Connect { addr: SocketAddr, source: io::Error },
    /// The server closed it while the client still wanted it.
    Closed,
    /// A read or write failed.
    Io(io::Error),
    /// The client could not read a reply.
    Reply(String),
    /// Replies stopped coming.
    Stalled(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Connect { addr, source } => write!(f, "cannot connect to {addr}: {source}"),
            Failure::Closed => f.write_str("the server closed the connection mid-run"),
            Failure::Io(e) => write!(f, "{e}"),
            Failure::Reply(s) | Failure::Stalled(s) => f.write_str(s),
        }
    }
}

/// How a run is bounded and how long anything may take.
#[derive(Debug, Clone)]
pub struct Options {
    pub addr: SocketAddr,
    pub connect_timeout: Duration,
    /// A connection with requests in flight fails when nothing arrives for
    /// this long (None: it may wait for ever, e.g. for long delays).
    pub reply_timeout: Option<Duration>,
    /// When the window closes: no request is sent and no connection
    /// opened after it; replies in flight are still collected. None: the
    /// run ends when every client is finished.
    pub deadline: Option<Instant>,
    /// How long after the deadline replies in flight may take.
    pub drain_timeout: Option<Duration>,
}

/// A client with its connection and buffers.
pub struct Slot<C> {
    pub client: C,
    stream: Option<mio::net::TcpStream>,
    connecting: bool,
    /// When the connection was started (for its timeout).
    opened_at: Instant,
    /// Last time replies made progress (or requests began to wait).
    progress_at: Instant,
    /// Tells this connection's events from a previous one's.
    generation: u32,
    input: InputBuf,
    output: Vec<u8>,
    written: usize,
    /// The paced wake-up already scheduled.
    armed: Option<Instant>,
    /// Counted as connecting or waiting for replies (see `Loop::waiting`).
    busy: bool,
    /// When this slot stopped sending because the window closed.
    pub stopped_at: Option<Instant>,
    /// When this slot finished: its client wants no more connections, or
    /// the window closed and its last reply came.
    pub finished_at: Option<Instant>,
}

impl<C: Client> Slot<C> {
    /// A slot without a connection: the driver asks `client.connect`.
    pub fn new(client: C) -> Self {
        let now = Instant::now();
        Slot {
            client,
            stream: None,
            connecting: false,
            opened_at: now,
            progress_at: now,
            generation: 0,
            input: InputBuf::new(),
            output: Vec::new(),
            written: 0,
            armed: None,
            busy: false,
            stopped_at: None,
            finished_at: None,
        }
    }

    /// A slot whose connection is opened now (blocking, with a timeout),
    /// for runs whose window starts once every connection is open.
    pub fn connected(addr: SocketAddr, timeout: Duration, client: C) -> io::Result<Self> {
        let stream = std::net::TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_nodelay(true)?;
        stream.set_nonblocking(true)?;
        let mut slot = Slot::new(client);
        slot.stream = Some(mio::net::TcpStream::from_std(stream));
        Ok(slot)
    }

    fn token(&self, index: usize) -> Token {
        // The generation rides in the high bits, so an event for a closed
        // connection is not mistaken for its successor's.
        Token(((self.generation as u64) << 32 | index as u64) as usize)
    }

    fn open(
        &mut self,
        addr: SocketAddr,
        registry: &Registry,
        index: usize,
        now: Instant,
    ) -> io::Result<()> {
        let mut stream = mio::net::TcpStream::connect(addr)?;
        self.generation = self.generation.wrapping_add(1);
        registry.register(
            &mut stream,
            self.token(index),
            Interest::READABLE | Interest::WRITABLE,
        )?;
        self.stream = Some(stream);
        self.connecting = true;
        self.opened_at = now;
        Ok(())
    }

    /// Drop the connection and whatever was buffered for it. Closing the
    /// socket also removes it from epoll (the descriptor is not shared),
    /// so it is not deregistered first: one system call less per
    /// connection.
    fn close(&mut self) {
        self.stream = None;
        self.connecting = false;
        self.input.clear();
        self.output.clear();
        self.written = 0;
    }

    /// Send what the client will send now.
    fn pump(&mut self, now: Instant) -> io::Result<()> {
        let idle = self.client.in_flight() == 0;
        if self.client.fill(&mut self.output, now) > 0 {
            if idle {
                self.progress_at = now;
            }
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        let Some(stream) = self.stream.as_mut() else {
            return Ok(());
        };
        while self.written < self.output.len() {
            match stream.write(&self.output[self.written..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.output.clear();
        self.written = 0;
        Ok(())
    }

    /// Read until the socket is dry (or the connection's work is done),
    /// handing each whole reply to the client. Returns the replies taken.
    /// `hung_up`: the event said the peer closed, so read on to the end
    /// of the stream.
    fn receive(&mut self, now: Instant, hung_up: bool, sink: &mut C::Sink) -> Result<u64, Failure> {
        let mut replies = 0;
        loop {
            if self.input.spare().is_empty() {
                // Full: make room, as much as a long reply already
                // holds (so it doubles), at least INPUT.
                self.input.reserve(self.input.len().max(INPUT));
            }
            let Some(stream) = self.stream.as_mut() else {
                return Ok(replies);
            };
            let room = self.input.spare().len();
            match stream.read(self.input.spare()) {
                Ok(0) => return Err(Failure::Closed),
                Ok(n) => {
                    self.input.filled(n);
                    self.progress_at = now;
                    replies += self.take_all(now, sink).map_err(Failure::Reply)?;
                    // A read that did not fill the buffer emptied the
                    // socket: data arriving later raises a new edge, so
                    // the read that would only say "would block" is saved.
                    // Not so the end of the stream, if it came already.
                    if (n < room && !hung_up) || self.client.connection_done() {
                        return Ok(replies);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(replies),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Failure::Io(e)),
            }
        }
    }

    fn take_all(&mut self, now: Instant, sink: &mut C::Sink) -> Result<u64, String> {
        let mut replies = 0;
        while !self.input.is_empty() {
            match self.client.take(self.input.data(), now, sink)? {
                Some(n) => {
                    debug_assert!(n > 0, "a reply takes at least a byte");
                    self.input.consume(n);
                    replies += 1;
                    if self.client.connection_done() {
                        break;
                    }
                }
                None => break,
            }
        }
        Ok(replies)
    }
}

/// The slots after the run, with the CPU their loops used.
pub struct Driven<C: Client> {
    /// In the order they were given.
    pub slots: Vec<Slot<C>>,
    /// Each event loop's sink.
    pub sinks: Vec<C::Sink>,
    /// CPU time of the loops' threads: (user, system) seconds.
    pub cpu: (f64, f64),
    /// Of that, seconds spent busy-polling for replies that had not come.
    pub idle_poll_s: f64,
}

/// Run `slots` to the end: spread over one event loop per CPU the client
/// may use (each on its own thread, with its own sink from `sink`), then
/// gathered back in order.
pub fn drive<C>(
    slots: Vec<Slot<C>>,
    opts: &Options,
    progress: &Progress,
    sink: &(dyn Fn() -> C::Sink + Sync),
) -> Driven<C>
where
    C: Client + Send,
    C::Sink: Send,
{
    let loops = crate::env::allowed_cpus()
        .len()
        .clamp(1, slots.len().max(1));
    let mut groups: Vec<Vec<(usize, Slot<C>)>> = (0..loops).map(|_| Vec::new()).collect();
    for (k, slot) in slots.into_iter().enumerate() {
        groups[k % loops].push((k, slot));
    }
    let outs: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = groups
            .into_iter()
            .map(|group| {
                s.spawn(move || {
                    let (order, mut group): (Vec<usize>, Vec<Slot<C>>) = group.into_iter().unzip();
                    let mut sink = sink();
                    let cpu0 = crate::env::thread_cpu_time();
                    let spun = run(&mut group, opts, progress, &mut sink);
                    let cpu1 = crate::env::thread_cpu_time();
                    let cpu = (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1);
                    let slots = order.into_iter().zip(group).collect::<Vec<_>>();
                    (slots, sink, cpu, spun)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("load driver panicked"))
            .collect()
    });
    let mut all = Vec::new();
    let mut sinks = Vec::new();
    let (mut cpu, mut spun) = ((0.0, 0.0), Duration::ZERO);
    for (group, sink, c, s) in outs {
        all.extend(group);
        sinks.push(sink);
        cpu = (cpu.0 + c.0, cpu.1 + c.1);
        spun += s;
    }
    all.sort_by_key(|(k, _)| *k);
    Driven {
        slots: all.into_iter().map(|(_, s)| s).collect(),
        sinks,
        cpu,
        idle_poll_s: spun.as_secs_f64(),
    }
}

/// Run `slots` on this thread until every one is finished, recording
/// replies into `sink`. A failure of the loop itself fails every
/// connection. Returns the time spent busy-polling in vain.
pub fn run<C: Client>(
    slots: &mut [Slot<C>],
    opts: &Options,
    progress: &Progress,
    sink: &mut C::Sink,
) -> Duration {
    let poll = match Poll::new() {
        Ok(p) => p,
        Err(e) => {
            fail_all(slots, &e);
            return Duration::ZERO;
        }
    };
    let timer = kernel_timer(&poll);
    let mut lp = Loop {
        poll,
        slots,
        opts,
        sink,
        timer,
        armed_for: None,
        live: 0,
        waiting: 0,
        stopped: false,
        timers: BinaryHeap::new(),
    };
    match lp.run(progress) {
        Ok(spun) => spun,
        Err(e) => {
            fail_all(lp.slots, &e);
            Duration::ZERO
        }
    }
}

/// A timer with the kernel's resolution for paced sends, registered with
/// `poll`. epoll's own timeout counts whole milliseconds (mio rounds a
/// fraction up) and comes late by the thread's timer slack besides: an
/// open loop that slept on it would send requests up to a millisecond or
/// two after they were due, and count that in their latency. A timerfd
/// fires within microseconds, without polling for it. None: it could not
/// be made (the loop then wakes on epoll's timeout).
fn kernel_timer(poll: &Poll) -> Option<TimerFd> {
    let flags = TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC;
    let timer = TimerFd::new(ClockId::CLOCK_MONOTONIC, flags).ok()?;
    let fd = timer.as_fd().as_raw_fd();
    poll.registry()
        .register(&mut mio::unix::SourceFd(&fd), TIMER, Interest::READABLE)
        .ok()?;
    Some(timer)
}

fn fail_all<C: Client>(slots: &mut [Slot<C>], e: &io::Error) {
    let now = Instant::now();
    for s in slots.iter_mut().filter(|s| s.finished_at.is_none()) {
        s.close();
        s.client
            .failed(Failure::Io(io::Error::new(e.kind(), e.to_string())), now);
        s.finished_at = Some(now);
    }
}

struct Loop<'a, C: Client> {
    poll: Poll,
    slots: &'a mut [Slot<C>],
    opts: &'a Options,
    sink: &'a mut C::Sink,
    /// Wakes the loop when the earliest paced slot is due.
    timer: Option<TimerFd>,
    /// What `timer` is set to.
    armed_for: Option<Instant>,
    /// Slots not finished.
    live: usize,
    /// Slots connecting or waiting for replies: while any are, the loop
    /// busy-polls briefly before sleeping.
    waiting: usize,
    /// The window has closed.
    stopped: bool,
    /// Wake-ups of paced slots, to send or to connect: (when, slot).
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
}

impl<C: Client> Loop<'_, C> {
    fn run(&mut self, progress: &Progress) -> io::Result<Duration> {
        let now = Instant::now();
        self.live = self.slots.len();
        for i in 0..self.slots.len() {
            let token = self.slots[i].token(i);
            if let Some(stream) = self.slots[i].stream.as_mut() {
                self.poll.registry().register(
                    stream,
                    token,
                    Interest::READABLE | Interest::WRITABLE,
                )?;
                self.pump(i, now);
            }
            self.settle(i, now);
        }
        let mut events = Events::with_capacity(1024);
        let mut spun = Duration::ZERO;
        let mut quiet_since: Option<Instant> = None;
        let mut next_sweep = now + SWEEP;
        loop {
            let now = Instant::now();
            if !self.stopped && self.opts.deadline.is_some_and(|d| now >= d) {
                self.stop(now);
            }
            if now >= next_sweep {
                self.sweep(now);
                next_sweep = now + SWEEP;
            }
            self.fire_timers(now);
            if self.live == 0 {
                return Ok(spun);
            }
            let replies_due = self.waiting > 0 && quiet_since.is_none_or(|t| now - t < SPIN);
            let timeout = self.timeout(now, next_sweep, replies_due);
            match self.poll.poll(&mut events, Some(timeout)) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => other?,
            }
            let before = now;
            let now = Instant::now();
            if events.is_empty() {
                if timeout.is_zero() {
                    spun += now - before;
                }
                if replies_due {
                    quiet_since.get_or_insert(before);
                }
                continue;
            }
            quiet_since = None;
            for (k, ev) in events.iter().enumerate() {
                // Each event's replies and the requests they free are
                // stamped when it is handled, not when the batch came.
                let now = if k == 0 { now } else { Instant::now() };
                let token = ev.token().0 as u64;
                let (i, generation) = ((token & 0xFFFF_FFFF) as usize, (token >> 32) as u32);
                let Some(slot) = self.slots.get_mut(i) else {
                    continue;
                };
                if slot.stream.is_none() || (usize::BITS == 64 && slot.generation != generation) {
                    continue;
                }
                self.event(i, ev, now, progress);
                self.settle(i, now);
            }
        }
    }

    /// How long to wait for events: not at all while replies are due (see
    /// [`SPIN`]: the loop comes round often enough to fire paced slots
    /// itself, and the timer is left alone — at high rates that spares a
    /// system call per request); else until the next sweep or the window's
    /// end, while the kernel timer, set to the earliest paced slot, wakes
    /// the loop when that slot is due.
    fn timeout(&mut self, now: Instant, next_sweep: Instant, replies_due: bool) -> Duration {
        if replies_due {
            return Duration::ZERO;
        }
        let due = self.timers.peek().map(|Reverse((due, _))| *due);
        self.arm(due, now);
        let mut wake = next_sweep;
        if let (false, Some(d)) = (self.stopped, self.opts.deadline) {
            wake = wake.min(d);
        }
        if self.timer.is_none() {
            wake = wake.min(due.unwrap_or(wake));
        }
        wake.saturating_duration_since(now)
    }

    /// Set the kernel timer to `due` (after `now`), or clear it.
    fn arm(&mut self, due: Option<Instant>, now: Instant) {
        let Some(timer) = self.timer.as_ref() else {
            return;
        };
        if due == self.armed_for {
            return;
        }
        let set = match due {
            // A zero expiration would disarm it: at least a nanosecond.
            Some(d) => {
                let after = d
                    .saturating_duration_since(now)
                    .max(Duration::from_nanos(1));
                let at = Expiration::OneShot(TimeSpec::from_duration(after));
                timer.set(at, TimerSetTimeFlags::empty())
            }
            None => timer.unset(),
        };
        // A timer that cannot be set is a loop that cannot keep time:
        // fall back to epoll's timeout.
        if set.is_err() {
            self.timer = None;
        }
        self.armed_for = due;
    }

    fn event(&mut self, i: usize, ev: &mio::event::Event, now: Instant, progress: &Progress) {
        let slot = &mut self.slots[i];
        if slot.connecting {
            let Some(stream) = slot.stream.as_ref() else {
                return;
            };
            match stream.take_error() {
                Ok(None) if ev.is_writable() => {}
                Ok(None) => return,
                Ok(Some(e)) | Err(e) => {
                    let addr = self.opts.addr;
                    return self.fail(i, Failure::Connect { addr, source: e }, now);
                }
            }
            if let Err(e) = stream.set_nodelay(true) {
                return self.fail(i, Failure::Io(e), now);
            }
            slot.connecting = false;
            self.pump(i, now);
            return;
        }
        if ev.is_writable() {
            if let Err(e) = slot.flush() {
                return self.fail(i, Failure::Io(e), now);
            }
        }
        let hung_up = ev.is_read_closed() || ev.is_error();
        if ev.is_readable() || hung_up {
            match slot.receive(now, hung_up, self.sink) {
                Ok(n) => progress.add(n),
                Err(f) => return self.fail(i, f, now),
            }
        }
        self.pump(i, now);
    }

    /// Let slot `i` send, unless the window has closed.
    fn pump(&mut self, i: usize, now: Instant) {
        let slot = &mut self.slots[i];
        if self.stopped || slot.connecting || slot.stream.is_none() {
            return;
        }
        if let Err(e) = slot.pump(now) {
            return self.fail(i, Failure::Io(e), now);
        }
        let slot = &mut self.slots[i];
        if let Some(due) = slot.client.next_due() {
            if slot.armed != Some(due) {
                slot.armed = Some(due);
                self.timers.push(Reverse((due, i)));
            }
        }
    }

    fn fail(&mut self, i: usize, failure: Failure, now: Instant) {
        let slot = &mut self.slots[i];
        slot.close();
        slot.client.failed(failure, now);
    }

    /// After anything happened on slot `i`: close a connection that has
    /// done its work, open the next one, or finish the slot; keep the
    /// counts of live and waiting slots right.
    fn settle(&mut self, i: usize, now: Instant) {
        loop {
            let slot = &mut self.slots[i];
            if slot.finished_at.is_some() {
                break;
            }
            if slot.stream.is_some() {
                let idle = slot.client.in_flight() == 0 && !slot.connecting;
                if !(idle && (self.stopped || slot.client.connection_done()))
                    && !(self.stopped && slot.connecting)
                {
                    break;
                }
                slot.close();
            }
            if let Some(at) = slot
                .client
                .connect_at()
                .filter(|&t| t > now && !self.stopped)
            {
                if slot.armed != Some(at) {
                    slot.armed = Some(at);
                    self.timers.push(Reverse((at, i)));
                }
                break;
            }
            if self.stopped || !slot.client.connect(now) {
                slot.finished_at = Some(now);
                self.live -= 1;
                break;
            }
            let (addr, registry) = (self.opts.addr, self.poll.registry());
            match slot.open(addr, registry, i, now) {
                Ok(()) => break,
                Err(source) => self.fail(i, Failure::Connect { addr, source }, now),
            }
        }
        let slot = &mut self.slots[i];
        let busy = slot.finished_at.is_none() && (slot.connecting || slot.client.in_flight() > 0);
        if busy != slot.busy {
            slot.busy = busy;
            if busy {
                self.waiting += 1;
            } else {
                self.waiting -= 1;
            }
        }
    }

    /// The window has closed: nothing more is sent or opened; slots finish
    /// as their last replies come.
    fn stop(&mut self, now: Instant) {
        self.stopped = true;
        self.timers.clear();
        for i in 0..self.slots.len() {
            if self.slots[i].finished_at.is_none() {
                self.slots[i].stopped_at = Some(now);
                self.settle(i, now);
            }
        }
    }

    /// Fail connections that took too long to open or to answer.
    fn sweep(&mut self, now: Instant) {
        let drained = match (self.stopped, self.opts.deadline, self.opts.drain_timeout) {
            (true, Some(d), Some(t)) => now >= d + t,
            _ => false,
        };
        for i in 0..self.slots.len() {
            let s = &self.slots[i];
            if s.finished_at.is_some() || s.stream.is_none() {
                continue;
            }
            let failure = if s.connecting {
                (now - s.opened_at >= self.opts.connect_timeout).then(|| Failure::Connect {
                    addr: self.opts.addr,
                    source: io::ErrorKind::TimedOut.into(),
                })
            } else if s.client.in_flight() == 0 {
                None
            } else if drained {
                Some(Failure::Stalled(format!(
                    "no reply within {} s after the end of the run",
                    self.opts.drain_timeout.unwrap_or_default().as_secs_f64()
                )))
            } else {
                self.opts
                    .reply_timeout
                    .filter(|&t| now - s.progress_at >= t)
                    .map(|t| Failure::Stalled(format!("no reply within {} s", t.as_secs_f64())))
            };
            if let Some(f) = failure {
                self.fail(i, f, now);
                self.settle(i, now);
            }
        }
    }

    /// Paced slots whose time has come (to send, or to connect), all
    /// stamped with the same `now`.
    fn fire_timers(&mut self, now: Instant) {
        while let Some(&Reverse((due, i))) = self.timers.peek() {
            if due > now {
                break;
            }
            self.timers.pop();
            if self.slots[i].armed == Some(due) {
                self.slots[i].armed = None;
                self.pump(i, now);
                self.settle(i, now);
            }
        }
    }
}

/// The reply at the front of `input` framed by a NUL or LF, without its
/// terminator, and the bytes it takes with it: board, echo and bucket
/// replies.
pub fn line(input: &[u8]) -> Option<(&[u8], usize)> {
    memchr::memchr2(0, b'\n', input).map(|i| (&input[..i], i + 1))
}

/// The longest line reply a client waits for before declaring the stream
/// broken.
pub const MAX_LINE: usize = 256 << 20;

/// [`line`] for a [`Client::take`]: `Err` once `input` holds more than
/// [`MAX_LINE`] bytes without a terminator.
pub fn take_line(input: &[u8]) -> Result<Option<(&[u8], usize)>, String> {
    match line(input) {
        None if input.len() > MAX_LINE => Err("a reply longer than 256 MiB".into()),
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};
    use std::net::TcpListener;

    /// What the test server does with each line it reads.
    #[derive(Clone, Copy)]
    enum Server {
        /// Answers `pong`, until the client closes.
        Answer,
        /// Never answers.
        Silent,
        /// Closes without answering.
        Hang,
    }

    fn server(kind: Server) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                std::thread::spawn(move || {
                    let mut w = stream.try_clone().unwrap();
                    for line in BufReader::new(stream).lines() {
                        match (kind, line) {
                            (_, Err(_)) => return,
                            (Server::Answer, Ok(_)) => {
                                if w.write_all(b"pong\n").is_err() {
                                    return;
                                }
                            }
                            (Server::Silent, Ok(_)) => {}
                            (Server::Hang, Ok(_)) => return,
                        }
                    }
                });
            }
        });
        addr
    }

    /// A client that opens up to `connects` connections and sends
    /// `per_connection` lines on each, one at a time.
    #[derive(Default)]
    struct Probe {
        connects: usize,
        per_connection: usize,
        opened: usize,
        sent_here: usize,
        in_flight: usize,
        replies: usize,
        failures: Vec<String>,
    }

    impl Probe {
        fn new(connects: usize, per_connection: usize) -> Self {
            Probe {
                connects,
                per_connection,
                ..Probe::default()
            }
        }
    }

    impl Client for Probe {
        type Sink = ();

        fn connect(&mut self, _now: Instant) -> bool {
            if self.opened == self.connects {
                return false;
            }
            self.opened += 1;
            self.sent_here = 0;
            true
        }

        fn fill(&mut self, wire: &mut Vec<u8>, _now: Instant) -> usize {
            if self.in_flight > 0 || self.sent_here == self.per_connection {
                return 0;
            }
            wire.extend_from_slice(b"ping\n");
            self.sent_here += 1;
            self.in_flight = 1;
            1
        }

        fn take(
            &mut self,
            input: &[u8],
            _now: Instant,
            _: &mut (),
        ) -> Result<Option<usize>, String> {
            let Some((reply, len)) = take_line(input)? else {
                return Ok(None);
            };
            if reply != b"pong" {
                return Err(format!("{reply:?}"));
            }
            self.in_flight = 0;
            self.replies += 1;
            Ok(Some(len))
        }

        fn in_flight(&self) -> usize {
            self.in_flight
        }

        fn connection_done(&self) -> bool {
            self.in_flight == 0 && self.sent_here == self.per_connection
        }

        fn failed(&mut self, failure: Failure, _now: Instant) {
            self.in_flight = 0;
            self.failures.push(failure.to_string());
        }
    }

    fn options(addr: SocketAddr) -> Options {
        Options {
            addr,
            connect_timeout: Duration::from_secs(5),
            reply_timeout: Some(Duration::from_secs(10)),
            deadline: None,
            drain_timeout: None,
        }
    }

    fn drive_probes(probes: Vec<Probe>, opts: &Options) -> Vec<Slot<Probe>> {
        let slots = probes.into_iter().map(Slot::new).collect();
        drive(slots, opts, &Progress::default(), &|| ()).slots
    }

    #[test]
    fn connections_end_and_are_replaced_until_the_clients_finish() {
        let addr = server(Server::Answer);
        let slots = drive_probes((0..3).map(|_| Probe::new(20, 3)).collect(), &options(addr));
        assert_eq!(slots.len(), 3);
        for s in &slots {
            assert_eq!(s.client.failures, Vec::<String>::new());
            assert_eq!((s.client.opened, s.client.replies), (20, 60));
            assert!(s.finished_at.is_some() && s.stopped_at.is_none());
        }
    }

    #[test]
    fn a_deadline_stops_persistent_connections() {
        let addr = server(Server::Answer);
        let mut opts = options(addr);
        let t0 = Instant::now();
        opts.deadline = Some(t0 + Duration::from_millis(200));
        opts.drain_timeout = Some(Duration::from_secs(5));
        let slots = drive_probes(vec![Probe::new(1, usize::MAX)], &opts);
        let s = &slots[0];
        assert!(s.client.failures.is_empty(), "{:?}", s.client.failures);
        assert!(s.client.replies > 0);
        assert!(s
            .stopped_at
            .is_some_and(|t| t >= t0 + Duration::from_millis(200)));
    }

    #[test]
    fn failures_reach_the_client() {
        // Nothing listens.
        let closed = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let slots = drive_probes(vec![Probe::new(2, 1)], &options(closed));
        let f = &slots[0].client.failures;
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(
            f[0].starts_with(&format!("cannot connect to {closed}")),
            "{f:?}"
        );
        // The server closes with a request in flight.
        let slots = drive_probes(vec![Probe::new(1, 1)], &options(server(Server::Hang)));
        assert_eq!(
            slots[0].client.failures,
            ["the server closed the connection mid-run"]
        );
        // The server never answers.
        let mut opts = options(server(Server::Silent));
        opts.reply_timeout = Some(Duration::from_millis(100));
        let slots = drive_probes(vec![Probe::new(1, 1)], &opts);
        assert_eq!(slots[0].client.failures, ["no reply within 0.1 s"]);
    }

    #[test]
    fn lines_end_at_nul_or_lf() {
        assert_eq!(line(b"ab\0cd\n"), Some((&b"ab"[..], 3)));
        assert_eq!(line(b"\n"), Some((&b""[..], 1)));
        assert_eq!(line(b"abc"), None);
        assert_eq!(take_line(b"abc"), Ok(None));
    }
}
