//! The closed-loop driver: one event loop multiplexes many client
//! connections on non-blocking sockets (edge-triggered epoll via mio).
//!
//! A thread per connection would cost the client a context switch per
//! request, as much CPU as a good server spends, and the client would set
//! the pace it claims to measure. One loop per client core keeps the
//! client's cost per request to a read and a write (shared with every
//! other reply that arrived in the same read).
//!
//! Replies are framed by NUL or LF, as board, echo and bucket write them.
//! What to send and how to check a reply is the [`Client`]'s business.

use crate::Progress;
use mio::{Events, Interest, Poll, Token};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// How long to wait for replies still in flight after the window closed.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);
/// How long to busy-poll for replies before sleeping in the kernel. A
/// sleeping CPU (above all a virtual one, which the hypervisor parks) can
/// take milliseconds to wake: a client that sleeps between replies
/// measures its own wake-ups, not the server. Time spent polling in vain
/// is reported apart from real work.
const SPIN: Duration = Duration::from_millis(1);

/// One connection's protocol logic.
pub trait Client {
    /// Append as many requests as may go out at `now` (up to the pipeline
    /// depth, and no earlier than any throttle allows) and note `now` as
    /// their send time. Returns how many were appended.
    fn fill(&mut self, wire: &mut Vec<u8>, now: Instant) -> usize;
    /// One reply, in request order, received at `now`.
    fn handle(&mut self, reply: &[u8], now: Instant);
    /// Requests sent and not yet answered.
    fn in_flight(&self) -> usize;
    /// When a throttled client that is waiting for its slot wants to send.
    fn next_due(&self) -> Option<Instant>;
}

/// A client with its socket and buffers.
pub struct Conn<C> {
    pub client: C,
    stream: mio::net::TcpStream,
    input: Vec<u8>,
    start: usize,
    end: usize,
    output: Vec<u8>,
    written: usize,
    /// When this connection stopped sending (the end of its window).
    pub stopped_at: Option<Instant>,
    pub error: Option<String>,
    done: bool,
}

impl<C: Client> Conn<C> {
    /// Connect (blocking, with a timeout), then switch to non-blocking.
    pub fn connect(addr: SocketAddr, timeout: Duration, client: C) -> io::Result<Self> {
        let stream = std::net::TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_nodelay(true)?;
        stream.set_nonblocking(true)?;
        Ok(Conn {
            client,
            stream: mio::net::TcpStream::from_std(stream),
            input: vec![0; 64 * 1024],
            start: 0,
            end: 0,
            output: Vec::new(),
            written: 0,
            stopped_at: None,
            error: None,
            done: false,
        })
    }

    /// Send what the client will send now.
    fn pump(&mut self, now: Instant) -> io::Result<()> {
        if self.stopped_at.is_none() && self.client.fill(&mut self.output, now) > 0 {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        while self.written < self.output.len() {
            match self.stream.write(&self.output[self.written..]) {
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

    /// Read until the socket is dry, handing each whole reply to the
    /// client. Returns the number of replies; an error at end of stream.
    fn receive(&mut self) -> io::Result<u64> {
        let mut replies = 0;
        loop {
            if self.end == self.input.len() {
                if self.start > 0 {
                    self.input.copy_within(self.start..self.end, 0);
                    self.end -= self.start;
                    self.start = 0;
                } else {
                    let len = self.input.len();
                    if len >= 256 << 20 {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            "a reply longer than 256 MiB",
                        ));
                    }
                    self.input.resize(len * 2, 0);
                }
            }
            match self.stream.read(&mut self.input[self.end..]) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection mid-run",
                    ))
                }
                Ok(n) => {
                    self.end += n;
                    let now = Instant::now();
                    while let Some(i) = memchr::memchr2(0, b'\n', &self.input[self.start..self.end])
                    {
                        let (a, b) = (self.start, self.start + i);
                        self.start = b + 1;
                        self.client.handle(&self.input[a..b], now);
                        replies += 1;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(replies),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn fail(&mut self, e: io::Error) {
        self.error = Some(e.to_string());
        self.done = true;
    }
}

/// Drive `conns` until `deadline`, then collect the replies still in
/// flight. Errors are recorded on their connection; the others go on.
/// Returns the time spent busy-polling in vain.
pub fn run<C: Client>(
    conns: &mut [Conn<C>],
    deadline: Instant,
    progress: &Progress,
) -> io::Result<Duration> {
    let mut poll = Poll::new()?;
    for (i, c) in conns.iter_mut().enumerate() {
        poll.registry().register(
            &mut c.stream,
            Token(i),
            Interest::READABLE | Interest::WRITABLE,
        )?;
    }
    let now = Instant::now();
    for c in conns.iter_mut() {
        if let Err(e) = c.pump(now) {
            c.fail(e);
        }
    }
    let mut events = Events::with_capacity(1024);
    let mut spun = Duration::ZERO;
    let mut quiet_since: Option<Instant> = None;
    loop {
        let now = Instant::now();
        if now >= deadline {
            for c in conns.iter_mut().filter(|c| c.stopped_at.is_none()) {
                c.stopped_at = Some(now);
            }
        }
        for c in conns
            .iter_mut()
            .filter(|c| !c.done && c.stopped_at.is_some())
        {
            if c.client.in_flight() == 0 {
                c.done = true;
            } else if now >= deadline + DRAIN_TIMEOUT {
                c.fail(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no reply within 10 s after the end of the run",
                ));
            }
        }
        if conns.iter().all(|c| c.done) {
            return Ok(spun);
        }
        let mut wake = if now < deadline {
            deadline
        } else {
            deadline + DRAIN_TIMEOUT
        };
        for c in conns.iter().filter(|c| !c.done && c.stopped_at.is_none()) {
            if let Some(due) = c.client.next_due() {
                wake = wake.min(due);
            }
        }
        let waiting = conns.iter().any(|c| !c.done && c.client.in_flight() > 0);
        let spin = waiting && quiet_since.is_none_or(|t| now - t < SPIN);
        let timeout = if spin {
            Duration::ZERO
        } else {
            wake.saturating_duration_since(now)
        };
        match poll.poll(&mut events, Some(timeout)) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => other?,
        }
        let after = Instant::now();
        if events.is_empty() {
            if spin {
                spun += after - now;
                quiet_since.get_or_insert(now);
            }
        } else {
            quiet_since = None;
        }
        let now = after;
        for ev in events.iter() {
            let c = &mut conns[ev.token().0];
            if c.done {
                continue;
            }
            if ev.is_writable() {
                if let Err(e) = c.flush() {
                    c.fail(e);
                    continue;
                }
            }
            if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                match c.receive() {
                    Ok(n) => progress.add(n),
                    Err(e) => {
                        c.fail(e);
                        continue;
                    }
                }
            }
            if let Err(e) = c.pump(now) {
                c.fail(e);
            }
        }
        // Throttled connections whose slot has come.
        for c in conns.iter_mut().filter(|c| !c.done) {
            if c.client.next_due().is_some_and(|due| due <= now) {
                if let Err(e) = c.pump(now) {
                    c.fail(e);
                }
            }
        }
    }
}
