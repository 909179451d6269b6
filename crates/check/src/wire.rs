//! A client connection for the checker: send bytes, read one reply with a
//! deadline, notice a close; and bytes shown to a person.

use std::cell::Cell;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The longest reply the checker reads: no case's request can get a
/// reply near it (a case's values are bytes to kilobytes), and a hostile
/// server cannot make the checker hold more.
pub const MAX_REPLY: usize = 4 << 20;

/// How long a read that took all the socket had waits for more before
/// it looks for a reply again (see [`Conn::read`]).
const PAUSE: Duration = Duration::from_millis(20);
/// Past this much buffered, a reply is looked for only as the buffer
/// doubles (and once more at the deadline): a pause in a stream this long
/// is no sign that the reply is whole.
const LOOK_ON_PAUSE: usize = 64 * 1024;

thread_local! {
    /// Reads on this thread that got no whole reply: they waited out
    /// their deadline, or the reply outgrew [`MAX_REPLY`]. A case that
    /// fails after one found the server hopeless, and the run stops there.
    static HOPELESS: Cell<u64> = const { Cell::new(0) };
}

/// How many reads on this thread have got no whole reply so far.
pub fn hopeless_so_far() -> u64 {
    HOPELESS.with(Cell::get)
}

fn hopeless() {
    HOPELESS.with(|t| t.set(t.get() + 1));
}

/// One TCP connection and what it has read but not yet taken.
pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    timeout: Duration,
}

/// What a read found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Got {
    /// A whole reply, as `find` delimited it.
    Reply(Vec<u8>),
    /// The server closed (or reset) the connection; any partial reply.
    Closed(Vec<u8>),
    /// Nothing complete within the timeout; any partial reply.
    Timeout(Vec<u8>),
    /// More than [`MAX_REPLY`] bytes without a whole reply: the
    /// connection was closed.
    TooLong,
}

impl Got {
    /// In a person's words, for a transcript.
    pub fn show(&self) -> String {
        match self {
            Got::Reply(b) => show(b),
            Got::Closed(b) if b.is_empty() => "(connection closed, nothing sent)".into(),
            Got::Closed(b) => format!("{} then the connection closed", show(b)),
            Got::Timeout(b) if b.is_empty() => "(nothing, until the timeout)".into(),
            Got::Timeout(b) => format!("{} and nothing more until the timeout", show(b)),
            Got::TooLong => format!(
                "a reply longer than {MAX_REPLY} bytes, more than any case can get (the \
                 connection was closed)"
            ),
        }
    }

    pub fn reply(&self) -> Option<&[u8]> {
        match self {
            Got::Reply(b) => Some(b),
            _ => None,
        }
    }
}

impl Conn {
    /// Connect within `timeout`; replies are awaited for `timeout` too.
    pub fn open(addr: SocketAddr, timeout: Duration) -> std::io::Result<Conn> {
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buf: Vec::new(),
            timeout,
        })
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Send all of `bytes`. A failure (the server closed) is not an error
    /// here: the read that follows reports it.
    pub fn send(&mut self, bytes: &[u8]) -> bool {
        // A server that never reads cannot hold the checker past its
        // timeout.
        let _ = self.stream.set_write_timeout(Some(self.timeout));
        self.stream.write_all(bytes).is_ok()
    }

    /// Read until `find` (given everything buffered) says how many bytes
    /// make one reply; take them. Waits up to `extra` beyond the timeout,
    /// in all: bytes that trickle in do not stretch it. A reply that
    /// outgrows [`MAX_REPLY`] closes the connection.
    pub fn read(&mut self, extra: Duration, find: impl Fn(&[u8]) -> Option<usize>) -> Got {
        let deadline = Instant::now() + self.timeout + extra;
        // `find` looks again once the buffer has doubled since it last
        // failed, or (while it is short) no more came for a moment, and
        // at the deadline: a long reply is searched a bounded number of
        // times, not once per read.
        let mut look_at = 0;
        loop {
            if self.buf.len() >= look_at {
                if let Some(n) = find(&self.buf) {
                    return Got::Reply(self.buf.drain(..n).collect());
                }
                look_at = self.buf.len() * 2;
            }
            if self.buf.len() > MAX_REPLY {
                let _ = self.stream.shutdown(Shutdown::Both);
                self.buf = Vec::new();
                hopeless();
                return Got::TooLong;
            }
            match self.fill(deadline) {
                Fill::Data => {
                    let pause = PAUSE.min(deadline.saturating_duration_since(Instant::now()));
                    let short = self.buf.len() < LOOK_ON_PAUSE;
                    if short && self.buf.len() < look_at && !self.more_within(pause) {
                        look_at = 0;
                    }
                }
                Fill::Closed => return Got::Closed(std::mem::take(&mut self.buf)),
                Fill::Timeout => {
                    if let Some(n) = find(&self.buf) {
                        return Got::Reply(self.buf.drain(..n).collect());
                    }
                    hopeless();
                    return Got::Timeout(std::mem::take(&mut self.buf));
                }
            }
        }
    }

    /// After one request's whole reply: `Err` if more bytes came already,
    /// a reply nobody asked for (a correct server answers each request
    /// once). For the concurrency phase, where one request is out at a
    /// time.
    pub fn nothing_unasked(&self) -> Result<(), String> {
        if self.buf.is_empty() {
            return Ok(());
        }
        Err(format!(
            "the server answered more than it was asked: {} after the reply",
            show(&self.buf)
        ))
    }

    /// Whether the server closes the connection (EOF or reset) within the
    /// timeout, discarding anything it sends first.
    pub fn closes(&mut self) -> bool {
        let deadline = Instant::now() + self.timeout;
        loop {
            match self.fill(deadline) {
                Fill::Data => self.buf.clear(),
                Fill::Closed => return true,
                Fill::Timeout => return false,
            }
        }
    }

    /// Whatever arrives within `wait`, and whether the server closed the
    /// connection by then (no waiting once it has).
    pub fn gather(&mut self, wait: Duration) -> (Vec<u8>, bool) {
        let deadline = Instant::now() + wait;
        loop {
            match self.fill(deadline) {
                Fill::Data if self.buf.len() <= MAX_REPLY => {}
                Fill::Data | Fill::Timeout => return (std::mem::take(&mut self.buf), false),
                Fill::Closed => return (std::mem::take(&mut self.buf), true),
            }
        }
    }

    /// Whatever arrives within `wait` (without waiting for more).
    pub fn drain_for(&mut self, wait: Duration) -> Vec<u8> {
        let deadline = Instant::now() + wait;
        while let Fill::Data = self.fill(deadline) {
            // A flood is cut, not kept.
            if self.buf.len() > MAX_REPLY {
                self.buf.drain(..self.buf.len() - MAX_REPLY);
            }
        }
        std::mem::take(&mut self.buf)
    }

    fn fill(&mut self, deadline: Instant) -> Fill {
        let now = Instant::now();
        if now >= deadline {
            return Fill::Timeout;
        }
        // A zero read timeout would mean "block forever".
        let wait = (deadline - now).max(Duration::from_millis(1));
        if self.stream.set_read_timeout(Some(wait)).is_err() {
            return Fill::Closed;
        }
        let mut chunk = [0u8; 64 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) => Fill::Closed,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Fill::Data
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                Fill::Timeout
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => Fill::Data,
            Err(_) => Fill::Closed,
        }
    }
}

impl Conn {
    /// Whether more bytes come within `wait` (left to be read).
    fn more_within(&self, wait: Duration) -> bool {
        // A zero read timeout would mean "block forever".
        let wait = wait.max(Duration::from_millis(1));
        if self.stream.set_read_timeout(Some(wait)).is_err() {
            return false;
        }
        let mut one = [0u8; 1];
        matches!(self.stream.peek(&mut one), Ok(n) if n > 0)
    }
}

enum Fill {
    Data,
    Closed,
    Timeout,
}

/// Longest byte string shown whole; longer ones are cut in the middle.
const SHOWN: usize = 160;

/// Bytes as a quoted string a person can read: printable ASCII as is,
/// `\0 \n \r \t \\ \"` and `\xNN` for the rest; long strings shortened.
pub fn show(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    let cut = bytes.len() > SHOWN;
    let head = if cut { &bytes[..SHOWN / 2] } else { bytes };
    escape(head, &mut out);
    if cut {
        out += &format!("…({} bytes)…", bytes.len());
        escape(&bytes[bytes.len() - SHOWN / 4..], &mut out);
    }
    out.push('"');
    out
}

fn escape(bytes: &[u8], out: &mut String) {
    for &b in bytes {
        match b {
            0 => out.push_str("\\0"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_bytes() {
        assert_eq!(show(b"POST@a#b\0"), r#""POST@a#b\0""#);
        assert_eq!(show(b"\xff\r\n\"x\\"), r#""\xff\r\n\"x\\""#);
        let long = show(&[b'a'; 1000]);
        assert!(
            long.contains("…(1000 bytes)…") && long.len() < 200,
            "{long}"
        );
    }
}
