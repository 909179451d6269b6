//! A slot: one conversation with its connection (at most one at a time)
//! and that connection's buffers — opening and closing it, sending what
//! the conversation fills in, and reading replies into it.

use super::conversation::{Conversation, Failure};
use super::stamp::{Receipt, Sampler};
use super::token;
use crate::endpoint::{Endpoint, MioStream};
use mio::{Interest, Registry, Token};
use serverlab_util::InputBuf;
use std::io::{self, Write};
use std::time::{Duration, Instant};

/// A connection's input buffer to begin with; it grows for longer replies.
const INPUT: usize = 16 * 1024;
/// Reads of one connection in one turn of its loop: a server that never
/// lets its socket run dry (a flood of pub/sub messages, each taken)
/// still lets the loop close the window and serve the others.
const READS_PER_TURN: usize = 64;

/// What a read found: bytes and maybe more behind them, bytes that
/// emptied the socket (or none: it would block), or the end of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Got {
    More,
    Dry,
    End,
}

/// A conversation with its connection and buffers.
pub struct Slot<C> {
    pub client: C,
    pub(super) stream: Option<MioStream>,
    /// Opening: the socket's connect, then any TLS handshake.
    pub(super) connecting: bool,
    /// The socket connected and a TLS handshake is under way.
    pub(super) handshaking: bool,
    /// How long the TLS handshake of a connection opened before the loop
    /// took, connect included (told the conversation once the loop
    /// starts).
    pub(super) handshook: Option<Duration>,
    /// When the connection was started (for its timeout).
    pub(super) opened_at: Instant,
    /// Last time replies made progress (or requests began to wait).
    pub(super) progress_at: Instant,
    /// Tells this connection's events from a previous one's.
    pub(super) generation: u32,
    input: InputBuf,
    /// The input's length at which to look for a reply again, when the
    /// last look found only part of one: twice what it had then, so a
    /// long reply arriving read by read is framed a logarithmic number
    /// of times, not once per read (a read that empties the socket looks
    /// regardless: nothing more may come until a request is answered).
    reframe_at: usize,
    output: Vec<u8>,
    written: usize,
    /// When the kernel received the latest bytes read and not yet
    /// handed to the conversation, in a sampled batch ([`stamp`]).
    received_at: Option<Instant>,
    /// Which batches of replies are stamped ([`stamp::Sampler`]).
    sampler: Sampler,
    /// Counted as connecting or waiting for replies (see
    /// `EventLoop::waiting`).
    pub(super) busy: bool,
    /// When this slot stopped sending because the window closed.
    pub stopped_at: Option<Instant>,
    /// When this slot finished: its conversation wants no more
    /// connections, or the window closed and its last reply came.
    pub finished_at: Option<Instant>,
}

impl<C: Conversation> Slot<C> {
    /// A slot without a connection: the driver asks `client.connect`.
    pub fn new(client: C) -> Self {
        let now = Instant::now();
        Slot {
            client,
            stream: None,
            connecting: false,
            handshaking: false,
            handshook: None,
            opened_at: now,
            progress_at: now,
            generation: 0,
            input: InputBuf::new(),
            reframe_at: 0,
            output: Vec::new(),
            written: 0,
            received_at: None,
            sampler: Sampler::fresh(),
            busy: false,
            stopped_at: None,
            finished_at: None,
        }
    }

    /// A slot whose connection is opened now (blocking, with a timeout),
    /// for runs whose window starts once every connection is open.
    /// The conversation greets the server on it first, blocking, each
    /// read and write within `timeout`.
    pub fn connected(addr: &Endpoint, timeout: Duration, mut client: C) -> io::Result<Self> {
        let began = Instant::now();
        let mut stream = addr.connect(timeout)?;
        let handshook = addr.is_tls().then(|| began.elapsed());
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        // The greeting as a whole, not each read, within `timeout`.
        client.greet(&mut crate::endpoint::Deadlined::new(&mut stream, timeout))?;
        let stream = stream.into_mio()?;
        stream.ask_stamps();
        let mut slot = Slot::new(client);
        slot.stream = Some(stream);
        slot.handshook = handshook;
        Ok(slot)
    }

    /// The token of this slot's current connection, as slot `index`.
    pub(super) fn token(&self, index: usize) -> Token {
        token::encode(index, self.generation)
    }

    /// Register a connection opened before the loop started.
    pub(super) fn register(&mut self, registry: &Registry, index: usize) -> io::Result<bool> {
        let token = self.token(index);
        let Some(stream) = self.stream.as_mut() else {
            return Ok(false);
        };
        registry.register(stream, token, Interest::READABLE | Interest::WRITABLE)?;
        Ok(true)
    }

    /// Start a new connection (non-blocking) as slot `index`.
    pub(super) fn open(
        &mut self,
        addr: &Endpoint,
        registry: &Registry,
        index: usize,
        now: Instant,
    ) -> io::Result<()> {
        let stream = addr.open()?;
        stream.ask_stamps();
        self.generation = self.generation.wrapping_add(1);
        self.stream = Some(stream);
        if let Err(e) = self.register(registry, index) {
            self.stream = None;
            return Err(e);
        }
        self.connecting = true;
        self.opened_at = now;
        Ok(())
    }

    /// Drop the connection and whatever was buffered for it. Closing the
    /// socket also removes it from epoll (the descriptor is not shared),
    /// so it is not deregistered first: one system call less per
    /// connection.
    pub(super) fn close(&mut self) {
        self.stream = None;
        self.connecting = false;
        self.handshaking = false;
        self.input.clear();
        self.reframe_at = 0;
        self.output.clear();
        self.written = 0;
        self.received_at = None;
    }

    /// Send what the conversation will send now.
    pub(super) fn pump(&mut self, now: Instant) -> io::Result<()> {
        let idle = self.client.in_flight() == 0;
        let n = self.client.fill(&mut self.output, now);
        if n > 0 {
            // The clock read just before the send call: from the
            // requests' due time to here is the client's own.
            if crate::certify::PER_REQUEST {
                self.client.handed(n, Instant::now());
            }
            if idle {
                self.progress_at = now;
            }
            self.flush()?;
        }
        Ok(())
    }

    pub(super) fn flush(&mut self) -> io::Result<()> {
        let Some(stream) = self.stream.as_mut() else {
            return Ok(());
        };
        if self.output.is_empty() {
            // Records a TLS session still holds (nothing, without TLS).
            return stream.flush();
        }
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
    /// handing each whole reply to the conversation, for at most
    /// [`READS_PER_TURN`] reads. Returns the replies taken, and whether
    /// it stopped with more to read (the loop comes back to it: no new
    /// event may come). `hung_up`: the event said the peer closed, so
    /// read on to the end of the stream.
    /// An unfinished reply longer than `max_reply` fails the connection.
    pub(super) fn receive(
        &mut self,
        now: Instant,
        hung_up: bool,
        max_reply: usize,
        sink: &mut C::Sink,
    ) -> Result<(u64, bool), Failure> {
        let mut replies = 0;
        for _ in 0..READS_PER_TURN {
            let read = match self.read_once(hung_up, max_reply) {
                Ok(Some(read)) => read,
                Ok(None) => return Ok((replies, false)),
                Err(failure) => {
                    // Replies read before the failure (a reset after the
                    // server died) are still answers.
                    let _ = self.take_all(now, sink);
                    return Err(failure);
                }
            };
            // Look for replies when nothing more is coming for now, when
            // the input has doubled since the last look found only part
            // of one, or before judging its length against `max_reply`.
            let last = read != Got::More;
            let len = self.input.len();
            let took = if last || len >= self.reframe_at || len > max_reply {
                let took = self.take_all(now, sink).map_err(Failure::Reply)?;
                self.reframe_at = 2 * self.input.len();
                took
            } else {
                0
            };
            if took > 0 {
                // Only whole replies are progress: a server trickling a
                // byte at a time still times out.
                self.progress_at = now;
            }
            if self.client.connection_done() && !self.input.is_empty() {
                // Its work is done, so nothing on it waits for a reply.
                return Err(Failure::Reply(
                    "a reply to no request: the server answered more than it was asked".into(),
                ));
            }
            if self.input.len() > max_reply {
                return Err(Failure::Reply(super::reply_too_long(max_reply)));
            }
            replies += took;
            match read {
                Got::End if self.client.connection_done() => return Ok((replies, false)),
                Got::End => return Err(Failure::Closed),
                Got::Dry => return Ok((replies, false)),
                Got::More if self.client.connection_done() => return Ok((replies, false)),
                Got::More => {}
            }
        }
        Ok((replies, true))
    }

    /// One read into the input (grown first if full); `None` without a
    /// connection.
    fn read_once(&mut self, hung_up: bool, max_reply: usize) -> Result<Option<Got>, Failure> {
        if self.input.spare().is_empty() {
            // Full: make room, as much as a long reply already holds (so
            // it doubles), at least INPUT.
            self.input
                .reserve(self.input.len().clamp(INPUT, max_reply.max(INPUT)));
        }
        loop {
            let Some(stream) = self.stream.as_mut() else {
                return Ok(None);
            };
            let room = self.input.spare().len();
            return match stream.read_stamped(self.input.spare(), self.sampler.due()) {
                Ok((0, _)) => Ok(Some(Got::End)),
                Ok((n, at)) => {
                    self.input.filled(n);
                    if at.is_some() {
                        self.received_at = at;
                    }
                    // A read that did not fill the buffer emptied the
                    // socket: data arriving later raises a new edge, so
                    // the read that would only say "would block" is
                    // saved. Not so the end of the stream, if it came
                    // already.
                    Ok(Some(if n < room && !hung_up {
                        Got::Dry
                    } else {
                        Got::More
                    }))
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Some(Got::Dry)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => Err(Failure::Io(e)),
            };
        }
    }

    fn take_all(&mut self, now: Instant, sink: &mut C::Sink) -> Result<u64, String> {
        let mut replies = 0;
        let sampled = self.sampler.due();
        self.client.arrived(if sampled {
            Receipt::Sampled(self.received_at.take())
        } else {
            Receipt::Unsampled
        });
        while !self.input.is_empty() {
            let Some(n) = self.client.take(self.input.data(), now, sink)? else {
                break;
            };
            debug_assert!(n > 0, "a reply takes at least a byte");
            self.input.consume(n);
            replies += 1;
            if self.client.connection_done() {
                break;
            }
        }
        if replies > 0 {
            self.sampler.took();
        }
        Ok(replies)
    }
}
