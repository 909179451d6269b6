//! Loops and connections that fail, over real sockets.

use crate::{Server, ServerConfig, Shutdown, StrategyKind};
use serverlab_service::echo::EchoService;
use serverlab_util::server_stats::ServerStats;
use serverlab_util::CpuSet;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Peers whose connection's registration fails, as out of epoll watches.
static REFUSED: Mutex<Vec<SocketAddr>> = Mutex::new(Vec::new());

/// The test hook `register` calls.
pub(super) fn refuse_registration_of(peer: SocketAddr) -> io::Result<()> {
    if REFUSED.lock().unwrap().contains(&peer) {
        return Err(io::Error::from_raw_os_error(libc::ENOSPC));
    }
    Ok(())
}

/// An echo server of `cfg`'s strategy, running on a thread of its own
/// (binding pins that thread under `--cpus`): its address and stop, and
/// where its outcome arrives.
fn start(
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
        addr_tx.send(server.local_addr()).unwrap();
        let _ = done_tx.send(server.run());
    });
    (addr_rx.recv().unwrap(), stop, done_rx)
}

fn config(threads: usize) -> ServerConfig {
    let mut cfg = ServerConfig::new("127.0.0.1:0".parse().unwrap(), StrategyKind::SharedNothing);
    cfg.threads = Some(threads);
    cfg
}

/// One loop cannot pin its thread (its CPU is not one this process may
/// use): the whole server stops, with that error, without being asked.
#[test]
fn a_loop_that_fails_stops_the_whole_server_with_its_error() {
    let allowed = CpuSet::allowed().unwrap();
    let Some(bad) = (0..1024).rev().find(|c| !allowed.cpus().contains(c)) else {
        return; // every CPU number is allowed: none to fail on
    };
    let mut cfg = config(2);
    let cpus = format!("{},{bad}", allowed.cpus()[0]);
    cfg.cpus = Some(CpuSet::parse_unchecked(&cpus).unwrap());
    let (addr, _stop, done) = start(cfg);
    let outcome = done
        .recv_timeout(Duration::from_secs(10))
        .expect("the server still runs: the loop that failed did not stop it");
    let err = outcome.expect_err("a loop failed");
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL), "{err}");
    assert!(
        TcpStream::connect(addr).is_err(),
        "no loop serves on once the server has stopped"
    );
}

/// A connection that cannot be registered with its loop's reactor is
/// closed (and counted), and the loop serves the next one.
#[test]
fn a_connection_that_cannot_be_served_costs_only_itself() {
    let (addr, stop, done) = start(config(1));
    let refused = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    refused
        .bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
        .unwrap();
    let peer = refused.local_addr().unwrap().as_socket().unwrap();
    REFUSED.lock().unwrap().push(peer);
    refused.connect(&addr.into()).unwrap();
    let mut refused = TcpStream::from(refused);
    refused
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let closed = refused.read(&mut [0; 16]);
    assert!(
        matches!(closed, Ok(0))
            || closed
                .as_ref()
                .is_err_and(|e| e.kind() != io::ErrorKind::WouldBlock),
        "closed by the server: {closed:?}"
    );

    let mut served = TcpStream::connect(addr).unwrap();
    served
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    served.write_all(b"abc\n").unwrap();
    let mut reply = [0; 4];
    served
        .read_exact(&mut reply)
        .expect("the next connection is served");
    assert_eq!(&reply, b"cba\n");
    drop(served);

    stop.trigger();
    let stats = done
        .recv_timeout(Duration::from_secs(10))
        .expect("stopped")
        .expect("no loop failed");
    let c = stats.connections;
    assert_eq!((c.accepted, c.closed), (2, 2), "{c:?}");
}
