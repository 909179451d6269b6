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

use socket2::{Domain, Socket, Type};
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::net::UnixDatagram;

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

/// Claim `addr` among serverlab processes: an abstract Unix socket
/// (Linux), unique per network namespace and gone with its process.
fn lock_port(addr: SocketAddr) -> io::Result<PortLock> {
    use std::os::linux::net::SocketAddrExt;
    let name = format!("serverlab/tcp/{addr}");
    let unix = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    UnixDatagram::bind_addr(&unix)
        .map(PortLock)
        .map_err(|e| served(addr, e))
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
