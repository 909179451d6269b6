//! A blocking client connection that reads terminator-framed replies,
//! for the few requests before and after a run (reading the state to
//! check against, EXIT). The run itself is on the event-loop driver.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

pub struct FramedConn {
    stream: TcpStream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

/// Largest reply accepted before the connection is declared broken.
const MAX_REPLY: usize = 64 << 20;

impl FramedConn {
    pub fn connect(addr: SocketAddr, timeout: Duration) -> io::Result<Self> {
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_nodelay(true)?;
        Ok(FramedConn {
            stream,
            buf: vec![0; 64 * 1024],
            start: 0,
            end: 0,
        })
    }

    /// Fail reads that wait longer than this (None: wait forever).
    pub fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        self.stream.set_read_timeout(t)
    }

    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// The next reply up to a NUL or LF, without its terminator. End of
    /// stream before a whole reply is an `UnexpectedEof` error.
    pub fn recv(&mut self) -> io::Result<&[u8]> {
        // Bytes after `start` already searched: `fill` may move `start`.
        let mut searched = 0;
        loop {
            let from = self.start + searched;
            if let Some(i) = memchr::memchr2(0, b'\n', &self.buf[from..self.end]) {
                let reply = self.start..from + i;
                self.start = from + i + 1;
                return Ok(&self.buf[reply]);
            }
            searched = self.end - self.start;
            self.fill()?;
        }
    }

    fn fill(&mut self) -> io::Result<()> {
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else if self.buf.len() < MAX_REPLY {
                self.buf.resize(self.buf.len() * 2, 0);
            } else {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "reply longer than 64 MiB",
                ));
            }
        }
        loop {
            match self.stream.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    ))
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}
