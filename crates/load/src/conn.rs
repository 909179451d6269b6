//! A blocking client connection that reads terminator-framed replies,
//! for the few requests before and after a run (reading the state to
//! check against, EXIT). The run itself is on the event-loop driver.

use crate::driver::{no_reply_within, reply_too_long, MAX_REPLY};
use crate::endpoint::{Endpoint, Stream};
use serverlab_util::InputBuf;
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

pub struct FramedConn {
    stream: Stream,
    buf: InputBuf,
    /// The reply `recv` returned last, still at the front of `buf`.
    last: usize,
    /// When every send and reply must be done by, and how long that was.
    deadline: Option<(Instant, Duration)>,
    /// The longest reply accepted.
    max_reply: usize,
}
/// Room made for each read.
const READ_CHUNK: usize = 64 * 1024;

impl FramedConn {
    pub fn connect(addr: &Endpoint, timeout: Duration) -> io::Result<Self> {
        let stream = addr.connect(timeout)?;
        Ok(FramedConn {
            stream,
            buf: InputBuf::new(),
            last: 0,
            deadline: None,
            max_reply: MAX_REPLY,
        })
    }

    /// Accept replies of at most `max` bytes (else `MAX_REPLY`).
    pub fn set_max_reply(&mut self, max: usize) {
        self.max_reply = max;
    }

    /// Every send and reply from now on must be done within `t` in all
    /// (not per read: a server trickling bytes does not stretch it).
    pub fn set_deadline(&mut self, t: Duration) {
        self.deadline = Some((Instant::now() + t, t));
    }

    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let left = self.time_left()?;
        self.stream.set_write_timeout(left)?;
        self.stream.write_all(bytes).map_err(|e| self.timed_out(e))
    }

    /// What is left of the deadline (None: there is none); an error
    /// once it has passed.
    fn time_left(&self) -> io::Result<Option<Duration>> {
        let Some((by, _)) = self.deadline else {
            return Ok(None);
        };
        match by.checked_duration_since(Instant::now()) {
            Some(left) if !left.is_zero() => Ok(Some(left)),
            _ => Err(self.timed_out(io::ErrorKind::TimedOut.into())),
        }
    }

    /// A read or write that waited out the deadline, said as such.
    fn timed_out(&self, e: io::Error) -> io::Error {
        match (e.kind(), self.deadline) {
            (io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut, Some((_, t))) => {
                io::Error::new(io::ErrorKind::TimedOut, no_reply_within(t))
            }
            _ => e,
        }
    }

    /// The next reply up to a NUL or LF, without its terminator. End of
    /// stream before a whole reply is an `UnexpectedEof` error.
    pub fn recv(&mut self) -> io::Result<&[u8]> {
        self.buf.consume(std::mem::take(&mut self.last));
        // Bytes already searched for a terminator.
        let mut searched = 0;
        loop {
            if let Some(i) = memchr::memchr2(0, b'\n', &self.buf.data()[searched..]) {
                let len = searched + i;
                self.last = len + 1;
                return Ok(&self.buf.data()[..len]);
            }
            searched = self.buf.len();
            self.fill()?;
        }
    }

    /// The next reply that `find` (given everything buffered) says is
    /// whole, by its length; what `find` refuses ends the read. `find` is
    /// asked again only once the buffer has doubled since it last said
    /// "not yet", or a read took all there was for now: a long reply is
    /// walked a bounded number of times, not once per read.
    pub fn recv_by(
        &mut self,
        find: impl Fn(&[u8]) -> Result<Option<usize>, String>,
    ) -> io::Result<&[u8]> {
        self.buf.consume(std::mem::take(&mut self.last));
        let mut look_at = 0;
        loop {
            if self.buf.len() >= look_at {
                match find(self.buf.data()) {
                    Ok(Some(len)) => {
                        self.last = len;
                        return Ok(&self.buf.data()[..len]);
                    }
                    Ok(None) => look_at = self.buf.len() * 2,
                    Err(why) => return Err(io::Error::new(io::ErrorKind::InvalidData, why)),
                }
            }
            if self.fill()? {
                look_at = 0;
            }
        }
    }

    /// Read what comes, within the deadline and the reply limit. True
    /// when the read took less than the room it had (all there was, for
    /// now).
    fn fill(&mut self) -> io::Result<bool> {
        if self.buf.len() > self.max_reply {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                reply_too_long(self.max_reply),
            ));
        }
        self.buf.reserve(READ_CHUNK);
        let room = self.buf.spare().len();
        loop {
            let left = self.time_left()?;
            self.stream.set_read_timeout(left)?;
            match self.stream.read(self.buf.spare()) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    ))
                }
                Ok(n) => {
                    self.buf.filled(n);
                    return Ok(n < room);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.timed_out(e)),
            }
        }
    }
}
