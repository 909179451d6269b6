//! Listening sockets: one, or a group sharing a port with SO_REUSEPORT
//! when several loops accept on it — only on a port no one else serves.
//!
//! SO_REUSEPORT lets any socket of the same user bind a port whose
//! listeners all set it, so a second server started on a served port would
//! silently join the group and take part of the new connections, with
//! state of its own. A group is therefore bound only after an exclusive
//! probe: a socket *without* SO_REUSEPORT binds the address first, which
//! fails if anything listens there (with or without SO_REUSEPORT), and
//! holds it while the server takes the port's lock, an abstract Unix
//! socket named after the address; the group is bound once the probe is
//! closed. The lock, held for the server's life and released by the
//! kernel when the process ends however it ends, closes the window between
//! probe and group against another serverlab starting on the same port at
//! the same instant.
//!
//! A Unix domain socket (`--addr unix:PATH`) is one listener at a path.
//! Binding it replaces a stale socket file (one nobody listens on: a
//! connect to it is refused, as after a server that was killed) but never
//! a live one, nor a file that is not a socket; the server claims the path
//! among serverlab processes the same way as a port, so two starting at
//! once cannot both take a stale file for theirs; and the file is removed
//! when the server stops (if it is still the one bound). A strategy that
//! wants a listener per loop gets the one socket, shared: SO_REUSEPORT
//! has no meaning for a Unix socket, so the kernel cannot spread its
//! connections; the loops race to accept each one.

use serverlab_service::Peer;
use socket2::{Domain, SockAddr, Socket, Type};
use std::fmt;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::{UnixDatagram, UnixListener};
use std::path::{Path, PathBuf};

/// How `--addr` writes a Unix socket: `unix:PATH`.
pub const UNIX: &str = "unix:";

/// The longest path a Unix socket may have, in bytes: `sun_path` holds
/// 108 with the terminating NUL.
pub const UNIX_PATH_MAX: usize = 107;

/// Where a server listens: a TCP address, or a Unix domain socket's path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ListenAddr {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

impl ListenAddr {
    /// The TCP address, if it is one.
    pub fn tcp(&self) -> Option<SocketAddr> {
        match self {
            ListenAddr::Tcp(addr) => Some(*addr),
            ListenAddr::Unix(_) => None,
        }
    }
}

impl From<SocketAddr> for ListenAddr {
    fn from(addr: SocketAddr) -> Self {
        ListenAddr::Tcp(addr)
    }
}

/// As `--addr` takes it: `HOST:PORT`, or `unix:PATH`.
impl fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAddr::Tcp(addr) => write!(f, "{addr}"),
            ListenAddr::Unix(path) => write!(f, "{UNIX}{}", path.display()),
        }
    }
}

/// A listening socket, as the strategies get it.
#[derive(Debug)]
pub(crate) enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

impl Listener {
    pub(crate) fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Listener::Tcp(l) => l.set_nonblocking(on),
            Listener::Unix(l) => l.set_nonblocking(on),
        }
    }

    /// Accept a connection (blocking, unless the listener is not), of
    /// either family as a `TcpStream` (see [`MioListener`]).
    pub(crate) fn accept(&self) -> io::Result<(TcpStream, Peer)> {
        match self {
            Listener::Tcp(l) => l.accept().map(|(s, a)| (s, Peer::Tcp(a))),
            Listener::Unix(l) => l
                .accept()
                .map(|(s, _)| (TcpStream::from(OwnedFd::from(s)), Peer::Unix)),
        }
    }
}

/// The peer of a connection of either family accepted by other means
/// (uring's multishot accept).
pub(crate) fn peer_of(stream: &impl AsFd) -> io::Result<Peer> {
    let addr = socket2::SockRef::from(stream).peer_addr()?;
    Ok(addr.as_socket().map_or(Peer::Unix, Peer::Tcp))
}

impl AsFd for Listener {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Listener::Tcp(l) => l.as_fd(),
            Listener::Unix(l) => l.as_fd(),
        }
    }
}

impl AsRawFd for Listener {
    fn as_raw_fd(&self) -> RawFd {
        self.as_fd().as_raw_fd()
    }
}

/// A listener on a mio poll or tokio's reactor (non-blocking).
///
/// A connection of either family is handed on as a `TcpStream`, the
/// strategies' one stream type: everything they do with a connection —
/// read, write, shut down, `SO_LINGER`, poll — is the socket layer's, the
/// same calls for a Unix stream socket as for TCP, so no strategy has a
/// second copy of its code for Unix. What differs by family is done here
/// and in `accept.rs`: the accept, the peer ([`Peer::Unix`] has no
/// address) and `TCP_NODELAY` (TCP only).
#[derive(Debug)]
pub(crate) enum MioListener {
    Tcp(mio::net::TcpListener),
    Unix(mio::net::UnixListener),
}

impl MioListener {
    pub(crate) fn new(listener: Listener) -> io::Result<Self> {
        listener.set_nonblocking(true)?;
        Ok(match listener {
            Listener::Tcp(l) => MioListener::Tcp(mio::net::TcpListener::from_std(l)),
            Listener::Unix(l) => MioListener::Unix(mio::net::UnixListener::from_std(l)),
        })
    }

    /// Accept a connection (non-blocking).
    pub(crate) fn accept(&self) -> io::Result<(mio::net::TcpStream, Peer)> {
        match self {
            MioListener::Tcp(l) => l.accept().map(|(s, a)| (s, Peer::Tcp(a))),
            MioListener::Unix(l) => l
                .accept()
                .map(|(s, _)| (mio::net::TcpStream::from(OwnedFd::from(s)), Peer::Unix)),
        }
    }
}

impl AsFd for MioListener {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            MioListener::Tcp(l) => l.as_fd(),
            MioListener::Unix(l) => l.as_fd(),
        }
    }
}

impl AsRawFd for MioListener {
    fn as_raw_fd(&self) -> RawFd {
        self.as_fd().as_raw_fd()
    }
}

impl mio::event::Source for MioListener {
    fn register(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: mio::Interest,
    ) -> io::Result<()> {
        match self {
            MioListener::Tcp(l) => l.register(registry, token, interests),
            MioListener::Unix(l) => l.register(registry, token, interests),
        }
    }

    fn reregister(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: mio::Interest,
    ) -> io::Result<()> {
        match self {
            MioListener::Tcp(l) => l.reregister(registry, token, interests),
            MioListener::Unix(l) => l.reregister(registry, token, interests),
        }
    }

    fn deregister(&mut self, registry: &mio::Registry) -> io::Result<()> {
        match self {
            MioListener::Tcp(l) => l.deregister(registry),
            MioListener::Unix(l) => l.deregister(registry),
        }
    }
}

/// What a server holds while it runs: its claim on the port its
/// listeners share, or on its Unix socket's path (and the socket file,
/// removed when this is dropped).
/// The socket file goes before the claim on its path (fields drop in
/// order).
#[allow(dead_code)] // held, never read
pub(crate) enum Claim {
    Port(PortLock),
    Unix(SocketFile, PortLock),
}

/// The listeners a server wants (`count` sharing one address, or one),
/// bound at `addr`, where they listen, and the claim to hold meanwhile.
pub(crate) fn bind_listeners(
    addr: &ListenAddr,
    count: Option<usize>,
) -> io::Result<(Vec<Listener>, ListenAddr, Option<Claim>)> {
    let (listeners, claim) = match (addr, count) {
        (ListenAddr::Tcp(addr), None) => (vec![bind(*addr, false)?], None),
        (ListenAddr::Tcp(addr), Some(count)) => {
            let (group, lock) = bind_group(*addr, count)?;
            (group, Some(Claim::Port(lock)))
        }
        (ListenAddr::Unix(path), count) => {
            let (listener, file, lock) = bind_unix(path)?;
            // The one socket, for each loop that wants one.
            let more = (1..count.unwrap_or(1))
                .map(|_| listener.try_clone().map(Listener::Unix))
                .collect::<io::Result<Vec<_>>>()?;
            let mut all = vec![Listener::Unix(listener)];
            all.extend(more);
            let at = ListenAddr::Unix(path.clone());
            return Ok((all, at, Some(Claim::Unix(file, lock))));
        }
    };
    let at = ListenAddr::Tcp(listeners[0].local_addr()?);
    let listeners = listeners.into_iter().map(Listener::Tcp).collect();
    Ok((listeners, at, claim))
}

/// Where Linux keeps the ceiling on a listen backlog.
const SOMAXCONN: &str = "/proc/sys/net/core/somaxconn";
/// The backlog when the ceiling cannot be read: Linux's default since 5.4.
const DEFAULT_BACKLOG: u32 = 4096;

/// The listen backlog every listener is given: as large as the system
/// allows, `net.core.somaxconn` (Linux silently lowers a larger one to
/// it). It is where new connections wait while the server is full
/// (`room.rs`): a client whose handshake completes there waits, its
/// request queued, until the server accepts it; only past it does the
/// kernel drop handshakes (the client retries its SYN, a second later).
/// Raising `somaxconn` (`sysctl net.core.somaxconn=N`) raises it.
pub fn backlog() -> u32 {
    static BACKLOG: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *BACKLOG.get_or_init(|| {
        std::fs::read_to_string(SOMAXCONN)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
            .filter(|&n| n > 0)
            .unwrap_or(DEFAULT_BACKLOG)
            .min(i32::MAX as u32)
    })
}

/// Bind `addr`. With `reuse_port`, more listeners may bind the same port
/// and the kernel spreads incoming connections over them.
pub fn bind(addr: SocketAddr, reuse_port: bool) -> io::Result<TcpListener> {
    let socket = socket(addr)?;
    if reuse_port {
        socket.set_reuse_port(true)?;
    }
    socket.bind(&addr.into())?;
    socket.listen(backlog() as i32)?;
    Ok(socket.into())
}

/// This process's claim on a port its listeners share; dropping it
/// releases the claim.
pub struct PortLock(#[allow(dead_code)] UnixDatagram);

/// `count` listeners sharing `addr`'s port with SO_REUSEPORT, on a port no
/// other socket serves (port 0: a free one). Fails with `AddrInUse`, saying
/// so, if the port is served.
pub fn bind_group(addr: SocketAddr, count: usize) -> io::Result<(Vec<TcpListener>, PortLock)> {
    let probe = socket(addr)?;
    probe.bind(&addr.into()).map_err(|e| served(addr, e))?;
    let addr = probe
        .local_addr()?
        .as_socket()
        .ok_or_else(|| io::Error::other("not an internet address"))?;
    let lock = lock_port(addr)?;
    drop(probe);
    let listeners = (0..count.max(1))
        .map(|_| bind(addr, true).map_err(|e| served(addr, e)))
        .collect::<io::Result<_>>()?;
    Ok((listeners, lock))
}

fn socket(addr: SocketAddr) -> io::Result<Socket> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    // Rebinding over connections of a previous run in TIME_WAIT; never
    // over a listener.
    socket.set_reuse_address(true)?;
    Ok(socket)
}

/// Claim `addr` among serverlab processes.
fn lock_port(addr: SocketAddr) -> io::Result<PortLock> {
    claim(&format!("serverlab/tcp/{addr}")).map_err(|e| served(addr, e))
}

/// Claim `name` among serverlab processes: an abstract Unix socket
/// (Linux), unique per network namespace and gone with its process.
fn claim(name: &str) -> io::Result<PortLock> {
    use std::os::linux::net::SocketAddrExt;
    let unix = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    UnixDatagram::bind_addr(&unix).map(PortLock)
}

/// A Unix socket file this server bound: removed when dropped, if the
/// path still names that file (not one a later server bound there).
pub(crate) struct SocketFile {
    path: PathBuf,
    dev: u64,
    ino: u64,
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        let ours = std::fs::symlink_metadata(&self.path)
            .is_ok_and(|m| m.dev() == self.dev && m.ino() == self.ino);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Listen on a Unix socket at `path`, replacing a stale socket file there
/// (see the module's doc): the listener, its file, and the claim on the
/// path to hold while it serves.
fn bind_unix(path: &Path) -> io::Result<(UnixListener, SocketFile, PortLock)> {
    let len = path.as_os_str().len();
    if len == 0 || len > UNIX_PATH_MAX {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "--addr {UNIX}{}: a Unix socket's path is 1 to {UNIX_PATH_MAX} bytes, this one \
                 {len}: use a shorter path (a relative one is taken from the working directory)",
                path.display()
            ),
        ));
    }
    let lock = claim(&path_claim(path)).map_err(|e| path_served(path, e))?;
    clear_stale(path)?;
    let socket = Socket::new(Domain::UNIX, Type::STREAM, None)?;
    socket
        .bind(&SockAddr::unix(path)?)
        .map_err(|e| path_served(path, e))?;
    let meta = std::fs::symlink_metadata(path)?;
    let file = SocketFile {
        path: path.to_owned(),
        dev: meta.dev(),
        ino: meta.ino(),
    };
    socket.listen(backlog() as i32)?;
    Ok((socket.into(), file, lock))
}

/// The name serverlab processes claim `path` by: a digest of it made
/// absolute (its directory resolved, so every spelling of the path is one
/// name; an abstract name is as short as a path must be).
fn path_claim(path: &Path) -> String {
    use std::hash::{Hash, Hasher};
    let absolute = match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            std::fs::canonicalize(dir).map_or_else(|_| path.to_owned(), |d| d.join(name))
        }
        _ => path.to_owned(),
    };
    let mut h = std::collections::hash_map::DefaultHasher::new();
    absolute.hash(&mut h);
    format!("serverlab/unix/{:016x}", h.finish())
}

/// Remove a stale socket file at `path`: one no server listens on (a
/// connect is refused). A socket someone listens on, or a file that is
/// not a socket, is refused.
fn clear_stale(path: &Path) -> io::Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        other => other?,
    };
    if !meta.file_type().is_socket() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} exists and is not a socket: refusing to replace it (remove it, or serve \
                 at another path)",
                path.display()
            ),
        ));
    }
    // Not blocking: a live server whose backlog is full answers EAGAIN
    // rather than holding the connect.
    let probe = Socket::new(Domain::UNIX, Type::STREAM, None)?;
    probe.set_nonblocking(true)?;
    match probe.connect(&SockAddr::unix(path)?) {
        Err(e) if e.raw_os_error() == Some(libc::ECONNREFUSED) => std::fs::remove_file(path),
        Ok(()) => Err(path_served(path, io::ErrorKind::AddrInUse.into())),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
            Err(path_served(path, io::ErrorKind::AddrInUse.into()))
        }
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!("cannot tell whether {} is served: {e}", path.display()),
        )),
    }
}

/// `AddrInUse` worded for a Unix socket someone serves.
fn path_served(path: &Path, e: io::Error) -> io::Error {
    if e.kind() != io::ErrorKind::AddrInUse {
        return e;
    }
    io::Error::new(
        io::ErrorKind::AddrInUse,
        format!(
            "{} is already served (a server listens on that Unix socket): refusing to \
             replace it",
            path.display()
        ),
    )
}

/// `AddrInUse` worded for a port someone serves.
fn served(addr: SocketAddr, e: io::Error) -> io::Error {
    if e.kind() != io::ErrorKind::AddrInUse {
        return e;
    }
    io::Error::new(
        io::ErrorKind::AddrInUse,
        format!(
            "port {} is already served (another listener is bound to {addr}): \
             refusing to share it",
            addr.port()
        ),
    )
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_group_binds_only_a_port_no_one_serves() {
        let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let (group, _lock) = bind_group(any, 3).unwrap();
        let addr = group[0].local_addr().unwrap();
        assert!(group.iter().all(|l| l.local_addr().unwrap() == addr));
        // A second group, and a plain listener, on the same port: refused.
        let e = bind_group(addr, 2).err().expect("the port is served");
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
        assert!(e.to_string().contains("already served"), "{e}");
        assert!(bind(addr, false).is_err());
        // A group on a port a plain listener serves: refused too.
        let plain = bind(any, false).unwrap();
        let e = bind_group(plain.local_addr().unwrap(), 2).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse, "{e}");
    }

    /// A directory of this test's own, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir()
                .join(format!("serverlab-listen-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn unix(path: &Path) -> ListenAddr {
        ListenAddr::Unix(path.to_owned())
    }

    /// A Unix socket is served at its path, which a second server is
    /// refused while the first runs, and is gone once it stops.
    #[test]
    fn a_served_unix_socket_is_refused_and_removed_at_the_stop() {
        let dir = Scratch::new("served");
        let path = dir.0.join("s.sock");
        let (listeners, at, claim) = bind_listeners(&unix(&path), None).unwrap();
        assert_eq!(at.to_string(), format!("unix:{}", path.display()));
        assert!(std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_socket());
        let e = bind_listeners(&unix(&path), None).err().expect("served");
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse, "{e}");
        assert!(e.to_string().contains("already served"), "{e}");
        // Another spelling of the same path is the same claim.
        let other = dir.0.join(".").join("s.sock");
        let e = bind_listeners(&unix(&other), None).err().expect("served");
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse, "{e}");
        assert!(path.exists(), "a refused server leaves the file alone");
        drop((listeners, claim));
        assert!(!path.exists(), "removed when the server stops");
    }

    /// A socket file nobody listens on (its server was killed) is
    /// replaced; a socket some other program listens on is not; nor is a
    /// file that is not a socket.
    #[test]
    fn only_a_stale_socket_file_is_replaced() {
        let dir = Scratch::new("stale");
        let path = dir.0.join("s.sock");
        drop(UnixListener::bind(&path).unwrap());
        assert!(path.exists(), "left behind, stale");
        let (listeners, _, claim) = bind_listeners(&unix(&path), None).unwrap();
        let _client = std::os::unix::net::UnixStream::connect(&path).unwrap();
        let (_, peer) = listeners[0]
            .accept()
            .expect("the client reached the new socket");
        assert_eq!(peer, Peer::Unix);
        drop((listeners, claim));

        let live = dir.0.join("live.sock");
        let other = UnixListener::bind(&live).unwrap();
        let e = bind_listeners(&unix(&live), None).err().expect("live");
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse, "{e}");
        drop(other);

        let file = dir.0.join("notes.txt");
        std::fs::write(&file, "keep me").unwrap();
        let e = bind_listeners(&unix(&file), None)
            .err()
            .expect("not a socket");
        assert!(e.to_string().contains("is not a socket"), "{e}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
    }

    /// The stop removes only the file it bound: one a later server bound
    /// at the same path stays.
    #[test]
    fn the_stop_removes_only_its_own_socket_file() {
        let dir = Scratch::new("own");
        let path = dir.0.join("s.sock");
        let (listeners, _, claim) = bind_listeners(&unix(&path), None).unwrap();
        std::fs::remove_file(&path).unwrap();
        let successor = UnixListener::bind(&path).unwrap();
        drop((listeners, claim));
        assert!(path.exists(), "the successor's file stays");
        drop(successor);
    }

    /// Another serverlab's claim on a path refuses it before any file is
    /// there: two servers starting at once cannot both take it.
    #[test]
    fn a_claimed_path_is_refused() {
        let dir = Scratch::new("claimed");
        let path = dir.0.join("s.sock");
        let other = claim(&path_claim(&path)).unwrap();
        let e = bind_listeners(&unix(&path), None).err().expect("claimed");
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse, "{e}");
        assert!(!path.exists());
        drop(other);
        let (_listeners, _, _claim) = bind_listeners(&unix(&path), None).unwrap();
    }

    /// A path longer than a socket's address holds is refused, naming
    /// `--addr`; a strategy with a listener per loop gets the one socket.
    #[test]
    fn long_paths_are_refused_and_loops_share_the_socket() {
        let dir = Scratch::new("long");
        let long = dir.0.join("x".repeat(UNIX_PATH_MAX));
        let e = bind_listeners(&unix(&long), None).err().expect("too long");
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("--addr unix:"), "{e}");
        let path = dir.0.join("s.sock");
        let (listeners, _, _claim) = bind_listeners(&unix(&path), Some(3)).unwrap();
        assert_eq!(listeners.len(), 3);
        for l in &listeners {
            let Listener::Unix(l) = l else {
                panic!("a Unix listener")
            };
            assert_eq!(l.local_addr().unwrap().as_pathname(), Some(path.as_path()));
        }
    }

    #[test]
    fn the_lock_alone_refuses_a_second_claim() {
        let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let first = lock_port(addr).unwrap();
        assert_eq!(
            lock_port(addr).err().unwrap().kind(),
            io::ErrorKind::AddrInUse
        );
        drop(first);
        assert!(lock_port(addr).is_ok(), "released with its holder");
    }
}
