//! For tests: a whole server, bound to a real port and run on a thread.

use crate::{Server, ServerConfig, Shutdown};
use serverlab_service::echo::EchoService;
use serverlab_util::server_stats::ServerStats;
use std::io;
use std::net::SocketAddr;
use std::sync::{mpsc, Arc};

/// An echo server as `cfg` says, running on a thread of its own (binding
/// pins that thread under `--cpus`): its address, its stop, and where
/// its outcome arrives.
pub(crate) fn start(
    cfg: ServerConfig,
) -> (
    SocketAddr,
    Shutdown,
    mpsc::Receiver<io::Result<ServerStats>>,
) {
    let stop = Shutdown::new();
    let (addr_tx, addr_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel();
    let s = stop.clone();
    std::thread::spawn(move || {
        let server = Server::bind(Arc::new(EchoService::new(64)), &cfg, s).unwrap();
        addr_tx.send(server.local_addr().tcp().unwrap()).unwrap();
        let _ = done_tx.send(server.run());
    });
    (addr_rx.recv().unwrap(), stop, done_rx)
}
