//! `serve … --metrics ADDR`: the Prometheus endpoint over the real
//! binary. Every strategy and protocol counts the requests it answered,
//! by operation, under the constant labels; the endpoint answers only
//! `GET /metrics`, is bounded against hostile clients, and a taken
//! address stops the server at start. Two ignored tests need Debian's
//! `prometheus` package (promtool, and a real Prometheus scraping `serve`)
//! and FAIL without it.

use crate::load_metrics::Prometheus;
use crate::support::*;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

const NEEDS: &str = "needs prometheus (promtool); apt-get install prometheus";

/// Start `serve <protocol> --metrics 127.0.0.1:0 <args>`; the server and
/// where its metrics are, as its startup line announces them.
fn serve(protocol: &str, args: &[&str]) -> (ServerProc, SocketAddr) {
    let mut all = args.to_vec();
    all.extend(["--metrics", "127.0.0.1:0"]);
    let server = ServerProc::start(protocol, &all);
    let at = metrics_at(&server);
    (server, at)
}

/// Where `server`'s metrics are, as its startup line announces them.
pub(crate) fn metrics_at(server: &ServerProc) -> SocketAddr {
    let line = server.stdout();
    let at = line
        .split("metrics at http://")
        .nth(1)
        .and_then(|r| r.split("/metrics").next())
        .unwrap_or_else(|| panic!("no metrics address in the startup line: {line}"));
    at.parse().expect("a metrics address")
}

/// One HTTP request on a new connection: the status and the body.
pub fn http(at: SocketAddr, request: &str) -> (u16, String) {
    let mut s = TcpStream::connect(at).expect("connect to the metrics port");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).expect("a reply");
    let status = reply
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP reply: {reply:?}"));
    let body = reply.split_once("\r\n\r\n").map_or("", |b| b.1).to_string();
    (status, body)
}

/// `GET /metrics` in the Prometheus text format.
pub fn scrape(at: SocketAddr) -> String {
    let (status, body) = http(at, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(status, 200, "{body}");
    body
}

/// The value of the sample `name` whose labels include every one of
/// `labels`.
pub fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
        let (series, value) = l.rsplit_once(' ')?;
        let (n, rest) = series.split_once('{').unwrap_or((series, ""));
        let all = labels
            .iter()
            .all(|(k, v)| rest.contains(&format!("{k}=\"{v}\"")));
        (n == name && all).then(|| value.parse().ok())?
    })
}

fn requests(text: &str, op: &str) -> f64 {
    sample(text, "serverlab_requests_total", &[("op", op)])
        .unwrap_or_else(|| panic!("no serverlab_requests_total{{op=\"{op}\"}}:\n{text}"))
}

/// The requests of `op` timed: `serverlab_request_duration_seconds_count`
/// of that op, which its `+Inf` bucket must equal.
fn timed(text: &str, op: &str) -> f64 {
    let name = "serverlab_request_duration_seconds";
    let count = sample(text, &format!("{name}_count"), &[("op", op)])
        .unwrap_or_else(|| panic!("no {name}_count{{op=\"{op}\"}}:\n{text}"));
    let inf = sample(
        text,
        &format!("{name}_bucket"),
        &[("op", op), ("le", "+Inf")],
    );
    assert_eq!(inf, Some(count), "{op}: the +Inf bucket is the count");
    count
}

/// Under `--time-all` every request is timed: each op sent has its
/// duration histogram, whose count is that op's requests.
fn every_op_timed(text: &str, ops: &[&str], strategy: &str) {
    for op in ops {
        assert_eq!(timed(text, op), requests(text, op), "{strategy}: {op}");
    }
    assert_eq!(
        sample(text, "serverlab_request_duration_sampled_one_in", &[]),
        Some(1.0)
    );
}

/// Every serverlab sample carries the three constant labels.
fn has_constant_labels(text: &str, protocol: &str, strategy: &str, store: &str) {
    let want = format!("protocol=\"{protocol}\",strategy=\"{strategy}\",store=\"{store}\"");
    let ours: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("serverlab_"))
        .collect();
    assert!(ours.len() > 10, "{text}");
    for l in ours {
        assert!(l.contains(&want), "{l} lacks {want}");
    }
}

/// `request` (board framing, NUL-terminated) `n` times on one connection.
fn board_reqs(addr: SocketAddr, request: &[u8], n: usize) {
    let mut c = Client::connect(addr);
    for _ in 0..n {
        c.req(request);
    }
}

fn board(strategy: &str) {
    let flags = ["--strategy", strategy, "--store", "rwlock", "--time-all"];
    let (server, at) = serve("board", &flags);
    board_reqs(server.addr, b"POST@t#hello", 3);
    board_reqs(server.addr, b"READ@t#0", 2);
    board_reqs(server.addr, b"COUNT@t", 1);
    let text = scrape(at);
    assert_eq!(requests(&text, "POST"), 3.0, "{strategy}");
    assert_eq!(requests(&text, "READ"), 2.0, "{strategy}");
    assert_eq!(requests(&text, "COUNT"), 1.0, "{strategy}");
    // An operation none of whose requests came is not exported (RESP
    // exported over a hundred series that were zero).
    let list = sample(&text, "serverlab_requests_total", &[("op", "LIST")]);
    assert_eq!(list, None, "{strategy}: no LIST was sent");
    every_op_timed(&text, &["POST", "READ", "COUNT"], strategy);
    let list = sample(
        &text,
        "serverlab_request_duration_seconds_count",
        &[("op", "LIST")],
    );
    assert_eq!(list, None, "{strategy}: no LIST was sent");
    assert_eq!(sample(&text, "serverlab_store_topics", &[]), Some(1.0));
    assert_eq!(
        sample(&text, "serverlab_connections_accepted_total", &[]),
        Some(3.0)
    );
    let received = sample(&text, "serverlab_bytes_received_total", &[]).unwrap();
    let want = 3 * "POST@t#hello\0".len() + 2 * "READ@t#0\0".len() + "COUNT@t\0".len();
    assert_eq!(received, want as f64, "{strategy}: every byte read counted");
    assert!(sample(&text, "serverlab_bytes_sent_total", &[]).unwrap() > 0.0);
    has_constant_labels(&text, "board", strategy, flags[3]);
}

fn echo(strategy: &str) {
    let (server, at) = serve("echo", &["--strategy", strategy, "--time-all"]);
    board_reqs(server.addr, b"hello", 7);
    let text = scrape(at);
    assert_eq!(requests(&text, "echo"), 7.0, "{strategy}");
    every_op_timed(&text, &["echo"], strategy);
    assert!(!text.contains("serverlab_store_"), "echo has no store");
    has_constant_labels(&text, "echo", strategy, "none");
}

fn bucket(strategy: &str) {
    let line = format!("--strategy {strategy} --delay-unit ms --buckets 8 --time-all");
    let args = with_threads(strategy, "2", &words(&line));
    let (server, at) = serve("bucket", &args);
    for line in ["1,3\n", "2,3\n", "0,3\n", "0,4\n", "0,5\n"] {
        let mut c = Client::connect(server.addr);
        c.send(line.as_bytes());
        c.recv();
    }
    let text = scrape(at);
    assert_eq!(requests(&text, "add"), 2.0, "{strategy}");
    assert_eq!(requests(&text, "read"), 3.0, "{strategy}");
    every_op_timed(&text, &["add", "read"], strategy);
    assert_eq!(sample(&text, "serverlab_store_buckets", &[]), Some(8.0));
    // Reactor workers' busy time: every request timed, none under
    // strategies without such workers. A run is recorded when it ends,
    // which may be just after its reply reached the client: scrape again
    // until all five are in (the deadline only a hang guard).
    let busy = |text: &str| sample(text, "serverlab_worker_busy_seconds_count", &[]);
    let kind: StrategyKind = strategy.parse().expect("a strategy");
    if kind.times_workers() {
        let all_in = poll_until(Duration::from_secs(20), Duration::from_millis(20), || {
            busy(&scrape(at)) == Some(5.0)
        });
        assert!(all_in, "{strategy}: {}", scrape(at));
    } else {
        assert_eq!(busy(&text), None, "{strategy}: {text}");
    }
    let store = text
        .lines()
        .find_map(|l| l.split("store=\"").nth(1)?.split('"').next())
        .unwrap();
    has_constant_labels(&text, "bucket", strategy, store);
}

/// An HTTP/1.1 request to the kv server on a connection of its own.
fn kv_req(addr: SocketAddr, head: &str, body: &str) -> u16 {
    let request = format!(
        "{head} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    http(addr, &request).0
}

fn kv(strategy: &str) {
    let flags = ["--strategy", strategy, "--store", "sharded", "--time-all"];
    let (server, at) = serve("kv", &flags);
    for k in ["a", "b"] {
        assert_eq!(kv_req(server.addr, &format!("PUT /{k}"), "v"), 201);
    }
    for k in ["a", "b", "a", "missing"] {
        kv_req(server.addr, &format!("GET /{k}"), "");
    }
    let text = scrape(at);
    assert_eq!(requests(&text, "PUT"), 2.0, "{strategy}");
    assert_eq!(requests(&text, "GET"), 4.0, "{strategy}");
    every_op_timed(&text, &["PUT", "GET"], strategy);
    let misses = sample(
        &text,
        "serverlab_request_errors_total",
        &[("reason", "status_404")],
    );
    assert_eq!(misses, Some(1.0), "{strategy}");
    assert_eq!(sample(&text, "serverlab_store_keys", &[]), Some(2.0));
    has_constant_labels(&text, "kv", strategy, flags[3]);
}

use crate::resp::cmd as resp_cmd;

fn resp(strategy: &str) {
    let (server, at) = serve("resp", &["--strategy", strategy, "--time-all"]);
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut wire = Vec::new();
    for _ in 0..4 {
        wire.extend(resp_cmd(&["SET", "k", "v"]));
    }
    for _ in 0..3 {
        wire.extend(resp_cmd(&["GET", "k"]));
    }
    s.write_all(&wire).unwrap();
    let want = "+OK\r\n".repeat(4) + &"$1\r\nv\r\n".repeat(3);
    let mut got = vec![0; want.len()];
    s.read_exact(&mut got).unwrap();
    assert_eq!(text(&got), want);
    let text = scrape(at);
    // Commands are labelled in capitals, as `load resp` labels them.
    assert_eq!(requests(&text, "SET"), 4.0, "{strategy}");
    assert_eq!(requests(&text, "GET"), 3.0, "{strategy}");
    every_op_timed(&text, &["SET", "GET"], strategy);
    let series = |name: &str| {
        text.lines()
            .filter(|l| l.starts_with(&format!("{name}{{")))
            .count()
    };
    // Only what happened: the two commands sent, no error.
    assert_eq!(series("serverlab_requests_total"), 2, "{text}");
    assert_eq!(series("serverlab_request_errors_total"), 0, "{text}");
    assert_eq!(sample(&text, "serverlab_store_keys", &[]), Some(1.0));
    let store = text
        .lines()
        .find_map(|l| l.split("store=\"").nth(1)?.split('"').next())
        .unwrap();
    has_constant_labels(&text, "resp", strategy, store);
}

/// `serve echo --max-request`, so that a request can be over it.
const ECHO_MAX_REQUEST: usize = 64;

/// What provokes an error from `protocol`'s server, sent to `addr`, and
/// the `op` and `reason` its metrics count it under.
fn an_error(protocol: &str, addr: SocketAddr) -> (&'static str, &'static str) {
    // The reply, or the server closing the connection.
    let send = |wire: &[u8]| {
        let mut c = Client::connect(addr);
        c.send(wire);
        c.try_recv();
    };
    match protocol {
        "board" => {
            send(b"READ@nothing#0\0");
            ("READ", "no_such_message")
        }
        "bucket" => {
            send(b"not a number\n");
            ("any", "malformed")
        }
        "echo" => {
            send(&[b'x'; ECHO_MAX_REQUEST + 1]);
            ("any", "oversize_frame")
        }
        "kv" => {
            kv_req(addr, "GET /missing", "");
            ("any", "status_404")
        }
        "resp" => {
            send(&resp_cmd(&["NOSUCHCOMMAND"]));
            ("any", "unknown_command")
        }
        other => panic!("{other}: say here how its server answers an error"),
    }
}

/// Every protocol `serve` offers (but `external`, a program of the
/// user's) exports its errors: a new protocol fails here until it says
/// how to provoke one.
#[test]
fn every_protocols_errors_reach_the_metrics() {
    let protocols = listed_subcommands(&["serve"]);
    let served: Vec<&str> = protocols
        .iter()
        .map(String::as_str)
        .filter(|p| !["help", "external"].contains(p))
        .collect();
    assert!(served.len() >= 5, "{protocols:?}");
    for protocol in served {
        let max = ECHO_MAX_REQUEST.to_string();
        let args = if protocol == "echo" {
            vec!["--max-request", &max]
        } else {
            vec![]
        };
        let (server, at) = serve(protocol, &args);
        let (op, reason) = an_error(protocol, server.addr);
        let text = scrape(at);
        let labels = [("op", op), ("reason", reason)];
        let n = sample(&text, "serverlab_request_errors_total", &labels);
        assert_eq!(n, Some(1.0), "{protocol}: {op} {reason}\n{text}");
    }
}

per_strategy!(board_counts, board);
per_strategy!(echo_counts, echo);
per_strategy!(bucket_counts, bucket);
per_strategy!(kv_counts, kv);
per_strategy!(resp_counts, resp);

#[test]
fn only_get_metrics_is_served() {
    let (_server, at) = serve("echo", &[]);
    assert_eq!(http(at, "GET / HTTP/1.1\r\n\r\n").0, 404);
    assert_eq!(http(at, "GET /metricsx HTTP/1.1\r\n\r\n").0, 404);
    assert_eq!(http(at, "GET /stats HTTP/1.0\r\n\r\n").0, 404);
    assert_eq!(
        http(at, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n").0,
        405
    );
    assert_eq!(http(at, "hello\r\n\r\n").0, 400);
    let (status, body) = http(
        at,
        "GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text; version=1.0.0\r\n\r\n",
    );
    assert_eq!(status, 200);
    assert!(body.ends_with("# EOF\n"), "OpenMetrics when asked: {body}");
    assert!(body.contains("# TYPE serverlab_requests counter"), "{body}");
    let plain = scrape(at);
    assert!(!plain.contains("# EOF"), "{plain}");
    assert!(
        plain.contains("# TYPE serverlab_requests_total counter"),
        "{plain}"
    );
    for name in [
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_open_fds",
        "process_start_time_seconds",
    ] {
        assert!(sample(&plain, name, &[]).is_some(), "no {name}: {plain}");
    }
}

#[test]
fn a_taken_metrics_address_fails_at_start_naming_it() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = run(&["serve", "echo", "--addr", "127.0.0.1:0", "--metrics", &addr]);
    let code = out.status.code();
    assert!(matches!(code, Some(1 | 2)), "{code:?}");
    let err = text(&out.stderr);
    assert!(err.contains(&addr) && err.contains("--metrics"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(!text(&out.stdout).contains("listening on"), "served anyway");
    usage_error(&["serve", "echo", "--metrics", "127.0.0.1"], "--metrics");
    usage_error(
        &["serve", "external", "--command", "true", "--metrics", ":0"],
        "--metrics",
    );
}

/// Open file descriptors of a process.
fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

#[test]
fn slow_and_many_clients_are_bounded() {
    let (server, at) = serve("echo", &[]);
    let before = fds(server.pid());
    // A head past 8 KiB is refused.
    let big = format!("GET /metrics HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(9000));
    assert_eq!(http(at, &big).0, 431);
    // Many idle connections: past 16 they are closed at once, so the
    // server holds at most 16 of them.
    let idle: Vec<TcpStream> = (0..64)
        .map(|_| {
            let mut s = TcpStream::connect(at).unwrap();
            let _ = s.write_all(b"GET /metr");
            s
        })
        .collect();
    // The endpoint closes the extra ones as it accepts them: on a busy
    // machine that may take a while, so wait for the count to settle
    // (a server that kept them all would hold 64 however long we wait).
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut held = usize::MAX;
    while Instant::now() < deadline {
        held = fds(server.pid()).saturating_sub(before);
        if held <= 16 + 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(held <= 16 + 2, "the server holds {held} scrape connections");
    // A slowloris is cut off after the 5 s read timeout (408), and a
    // scrape is answered again.
    // The server must close it (end of file), not this side's read time
    // out: a minute is far past the 5 s however busy the machine.
    closed_unanswered_or_408(
        idle.into_iter().next().unwrap(),
        "the slow client was not cut off",
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let ok = TcpStream::connect(at).ok().and_then(|mut s| {
            s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
            s.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").ok()?;
            let mut r = String::new();
            s.read_to_string(&mut r).ok()?;
            r.starts_with("HTTP/1.1 200").then_some(())
        });
        if ok.is_some() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no scrape answered after the slow clients"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Sixteen connections that never send their request hold every slot: a
/// scrape evicts the one that has waited longest and is answered (before:
/// it was closed unanswered until the 5 s read timeout freed a slot, and
/// the idle ones could be renewed forever).
#[test]
fn idle_connections_do_not_stop_a_scrape() {
    let (server, at) = serve("echo", &[]);
    let before = fds(server.pid());
    let idle: Vec<TcpStream> = (0..16)
        .map(|_| {
            let mut s = TcpStream::connect(at).unwrap();
            s.write_all(b"GET /metr").unwrap();
            s
        })
        .collect();
    // Once the server holds all sixteen (its accepting may lag on a busy
    // machine).
    let deadline = Instant::now() + Duration::from_secs(30);
    while fds(server.pid()) < before + 16 {
        assert!(
            Instant::now() < deadline,
            "the idle connections not accepted"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let text = scrape(at);
    assert!(text.contains("serverlab_requests_total"), "{text}");
    // The first idle one made room: closed, unanswered (or, on a machine
    // so busy that 5 s went by, cut off by its read timeout).
    closed_unanswered_or_408(
        idle.into_iter().next().unwrap(),
        "the idle one was not closed",
    );
}

/// Reads `conn` to its end: the server must close it (not this side's
/// read time out: a minute is far past the 5 s however busy the machine),
/// with nothing said or a 408.
fn closed_unanswered_or_408(mut conn: TcpStream, what: &str) {
    conn.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut reply = String::new();
    let read = conn.read_to_string(&mut reply);
    assert!(read.is_ok(), "{what}: {read:?}");
    assert!(
        reply.is_empty() || reply.starts_with("HTTP/1.1 408"),
        "{reply}"
    );
}

/// A request line or headers past 8 KiB get 431 as docs/observing.md
/// says, however much more the client sends: the rest is read and
/// dropped, not left to reset the connection under the reply (before: a
/// 64 KiB path or 1 MB of headers got a TCP reset).
#[test]
fn oversized_requests_get_431() {
    let (_server, at) = serve("echo", &[]);
    let long_path = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(64 * 1024));
    assert_eq!(http(at, &long_path).0, 431);
    let mut headers = String::from("GET /metrics HTTP/1.1\r\n");
    while headers.len() < 1 << 20 {
        headers += &format!("X-Filler-{}: {}\r\n", headers.len(), "b".repeat(1000));
    }
    headers += "\r\n";
    assert_eq!(http(at, &headers).0, 431);
    scrape(at);
}

#[test]
fn durability_exposes_the_logs_commits() {
    let dir = tempfile::tempdir().unwrap();
    let (server, at) = serve("kv", &logged_always(dir.path()));
    for k in ["a", "b", "c"] {
        assert_eq!(kv_req(server.addr, &format!("PUT /{k}"), "v"), 201);
    }
    let text = scrape(at);
    let commits = sample(&text, "serverlab_wal_commits_total", &[]).unwrap();
    assert!(commits >= 1.0, "{text}");
    assert_eq!(sample(&text, "serverlab_wal_records_total", &[]), Some(3.0));
    let fsyncs = sample(&text, "serverlab_wal_fsync_duration_seconds_count", &[]);
    assert_eq!(fsyncs, Some(commits), "{text}");
    let batches = sample(&text, "serverlab_wal_records_per_commit_count", &[]);
    assert_eq!(batches, Some(commits), "{text}");
    assert_eq!(sample(&text, "serverlab_wal_failed", &[]), Some(0.0));
    // Without --durability there is no log to report.
    let (_plain, at) = serve("kv", &[]);
    assert!(!scrape(at).contains("serverlab_wal_"));
}

/// Run promtool `args` with `input` on its stdin; a missing promtool
/// fails.
pub fn promtool(args: &[&str], input: &str) -> std::process::Output {
    with_stdin(Command::new("promtool").args(args), input, NEEDS)
}

#[test]
#[ignore = "needs prometheus (promtool): apt-get install prometheus; run: cargo test --workspace -- --ignored"]
fn promtool_accepts_the_exposition() {
    let dir = tempfile::tempdir().unwrap();
    let (server, at) = serve("resp", &logged_always(dir.path()));
    let mut c = TcpStream::connect(server.addr).unwrap();
    c.write_all(&resp_cmd(&["SET", "k", "v"])).unwrap();
    let mut ok = [0; 5];
    c.read_exact(&mut ok).unwrap();
    let out = promtool(&["check", "metrics"], &scrape(at));
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[test]
#[ignore = "needs prometheus (the server, Debian's prometheus package): apt-get install prometheus; run: cargo test --workspace -- --ignored"]
fn a_real_prometheus_counts_what_was_sent() {
    let (server, at) = serve("echo", &["--strategy", "pool-locked", "--threads", "2"]);
    let prom = Prometheus::start(&[at]);
    let sent = 3 * 1000;
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| board_reqs(server.addr, b"load", 1000));
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last = None;
    while Instant::now() < deadline {
        last = TcpStream::connect(prom.web)
            .ok()
            .and_then(|_| prom.query("sum(serverlab_requests_total)", None));
        if last == Some(f64::from(sent)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    panic!("Prometheus's sum(serverlab_requests_total) is {last:?}, not the {sent} sent");
}
