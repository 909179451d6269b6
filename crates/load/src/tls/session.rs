//! A TLS session over a non-blocking socket, for the event loop.

use super::said;
use rustls::ClientConnection;
use std::io::{self, Read, Write};

/// A TLS session over a non-blocking socket: reads and writes of
/// plaintext that never block, for the event loop's edge-triggered
/// readiness.
///
/// - A read returns fewer bytes than asked only once the socket has said
///   "would block" (or ended): as with a plain socket, a short read means
///   the socket is dry, and the next edge will come.
/// - A write takes plaintext only when every record before it has gone
///   to the socket; records the socket had no room for wait in the
///   session until the next write or [`Write::flush`].
pub struct TlsMio<S> {
    pub sock: S,
    conn: ClientConnection,
    /// The socket reached its end.
    ended: bool,
}

impl<S: Read + Write> TlsMio<S> {
    pub fn new(conn: ClientConnection, sock: S) -> Self {
        TlsMio {
            sock,
            conn,
            ended: false,
        }
    }

    pub fn handshaking(&self) -> bool {
        self.conn.is_handshaking()
    }

    /// Move the handshake on as far as the socket allows: true once it
    /// is done. An error: it failed (the server's certificate refused, an
    /// alert, the server hung up).
    pub fn handshake(&mut self) -> io::Result<bool> {
        loop {
            self.push_what_fits()?;
            if !self.conn.is_handshaking() {
                return Ok(true);
            }
            match self.pull()? {
                Pulled::Records => {}
                Pulled::Nothing => return Ok(false),
                Pulled::End => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection during the TLS handshake",
                    ))
                }
            }
        }
    }

    /// Send the records waiting in the session; WouldBlock when the
    /// socket took only part of them.
    fn push(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut self.sock) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// [`Self::push`], leaving what does not fit for later.
    fn push_what_fits(&mut self) -> io::Result<()> {
        match self.push() {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            r => r,
        }
    }

    /// One read of records from the socket, taken into the session (an
    /// alert it must send in answer is sent).
    fn pull(&mut self) -> io::Result<Pulled> {
        if self.ended {
            return Ok(Pulled::End);
        }
        loop {
            return match self.conn.read_tls(&mut self.sock) {
                Ok(0) => {
                    self.ended = true;
                    Ok(Pulled::End)
                }
                Ok(_) => {
                    if let Err(e) = self.conn.process_new_packets() {
                        let _ = self.push_what_fits();
                        return Err(said(e));
                    }
                    self.push_what_fits()?;
                    Ok(Pulled::Records)
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Pulled::Nothing),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => Err(e),
            };
        }
    }
}

/// What one read of the socket gave.
enum Pulled {
    Records,
    Nothing,
    End,
}

impl<S: Read + Write> Read for TlsMio<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        loop {
            match self.conn.reader().read(&mut buf[n..]) {
                // The server's close_notify (or no room: never asked).
                Ok(0) => return Ok(n),
                Ok(k) => {
                    n += k;
                    if n == buf.len() {
                        return Ok(n);
                    }
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // Closed without close_notify: an end of stream, as
                // HTTP/1.1 clients take it (responses frame themselves).
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(n),
                Err(e) => return Err(e),
            }
            match self.pull()? {
                Pulled::Records => {}
                Pulled::End if self.conn.is_handshaking() => {
                    return Err(io::ErrorKind::UnexpectedEof.into())
                }
                Pulled::End => return Ok(n),
                Pulled::Nothing if n > 0 => return Ok(n),
                Pulled::Nothing => return Err(io::ErrorKind::WouldBlock.into()),
            }
        }
    }
}

impl<S: Read + Write> Write for TlsMio<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.push()?;
        let n = self.conn.writer().write(buf)?;
        self.push_what_fits()?;
        if n == 0 && !buf.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
    }

    /// Send what records the socket has room for.
    fn flush(&mut self) -> io::Result<()> {
        self.push_what_fits()
    }
}
