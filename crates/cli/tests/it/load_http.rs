//! `serverlab load http` against real servers: serverlab's kv server (an
//! HTTP/1.1 server like any other), a stand-in that records what it is
//! sent and answers chunked, and hostile ones; counts per target and
//! status, and bad flags and targets files that must exit 2.

use crate::support::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn load(args: &[&str]) -> std::process::Output {
    crate::support::load("http", args)
}

/// A targets file in vegeta's HTTP format, in a directory of its own.
fn targets_file(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("targets.txt");
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap().to_string();
    (dir, path)
}

/// A weighted targets file against `serve kv`: writes that succeed, reads
/// of keys never written (404, errors by status); each target's count,
/// the statuses and the server's own count agree. The 404s are errors of
/// the run: among `results.errors` and the text's errors, and it fails.
#[test]
fn targets_are_counted_per_target_and_status() {
    let server = ServerProc::start("kv", &[]);
    let a = server.addr;
    let (dir, targets) = targets_file("");
    let body = dir.path().join("body.txt");
    std::fs::write(&body, "{value}").unwrap();
    std::fs::write(
        &targets,
        format!(
            "PUT http://{a}/key{{key}}\nContent-Type: text/plain\n@{}\n\n\
             GET http://{a}/absent{{key}} weight=2\n",
            body.display()
        ),
    )
    .unwrap();
    let json = dir.path().join("out.json");
    let out = load(&words(&format!(
        "--targets {targets} --requests 300 --connections 3 --keys \
        20 --value-size 64 --threshold errors<1% --json {}",
        json.display()
    )));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    let v = read_json(&json);
    let h = &v["results"]["http"];
    let t = h["targets"].as_array().unwrap();
    assert_eq!(t.len(), 2, "{h}");
    // The statuses not expected are the errors a threshold judges.
    let th = &v["results"]["thresholds"][0];
    assert_eq!(th["passed"], false, "{th}");
    let share = t[1]["requests"].as_f64().unwrap() / 300.0;
    assert!(
        (th["actual"].as_f64().unwrap() - share).abs() < 1e-9,
        "{th}"
    );
    let errors = v["results"]["errors"].as_array().unwrap();
    let line = format!(
        "status 404: {} responses, expected 2xx (GET http://{a}/absent{{key}} {})",
        t[1]["requests"], t[1]["requests"]
    );
    assert_eq!(errors, &[serde_json::json!(line)], "{}", v["results"]);
    assert!(
        stdout.contains(&format!("  errors:\n    {line}\n")),
        "{stdout}"
    );
    assert!(
        text(&out.stderr).contains("serverlab: the run failed (the errors above"),
        "{}",
        text(&out.stderr)
    );
    let (puts, gets) = (&t[0], &t[1]);
    assert_eq!(puts["target"], format!("PUT http://{a}/key{{key}}"));
    let n = |x: &serde_json::Value| x.as_u64().unwrap();
    assert_eq!(n(&puts["requests"]) + n(&gets["requests"]), 300, "{h}");
    // Weighted 1:2, seeded: far from even.
    assert!(n(&gets["requests"]) > n(&puts["requests"]), "{h}");
    assert_eq!(n(&puts["errors"]), 0, "{h}");
    assert_eq!(gets["statuses"]["404"], gets["requests"], "{h}");
    assert_eq!(n(&gets["errors"]), n(&gets["requests"]), "{h}");
    assert_eq!(h["errors_by_status"]["404"], gets["requests"], "{h}");
    assert_eq!(h["expect_status"], "2xx");
    assert_eq!(n(&v["results"]["requests"]), 300);
    assert!(
        stdout.contains("errors by status (expected 2xx): 404="),
        "{stdout}"
    );
    assert!(stdout.contains("targets (in the window):"), "{stdout}");
    let (status, served) = server.stop();
    assert!(status.success());
    assert!(served.contains("requests: total 300,"), "{served}");
}

/// Statuses the run expects are not errors: the same load with
/// `--expect-status 2xx,404` has none, and succeeds.
#[test]
fn statuses_expected_are_not_errors() {
    let server = ServerProc::start("kv", &[]);
    let url = format!("http://{}/never{{key}}", server.addr);
    let (dir, _) = targets_file("");
    let json = dir.path().join("out.json");
    let args = ["--url", &url, "--requests", "30", "--json"];
    let out = load(
        &[
            &args[..],
            &[json.to_str().unwrap()],
            &["--expect-status", "2xx,404"],
        ]
        .concat(),
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("  errors: none\n"), "{stdout}");
    let v = read_json(&json);
    assert_eq!(
        v["results"]["errors"],
        serde_json::json!([]),
        "{}",
        v["results"]
    );
    assert_eq!(
        v["results"]["http"]["statuses"]["404"], 30,
        "{}",
        v["results"]
    );
}

/// With --verify a status not expected fails the run, named.
#[test]
fn verify_fails_on_a_status_not_expected() {
    let server = ServerProc::start("kv", &[]);
    let url = format!("http://{}/never", server.addr);
    let out = load(&["--url", &url, "--requests", "20", "--verify"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(all.contains("status 404, expected 2xx"), "{all}");
    // Expected, it passes.
    let out = load(&words(&format!(
        "--url {url} --requests 20 --verify --expect-status 404"
    )));
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// A request as a stand-in server read it: its head and its body.
type Request = (String, Vec<u8>);

/// One HTTP request read from `s`: its head and body (by Content-Length).
fn read_request(s: &mut TcpStream, pending: &mut Vec<u8>) -> Option<Request> {
    loop {
        if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&pending[..end + 4]).into_owned();
            let len = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap())
                })
                .unwrap_or(0);
            if pending.len() >= end + 4 + len {
                let body = pending[end + 4..end + 4 + len].to_vec();
                pending.drain(..end + 4 + len);
                return Some((head, body));
            }
        }
        let mut buf = [0u8; 4096];
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
    }
}

/// --url, --method, --header and --body reach the server as written,
/// {key} and {value} filled in; chunked responses and Content-Length ones
/// are both framed.
#[test]
fn flags_make_the_requests_and_chunked_replies_are_read() {
    let seen: Arc<Mutex<Vec<Request>>> = Arc::default();
    let log = seen.clone();
    let addr = fake_server(move |mut s| {
        let mut pending = Vec::new();
        let mut k = 0;
        while let Some(req) = read_request(&mut s, &mut pending) {
            log.lock().unwrap().push(req);
            k += 1;
            let reply: &[u8] = if k % 2 == 0 {
                b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nT: 1\r\n\r\n"
            } else {
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
            };
            if s.write_all(reply).is_err() {
                return;
            }
        }
    });
    let url = format!("http://{addr}/items/{{key}}?v=1");
    let out = load(&[
        "--url",
        &url,
        "--method",
        "POST",
        "--header",
        "X-Test: yes",
        "--header",
        "Authorization: Bearer t",
        "--body",
        "{\"k\":\"{key}\",\"v\":\"{value}\"}",
        "--value-size",
        "40",
        "--keys",
        "5",
        "--requests",
        "30",
        "--connections",
        "2",
        "--pipeline",
        "3",
        "--format",
        "json",
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let h = &v["results"]["http"];
    let n = |s: &str| h["statuses"][s].as_u64().unwrap_or(0);
    assert_eq!(n("200") + n("201"), 30, "{h}");
    assert!(n("201") > 0, "chunked replies were read: {h}");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 30);
    for (head, body) in seen.iter() {
        let line = head.lines().next().unwrap();
        assert!(
            line.starts_with("POST /items/") && line.ends_with("?v=1 HTTP/1.1"),
            "{line}"
        );
        let key: usize = line["POST /items/".len()..line.len() - " ?v=1 HTTP/1.1".len() + 1]
            .parse()
            .unwrap_or_else(|_| panic!("{line}"));
        assert!(key < 5, "{line}");
        assert!(head.contains(&format!("\r\nHost: {addr}\r\n")), "{head}");
        assert!(head.contains("\r\nX-Test: yes\r\n"), "{head}");
        assert!(head.contains("\r\nAuthorization: Bearer t\r\n"), "{head}");
        let body = String::from_utf8(body.clone()).unwrap();
        let prefix = format!("{{\"k\":\"{key}\",\"v\":\"");
        assert!(body.starts_with(&prefix) && body.ends_with("\"}"), "{body}");
        assert_eq!(body.len(), prefix.len() + 40 + 2, "{body}");
    }
}

/// --no-keepalive: a connection per request, each asking to be closed.
#[test]
fn no_keepalive_opens_a_connection_per_request() {
    let server = ServerProc::start("kv", &[]);
    let url = format!("http://{}/key1", server.addr);
    let out = load(&words(&format!(
        "--url {url} --requests 40 --no-keepalive --expect-status 2xx,404 --verify"
    )));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("a connection per request"), "{stdout}");
    let (_, served) = server.stop();
    // One for each request, and the one that checks first that the
    // server listens.
    assert_eq!(stat(&served, "accepted"), 41, "{served}");
}

/// A server that sends a chunked body without end: the connection fails
/// at --max-reply, the client's memory bounded, the run over at once.
#[test]
fn an_endless_chunked_body_is_cut_off() {
    let addr = fake_server(|mut s| {
        let mut pending = Vec::new();
        if read_request(&mut s, &mut pending).is_none() {
            return;
        }
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        let chunk = [b"1000\r\n".as_slice(), &[b'x'; 4096], b"\r\n"].concat();
        while s.write_all(&chunk).is_ok() {}
    });
    let out = load(&[
        "--url",
        &format!("http://{addr}/"),
        "--requests",
        "1",
        "--max-reply",
        "1MiB",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("longer than"), "{err}");
}

#[test]
fn bad_flags_and_targets_files_exit_2_naming_them() {
    let u = "http://127.0.0.1:9/";
    load_usage_error("http", &[], "--url");
    load_usage_error("http", &["--url", "ftp://x/"], "--url");
    load_usage_error("http", &["--url", u, "--method", "GE T"], "--method");
    load_usage_error(
        "http",
        &["--url", u, "--weight", "1", "--weight", "2"],
        "--weight",
    );
    load_usage_error("http", &["--url", u, "--weight", "0"], "--weight");
    load_usage_error("http", &["--url", u, "--header", "nocolon"], "--header");
    load_usage_error(
        "http",
        &["--url", u, "--expect-status", "6xx"],
        "--expect-status",
    );
    load_usage_error("http", &["--url", u, "--body", "@/no/such/file"], "--body");
    load_usage_error("http", &["--url", "/path"], "--addr");
    load_usage_error(
        "http",
        &["--url", u, "--url", "http://127.0.0.2:9/"],
        "two hosts",
    );
    let (_dir, path) = targets_file("GET http://h/\nX-Ok: 1\nnot a header\n");
    load_usage_error("http", &["--targets", &path], "line 3");
    let (_dir, path) = targets_file("{\"method\":\"GET\",\"url\":\"http://h/\",\"body\":\"%\"}\n");
    load_usage_error("http", &["--targets", &path], "line 1");
    load_usage_error("http", &["--targets", "/no/such/targets"], "--targets");
    // Files that never end are refused at their limits, not read whole.
    load_usage_error(
        "http",
        &["--targets", "/dev/zero"],
        "--targets /dev/zero: 67108865 bytes or more, past the 64 MiB",
    );
    load_usage_error(
        "http",
        &["--url", u, "--body", "@/dev/zero"],
        "past the 64 MiB",
    );
}

#[test]
fn an_unreachable_server_exits_1_saying_so_once() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/");
    let out = load(&["--url", &url, "--requests", "5"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("cannot connect to 127.0.0.1:{port}")),
        "{err}"
    );
    assert!(err.contains("start your server"), "{err}");
}

/// A Unix socket in a directory of its own that forwards each connection
/// to `to` over TCP (a thread each way): a TCP server reached as a load
/// over a Unix socket reaches one (`unix_socket.rs` serves one itself).
fn unix_proxy(to: std::net::SocketAddr) -> (tempfile::TempDir, String) {
    use std::os::unix::net::UnixListener;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proxy.sock");
    let listener = UnixListener::bind(&path).unwrap();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let Ok(server) = TcpStream::connect(to) else {
                return;
            };
            let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (mut c, mut s) = (client, server);
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut c, &mut s);
                let _ = s.shutdown(std::net::Shutdown::Write);
            });
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut s2, &mut c2);
                let _ = c2.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    let addr = format!("unix:{}", path.display());
    (dir, addr)
}

/// Every protocol's load connects to a Unix socket with `--addr
/// unix:PATH`, verified, and its requests reach the server.
#[test]
fn every_load_connects_to_a_unix_socket() {
    let cases: [(&str, &str, &[&str]); 5] = [
        (
            "board",
            "board",
            &words("--posters 2 --readers 2 --duration 1s --warmup 0s"),
        ),
        (
            "bucket",
            "bucket",
            &["--requests", "20", "--delay", "0", "--keep-alive"],
        ),
        (
            "kv",
            "kv",
            &words("--sessions 4 --requests-per-session 5 --concurrency 2"),
        ),
        ("resp", "resp", &["--requests", "40", "--connections", "2"]),
        (
            "kv",
            "http",
            &[
                "--url",
                "/key{key}",
                "--method",
                "PUT",
                "--body",
                "{value}",
                "--requests",
                "30",
            ],
        ),
    ];
    for (served, loaded, args) in cases {
        let server = ServerProc::start(served, &[]);
        let (_dir, unix) = unix_proxy(server.addr);
        let mut all = vec!["--addr", unix.as_str(), "--verify"];
        all.extend(args);
        let out = crate::support::load(loaded, &all);
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "{loaded}: {stdout}{}",
            text(&out.stderr)
        );
        assert!(stdout.contains("0 mismatches"), "{loaded}: {stdout}");
        let (_, served_out) = server.stop();
        assert!(
            !served_out.contains("requests: total 0,"),
            "{loaded}: {served_out}"
        );
    }
    let fn_load = |p: &str, args: &[&str]| crate::support::load(p, args);
    let out = fn_load("resp", &["--addr", "unix:/no/such.sock", "--requests", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("cannot connect to unix:/no/such.sock"),
        "{}",
        text(&out.stderr)
    );
}

/// check refuses a Unix socket, saying so (exit 2); `serve` takes one
/// (`unix_socket.rs`).
#[test]
fn check_refuses_a_unix_socket_saying_why() {
    usage_error(&["check", "board", "unix:/tmp/x.sock"], "Unix socket");
}

/// The load models and outputs every load has: an open loop with its
/// per-second CSV and HDR log, a scan of rates, and a load split over two
/// agents that `merge` adds up, per target too.
#[test]
fn load_models_agents_and_merge_work_for_http() {
    let server = ServerProc::start("kv", &[]);
    let url = format!("http://{}/key{{key}}", server.addr);
    let dir = tempfile::tempdir().unwrap();
    let (csv, hlog) = (dir.path().join("s.csv"), dir.path().join("h.hlog"));
    let open = [
        "--url",
        &url,
        "--expect-status",
        "2xx,404",
        "--rate",
        "300",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--per-second",
        csv.to_str().unwrap(),
        "--hdr-log",
        hlog.to_str().unwrap(),
    ];
    let (_, v) = server.load_json("http", &open);
    assert!(
        v["load_model"].as_str().unwrap().starts_with("open-loop"),
        "{v}"
    );
    let h = &v["results"]["http"];
    assert_eq!(h["targets"][0]["requests"], v["results"]["requests"], "{h}");
    assert!(v["results"]["requests"].as_u64().unwrap() > 0);
    assert!(std::fs::metadata(&csv).unwrap().len() > 0);
    assert!(std::fs::read_to_string(&hlog).unwrap().contains("GET"));
    let scan = [
        "--url",
        &url,
        "--expect-status",
        "2xx,404",
        "--scan",
        "100:200:100",
        "--step-duration",
        "300ms",
        "--warmup",
        "0s",
    ];
    let (_, v) = server.load_json("http", &scan);
    assert_eq!(
        v["scan"]["steps"].as_array().map(Vec::len),
        Some(2),
        "{}",
        v["scan"]
    );
    // Two agents of 120 requests in all, merged.
    let out_dir = dir.path().join("agents");
    let addr = server.addr.to_string();
    for i in 0..2 {
        let agent = format!("{i}/2");
        let out = crate::support::load(
            "http",
            &[
                "--addr",
                &addr,
                "--url",
                "/key{key}",
                "--url",
                "/other{key}",
                "--weight",
                "1",
                "--weight",
                "3",
                "--expect-status",
                "2xx,404",
                "--requests",
                "120",
                "--connections",
                "2",
                "--agent",
                &agent,
                "--out",
                out_dir.to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "agent {i}: {}", text(&out.stderr));
    }
    let out = run(&["merge", out_dir.to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let h = &v["results"]["http"];
    let n = |t: &serde_json::Value| t["requests"].as_u64().unwrap();
    assert_eq!(n(&h["targets"][0]) + n(&h["targets"][1]), 120, "{h}");
    assert_eq!(h["targets"][1]["weight"], 3, "{h}");
    assert_eq!(h["statuses"]["404"].as_u64(), Some(120), "{h}");
}

/// How [`ending_server`] ends each connection.
#[derive(Clone, Copy, PartialEq)]
enum Ending {
    /// Its last response says `Connection: close` (as nginx does at its
    /// keepalive_requests), then it closes.
    Said,
    /// It reads one request more and resets the connection, saying
    /// nothing.
    Reset,
}

/// A stand-in server that ends each connection after `every` responses,
/// as `ending` says; the connections it accepted are counted.
fn ending_server(every: usize, ending: Ending) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    let addr = fake_server(move |mut s| {
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut pending = Vec::new();
        for k in 1..=every {
            if read_request(&mut s, &mut pending).is_none() {
                return;
            }
            let close = if k == every && ending == Ending::Said {
                "Connection: close\r\n"
            } else {
                ""
            };
            let reply = format!("HTTP/1.1 200 OK\r\n{close}Content-Length: 2\r\n\r\nok");
            if s.write_all(reply.as_bytes()).is_err() {
                return;
            }
        }
        if ending == Ending::Reset && read_request(&mut s, &mut pending).is_some() {
            let _ = socket2::SockRef::from(&s).set_linger(Some(Duration::ZERO));
        }
    });
    (addr, accepted)
}

/// A keep-alive connection the server closes is opened again: every
/// request is answered; pipelined past the close, the requests lost are
/// errors, and the load still goes on over new connections.
#[test]
fn a_connection_the_server_closes_is_opened_again() {
    let (addr, accepted) = ending_server(3, Ending::Said);
    let url = format!("http://{addr}/");
    let out = load(&["--url", &url, "--requests", "30", "--connections", "1"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("statuses (in the window): 200=30"),
        "{stdout}"
    );
    // Ten connections of three requests, and the check that it listens.
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 11);
    let (addr, accepted) = ending_server(3, Ending::Said);
    let url = format!("http://{addr}/");
    let out = load(&words(&format!(
        "--url {url} --requests 60 --connections 1 --pipeline 4 --format json"
    )));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let answered = v["results"]["http"]["statuses"]["200"].as_u64().unwrap();
    assert!(answered >= 6, "{v}");
    assert!(accepted.load(std::sync::atomic::Ordering::SeqCst) > 3);
    // Each loss is the server's close, said or not: a server that closes
    // with requests unread resets the connection, and the reset may
    // overtake the response that said Connection: close.
    let errors = v["results"]["errors"].as_array().unwrap();
    assert!(!errors.is_empty(), "{v}");
    for e in errors {
        let e = e.as_str().unwrap();
        if e.starts_with('…') {
            continue; // "… and N more errors"
        }
        assert!(
            e.contains("Connection: close") || e.contains("on it; opened again"),
            "{e}"
        );
    }
}

/// A server that answers on a keep-alive connection and then resets it
/// without a word (no `Connection: close`) has its connection opened
/// again, as HTTP/1.1 lets a server close one at any time; one reset
/// before any answer stays down.
#[test]
fn a_connection_reset_after_answers_is_opened_again() {
    // 30 requests over one connection to a server ending each connection
    // after `answers`: its JSON result, exit code and connections.
    let run = |answers| {
        let (addr, accepted) = ending_server(answers, Ending::Reset);
        let url = format!("http://{addr}/");
        let out = load(&words(&format!(
            "--url {url} --requests 30 --connections 1 --format json"
        )));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            v,
            out.status.code(),
            accepted.load(std::sync::atomic::Ordering::SeqCst),
        )
    };
    let (v, code, accepted) = run(2);
    // Ten connections: two answers and a reset each (and the check that
    // it listens).
    assert_eq!(v["results"]["http"]["statuses"]["200"], 20, "{v}");
    assert_eq!(v["results"]["failures"], 10, "{v}");
    let errors = v["results"]["errors"].to_string();
    assert!(
        errors.contains("after 2 responses on it; opened again"),
        "{errors}"
    );
    assert_eq!(accepted, 11);
    assert_eq!(code, Some(1), "{v}");

    let (v, _, accepted) = run(0);
    assert_eq!(v["results"]["failures"], 1, "{v}");
    assert!(
        !v["results"]["errors"].to_string().contains("opened again"),
        "{v}"
    );
    assert_eq!(accepted, 2);
}

/// `--key-dist sequential` gives each connection its own stride (i, i+n,
/// i+2n, … for connection i of n), whatever the order the server answers
/// in: here the connection that starts at key 0 is answered slowly, so a
/// walk shared by all would hand the others its steps.
#[test]
fn a_sequential_walk_is_each_connections_own() {
    let walks = Arc::new(Mutex::new(Vec::new()));
    let seen = walks.clone();
    let addr = fake_server(move |mut s| {
        let mut pending = Vec::new();
        let mut keys = Vec::new();
        while let Some((head, _)) = read_request(&mut s, &mut pending) {
            let path = head.split_whitespace().nth(1).unwrap().to_string();
            let key: u64 = path.trim_start_matches("/k").parse().unwrap();
            if keys.first() == Some(&0) || (keys.is_empty() && key == 0) {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            keys.push(key);
            let reply = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            if s.write_all(reply.as_bytes()).is_err() {
                break;
            }
        }
        if !keys.is_empty() {
            seen.lock().unwrap().push(keys);
        }
    });
    let url = format!("http://{addr}/k{{key}}");
    let out = load(&words(&format!(
        "--url {url} --key-dist sequential --keys 1000 --connections 3 --requests 30"
    )));
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The fake server notes a connection's keys when it closes.
    let done = poll_until(Duration::from_secs(10), Duration::from_millis(10), || {
        walks.lock().unwrap().len() == 3
    });
    let walks = walks.lock().unwrap().clone();
    assert!(done, "{walks:?}");
    let mut firsts: Vec<u64> = walks.iter().map(|w| w[0]).collect();
    firsts.sort_unstable();
    assert_eq!(firsts, [0, 1, 2], "{walks:?}");
    for w in &walks {
        assert!(w.windows(2).all(|p| p[1] == p[0] + 3), "{walks:?}");
    }
}
