//! The RESP protocol (section 5 of the wire contract,
//! docs/protocols/resp.md) over real sockets against
//! every strategy × RESP store: exact replies to arrays and inline
//! commands, pipelining, requests split byte by byte, Redis's errors,
//! protocol errors and limits that close one connection only, clients
//! that never read (reset on time, memory bounded), eviction at the
//! connection cap, concurrent writers on one key, and the statistics.

use crate::support::*;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The stores RESP offers, from the code's list.
pub fn resp_stores() -> Vec<&'static str> {
    serverlab_store::resp::KINDS
        .iter()
        .map(|s| s.name())
        .collect()
}

/// A raw connection that compares replies byte for byte.
pub struct Raw {
    pub stream: TcpStream,
    buf: Vec<u8>,
}

impl Raw {
    pub fn connect(addr: SocketAddr) -> Raw {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        Raw {
            stream,
            buf: Vec::new(),
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("send");
    }

    /// Exactly `n` more bytes (fewer if the server closes first).
    pub fn read_n(&mut self, n: usize) -> Vec<u8> {
        while self.buf.len() < n {
            let mut chunk = [0u8; 65536];
            match self.stream.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(k) => self.buf.extend_from_slice(&chunk[..k]),
            }
        }
        let n = n.min(self.buf.len());
        self.buf.drain(..n).collect()
    }

    /// Send `wire` and expect exactly `reply`.
    pub fn expect(&mut self, wire: &[u8], reply: &str) {
        self.send(wire);
        let got = self.read_n(reply.len());
        assert_eq!(text(&got), reply, "to {:?}", text(wire));
    }

    /// Send `wire` and read a bulk string reply's text.
    pub fn bulk(&mut self, wire: &[u8]) -> String {
        self.send(wire);
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n") {
            let byte = self.read_n(1);
            assert!(!byte.is_empty(), "closed after {:?}", text(&head));
            head.extend(byte);
        }
        let len: usize = text(&head[1..head.len() - 2])
            .parse()
            .unwrap_or_else(|_| panic!("not a bulk string: {:?}", text(&head)));
        let body = self.read_n(len + 2);
        text(&body[..len])
    }

    /// One whole reply (any RESP2 type), as its bytes.
    pub fn reply(&mut self) -> Vec<u8> {
        let mut line = Vec::new();
        while !line.ends_with(b"\r\n") {
            let byte = self.read_n(1);
            assert!(!byte.is_empty(), "closed after {:?}", text(&line));
            line.extend(byte);
        }
        let n: i64 = text(&line[1..line.len() - 2]).parse().unwrap_or(-1);
        match line[0] {
            b'$' if n >= 0 => line.extend(self.read_n(n as usize + 2)),
            b'*' => (0..n.max(0)).for_each(|_| {
                let r = self.reply();
                line.extend(r)
            }),
            _ => {}
        }
        line
    }

    /// The server closes the connection (nothing more arrives).
    pub fn closed(&mut self) -> bool {
        self.buf.is_empty() && self.read_n(1).is_empty()
    }
}

/// Milliseconds since the Unix epoch, now (deadlines are in them).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// A command as an array of bulk strings.
pub fn cmd(args: &[&str]) -> Vec<u8> {
    let bytes: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    let mut out = Vec::new();
    serverlab_proto::resp::client::command(&mut out, &bytes);
    out
}

const WRONGTYPE: &str = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";

/// Requests and their exact replies: the commands of section 5, arrays
/// and inline.
fn script() -> Vec<(Vec<u8>, String)> {
    let s = |w: Vec<u8>, r: &str| (w, r.to_string());
    vec![
        s(cmd(&["PING"]), "+PONG\r\n"),
        s(b"ping hello\r\n".to_vec(), "$5\r\nhello\r\n"),
        s(cmd(&["ECHO", "a\r\nb"]), "$4\r\na\r\nb\r\n"),
        s(cmd(&["GET", "k"]), "$-1\r\n"),
        s(cmd(&["SET", "k", "v1"]), "+OK\r\n"),
        s(b"GET k\n".to_vec(), "$2\r\nv1\r\n"),
        s(cmd(&["set", "k", "v2", "nx"]), "$-1\r\n"),
        s(cmd(&["SET", "k", "v2", "XX"]), "+OK\r\n"),
        s(cmd(&["SET", "other", "v", "XX"]), "$-1\r\n"),
        s(cmd(&["EXISTS", "k", "other", "k"]), ":2\r\n"),
        s(cmd(&["INCR", "n"]), ":1\r\n"),
        s(cmd(&["INCRBY", "n", "10"]), ":11\r\n"),
        s(cmd(&["DECR", "n"]), ":10\r\n"),
        s(
            cmd(&["INCR", "k"]),
            "-ERR value is not an integer or out of range\r\n",
        ),
        s(cmd(&["MSET", "a", "1", "b", "2"]), "+OK\r\n"),
        s(
            cmd(&["MGET", "a", "zz", "b"]),
            "*3\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n",
        ),
        s(cmd(&["DEL", "a", "b", "zz"]), ":2\r\n"),
        s(cmd(&["RPUSH", "l", "a", "b", "c"]), ":3\r\n"),
        s(cmd(&["LPUSH", "l", "z"]), ":4\r\n"),
        s(cmd(&["LLEN", "l"]), ":4\r\n"),
        s(cmd(&["LINDEX", "l", "-1"]), "$1\r\nc\r\n"),
        s(
            cmd(&["LRANGE", "l", "1", "-2"]),
            "*2\r\n$1\r\na\r\n$1\r\nb\r\n",
        ),
        s(cmd(&["LPOP", "l"]), "$1\r\nz\r\n"),
        s(cmd(&["RPOP", "l", "2"]), "*2\r\n$1\r\nc\r\n$1\r\nb\r\n"),
        s(cmd(&["GET", "l"]), WRONGTYPE),
        s(cmd(&["LPUSH", "k", "x"]), WRONGTYPE),
        s(cmd(&["DBSIZE"]), ":3\r\n"),
        s(cmd(&["SELECT", "0"]), "+OK\r\n"),
        s(cmd(&["SELECT", "16"]), "-ERR DB index is out of range\r\n"),
        s(
            cmd(&["CONFIG", "GET", "save"]),
            "*2\r\n$4\r\nsave\r\n$0\r\n\r\n",
        ),
        s(cmd(&["CONFIG", "GET", "nothing"]), "*0\r\n"),
        s(cmd(&["CLIENT", "SETNAME", "me"]), "+OK\r\n"),
        s(cmd(&["CLIENT", "GETNAME"]), "$2\r\nme\r\n"),
        s(cmd(&["COMMAND", "DOCS"]), "*0\r\n"),
        s(
            cmd(&["NOPE", "x", "y"]),
            "-ERR unknown command 'NOPE', with args beginning with: 'x' 'y' \r\n",
        ),
        s(
            cmd(&["GET"]),
            "-ERR wrong number of arguments for 'get' command\r\n",
        ),
        s(cmd(&["FLUSHDB"]), "+OK\r\n"),
        s(cmd(&["DBSIZE"]), ":0\r\n"),
        s(b"*0\r\n\r\nPING\r\n".to_vec(), "+PONG\r\n"),
    ]
}

fn conformance(strategy: &str, store: &str) {
    let server = ServerProc::start(
        "resp",
        &with_threads(strategy, "2", &["--strategy", strategy, "--store", store]),
    );
    // One request at a time.
    let mut c = Raw::connect(server.addr);
    for (wire, reply) in script() {
        c.expect(&wire, &reply);
    }
    // All pipelined in one write: the same replies, in order.
    let (wire, replies): (Vec<Vec<u8>>, Vec<String>) = script().into_iter().unzip();
    c.expect(&wire.concat(), &replies.concat());
    // One byte per write.
    let mut slow = Raw::connect(server.addr);
    for b in cmd(&["SET", "slow", "bytes"]) {
        slow.send(&[b]);
        std::thread::sleep(Duration::from_micros(200));
    }
    slow.expect(&cmd(&["GET", "slow"]), "+OK\r\n$5\r\nbytes\r\n");
    // A protocol error closes that connection only.
    let mut bad = Raw::connect(server.addr);
    bad.expect(
        b"*1\r\n$x\r\n",
        "-ERR Protocol error: invalid bulk length\r\n",
    );
    assert!(bad.closed(), "{strategy}/{store}");
    c.expect(&cmd(&["QUIT"]), "+OK\r\n");
    assert!(c.closed(), "QUIT closes");
    slow.expect(&cmd(&["PING"]), "+PONG\r\n");
    let (status, out) = server.stop();
    assert!(status.success());
    assert!(out.contains("bad_bulk_length 1"), "{out}");
}

fn every_store(strategy: &str) {
    for store in resp_stores() {
        conformance(strategy, store);
    }
}

per_strategy!(resp_conformance, every_store);

/// Over each limit: `-ERR Protocol error: …`, then that connection
/// closes; at the limit, served.
#[test]
fn limits_close_the_connection_only() {
    let server = ServerProc::start(
        "resp",
        &["--max-bulk", "16", "--max-args", "4", "--max-inline", "32"],
    );
    let mut ok = Raw::connect(server.addr);
    ok.expect(&cmd(&["SET", "k", &"x".repeat(16)]), "+OK\r\n");
    ok.expect(
        &cmd(&["MSET", "a", "1", "b"]),
        "-ERR wrong number of arguments for 'mset' command\r\n",
    );
    let inline = format!("ECHO {}\r\n", "y".repeat(27));
    ok.expect(inline.as_bytes(), &format!("$27\r\n{}\r\n", "y".repeat(27)));
    for (wire, error) in [
        (cmd(&["SET", "k", &"x".repeat(17)]), "invalid bulk length"),
        (
            cmd(&["MSET", "a", "1", "b", "2"]),
            "invalid multibulk length",
        ),
        (
            format!("ECHO {}\r\n", "y".repeat(28)).into_bytes(),
            "too big inline request",
        ),
        (b"*1\r\n+PING\r\n".to_vec(), "expected '$', got '+'"),
        (
            b"SET k \"unclosed\r\n".to_vec(),
            "unbalanced quotes in request",
        ),
    ] {
        let mut c = Raw::connect(server.addr);
        c.expect(&wire, &format!("-ERR Protocol error: {error}\r\n"));
        assert!(c.closed(), "{error}");
    }
    ok.expect(
        &cmd(&["GET", "k"]),
        &format!("$16\r\n{}\r\n", "x".repeat(16)),
    );
    let (_, out) = server.stop();
    assert!(
        out.contains("bad_bulk_length 1, not_a_bulk_string 1"),
        "{out}"
    );
}

/// Bad flags name themselves and exit 2.
#[test]
fn bad_serve_resp_flags_exit_2() {
    usage_error(&["serve", "resp", "--max-bulk", "0"], "--max-bulk");
    usage_error(&["serve", "resp", "--store", "nosuch"], "--store");
    usage_error(&["serve", "resp", "--max-args", "0"], "--max-args");
}

/// A client that pipelines GETs of a large value and never reads: the
/// server holds at most its high-water mark of replies for it, and resets
/// it after --write-timeout, counted; others are served meanwhile.
#[test]
fn a_client_that_never_reads_is_reset() {
    std::thread::scope(|s| {
        for strategy in strategies() {
            s.spawn(move || {
                let server = ServerProc::start(
                    "resp",
                    &with_threads(
                        strategy,
                        "2",
                        &["--strategy", strategy, "--write-timeout", "1s"],
                    ),
                );
                let mut setup = Raw::connect(server.addr);
                setup.expect(&cmd(&["SET", "big", &"v".repeat(100_000)]), "+OK\r\n");
                let mut c = Raw::connect(server.addr);
                c.stream
                    .set_write_timeout(Some(Duration::from_secs(20)))
                    .unwrap();
                let gets = cmd(&["GET", "big"]).repeat(100);
                let started = Instant::now();
                let err = loop {
                    if let Err(e) = c.stream.write_all(&gets) {
                        break e;
                    }
                    assert!(
                        started.elapsed() < Duration::from_secs(30),
                        "{strategy}: never reset"
                    );
                };
                assert!(
                    !matches!(
                        err.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ),
                    "{strategy}: never reset"
                );
                setup.expect(&cmd(&["PING"]), "+PONG\r\n");
                let (status, out) = server.stop();
                assert!(status.success(), "{strategy}");
                assert!(out.contains("reset_write_timeout 1"), "{strategy}: {out}");
            });
        }
    });
}

/// 50 clients pipeline GETs of a 1 MiB value and never read: the
/// server's memory stays within the bound its limits give, and is given
/// back after they leave (as for every protocol: hostile_conn.rs).
fn never_reading_clients_memory(strategy: &str) {
    let _one = crate::support::heavy_turn();
    let server = ServerProc::start(
        "resp",
        &with_threads(strategy, "2", &["--strategy", strategy]),
    );
    let mib = crate::hostile_conn::MIB as usize;
    let value = "v".repeat(mib);
    let mut c = Raw::connect(server.addr);
    c.expect(&cmd(&["SET", "big", &value]), "+OK\r\n");
    let big = format!("${mib}\r\n{value}\r\n");
    c.expect(&cmd(&["GET", "big"]), &big);
    let gets = cmd(&["GET", "big"]).repeat(64);
    crate::hostile_conn::never_reading_burst(&server, &gets, strategy);
    c.expect(&cmd(&["GET", "big"]), &big);
    assert!(server.stop().0.success(), "{strategy}");
}

per_strategy!(resp_never_reading_memory, never_reading_clients_memory);

/// At `--max-connections` a new client evicts the connection idle
/// longest and is served; INFO and the final statistics count it.
#[test]
fn eviction_at_the_cap_is_counted() {
    let server = ServerProc::start("resp", &["--max-connections", "2"]);
    let mut oldest = Raw::connect(server.addr);
    oldest.expect(&cmd(&["PING"]), "+PONG\r\n");
    // Past the idle table's coarse clock, so the waits differ.
    std::thread::sleep(Duration::from_millis(100));
    let mut other = Raw::connect(server.addr);
    other.expect(&cmd(&["PING"]), "+PONG\r\n");
    let mut new = Raw::connect(server.addr);
    new.expect(&cmd(&["PING"]), "+PONG\r\n");
    assert!(oldest.closed(), "the connection idle longest is evicted");
    other.expect(&cmd(&["PING"]), "+PONG\r\n");
    let info = new.bulk(&cmd(&["INFO", "stats"]));
    for needle in [
        "\r\nrejected_connections:0\r\n",
        "\r\nevicted_idle_connections:1\r\n",
        "\r\nshed_out_of_fds_connections:0\r\n",
    ] {
        assert!(info.contains(needle), "{needle:?} in {info}");
    }
    let (status, out) = server.stop();
    assert!(status.success());
    assert!(out.contains("evicted_idle 1,"), "{out}");
}

/// Clients pushing to one list and counting on one key at once: every
/// length and every count is handed out once (each key linearizable).
fn concurrent_writers(strategy: &str, store: &str) {
    let server = ServerProc::start(
        "resp",
        &with_threads(strategy, "2", &["--strategy", strategy, "--store", store]),
    );
    let addr = server.addr;
    let got: Vec<(Vec<i64>, Vec<i64>)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|t| {
                s.spawn(move || {
                    let mut c = Raw::connect(addr);
                    let mut lens = Vec::new();
                    let mut counts = Vec::new();
                    for i in 0..100 {
                        let v = format!("{t}-{i}");
                        let wire =
                            [cmd(&["RPUSH", "shared", &v]), cmd(&["INCR", "count"])].concat();
                        c.send(&wire);
                        for out in [&mut lens, &mut counts] {
                            let mut line = Vec::new();
                            while !line.ends_with(b"\r\n") {
                                line.extend(c.read_n(1));
                            }
                            out.push(text(&line[1..line.len() - 2]).parse().unwrap());
                        }
                    }
                    (lens, counts)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let (mut lens, mut counts): (Vec<i64>, Vec<i64>) =
        got.into_iter()
            .fold((Vec::new(), Vec::new()), |(mut a, mut b), (x, y)| {
                a.extend(x);
                b.extend(y);
                (a, b)
            });
    lens.sort_unstable();
    counts.sort_unstable();
    assert_eq!(lens, (1..=400).collect::<Vec<_>>(), "{strategy}/{store}");
    assert_eq!(counts, (1..=400).collect::<Vec<_>>(), "{strategy}/{store}");
    let mut c = Raw::connect(addr);
    c.expect(&cmd(&["LLEN", "shared"]), ":400\r\n");
    assert!(server.stop().0.success());
}

fn concurrent_every_store(strategy: &str) {
    for store in resp_stores() {
        concurrent_writers(strategy, store);
    }
}

per_strategy!(resp_concurrent_writers, concurrent_every_store);

/// INFO and the final statistics carry the same connection and
/// service-time numbers as every protocol's.
#[test]
fn info_and_final_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("stats.json");
    let server = ServerProc::start("resp", &["--stats-json", stats.to_str().unwrap()]);
    let mut a = Raw::connect(server.addr);
    let _b = Raw::connect(server.addr);
    for i in 0..100 {
        a.expect(&cmd(&["SET", &format!("k{i}"), "v"]), "+OK\r\n");
    }
    let info = a.bulk(&cmd(&["INFO"]));
    for needle in [
        "# Server\r\n",
        "redis_version:",
        "# Clients\r\nconnected_clients:2\r\n",
        "# Stats\r\ntotal_connections_received:2\r\ntotal_commands_processed:100\r\n",
        "service_time_us_p50:",
        "# Keyspace\r\ndb0:keys=100,expires=0,avg_ttl=0\r\n",
    ] {
        assert!(info.contains(needle), "{needle:?} in {info}");
    }
    drop(a);
    let (status, out) = server.stop();
    assert!(status.success());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert_eq!(v["connections"]["accepted"], 2, "{out}");
    assert_eq!(v["service_time_us"]["count"], 101);
    assert_eq!(v["protocol"]["requests"]["set"], 100);
    assert_eq!(v["protocol"]["requests"]["info"], 1);
    assert_eq!(v["protocol"]["keys"], 100);
}
