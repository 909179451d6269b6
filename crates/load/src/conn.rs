//! A blocking client connection that reads terminator-framed replies,
//! for the few requests before and after a run (reading the state to
//! check against, EXIT). The run itself is on the event-loop driver.

use serverlab_util::InputBuf;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

pub struct FramedConn {
    stream: TcpStream,
    buf: InputBuf,
    /// The reply `recv` returned last, still at the front of `buf`.
    last: usize,
}

/// Largest reply accepted before the connection is declared broken.
const MAX_REPLY: usize = 64 << 20;
/// Room made for each read.
const READ_CHUNK: usize = 64 * 1024;

impl FramedConn {
    pub fn connect(addr: SocketAddr, timeout: Duration) -> io::Result<Self> {
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_nodelay(true)?;
        Ok(FramedConn {
            stream,
            buf: InputBuf::new(),
            last: 0,
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

    fn fill(&mut self) -> io::Result<()> {
        if self.buf.len() >= MAX_REPLY {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "reply longer than 64 MiB",
            ));
        }
        self.buf.reserve(READ_CHUNK);
        loop {
            match self.stream.read(self.buf.spare()) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    ))
                }
                Ok(n) => {
                    self.buf.filled(n);
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}
