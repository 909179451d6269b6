//! Where a load connects: a TCP address, or a Unix domain socket
//! (`--addr unix:/path/to.sock`), and the streams to either — blocking for
//! the few requests around a run, non-blocking (mio) for the run itself.

use mio::event::Source;
use mio::{Interest, Registry, Token};
use serde::Serialize;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How `--addr` spells a Unix socket's path.
pub const UNIX: &str = "unix:";

/// A server's address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Endpoint {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

impl From<SocketAddr> for Endpoint {
    fn from(a: SocketAddr) -> Self {
        Endpoint::Tcp(a)
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Tcp(a) => write!(f, "{a}"),
            Endpoint::Unix(p) => write!(f, "{UNIX}{}", p.display()),
        }
    }
}

impl Serialize for Endpoint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Endpoint {
    /// `unix:PATH` as a Unix socket's endpoint; None for anything else.
    pub fn unix(text: &str) -> Option<Result<Endpoint, String>> {
        let path = text.strip_prefix(UNIX)?;
        Some(if path.is_empty() {
            Err(format!("'{text}' names no path: write unix:/path/to.sock"))
        } else {
            Ok(Endpoint::Unix(PathBuf::from(path)))
        })
    }

    /// The TCP address, if it is one.
    pub fn tcp(&self) -> Option<SocketAddr> {
        match self {
            Endpoint::Tcp(a) => Some(*a),
            Endpoint::Unix(_) => None,
        }
    }

    /// A blocking connection, within `timeout` (TCP; a Unix socket
    /// connects at once or not at all), without Nagle's delay.
    pub fn connect(&self, timeout: Duration) -> io::Result<Stream> {
        match self {
            Endpoint::Tcp(a) => {
                let s = std::net::TcpStream::connect_timeout(a, timeout)?;
                s.set_nodelay(true)?;
                Ok(Stream::Tcp(s))
            }
            Endpoint::Unix(p) => Ok(Stream::Unix(std::os::unix::net::UnixStream::connect(p)?)),
        }
    }

    /// A non-blocking connection begun (it may still be opening).
    pub fn open(&self) -> io::Result<MioStream> {
        match self {
            Endpoint::Tcp(a) => Ok(MioStream::Tcp(mio::net::TcpStream::connect(*a)?)),
            Endpoint::Unix(p) => Ok(MioStream::Unix(mio::net::UnixStream::connect(p)?)),
        }
    }

    /// The Unix socket's path, if it is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Endpoint::Unix(p) => Some(p),
            Endpoint::Tcp(_) => None,
        }
    }
}

/// A blocking connection.
pub enum Stream {
    Tcp(std::net::TcpStream),
    Unix(std::os::unix::net::UnixStream),
}

impl Stream {
    pub fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            Stream::Unix(s) => s.set_read_timeout(t),
        }
    }

    pub fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(t),
            Stream::Unix(s) => s.set_write_timeout(t),
        }
    }

    /// The same connection, non-blocking, for an event loop.
    pub fn into_mio(self) -> io::Result<MioStream> {
        Ok(match self {
            Stream::Tcp(s) => {
                s.set_nonblocking(true)?;
                MioStream::Tcp(mio::net::TcpStream::from_std(s))
            }
            Stream::Unix(s) => {
                s.set_nonblocking(true)?;
                MioStream::Unix(mio::net::UnixStream::from_std(s))
            }
        })
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A non-blocking connection on an event loop.
pub enum MioStream {
    Tcp(mio::net::TcpStream),
    Unix(mio::net::UnixStream),
}

impl MioStream {
    /// The error a connection being opened ended with, if any.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        match self {
            MioStream::Tcp(s) => s.take_error(),
            MioStream::Unix(s) => s.take_error(),
        }
    }

    /// No Nagle's delay (TCP; nothing to do on a Unix socket).
    pub fn set_nodelay(&self, on: bool) -> io::Result<()> {
        match self {
            MioStream::Tcp(s) => s.set_nodelay(on),
            MioStream::Unix(_) => Ok(()),
        }
    }
}

impl AsRawFd for MioStream {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            MioStream::Tcp(s) => s.as_raw_fd(),
            MioStream::Unix(s) => s.as_raw_fd(),
        }
    }
}

impl AsFd for MioStream {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            MioStream::Tcp(s) => s.as_fd(),
            MioStream::Unix(s) => s.as_fd(),
        }
    }
}

impl Read for MioStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            MioStream::Tcp(s) => s.read(buf),
            MioStream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for MioStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            MioStream::Tcp(s) => s.write(buf),
            MioStream::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Source for MioStream {
    fn register(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            MioStream::Tcp(s) => s.register(r, t, i),
            MioStream::Unix(s) => s.register(r, t, i),
        }
    }

    fn reregister(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            MioStream::Tcp(s) => s.reregister(r, t, i),
            MioStream::Unix(s) => s.reregister(r, t, i),
        }
    }

    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        match self {
            MioStream::Tcp(s) => s.deregister(r),
            MioStream::Unix(s) => s.deregister(r),
        }
    }
}

/// The `Host` an HTTP request to `e` names when nothing else says: the
/// TCP address, or `localhost` for a Unix socket.
pub fn host_of(e: &Endpoint) -> String {
    match e {
        Endpoint::Tcp(a) => a.to_string(),
        Endpoint::Unix(_) => "localhost".into(),
    }
}
