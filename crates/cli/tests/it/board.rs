//! The board protocol over real sockets, against every strategy × store.

use crate::support::*;
use nix::sys::signal::Signal;
use std::time::Duration;

/// Every conformance check against one fresh server.
fn conformance(strategy: &str, store: &str) {
    let server = ServerProc::start(
        "board",
        &words(&format!(
            "--strategy {strategy} --store {store} --max-request 65535"
        )),
    );
    let addr = server.addr;
    let ctx = format!("{strategy}/{store}");
    worked_examples(addr, &ctx);
    split_frames(addr, &ctx);
    pipelined_frames(addr, &ctx);
    lf_and_crlf(addr, &ctx);
    non_utf8_kept(addr, &ctx);
    large_message(addr, &ctx);
    oversize_closes_only_its_connection(addr, &ctx);
    concurrent_posters_get_dense_ids(addr, &ctx);
    many_lock_step_connections(addr, &ctx);
    let (status, out) = server.stop();
    assert!(status.success(), "{ctx}: exit {status:?}");
    assert!(out.contains("Final statistics"), "{ctx}: {out}");
}

// Every strategy × every store, from the code's lists.
per_strategy_and_store!(matrix, conformance);

/// The worked examples of docs/protocols/board.md (section 1.2.1), in
/// order, on a fresh server.
fn worked_examples(addr: std::net::SocketAddr, ctx: &str) {
    let mut c = Client::connect(addr);
    let steps: &[(&[u8], &[u8])] = &[
        (b"LIST", b""),
        (
            b"POST@Solar system#The dark side of the @moon is #dark.",
            b"0",
        ),
        (b"POST@#x", b"0"),
        (b"POST@night_sky#cloudy!", b"0"),
        (b"POST@Solar system#Mercury, Venus, Earth", b"1"),
        (b"LIST", b"@Solar system#@#@night_sky"),
        (b"COUNT@Solar system", b"2"),
        (b"COUNT@solar_system", b"0"),
        (b"READ@#0", b"x"),
        (
            b"READ@Solar system#0",
            b"The dark side of the @moon is #dark.",
        ),
        (b"READ@Solar system#1", b"Mercury, Venus, Earth"),
        (b"READ@Solar system#0001", b"Mercury, Venus, Earth"),
        (b"READ@night_sky#2", b""),
        (b"READ@night_sky#99999999999999999999999", b""),
        (b"READ@a#1#2", b""),
        (b"POST@a@b#c", b""),
        (b"POST@a#", b""),
        (b"post@a#b", b""),
        (b"LIST ", b""),
        (b"AAA", b""),
        (b"", b""),
        (b"COUNT@a", b"0"),
    ];
    for (req, want) in steps {
        assert_eq!(c.req(req), *want, "{ctx}: {:?}", text(req));
    }
    // The invalid requests created nothing.
    assert_eq!(c.req(b"LIST"), b"@Solar system#@#@night_sky", "{ctx}");
}

/// A request split into one-byte writes is still one request.
fn split_frames(addr: std::net::SocketAddr, ctx: &str) {
    let mut c = Client::connect(addr);
    for &b in b"POST@split#one byte at a time\0" {
        c.send(&[b]);
        std::thread::sleep(Duration::from_micros(200));
    }
    assert_eq!(c.recv(), b"0", "{ctx}");
    for &b in b"READ@split#0\0" {
        c.send(&[b]);
    }
    assert_eq!(c.recv(), b"one byte at a time", "{ctx}");
}

/// Many requests in one write: replies in request order.
fn pipelined_frames(addr: std::net::SocketAddr, ctx: &str) {
    let mut c = Client::connect(addr);
    let mut wire = Vec::new();
    for i in 0..300 {
        wire.extend_from_slice(format!("POST@pipe#m{i}\0").as_bytes());
        wire.extend_from_slice(format!("COUNT@pipe\0READ@pipe#{i}\0").as_bytes());
    }
    c.send(&wire);
    for i in 0..300u64 {
        assert_eq!(c.recv(), i.to_string().as_bytes(), "{ctx}: POST {i}");
        assert_eq!(
            c.recv(),
            (i + 1).to_string().as_bytes(),
            "{ctx}: COUNT after {i}"
        );
        assert_eq!(c.recv(), format!("m{i}").as_bytes(), "{ctx}: READ {i}");
    }
}

/// LF and CRLF framing; each reply ends with its request's terminator.
fn lf_and_crlf(addr: std::net::SocketAddr, ctx: &str) {
    let mut c = Client::connect(addr);
    c.send(b"POST@lf#a\nPOST@lf#b\r\nCOUNT@lf\0READ@lf#1\r\nnope\n");
    assert_eq!(c.read_exact_bytes(9), b"0\n1\n2\0b\n\n", "{ctx}");
}

/// Bytes that are not UTF-8 go in and come back exactly.
fn non_utf8_kept(addr: std::net::SocketAddr, ctx: &str) {
    let mut c = Client::connect(addr);
    assert_eq!(
        c.req(b"POST@\xff\xfe topic#\x80\x81 \xc3\x28 @#"),
        b"0",
        "{ctx}"
    );
    assert_eq!(
        c.req(b"READ@\xff\xfe topic#0"),
        b"\x80\x81 \xc3\x28 @#",
        "{ctx}"
    );
    let needle = b"@\xff\xfe topic";
    assert!(
        c.req(b"LIST").windows(needle.len()).any(|w| w == needle),
        "{ctx}"
    );
}

/// A 60 KB message is stored and read back whole.
fn large_message(addr: std::net::SocketAddr, ctx: &str) {
    let mut c = Client::connect(addr);
    let msg: Vec<u8> = (0..60_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let mut req = b"POST@big#".to_vec();
    req.extend_from_slice(&msg);
    assert_eq!(c.req(&req), b"0", "{ctx}");
    assert_eq!(c.req(b"READ@big#0"), msg, "{ctx}");
}

/// A frame over --max-request closes that connection only.
fn oversize_closes_only_its_connection(addr: std::net::SocketAddr, ctx: &str) {
    let mut bystander = Client::connect(addr);
    assert_eq!(bystander.req(b"COUNT@x"), b"0", "{ctx}");
    let mut bad = Client::connect(addr);
    let junk = vec![b'z'; 70_000];
    // The server may close while we are still writing: ignore that error.
    let _ = std::io::Write::write_all(&mut bad.stream, &junk);
    assert!(
        bad.closed_by_server(),
        "{ctx}: oversize connection stayed open"
    );
    assert_eq!(bystander.req(b"POST@x#still here"), b"0", "{ctx}");
    let mut fresh = Client::connect(addr);
    assert_eq!(fresh.req(b"READ@x#0"), b"still here", "{ctx}");
}

/// 16 connections post to one topic at once: ids 0..n-1, no gap, no
/// repeat, and every acknowledged id reads back its message.
fn concurrent_posters_get_dense_ids(addr: std::net::SocketAddr, ctx: &str) {
    let per = 200;
    let acks: Vec<(u64, Vec<u8>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..16)
            .map(|p| {
                s.spawn(move || {
                    let mut c = Client::connect(addr);
                    (0..per)
                        .map(|i| {
                            let msg = format!("poster {p} message {i}").into_bytes();
                            let mut req = b"POST@shared#".to_vec();
                            req.extend_from_slice(&msg);
                            let id: u64 = text(&c.req(&req)).parse().expect("an id");
                            (id, msg)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut ids: Vec<u64> = acks.iter().map(|a| a.0).collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        (0..16 * per as u64).collect::<Vec<_>>(),
        "{ctx}: ids not 0..n-1"
    );
    let mut c = Client::connect(addr);
    for (id, msg) in &acks {
        assert_eq!(
            &c.req(format!("READ@shared#{id}").as_bytes()),
            msg,
            "{ctx}: id {id}"
        );
    }
    assert_eq!(
        c.req(b"COUNT@shared"),
        (16 * per).to_string().as_bytes(),
        "{ctx}"
    );
}

/// 64 persistent connections take turns in lock-step: all are served.
fn many_lock_step_connections(addr: std::net::SocketAddr, ctx: &str) {
    let mut conns: Vec<Client> = (0..64).map(|_| Client::connect(addr)).collect();
    for round in 0..10 {
        for (i, c) in conns.iter_mut().enumerate() {
            c.send(format!("POST@c{i}#r{round}\0").as_bytes());
        }
        for c in conns.iter_mut() {
            assert_eq!(c.recv(), round.to_string().as_bytes(), "{ctx}");
        }
    }
}

fn exit_policy_stops(strategy: &str) {
    // loopback (default): EXIT from 127.0.0.1 stops the server gracefully.
    let mut server = ServerProc::start("board", &["--strategy", strategy]);
    let mut c = Client::connect(server.addr);
    assert_eq!(c.req(b"POST@t#m"), b"0");
    let mut exit = Client::connect(server.addr);
    assert_eq!(exit.req(b"EXIT"), b"TERMINATING", "{strategy}");
    let status = server
        .wait_exit(Duration::from_secs(20))
        .expect("EXIT stops the server");
    assert!(status.success(), "{strategy}: {status:?}");
    let out = server.stdout();
    assert!(out.contains("EXIT 1"), "{strategy}: {out}");

    // any: the reference behaviour.
    let mut server = ServerProc::start("board", &["--strategy", strategy, "--exit-policy", "any"]);
    assert_eq!(Client::connect(server.addr).req(b"EXIT"), b"TERMINATING");
    assert!(server
        .wait_exit(Duration::from_secs(20))
        .expect("stops")
        .success());

    // never: EXIT is an invalid request and the server carries on.
    let server = ServerProc::start("board", &["--strategy", strategy, "--exit-policy", "never"]);
    let mut c = Client::connect(server.addr);
    assert_eq!(c.req(b"EXIT"), b"", "{strategy}");
    assert_eq!(c.req(b"COUNT@t"), b"0", "{strategy}: still serving");
    let (status, out) = server.stop();
    assert!(status.success());
    assert!(out.contains("exit_refused: 1"), "{out}");
}

/// EXIT from a peer that is not loopback is refused by the default policy.
/// Needs a non-loopback address on this machine; skipped without one.
#[test]
fn exit_from_non_loopback_peer_is_refused() {
    let Some(ip) = nix::ifaddrs::getifaddrs().ok().and_then(|mut addrs| {
        addrs.find_map(|a| {
            let sin = a.address?.as_sockaddr_in().copied()?;
            let ip = sin.ip();
            (!ip.is_loopback()).then_some(ip)
        })
    }) else {
        eprintln!("skipped: no non-loopback IPv4 address on this machine");
        return;
    };
    let server = ServerProc::start("board", &["--addr", &format!("{ip}:0")]);
    let mut c = Client::connect(server.addr);
    assert_eq!(c.req(b"EXIT"), b"", "EXIT from {ip} must be refused");
    assert_eq!(c.req(b"COUNT@t"), b"0");
    let (status, out) = server.stop();
    assert!(status.success());
    assert!(out.contains("exit_refused: 1"), "{out}");
}

/// SIGTERM: the server stops reading; every request it had read is
/// answered, in order, then the connection closes and the server exits 0
/// with final statistics that count exactly the replies the client got.
fn sigterm_drains(strategy: &str) {
    let mut server = ServerProc::start("board", &["--strategy", strategy]);
    let mut c = Client::connect(server.addr);
    assert_eq!(c.req(b"COUNT@d"), b"0");
    let mut wire = Vec::new();
    for i in 0..2000 {
        wire.extend_from_slice(format!("POST@d#{i}\0").as_bytes());
    }
    c.send(&wire);
    // Give the bytes time to arrive, then stop the server mid-stream.
    std::thread::sleep(Duration::from_millis(50));
    server.signal(Signal::SIGTERM);
    let mut answered = 0u64;
    while let Some(reply) = c.try_recv() {
        assert_eq!(reply, answered.to_string().as_bytes(), "{strategy}");
        answered += 1;
    }
    assert!(answered > 0, "{strategy}: what it had read is answered");
    let status = server
        .wait_exit(Duration::from_secs(20))
        .expect("exits after SIGTERM");
    assert!(status.success(), "{strategy}: {status:?}");
    let out = server.stdout();
    assert!(
        out.contains(&format!("POST {answered}")),
        "{strategy}: {out}"
    );
}

fn lifecycle(strategy: &str) {
    exit_policy_stops(strategy);
    sigterm_drains(strategy);
}

per_strategy!(lifecycle, lifecycle);
