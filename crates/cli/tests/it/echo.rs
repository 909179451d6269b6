//! The echo protocol (the transport ceiling) against every strategy.

use crate::support::*;

fn echo_suite(strategy: &str) {
    let server = ServerProc::start("echo", &["--strategy", strategy, "--max-request", "1000"]);
    let addr = server.addr;
    let mut c = Client::connect(addr);
    assert_eq!(c.req(b"hello"), b"olleh", "{strategy}");
    assert_eq!(c.req(b""), b"", "{strategy}");
    assert_eq!(c.req(b"\xff\x00"[..1].as_ref()), b"\xff", "{strategy}");
    // LF and CRLF: the CR is framing, the reply ends in LF.
    c.send(b"abc\r\nxy\n");
    assert_eq!(c.read_exact_bytes(7), b"cba\nyx\n", "{strategy}");
    // Split and pipelined.
    for &b in b"split\0" {
        c.send(&[b]);
    }
    assert_eq!(c.recv(), b"tilps");
    let mut wire = Vec::new();
    for i in 0..500 {
        wire.extend_from_slice(format!("{i:04}\0").as_bytes());
    }
    c.send(&wire);
    for i in 0..500 {
        let want: String = format!("{i:04}").chars().rev().collect();
        assert_eq!(c.recv(), want.as_bytes(), "{strategy}");
    }
    // Oversize closes only that connection.
    let mut bad = Client::connect(addr);
    let _ = std::io::Write::write_all(&mut bad.stream, &[b'q'; 5000]);
    assert!(bad.closed_by_server(), "{strategy}");
    assert_eq!(c.req(b"ok"), b"ko", "{strategy}");
    // 64 connections in lock-step.
    let mut conns: Vec<Client> = (0..64).map(|_| Client::connect(addr)).collect();
    for round in 0..5 {
        for (i, c) in conns.iter_mut().enumerate() {
            c.send(format!("{i}-{round}\0").as_bytes());
        }
        for (i, c) in conns.iter_mut().enumerate() {
            let want: String = format!("{i}-{round}").chars().rev().collect();
            assert_eq!(c.recv(), want.as_bytes());
        }
    }
    let (status, out) = server.stop();
    assert!(status.success(), "{strategy}: {status:?}");
    assert!(out.contains("oversize_frames 1"), "{strategy}: {out}");
}

#[test]
fn echo_every_strategy() {
    std::thread::scope(|s| {
        for strategy in strategies() {
            s.spawn(move || echo_suite(strategy));
        }
    });
}

/// A client that sends and never reads cannot hold up a graceful stop:
/// past the drain limit its connection is dropped, every server thread
/// finishes, and only then are the final statistics taken (the connection
/// counted closed).
#[test]
fn stop_is_not_held_up_by_a_client_that_never_reads() {
    std::thread::scope(|s| {
        for strategy in strategies() {
            s.spawn(move || {
                let mut server = ServerProc::start("echo", &["--strategy", strategy]);
                let mut c = Client::connect(server.addr);
                c.stream
                    .set_write_timeout(Some(std::time::Duration::from_millis(500)))
                    .unwrap();
                let chunk = vec![b'x'; 1000]
                    .into_iter()
                    .chain([b'\n'])
                    .collect::<Vec<u8>>();
                // Fill both directions' socket buffers.
                while std::io::Write::write_all(&mut c.stream, &chunk).is_ok() {}
                server.signal(nix::sys::signal::Signal::SIGTERM);
                let status = server.wait_exit(std::time::Duration::from_secs(20));
                assert!(
                    status.is_some_and(|s| s.success()),
                    "{strategy}: {status:?}"
                );
                let out = server.stdout();
                assert!(out.contains("accepted 1, closed 1,"), "{strategy}: {out}");
            });
        }
    });
}

/// The write timeout holds for every protocol: a client that sends and
/// never reads is reset once its replies make no progress for
/// `--write-timeout`, and the server counts it.
#[test]
fn a_client_that_never_reads_is_reset() {
    std::thread::scope(|s| {
        for strategy in strategies() {
            s.spawn(move || {
                let server =
                    ServerProc::start("echo", &["--strategy", strategy, "--write-timeout", "1s"]);
                let mut c = Client::connect(server.addr);
                c.stream
                    .set_write_timeout(Some(std::time::Duration::from_secs(20)))
                    .unwrap();
                let chunk: Vec<u8> = [b'x'; 1000].into_iter().chain([b'\n']).collect();
                // Blocks once both directions' buffers are full, and fails
                // once the server resets the connection (or times out).
                let err = loop {
                    if let Err(e) = std::io::Write::write_all(&mut c.stream, &chunk) {
                        break e;
                    }
                };
                assert!(
                    !matches!(
                        err.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ),
                    "{strategy}: never reset"
                );
                let (status, out) = server.stop();
                assert!(status.success(), "{strategy}");
                assert!(out.contains("reset_write_timeout 1"), "{strategy}: {out}");
            });
        }
    });
}
