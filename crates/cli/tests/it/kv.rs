//! The kv protocol (HTTP/1.1) over real sockets against every strategy:
//! every status and example of docs/protocols/kv.md (section 3), pipelining,
//! HTTP/1.0, limits, timeouts, and idle connections that must not keep
//! others waiting.

use crate::support::*;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A raw HTTP/1.1 client that reads responses by hand (independently of
/// the server's parser), insisting that each has Content-Length.
pub struct Http {
    pub stream: TcpStream,
    buf: Vec<u8>,
}

#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        text(&self.body)
    }
}

impl Http {
    pub fn connect(addr: SocketAddr) -> Http {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        Http {
            stream,
            buf: Vec::new(),
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("send");
    }

    fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 65536];
        match self.stream.read(&mut chunk) {
            Ok(0) => false,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                true
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => false,
            Err(e) => panic!("read failed: {e}"),
        }
    }

    /// The next response (to a HEAD if `head`), or None if the server
    /// closed first.
    pub fn try_response(&mut self, head: bool) -> Option<Resp> {
        let end = loop {
            if let Some(i) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            if !self.fill() {
                assert!(
                    self.buf.is_empty(),
                    "closed mid-head: {:?}",
                    text(&self.buf)
                );
                return None;
            }
        };
        let head_text = text(&self.buf[..end - 4]);
        let mut lines = head_text.split("\r\n");
        let status_line = lines.next().unwrap();
        assert!(status_line.starts_with("HTTP/1.1 "), "{status_line}");
        let status: u16 = status_line[9..12].parse().unwrap();
        let headers: Vec<(String, String)> = lines
            .map(|l| {
                let (n, v) = l.split_once(':').expect("a header field");
                (n.to_string(), v.trim().to_string())
            })
            .collect();
        let resp = Resp {
            status,
            headers,
            body: Vec::new(),
        };
        let len: usize = resp
            .header("content-length")
            .unwrap_or_else(|| panic!("no Content-Length: {head_text}"))
            .parse()
            .unwrap();
        assert!(resp.header("date").is_some(), "no Date: {head_text}");
        let body_len = if head || status == 304 { 0 } else { len };
        while self.buf.len() < end + body_len {
            assert!(self.fill(), "closed mid-body");
        }
        let body = self.buf[end..end + body_len].to_vec();
        self.buf.drain(..end + body_len);
        Some(Resp { body, ..resp })
    }

    pub fn response(&mut self) -> Resp {
        self.try_response(false).expect("a response")
    }

    pub fn request(&mut self, method: &str, path: &str, body: Option<&[u8]>) -> Resp {
        self.send(&request(method, path, body, ""));
        self.try_response(method == "HEAD").expect("a response")
    }

    /// True when the server has closed this connection (nothing more comes).
    pub fn closed_by_server(&mut self) -> bool {
        self.buf.is_empty() && !self.fill()
    }
}

/// An HTTP/1.1 request with Host, an optional body, and `extra` header lines.
pub fn request(method: &str, path: &str, body: Option<&[u8]>, extra: &str) -> Vec<u8> {
    let mut wire = format!("{method} {path} HTTP/1.1\r\nHost: test\r\n{extra}");
    if let Some(b) = body {
        wire += &format!("Content-Length: {}\r\n", b.len());
    }
    wire += "\r\n";
    let mut wire = wire.into_bytes();
    wire.extend_from_slice(body.unwrap_or_default());
    wire
}

/// `"<md5 hex>"` of `value`, computed by md5sum-style known answers below.
fn md5_tag(value: &[u8]) -> String {
    let d = serverlab_proto::kv::digest(value);
    text(&serverlab_proto::kv::etag(&d))
}

fn section_3_examples(addr: SocketAddr, ctx: &str) {
    let mut c = Http::connect(addr);
    // PUT creates (201), replaces (200); POST likewise; ETag = MD5 of the value.
    let r = c.request("PUT", "/fruit", Some(b"apple"));
    assert_eq!(r.status, 201, "{ctx}");
    assert_eq!(
        r.header("etag"),
        Some("\"1f3870be274f6c49b3e31a0c6728957f\""),
        "{ctx}"
    );
    let r = c.request("PUT", "/fruit", Some(b"pear"));
    assert_eq!(r.status, 200, "{ctx}");
    assert_eq!(r.header("etag").unwrap(), md5_tag(b"pear"), "{ctx}");
    assert_eq!(
        c.request("POST", "/veg", Some(b"leek")).status,
        201,
        "{ctx}"
    );
    assert_eq!(
        c.request("POST", "/veg", Some(b"kale")).status,
        200,
        "{ctx}"
    );
    // GET: the value and its ETag; HEAD: the same without the body.
    let r = c.request("GET", "/fruit", None);
    assert_eq!((r.status, r.text().as_str()), (200, "pear"), "{ctx}");
    assert_eq!(r.header("etag").unwrap(), md5_tag(b"pear"), "{ctx}");
    assert_eq!(r.header("content-length"), Some("4"));
    let h = c.request("HEAD", "/fruit", None);
    assert_eq!((h.status, h.body.len()), (200, 0), "{ctx}");
    assert_eq!(h.header("content-length"), Some("4"), "{ctx}");
    assert_eq!(h.header("etag"), r.header("etag"), "{ctx}");
    // If-None-Match with the current tag: 304; with another: 200.
    let tag = md5_tag(b"pear");
    c.send(&request(
        "GET",
        "/fruit",
        None,
        &format!("If-None-Match: {tag}\r\n"),
    ));
    let r = c.response();
    assert_eq!((r.status, r.body.len()), (304, 0), "{ctx}");
    assert_eq!(r.header("etag"), Some(tag.as_str()), "{ctx}");
    c.send(&request(
        "GET",
        "/fruit",
        None,
        "If-None-Match: \"0123\"\r\n",
    ));
    assert_eq!(c.response().status, 200, "{ctx}");
    // DELETE: 200, then 404; GET and HEAD of a missing key: 404.
    assert_eq!(c.request("DELETE", "/fruit", None).status, 200, "{ctx}");
    assert_eq!(c.request("DELETE", "/fruit", None).status, 404, "{ctx}");
    assert_eq!(c.request("GET", "/fruit", None).status, 404, "{ctx}");
    let h = c.request("HEAD", "/fruit", None);
    assert_eq!((h.status, h.body.len()), (404, 0), "{ctx}");
    // Percent-decoded keys: any encoding of the same bytes is the same key.
    assert_eq!(
        c.request("PUT", "/a%2Fb%20c", Some(b"x")).status,
        201,
        "{ctx}"
    );
    assert_eq!(c.request("GET", "/a%2fb%20c", None).text(), "x", "{ctx}");
    assert_eq!(c.request("GET", "/a/b%20c", None).text(), "x", "{ctx}");
    assert_eq!(
        c.request("GET", "/%61/b%20c?ignored=1", None).text(),
        "x",
        "{ctx}"
    );
    let k1024 = format!("/{}", "k".repeat(1024));
    assert_eq!(c.request("PUT", &k1024, Some(b"")).status, 201, "{ctx}");
    assert_eq!(c.request("GET", &k1024, None).body.len(), 0, "{ctx}");
    // Keys of 0 or over 1024 bytes: 400 and 414, and the connection stays.
    assert_eq!(c.request("GET", "/", None).status, 400, "{ctx}");
    let k1025 = format!("/{}", "k".repeat(1025));
    assert_eq!(c.request("GET", &k1025, None).status, 414, "{ctx}");
    // Reserved paths.
    let r = c.request("GET", "/_/health", None);
    assert_eq!((r.status, r.text().as_str()), (200, "ok"), "{ctx}");
    assert_eq!(
        c.request("PUT", "/_/thing", Some(b"v")).status,
        404,
        "{ctx}"
    );
    assert_eq!(c.request("GET", "/_/", None).status, 404, "{ctx}");
    let r = c.request("PUT", "/_/health", Some(b"v"));
    assert_eq!(
        (r.status, r.header("allow")),
        (405, Some("GET, HEAD")),
        "{ctx}"
    );
    // Other methods: 405 with Allow.
    let r = c.request("PATCH", "/veg", Some(b"zz"));
    assert_eq!(r.status, 405, "{ctx}");
    assert_eq!(
        r.header("allow"),
        Some("GET, HEAD, PUT, POST, DELETE"),
        "{ctx}"
    );
    assert_eq!(c.request("OPTIONS", "*", None).status, 405, "{ctx}");
    // Stats: JSON with counts per method and status, misses, times, connections.
    let r = c.request("GET", "/_/stats", None);
    assert_eq!(r.header("content-type"), Some("application/json"), "{ctx}");
    let v: serde_json::Value = serde_json::from_slice(&r.body).expect("stats JSON");
    assert!(v["requests"]["PUT"].as_u64().unwrap() >= 3, "{ctx}: {v}");
    assert!(v["requests"]["POST"].as_u64().unwrap() >= 2, "{ctx}: {v}");
    assert!(v["statuses"]["304"].as_u64().unwrap() >= 1, "{ctx}: {v}");
    assert!(v["statuses"]["405"].as_u64().unwrap() >= 3, "{ctx}: {v}");
    assert_eq!(v["misses"], 3, "{ctx}: {v}");
    assert!(
        v["connections"]["open"].as_u64().unwrap() >= 1,
        "{ctx}: {v}"
    );
    for k in ["min", "mean", "median", "p99", "max"] {
        assert!(
            v["service_time_us"][k].as_f64().unwrap() > 0.0,
            "{ctx}: {k} {v}"
        );
    }
}

fn pipelined_in_order(addr: SocketAddr, ctx: &str) {
    let mut c = Http::connect(addr);
    let mut wire = Vec::new();
    for i in 0..100 {
        wire.extend(request(
            "PUT",
            &format!("/p{i}"),
            Some(format!("v{i}").as_bytes()),
            "",
        ));
        wire.extend(request("GET", &format!("/p{i}"), None, ""));
        wire.extend(request("HEAD", &format!("/p{i}"), None, ""));
    }
    // Split at an awkward place, in the middle of a head.
    let (a, b) = wire.split_at(wire.len() / 2 + 7);
    c.send(a);
    c.send(b);
    for i in 0..100 {
        assert!(matches!(c.response().status, 200 | 201), "{ctx}");
        assert_eq!(c.response().text(), format!("v{i}"), "{ctx}");
        let h = c.try_response(true).unwrap();
        assert_eq!(
            h.header("content-length").unwrap(),
            format!("v{i}").len().to_string()
        );
    }
    // Connection: close ends the pipeline: later requests are not answered.
    let mut wire = request("GET", "/p1", None, "Connection: close\r\n");
    wire.extend(request("GET", "/p2", None, ""));
    c.send(&wire);
    let r = c.response();
    assert_eq!(
        (r.text().as_str(), r.header("connection")),
        ("v1", Some("close")),
        "{ctx}"
    );
    assert!(c.closed_by_server(), "{ctx}");
}

fn http_1_0(addr: SocketAddr, ctx: &str) {
    let mut c = Http::connect(addr);
    c.send(b"PUT /old HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi");
    assert_eq!(c.response().status, 201, "{ctx}");
    assert!(c.closed_by_server(), "{ctx}: HTTP/1.0 closes");
    let mut c = Http::connect(addr);
    c.send(b"GET /old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    let r = c.response();
    assert_eq!(
        (r.text().as_str(), r.header("connection")),
        ("hi", Some("keep-alive")),
        "{ctx}"
    );
    c.send(b"GET /old HTTP/1.0\r\n\r\n");
    assert_eq!(c.response().text(), "hi", "{ctx}");
    assert!(c.closed_by_server(), "{ctx}");
}

/// Each request the server stops reading gets its status, then a close.
fn errors_close(addr: SocketAddr, ctx: &str) {
    let big_uri = format!("GET /{} HTTP/1.1\r\nHost: t\r\n\r\n", "u".repeat(2048));
    let big_headers = format!(
        "GET /k HTTP/1.1\r\nHost: t\r\nX: {}\r\n\r\n",
        "h".repeat(16 * 1024)
    );
    let cases: Vec<(Vec<u8>, u16)> = vec![
        (b"NONSENSE\r\n\r\n".to_vec(), 400),
        (b"GET /k HTTP/1.1\r\n\r\n".to_vec(), 400),
        (b"GET /a%zz HTTP/1.1\r\nHost: t\r\n\r\n".to_vec(), 400),
        (b"GET /k HTTP/3.0\r\nHost: t\r\n\r\n".to_vec(), 400),
        // Refused at once, though no blank line ends them (not a 408 later).
        (b"FOO\x01BAR\r\n".to_vec(), 400),
        // The start of a TLS ClientHello.
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03".to_vec(), 400),
        (b"PUT /k HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n".to_vec(), 411),
        (b"PUT /k HTTP/1.1\r\nHost: t\r\n\r\n".to_vec(), 411),
        (b"PUT /k HTTP/1.1\r\nHost: t\r\nContent-Length: 1048577\r\n\r\n".to_vec(), 413),
        (big_uri.into_bytes(), 414),
        (big_headers.into_bytes(), 431),
    ];
    for (wire, status) in cases {
        let mut c = Http::connect(addr);
        c.send(&wire);
        let r = c.response();
        let what = text(&wire[..wire.len().min(40)]);
        assert_eq!(r.status, status, "{ctx}: {what}");
        assert_eq!(r.header("connection"), Some("close"), "{ctx}: {what}");
        assert!(c.closed_by_server(), "{ctx}: {what}");
    }
    // A body of exactly --max-value is accepted, and round-trips.
    let mut c = Http::connect(addr);
    let value: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 251) as u8).collect();
    assert_eq!(c.request("PUT", "/mib", Some(&value)).status, 201, "{ctx}");
    let r = c.request("GET", "/mib", None);
    assert!(r.body == value, "{ctx}: 1 MiB value changed");
    assert_eq!(r.header("etag").unwrap(), md5_tag(&value), "{ctx}");
    // 100-continue: the interim response, then the final one.
    c.send(b"PUT /cont HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n");
    let mut interim = [0u8; 25];
    c.stream.read_exact(&mut interim).unwrap();
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n", "{ctx}");
    c.send(b"abc");
    assert_eq!(c.response().status, 201, "{ctx}");
}

/// 50 idle connections (half silent, half mid-request) do not keep others
/// waiting: another client's 60 round trips all finish before any idle one
/// has its 408. After --header-timeout each gets 408 and is closed.
fn idle_connections(addr: SocketAddr, ctx: &str) {
    let mut idle: Vec<Http> = (0..50).map(|_| Http::connect(addr)).collect();
    for (i, c) in idle.iter_mut().enumerate() {
        if i % 2 == 1 {
            c.send(b"GET /slow HTTP/1.1\r\nHost: t\r\n");
        }
    }
    let mut active = Http::connect(addr);
    for i in 0..30 {
        let key = format!("/busy{i}");
        assert_eq!(active.request("PUT", &key, Some(b"v")).status, 201, "{ctx}");
        assert_eq!(active.request("GET", &key, None).text(), "v", "{ctx}");
    }
    drop(active); // before it idles long enough to time out too
                  // Had the active client waited on the idle ones, it would have been
                  // answered only once they timed out: nothing may have reached them yet.
    for (i, c) in idle.iter_mut().enumerate() {
        c.stream.set_nonblocking(true).unwrap();
        let mut byte = [0u8; 1];
        let peeked = c.stream.peek(&mut byte);
        assert!(
            matches!(&peeked, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "{ctx}: idle connection {i} was answered ({peeked:?}) before the active client finished"
        );
        c.stream.set_nonblocking(false).unwrap();
    }
    for (i, c) in idle.iter_mut().enumerate() {
        let r = c.response();
        assert_eq!(r.status, 408, "{ctx}: idle connection {i}");
        assert_eq!(r.header("connection"), Some("close"), "{ctx}");
        assert!(c.closed_by_server(), "{ctx}: idle connection {i}");
    }
}

fn conformance(strategy: &str, store: &str) {
    let server = ServerProc::start(
        "kv",
        &with_threads(
            strategy,
            "2",
            &words(&format!(
                "--strategy {strategy} --store {store} --header-timeout 3s"
            )),
        ),
    );
    let ctx = format!("{strategy}/{store}");
    section_3_examples(server.addr, &ctx);
    pipelined_in_order(server.addr, &ctx);
    http_1_0(server.addr, &ctx);
    errors_close(server.addr, &ctx);
    idle_connections(server.addr, &ctx);
    let (status, out) = server.stop();
    assert!(status.success(), "{ctx}: {status:?}");
    assert!(out.contains("Final statistics"), "{ctx}: {out}");
    assert!(out.contains("service_time_us: count"), "{ctx}: {out}");
    let line = out.lines().find(|l| l.contains("statuses:")).unwrap_or("");
    for code in ["400 7,", "408 50,", "411 2,", "413 1,", "414 2,", "431 1"] {
        assert!(line.contains(code), "{ctx}: want {code} in {line}");
    }
}

/// Each strategy against one store, the stores taken in turn down the
/// code's lists, so every store is covered without the whole product.
fn conformance_rotating_stores(strategy: &str) {
    let i = strategies().iter().position(|s| *s == strategy).unwrap();
    let all = stores();
    conformance(strategy, all[i % all.len()]);
}

per_strategy!(conformance, conformance_rotating_stores);

/// A connection that fetched a large value and then idles keeps no buffer
/// of it: 40 connections that each GET 1 MiB and stay open grow the
/// server's resident memory by less than half of 40 MiB (about 2 MiB
/// measured; 9 under thread-per-connection, for its 40 threads), under
/// every strategy.
///
/// glibc keeps up to two freed megabytes cached in each of its malloc
/// arenas (8 per core), and thread-per-connection puts every connection on
/// its own thread, so its arenas alone could hold more on a large machine:
/// two arenas keep the allocator's caching out of what is measured.
#[test]
fn kv_idle_connections_release_large_replies() {
    const MIB: usize = 1 << 20;
    let value = vec![b'v'; MIB];
    for strategy in strategies() {
        let server = ServerProc::start_with_env(
            "kv",
            &with_threads(strategy, "2", &["--strategy", strategy]),
            &[("MALLOC_ARENA_MAX", "2")],
        );
        let mut first = Http::connect(server.addr);
        assert_eq!(first.request("PUT", "/big", Some(&value)).status, 201);
        assert_eq!(first.request("GET", "/big", None).body.len(), MIB);
        let before = rss_kib(server.pid());
        let idle: Vec<Http> = (0..40)
            .map(|_| {
                let mut c = Http::connect(server.addr);
                assert_eq!(c.request("GET", "/big", None).body.len(), MIB, "{strategy}");
                c
            })
            .collect();
        std::thread::sleep(Duration::from_millis(100));
        let grown_mib = rss_kib(server.pid()).saturating_sub(before) / 1024;
        assert!(
            grown_mib < 20,
            "{strategy}: 40 idle connections hold {grown_mib} MiB more"
        );
        drop(idle);
    }
}

/// A client that sends requests but never reads the replies is reset once
/// they make no progress for `--write-timeout`, under every strategy, and
/// the server counts it; other clients are served meanwhile.
#[test]
fn kv_clients_that_never_read_are_reset() {
    let runs: Vec<_> = strategies()
        .into_iter()
        .map(|strategy| {
            std::thread::spawn(move || {
                let server = ServerProc::start(
                    "kv",
                    &with_threads(
                        strategy,
                        "2",
                        &["--strategy", strategy, "--write-timeout", "1s"],
                    ),
                );
                let mut c = Http::connect(server.addr);
                let value = vec![b'v'; 1 << 20];
                assert_eq!(c.request("PUT", "/big", Some(&value)).status, 201);
                // 16 MiB of replies: more than the socket buffers hold.
                let mut stuck = TcpStream::connect(server.addr).unwrap();
                let gets: Vec<u8> = (0..16)
                    .flat_map(|_| request("GET", "/big", None, ""))
                    .collect();
                stuck.write_all(&gets).unwrap();
                // Open connections: this one and the stuck one, until the
                // stuck one is dropped.
                for want in [2, 1] {
                    let deadline = std::time::Instant::now() + Duration::from_secs(20);
                    loop {
                        let r = c.request("GET", "/_/stats", None);
                        let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
                        if v["connections"]["open"] == want {
                            break;
                        }
                        assert!(
                            std::time::Instant::now() < deadline,
                            "{strategy}: never {want} open connections: {v}"
                        );
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
                let (status, out) = server.stop();
                assert!(status.success(), "{strategy}");
                assert!(out.contains("reset_write_timeout 1"), "{strategy}: {out}");
            })
        })
        .collect();
    // Join every run before failing, so no server is left behind.
    let failed: Vec<_> = runs.into_iter().filter_map(|r| r.join().err()).collect();
    assert!(failed.is_empty(), "{} strategies failed", failed.len());
}

#[test]
fn kv_bad_flags_exit_2_naming_the_flag() {
    for (args, flag) in [
        (&["serve", "kv", "--max-value", "lots"][..], "--max-value"),
        (&["serve", "kv", "--max-value", "2G"], "--max-value"),
        (&["serve", "kv", "--max-uri", "1"], "--max-uri"),
        (&["serve", "kv", "--max-headers", "0"], "--max-headers"),
        (
            &["serve", "kv", "--header-timeout", "never"],
            "--header-timeout",
        ),
        (&["serve", "kv", "--store", "magic"], "--store"),
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains(flag),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}
