//! Why a check could not run at all (as opposed to a case failing).

use std::net::SocketAddr;

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The first connection failed: nothing was checked.
    #[error(
        "cannot connect to {addr} ({source}): is a server running? start one with `serverlab serve {protocol} --addr {addr}` (in another terminal), or give the address of yours"
    )]
    Unreachable {
        addr: SocketAddr,
        protocol: &'static str,
        source: std::io::Error,
    },
    /// The server answered nothing, or not as a server of the protocol
    /// would, to the first request: said in one line, with what to do.
    #[error("{0}")]
    NotTheProtocol(String),
    /// The command line asked for something that does not exist.
    #[error("{0}")]
    Usage(String),
    /// The server answered, but not well enough to start checking.
    #[error("{0}")]
    Setup(String),
}
