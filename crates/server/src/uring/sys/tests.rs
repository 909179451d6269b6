//! `sys` as a library, over real sockets on 127.0.0.1: each operation,
//! the buffers' ownership, the loan of a session to a send, and a ring
//! dropped with operations in flight. Skipped, saying why, where io_uring
//! cannot run.

use super::*;
use crate::session::Io;
use crate::{Ctx, Shutdown};
use serverlab_service::echo::EchoService;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

/// A ring with `buffers` provided buffers of `len` bytes, or `None` (with
/// the reason printed) where io_uring is unavailable.
fn ring(buffers: u16, len: u32) -> Option<Uring> {
    let cfg = Config {
        entries: 64,
        buffers,
        buffer_len: len,
        sqpoll: None,
        workers_on: None,
        tick: Duration::from_secs(1),
        send_wait: Duration::from_secs(5),
    };
    match Uring::new(&cfg) {
        Ok(io) => Some(io),
        Err(e) => {
            eprintln!("skipped: io_uring unavailable here: {e}");
            None
        }
    }
}

/// A connected pair: (the client's end, the server's end).
fn pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (server, _) = listener.accept().unwrap();
    (client, server)
}

/// A pair whose client reads nothing and whose buffers are small, so a
/// send to it soon has nowhere to go.
fn clogged_pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    client.set_recv_buffer_size(4096).unwrap();
    client
        .connect(&listener.local_addr().unwrap().into())
        .unwrap();
    let (server, _) = listener.accept().unwrap();
    socket2::SockRef::from(&server)
        .set_send_buffer_size(4096)
        .unwrap();
    (client.into(), server)
}

/// Tokens from here up are the tests' own timers, not operations under
/// test.
const TIMERS: u32 = 1 << 31;

/// Completions (the tests' own timers left out) until one is wanted, or
/// `d` passed.
fn reap_until(
    io: &mut Uring,
    d: Duration,
    wanted: impl Fn(&Completion) -> bool,
) -> Vec<Completion> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(TIMERS);
    let timer = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    io.sleep(d, timer);
    let mut got = Vec::new();
    loop {
        io.submit(true).unwrap();
        let mut reaped = Vec::new();
        io.reap(&mut reaped);
        let timed_out = reaped.iter().any(|c| c.op == Op::Sleep && c.token == timer);
        got.extend(reaped.into_iter().filter(|c| c.token < TIMERS));
        if timed_out || got.iter().any(&wanted) {
            return got;
        }
    }
}

/// The next completion, submitting and waiting as needed (at most 5 s).
fn next(io: &mut Uring, queue: &mut VecDeque<Completion>) -> Completion {
    for _ in 0..50 {
        if let Some(c) = queue.pop_front() {
            return c;
        }
        queue.extend(reap_until(io, Duration::from_millis(100), |_| true));
    }
    queue.pop_front().expect("a completion within 5 s")
}

/// An echo session (replies: each line reversed) for a connection.
fn session(max_request: usize) -> Session<EchoService> {
    let ctx = Arc::new(Ctx {
        svc: Arc::new(EchoService::new(max_request)),
        shutdown: Shutdown::new(),
        max_connections: 10,
        write_timeout: None,
        threads: 1,
        cpus: None,
        uring_sqpoll: false,
        idle: Default::default(),
        accept: crate::accept::Acceptor::new(),
        room: Default::default(),
    });
    let peer: SocketAddr = "127.0.0.1:1".parse().unwrap();
    assert!(ctx.conns().admit(ctx.max_connections));
    Session::new(&ctx, peer)
}

/// Feed `input` to the session until it asks to write its replies.
fn replies_to(sess: &mut Session<EchoService>, input: &[u8]) {
    let mut rest = input;
    loop {
        match sess.next() {
            Io::Read { .. } if !rest.is_empty() => rest = &rest[sess.receive(rest)..],
            Io::Write => return,
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// More bytes than the provided buffers hold at once arrive in order: the
/// buffers are handed back and reused, and a receive ended by running out
/// of them (`ENOBUFS`) is armed again.
#[test]
fn multishot_receive_delivers_in_order_through_few_buffers() {
    let Some(mut io) = ring(4, 64) else { return };
    let (mut client, server) = pair();
    let sent: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
    let writer = {
        let sent = sent.clone();
        std::thread::spawn(move || {
            for chunk in sent.chunks(700) {
                client.write_all(chunk).unwrap();
            }
            client
        })
    };
    io.recv_multi(server.as_raw_fd(), 5);
    let (mut got, mut q) = (Vec::new(), VecDeque::new());
    while got.len() < sent.len() {
        let c = next(&mut io, &mut q);
        assert_eq!((c.op, c.token), (Op::Recv, 5));
        if let Some(buf) = c.received {
            assert!(c.result > 0 && c.result <= 64, "{}", c.result);
            io.take(buf, |bytes| got.extend_from_slice(bytes));
        } else {
            assert_eq!(c.result, -libc::ENOBUFS, "only running out ends it");
        }
        if !c.more {
            io.recv_multi(server.as_raw_fd(), 5);
        }
    }
    assert_eq!(got, sent);
    drop(writer.join().unwrap());
    // The peer's close: a completion of 0 that ends the receive.
    let c = next(&mut io, &mut q);
    assert_eq!((c.result, c.more), (0, false));
    assert!(c.received.is_none());
}

/// A send reads the session's replies; meanwhile the session is lent (no
/// `&mut`), and only its own completion gives it back.
#[test]
fn a_lent_session_is_read_only_until_its_send_completes() {
    let Some(mut io) = ring(4, 4096) else { return };
    let (mut client, server) = pair();
    let mut sess = Lent::new(session(1000));
    replies_to(sess.get_mut().unwrap(), b"hello\n");
    io.send(server.as_raw_fd(), &mut sess, 9, false);
    assert!(sess.is_lent() && sess.get_mut().is_none());
    assert_eq!(sess.get().unwritten(), b"olleh\n", "readable meanwhile");
    let c = next(&mut io, &mut VecDeque::new());
    assert_eq!((c.op, c.token, c.result), (Op::Send, 9, 6));
    sess.give_back(c.returned.expect("a send returns its session"));
    sess.get_mut().expect("given back").wrote(6);
    let mut reply = [0; 6];
    client.read_exact(&mut reply).unwrap();
    assert_eq!(&reply, b"olleh\n");
}

/// Handing back another send's completion is refused: it would let one
/// session change while the kernel still reads it.
#[test]
#[should_panic(expected = "another send's session")]
fn another_sends_completion_cannot_give_a_session_back() {
    let Some(mut io) = ring(4, 4096) else {
        panic!("another send's session (skipped: io_uring unavailable)")
    };
    let (_c1, s1) = pair();
    let (_c2, s2) = pair();
    let (mut a, mut b) = (Lent::new(session(100)), Lent::new(session(100)));
    replies_to(a.get_mut().unwrap(), b"a\n");
    replies_to(b.get_mut().unwrap(), b"b\n");
    io.send(s1.as_raw_fd(), &mut a, 1, false);
    io.send(s2.as_raw_fd(), &mut b, 2, false);
    let mut q = VecDeque::new();
    let first = next(&mut io, &mut q);
    let wrong = if first.token == 1 { &mut b } else { &mut a };
    wrong.give_back(first.returned.unwrap());
}

/// A send to a client that does not read stays in the kernel until it is
/// cancelled, and the cancel returns the session.
#[test]
fn a_stuck_send_is_cancelled_and_returns_its_session() {
    let Some(mut io) = ring(4, 4096) else { return };
    let (_client, server) = clogged_pair();
    let mut sess = stuck_send(&mut io, &server);
    let mut q = VecDeque::new();
    io.cancel_send(&sess, 3);
    let mut ended = None;
    while ended.is_none() {
        let c = next(&mut io, &mut q);
        if c.op == Op::Send {
            ended = Some(c);
        }
    }
    let c = ended.unwrap();
    assert_eq!(c.result, -libc::ECANCELED);
    sess.give_back(c.returned.unwrap());
    assert!(sess.get_mut().is_some());
}

/// A session whose send to `server` (whose client does not read) is
/// stuck in the kernel: sends complete while the socket takes bytes, until
/// one has waited 300 ms.
fn stuck_send(io: &mut Uring, server: &TcpStream) -> Lent<Session<EchoService>> {
    let mut sess = Lent::new(session(8 << 20));
    let mut line = vec![b'x'; 4 << 20];
    line.push(b'\n');
    replies_to(sess.get_mut().unwrap(), &line);
    loop {
        io.send(server.as_raw_fd(), &mut sess, 3, false);
        let mut reaped = reap_until(io, Duration::from_millis(300), |c| c.op == Op::Send);
        let Some(c) = reaped.pop() else {
            assert!(sess.is_lent());
            return sess;
        };
        sess.give_back(c.returned.unwrap());
        assert!(c.result > 0, "{}", c.result);
        sess.get_mut().unwrap().wrote(c.result as usize);
    }
}

/// A sleep completes (`ETIME`) once its time has passed; a cancelled one
/// at once (`ECANCELED`).
#[test]
fn sleeps_end_on_time_or_when_cancelled() {
    let Some(mut io) = ring(4, 4096) else { return };
    let mut q = VecDeque::new();
    let t0 = Instant::now();
    io.sleep(Duration::from_millis(40), 4);
    let c = next(&mut io, &mut q);
    assert_eq!((c.op, c.token, c.result), (Op::Sleep, 4, -libc::ETIME));
    assert!(t0.elapsed() >= Duration::from_millis(40));
    io.sleep(Duration::from_secs(60), 4);
    io.cancel(Op::Sleep, 4);
    let mut results = [next(&mut io, &mut q), next(&mut io, &mut q)];
    results.sort_by_key(|c| c.op as u8);
    assert_eq!(
        (results[0].op, results[0].result),
        (Op::Sleep, -libc::ECANCELED)
    );
    assert_eq!(results[1].op, Op::Cancel);
    assert!(t0.elapsed() < Duration::from_secs(10));
}

/// The accept's backoff is a timer of its own, beside a sleep of any
/// token; a second one while the first is pending is refused before the
/// first's timespec could be freed.
#[test]
fn the_backoff_ends_on_time_beside_sleeps() {
    let Some(mut io) = ring(4, 4096) else { return };
    let mut q = VecDeque::new();
    let t0 = Instant::now();
    io.sleep(Duration::from_secs(60), 0);
    io.backoff(Duration::from_millis(20));
    let c = next(&mut io, &mut q);
    assert_eq!((c.op, c.result), (Op::Backoff, -libc::ETIME));
    assert!(t0.elapsed() >= Duration::from_millis(20));
    io.backoff(Duration::from_millis(10));
    let second = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        io.backoff(Duration::from_millis(10));
    }));
    assert!(second.is_err(), "a second pending backoff is refused");
    assert_eq!(next(&mut io, &mut q).op, Op::Backoff);
}

/// One multishot accept yields every connection, each a stream we own,
/// on a non-blocking listener (the server's, which it may also accept on
/// itself: then an empty backlog says `WouldBlock` instead of waiting).
#[test]
fn a_multishot_accept_yields_each_connection() {
    let Some(mut io) = ring(4, 4096) else { return };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    assert_eq!(
        listener.accept().unwrap_err().kind(),
        io::ErrorKind::WouldBlock
    );
    io.accept_multi(&listener);
    let clients: Vec<_> = (0..3)
        .map(|_| TcpStream::connect(listener.local_addr().unwrap()).unwrap())
        .collect();
    let mut q = VecDeque::new();
    let mut peers: Vec<_> = (0..3)
        .map(|_| {
            let c = next(&mut io, &mut q);
            assert_eq!(c.op, Op::Accept);
            assert!(c.more, "still armed");
            let stream = c.accepted.expect("a stream");
            // Accepted by the kernel: a blocking socket whatever the
            // listener's mode.
            assert!(!socket2::SockRef::from(&stream).nonblocking().unwrap());
            stream.peer_addr().unwrap()
        })
        .collect();
    let mut want: Vec<_> = clients.iter().map(|c| c.local_addr().unwrap()).collect();
    peers.sort();
    want.sort();
    assert_eq!(peers, want);
}

/// A readiness poll on the listener completes only once a connection is
/// waiting, which it leaves in the backlog for the caller to accept.
#[test]
fn a_listener_poll_completes_when_a_connection_waits() {
    let Some(mut io) = ring(4, 4096) else { return };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    io.readable(&listener);
    let early = reap_until(&mut io, Duration::from_millis(50), |_| true);
    assert!(early.is_empty(), "nothing to accept yet");
    let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let c = next(&mut io, &mut VecDeque::new());
    assert_eq!(c.op, Op::Readable);
    assert!(c.result > 0 && c.result & libc::POLLIN as i32 != 0);
    let (_, peer) = listener.accept().expect("still in the backlog");
    assert_eq!(peer, client.local_addr().unwrap());
}

/// Another thread's signal completes the ring's read of its eventfd.
#[test]
fn another_thread_wakes_the_ring() {
    let Some(mut io) = ring(4, 4096) else { return };
    let efd = Arc::new(EventFd::new().unwrap());
    io.read_wake(&efd);
    let e = efd.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        e.signal();
    });
    let c = next(&mut io, &mut VecDeque::new());
    assert_eq!((c.op, c.result), (Op::Wake, 8));
    t.join().unwrap();
}

/// Dropping a ring with a multishot accept and receive, a long sleep and
/// a stuck send in flight cancels them all and reaps every completion
/// before it frees anything (rule 4), and returns promptly.
#[test]
fn a_ring_dropped_busy_quiesces_first() {
    let Some(mut io) = ring(4, 4096) else { return };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let (_client, server) = pair();
    io.accept_multi(&listener);
    io.recv_multi(server.as_raw_fd(), 1);
    io.sleep(Duration::from_secs(600), 2);
    let (_stuck_client, stuck_server) = clogged_pair();
    let sess = stuck_send(&mut io, &stuck_server);
    assert_eq!(io.in_flight(), 4);
    let t0 = Instant::now();
    assert!(io.quiesce(), "every operation ended");
    assert_eq!(io.in_flight(), 0);
    drop(io);
    assert!(t0.elapsed() < Duration::from_secs(5));
    // Never given back: dropping it leaks the session (rule 3).
    assert!(sess.is_lent());
    drop(sess);
}

/// A submission that carries sends waits for something beyond their
/// completions (which come within the submission itself): one system call
/// both sends the replies and waits for the next request.
#[test]
fn a_wait_looks_past_the_sends_it_submitted() {
    let Some(mut io) = ring(4, 4096) else { return };
    let (mut client, server) = pair();
    io.recv_multi(server.as_raw_fd(), 1);
    let mut sess = Lent::new(session(1000));
    replies_to(sess.get_mut().unwrap(), b"ping\n");
    io.send(server.as_raw_fd(), &mut sess, 1, true);
    let writer = std::thread::spawn(move || {
        let mut reply = [0; 5];
        client.read_exact(&mut reply).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        client.write_all(b"next\n").unwrap();
        (client, reply)
    });
    io.submit(true).unwrap();
    let mut reaped = Vec::new();
    io.reap(&mut reaped);
    let ops: Vec<Op> = reaped.iter().map(|c| c.op).collect();
    assert_eq!(
        ops,
        [Op::Send, Op::Recv],
        "one wait: the send, then the request"
    );
    for c in reaped {
        if let Some(r) = c.received {
            assert_eq!(io.take(r, |b| b.to_vec()), b"next\n");
        }
        if let Some(back) = c.returned {
            sess.give_back(back);
        }
    }
    let (_client, reply) = writer.join().unwrap();
    assert_eq!(&reply, b"gnip\n");
}
