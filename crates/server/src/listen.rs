//! Listening sockets, with SO_REUSEPORT when several loops share a port.

use socket2::{Domain, Socket, Type};
use std::net::{SocketAddr, TcpListener};

const BACKLOG: i32 = 1024;

/// Bind `addr`. With `reuse_port`, more listeners may bind the same port
/// and the kernel spreads incoming connections over them.
pub fn bind(addr: SocketAddr, reuse_port: bool) -> std::io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    if reuse_port {
        socket.set_reuse_port(true)?;
    }
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}
