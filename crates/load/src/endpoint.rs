//! Where a load connects: a TCP address, or a Unix domain socket
//! (`--addr unix:/path/to.sock`), either of them under TLS, and the
//! streams to each — blocking for the few requests around a run,
//! non-blocking (mio) for the run itself.

use crate::driver::stamp;
use crate::tls::TlsMio;
use mio::event::Source;
use mio::{Interest, Registry, Token};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use serde::Serialize;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How `--addr` spells a Unix socket's path.
pub const UNIX: &str = "unix:";

/// A server's address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Endpoint {
    Tcp(SocketAddr),
    Unix(PathBuf),
    /// A TCP or Unix endpoint, spoken to under TLS.
    Tls(Box<TlsEndpoint>),
}

/// A TLS session's settings over an endpoint.
#[derive(Clone)]
pub struct TlsEndpoint {
    /// Where the connection goes (TCP or a Unix socket).
    pub under: Endpoint,
    /// The name sent (SNI) and checked against the certificate.
    pub name: ServerName<'static>,
    pub config: Arc<ClientConfig>,
    /// The server's certificate is not checked (`--insecure`).
    pub insecure: bool,
}

impl TlsEndpoint {
    fn key(&self) -> (&Endpoint, String, bool) {
        (&self.under, self.name.to_str().into_owned(), self.insecure)
    }
}

impl PartialEq for TlsEndpoint {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}

impl Eq for TlsEndpoint {}

impl Hash for TlsEndpoint {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.key().hash(h)
    }
}

impl fmt::Debug for TlsEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsEndpoint")
            .field("under", &self.under)
            .field("name", &self.name)
            .field("insecure", &self.insecure)
            .finish()
    }
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
            Endpoint::Tls(t) => write!(f, "tls://{}", t.under),
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

    /// A blocking connection, within `timeout`, without Nagle's delay
    /// (TCP).
    pub fn connect(&self, timeout: Duration) -> io::Result<Stream> {
        match self {
            Endpoint::Tcp(a) => {
                let s = std::net::TcpStream::connect_timeout(a, timeout)?;
                s.set_nodelay(true)?;
                Ok(Stream::Tcp(s))
            }
            Endpoint::Unix(p) => Ok(Stream::Unix(unix_connect(p, timeout)?)),
            Endpoint::Tls(t) => {
                let mut sock = t.under.connect(timeout)?;
                let mut conn = crate::tls::session(&t.config, &t.name)?;
                // The handshake now, all of it within `timeout`.
                let mut bounded = Deadlined::new(&mut sock, timeout);
                while conn.is_handshaking() {
                    conn.complete_io(&mut bounded)?;
                }
                Ok(Stream::Tls(Box::new(StreamOwned::new(conn, sock))))
            }
        }
    }

    /// A non-blocking connection begun (it may still be opening; under
    /// TLS, its handshake is still to come: [`MioStream::handshake`]).
    pub fn open(&self) -> io::Result<MioStream> {
        match self {
            Endpoint::Tcp(a) => Ok(MioStream::Tcp(mio::net::TcpStream::connect(*a)?)),
            Endpoint::Unix(p) => Ok(MioStream::Unix(mio::net::UnixStream::connect(p)?)),
            Endpoint::Tls(t) => {
                let conn = crate::tls::session(&t.config, &t.name)?;
                Ok(MioStream::Tls(Box::new(TlsMio::new(conn, t.under.open()?))))
            }
        }
    }

    /// Spoken to under TLS.
    pub fn is_tls(&self) -> bool {
        matches!(self, Endpoint::Tls(_))
    }

    /// Under TLS without checking the server's certificate.
    pub fn is_insecure(&self) -> bool {
        matches!(self, Endpoint::Tls(t) if t.insecure)
    }
}

/// A blocking connection to the Unix socket at `path`, within `timeout`.
/// A listener whose backlog is full (a server that does not accept)
/// would otherwise hold `connect(2)` for ever: its send timeout bounds
/// it (the kernel says EAGAIN), and is cleared once connected.
fn unix_connect(path: &Path, timeout: Duration) -> io::Result<std::os::unix::net::UnixStream> {
    use nix::sys::socket::{
        connect, setsockopt, socket, sockopt, AddressFamily, SockFlag, SockType, UnixAddr,
    };
    use nix::sys::time::TimeVal;
    let fd = socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    let bound = |d: Duration| TimeVal::new(d.as_secs() as i64, d.subsec_micros() as i64);
    setsockopt(
        &fd,
        sockopt::SendTimeout,
        &bound(timeout.max(Duration::from_micros(1))),
    )?;
    match connect(fd.as_raw_fd(), &UnixAddr::new(path)?) {
        Ok(()) => {}
        Err(nix::errno::Errno::EAGAIN) => {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("not accepted within {timeout:?} (the server's backlog is full)"),
            ))
        }
        Err(e) => return Err(e.into()),
    }
    setsockopt(&fd, sockopt::SendTimeout, &bound(Duration::ZERO))?;
    Ok(std::os::unix::net::UnixStream::from(fd))
}

/// A blocking connection.
pub enum Stream {
    Tcp(std::net::TcpStream),
    Unix(std::os::unix::net::UnixStream),
    Tls(Box<StreamOwned<ClientConnection, Stream>>),
}

impl Stream {
    pub fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            Stream::Unix(s) => s.set_read_timeout(t),
            Stream::Tls(s) => s.sock.set_read_timeout(t),
        }
    }

    pub fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(t),
            Stream::Unix(s) => s.set_write_timeout(t),
            Stream::Tls(s) => s.sock.set_write_timeout(t),
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
            Stream::Tls(s) => {
                let (conn, sock) = s.into_parts();
                MioStream::Tls(Box::new(TlsMio::new(conn, sock.into_mio()?)))
            }
        })
    }
}

/// A blocking connection whose reads and writes, all together, end
/// within one time (each one's own timeout is what is left of it): a
/// server answering a byte at a time cannot hold it longer.
pub struct Deadlined<'a> {
    stream: &'a mut Stream,
    until: Instant,
    within: Duration,
}

impl<'a> Deadlined<'a> {
    pub fn new(stream: &'a mut Stream, within: Duration) -> Self {
        Deadlined {
            stream,
            until: Instant::now() + within,
            within,
        }
    }

    /// What is left of the time, or the error that says it ran out.
    fn left(&self) -> io::Result<Duration> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(self.out_of_time());
        }
        Ok(left)
    }

    fn out_of_time(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!("not done within {:?}", self.within),
        )
    }

    /// `e`, said as the time running out where it is a timeout.
    fn said(&self, e: io::Error) -> io::Error {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => self.out_of_time(),
            _ => e,
        }
    }
}

impl Read for Deadlined<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stream.set_read_timeout(Some(self.left()?))?;
        self.stream.read(buf).map_err(|e| self.said(e))
    }
}

impl Write for Deadlined<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.stream.set_write_timeout(Some(self.left()?))?;
        self.stream.write(buf).map_err(|e| self.said(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tls(s) => s.flush(),
            _ => Ok(()),
        }
    }
}

/// A non-blocking connection on an event loop.
pub enum MioStream {
    Tcp(mio::net::TcpStream),
    Unix(mio::net::UnixStream),
    Tls(Box<TlsMio<MioStream>>),
}

impl MioStream {
    /// Ask the kernel to time what this connection receives (TCP: the
    /// client's share of each latency, [`crate::driver::stamp`]). A Unix
    /// stream socket gives no receive timestamps, and is read plainly; a
    /// TLS session's records are read by rustls, unstamped.
    pub fn ask_stamps(&self) {
        if let MioStream::Tcp(s) = self {
            stamp::enable(s);
        }
    }

    /// One read, as `read(2)`: the bytes read and, when `stamped` and
    /// the kernel timed them, when the latest reached the socket (a
    /// `recvmsg`; a plain `read(2)` when not `stamped`). A Unix socket is
    /// read with `read(2)`, never `recvmsg`: a peer there can send
    /// descriptors (SCM_RIGHTS), which a `recvmsg` with room for control
    /// messages would install in this process.
    pub fn read_stamped(
        &mut self,
        buf: &mut [u8],
        stamped: bool,
    ) -> io::Result<(usize, Option<Instant>)> {
        match self {
            MioStream::Tcp(s) if stamped => stamp::read(s, buf),
            MioStream::Tcp(s) => Ok((s.read(buf)?, None)),
            MioStream::Unix(s) => Ok((s.read(buf)?, None)),
            MioStream::Tls(s) => Ok((s.read(buf)?, None)),
        }
    }

    /// Under TLS, with the handshake not yet done.
    pub fn handshaking(&self) -> bool {
        matches!(self, MioStream::Tls(s) if s.handshaking())
    }

    /// Move a TLS handshake on: true once it is done (at once without
    /// TLS).
    pub fn handshake(&mut self) -> io::Result<bool> {
        match self {
            MioStream::Tls(s) => s.handshake(),
            _ => Ok(true),
        }
    }

    /// The error a connection being opened ended with, if any.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        match self {
            MioStream::Tcp(s) => s.take_error(),
            MioStream::Unix(s) => s.take_error(),
            MioStream::Tls(s) => s.sock.take_error(),
        }
    }

    /// No Nagle's delay (TCP; nothing to do on a Unix socket).
    pub fn set_nodelay(&self, on: bool) -> io::Result<()> {
        match self {
            MioStream::Tcp(s) => s.set_nodelay(on),
            MioStream::Unix(_) => Ok(()),
            MioStream::Tls(s) => s.sock.set_nodelay(on),
        }
    }
}

impl AsRawFd for MioStream {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            MioStream::Tcp(s) => s.as_raw_fd(),
            MioStream::Unix(s) => s.as_raw_fd(),
            MioStream::Tls(s) => s.sock.as_raw_fd(),
        }
    }
}

impl AsFd for MioStream {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            MioStream::Tcp(s) => s.as_fd(),
            MioStream::Unix(s) => s.as_fd(),
            MioStream::Tls(s) => s.sock.as_fd(),
        }
    }
}

impl Read for MioStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            MioStream::Tcp(s) => s.read(buf),
            MioStream::Unix(s) => s.read(buf),
            MioStream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for MioStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            MioStream::Tcp(s) => s.write(buf),
            MioStream::Unix(s) => s.write(buf),
            MioStream::Tls(s) => s.write(buf),
        }
    }

    /// Under TLS: send the records the socket has room for.
    fn flush(&mut self) -> io::Result<()> {
        match self {
            MioStream::Tls(s) => s.flush(),
            _ => Ok(()),
        }
    }
}

impl Source for MioStream {
    fn register(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            MioStream::Tcp(s) => s.register(r, t, i),
            MioStream::Unix(s) => s.register(r, t, i),
            MioStream::Tls(s) => s.sock.register(r, t, i),
        }
    }

    fn reregister(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            MioStream::Tcp(s) => s.reregister(r, t, i),
            MioStream::Unix(s) => s.reregister(r, t, i),
            MioStream::Tls(s) => s.sock.reregister(r, t, i),
        }
    }

    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        match self {
            MioStream::Tcp(s) => s.deregister(r),
            MioStream::Unix(s) => s.deregister(r),
            MioStream::Tls(s) => s.sock.deregister(r),
        }
    }
}

/// The `Host` an HTTP request to `e` names when nothing else says: the
/// TCP address, or `localhost` for a Unix socket.
pub fn host_of(e: &Endpoint) -> String {
    match e {
        Endpoint::Tcp(a) => a.to_string(),
        Endpoint::Unix(_) => "localhost".into(),
        Endpoint::Tls(t) => host_of(&t.under),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
    use std::io::IoSlice;
    use std::os::unix::net::UnixStream;

    /// How many of this process's descriptors are `fd`'s socket (other
    /// tests open and close descriptors meanwhile: only these count).
    fn copies_of(fd: RawFd) -> usize {
        let what = |p: &Path| std::fs::read_link(p).ok();
        let target = what(Path::new(&format!("/proc/self/fd/{fd}"))).unwrap();
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| what(&e.ok()?.path()))
            .filter(|t| *t == target)
            .count()
    }

    #[test]
    fn descriptors_a_unix_server_sends_are_never_installed() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        let mut ours = MioStream::Unix(mio::net::UnixStream::from_std(ours));
        ours.ask_stamps();
        assert_eq!(copies_of(theirs.as_raw_fd()), 1);
        // Twelve descriptors with each reply, as a hostile server may send.
        let fds = [theirs.as_raw_fd(); 12];
        let cmsg = [ControlMessage::ScmRights(&fds)];
        for _ in 0..10 {
            let sent = sendmsg::<()>(
                theirs.as_raw_fd(),
                &[IoSlice::new(b"+OK\r\n")],
                &cmsg,
                MsgFlags::empty(),
                None,
            );
            sent.unwrap();
            let mut buf = [0u8; 64];
            let (n, at) = ours.read_stamped(&mut buf, true).unwrap();
            assert_eq!((&buf[..n], at), (&b"+OK\r\n"[..], None));
        }
        assert_eq!(
            copies_of(theirs.as_raw_fd()),
            1,
            "the peer's descriptors were installed"
        );
    }

    #[test]
    fn a_greeting_answered_a_byte_at_a_time_ends_within_its_time() {
        use crate::resp::commands::{Auth, Greeting};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let at = Endpoint::Tcp(listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 256];
            let _ = s.read(&mut buf);
            // A status line that never ends, a byte every 50 ms, for 10 s.
            let _ = s.write_all(b"+");
            for _ in 0..200 {
                std::thread::sleep(Duration::from_millis(50));
                if s.write_all(b"O").is_err() {
                    return;
                }
            }
        });
        let mut stream = at.connect(Duration::from_secs(5)).unwrap();
        let auth = Auth {
            user: None,
            password: "secret".into(),
        };
        let greeting = Greeting::new(Some(&auth), None);
        let said = greeting
            .send(&mut Deadlined::new(&mut stream, Duration::from_millis(500)))
            .expect_err("a greeting never answered");
        assert_eq!(said.kind(), io::ErrorKind::TimedOut, "{said}");
    }

    #[test]
    fn a_unix_listener_that_never_accepts_times_the_connect_out() {
        use nix::sys::socket::{bind, listen, socket, AddressFamily, Backlog, SockFlag};
        use nix::sys::socket::{SockType, UnixAddr};
        let dir = std::env::temp_dir().join(format!("serverlab-unix-full-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let fd = socket(
            AddressFamily::Unix,
            SockType::Stream,
            SockFlag::empty(),
            None,
        )
        .unwrap();
        bind(fd.as_raw_fd(), &UnixAddr::new(&dir).unwrap()).unwrap();
        listen(&fd, Backlog::new(1).unwrap()).unwrap();
        let at = Endpoint::Unix(dir.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            // The backlog fills (the kernel keeps backlog + 1), then a
            // connect must end within its timeout, not block for ever.
            let mut held = Vec::new();
            let end = loop {
                match at.connect(Duration::from_millis(200)) {
                    Ok(s) if held.len() < 16 => held.push(s),
                    Ok(_) => break Ok(()),
                    Err(e) => break Err(e),
                }
            };
            let _ = tx.send(end.map_err(|e| (e.kind(), e.to_string())));
        });
        let end = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("a connect to a full backlog blocked");
        let _ = std::fs::remove_file(&dir);
        let (kind, said) = end.expect_err("a listener that never accepts took 17 connections");
        assert_eq!(kind, io::ErrorKind::TimedOut, "{said}");
        assert!(said.contains("backlog is full"), "{said}");
    }
}
