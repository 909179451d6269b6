//! A blocking HTTP/1.1 client connection: send a request, read its
//! response (head parsed by httparse, body by Content-Length).

use serverlab_proto::kv::client::{parse_response, ResponseHead};
use serverlab_proto::kv::Method;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::ops::Range;
use std::time::Duration;

/// Largest response head accepted before the connection is declared broken.
const MAX_HEAD: usize = 64 * 1024;
/// Largest response body accepted (a kv server's values are far smaller).
const MAX_BODY: usize = 1 << 30;

pub struct HttpConn {
    stream: TcpStream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl HttpConn {
    pub fn connect(addr: SocketAddr, connect: Duration, read: Duration) -> io::Result<Self> {
        let stream = TcpStream::connect_timeout(&addr, connect)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(read))?;
        Ok(HttpConn {
            stream,
            buf: vec![0; 16 * 1024],
            start: 0,
            end: 0,
        })
    }

    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// The next final response to a request of `method` (interim 1xx
    /// responses are skipped): its head, and where its body lies in
    /// [`HttpConn::body`].
    pub fn recv(&mut self, method: Method) -> io::Result<(ResponseHead, Range<usize>)> {
        loop {
            let head = loop {
                match parse_response(&self.buf[self.start..self.end], method) {
                    Ok(Some(h)) => break h,
                    Ok(None) if self.end - self.start > MAX_HEAD => {
                        return Err(invalid("a response head over 64 KiB"))
                    }
                    Ok(None) => self.fill(0)?,
                    Err(e) => return Err(invalid(&e.to_string())),
                }
            };
            if head.body_len > MAX_BODY {
                return Err(invalid("a response body over 1 GiB"));
            }
            let total = head.len + head.body_len;
            while self.end - self.start < total {
                self.fill(total)?;
            }
            let body = self.start + head.len..self.start + total;
            self.start += total;
            if !(100..200).contains(&head.status) {
                return Ok((head, body));
            }
        }
    }

    /// The bytes of a body `recv` located (valid until the next `recv`).
    pub fn body(&self, range: Range<usize>) -> &[u8] {
        &self.buf[range]
    }

    /// Read more, making room for a message of `need` bytes.
    fn fill(&mut self, need: usize) -> io::Result<()> {
        if self.end == self.buf.len() || self.buf.len() - self.start < need {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            let want = need.max(self.end + 16 * 1024);
            if self.buf.len() < want {
                self.buf.resize(want, 0);
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

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}
