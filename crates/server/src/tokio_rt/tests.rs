//! A connection that fails, over real sockets (a loop that fails:
//! `listeners.rs`).

use crate::test_server::start;
use crate::{ServerConfig, StrategyKind};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Mutex;
use std::time::Duration;

/// Peers whose connection's registration fails, as out of epoll watches.
static REFUSED: Mutex<Vec<SocketAddr>> = Mutex::new(Vec::new());

/// The test hook `register` calls.
pub(super) fn refuse_registration_of(peer: serverlab_service::Peer) -> io::Result<()> {
    let serverlab_service::Peer::Tcp(peer) = peer else {
        return Ok(());
    };
    if REFUSED.lock().unwrap().contains(&peer) {
        return Err(io::Error::from_raw_os_error(libc::ENOSPC));
    }
    Ok(())
}

fn config(threads: usize) -> ServerConfig {
    let mut cfg = ServerConfig::new(
        "127.0.0.1:0".parse::<std::net::SocketAddr>().unwrap(),
        StrategyKind::SharedNothing,
    );
    cfg.threads = Some(threads);
    cfg
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
