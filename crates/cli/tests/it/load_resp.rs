//! `serverlab load resp` against real servers: verified runs of every
//! command against every strategy × RESP store, the board workload,
//! outputs, a lying server caught, and failures that exit 1 or 2.

use crate::resp::resp_stores;
use crate::support::*;
use std::io::{Read, Write};

fn load(args: &[&str]) -> std::process::Output {
    crate::support::load("resp", args)
}

/// Every command the load sends, weighted alike.
pub const EVERY_COMMAND: &str = "get=3,set=2,del=1,exists=1,incr=1,mget=1,mset=1,lpush=1,rpush=1,lpop=1,rpop=1,llen=1,lindex=1,lrange=1";

/// A verified run of every command, pipelined, against `addr`: 0
/// mismatches, no errors.
pub fn verified_every_command(addr: &str, ctx: &str) {
    let out = load(&words(&format!(
        "--addr {addr} --requests 4000 --connections 4 --keys 200 \
        --mix {} --pipeline 4 --verify --preload",
        EVERY_COMMAND
    )));
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{ctx}: {stdout}\n{}",
        text(&out.stderr)
    );
    assert!(
        stdout.contains("verification: 4000 checks, 0 mismatches"),
        "{ctx}: {stdout}"
    );
    assert!(stdout.contains("errors: none"), "{ctx}: {stdout}");
    assert!(stdout.contains("replies: 0 errors"), "{ctx}: {stdout}");
    assert!(
        stdout.contains("not checked: writes racing on one key")
            && stdout.contains("`serverlab check resp`"),
        "{ctx}: says what it leaves out: {stdout}"
    );
}

fn verified_run(strategy: &str, store: &str) {
    let server = ServerProc::start(
        "resp",
        &with_threads(strategy, "2", &["--strategy", strategy, "--store", store]),
    );
    verified_every_command(&server.addr.to_string(), &format!("{strategy}/{store}"));
    let (status, served) = server.stop();
    assert!(status.success());
    assert!(served.contains("wrongtype 0"), "{served}");
}

fn every_store(strategy: &str) {
    for store in resp_stores() {
        verified_run(strategy, store);
    }
}

per_strategy!(load_resp_verify, every_store);

/// A verified board run against `addr`: posters' RPUSH lengths are ids,
/// readers' LINDEX of them return the message, LLEN reaches what was
/// acknowledged, and the final LLEN equals the posts.
pub fn verified_board(addr: &str, ctx: &str) {
    let out = load(&words(&format!(
        "--addr {addr} --workload board --posters 3 --readers 3 \
        --duration 1s --reader-mix read=80,count=20 --verify --pipeline 2"
    )));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{ctx}: {stdout}{}", text(&out.stderr));
    assert!(stdout.contains(" 0 mismatches"), "{ctx}: {stdout}");
    assert!(stdout.contains("found a message"), "{ctx}: {stdout}");
}

/// The board mapped onto lists, verified, and the CAPS client's output.
#[test]
fn board_workload_verified_and_caps_output() {
    let server = ServerProc::start("resp", &[]);
    let addr = server.addr.to_string();
    verified_board(&addr, "serve resp");
    let out = load(&words(&format!(
        "--addr {addr} --workload board --posters 2 --readers 1 --duration 1s --format caps"
    )));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    for needle in [
        "POST thread 0 sent:",
        "READ thread 0 sent:",
        "Total poster requests:",
        "Average requests per thread per second:",
    ] {
        assert!(stdout.contains(needle), "{needle}: {stdout}");
    }
}

#[test]
fn text_and_json_outputs() {
    let server = ServerProc::start("resp", &[]);
    let (stdout, v) = server.load_json(
        "resp",
        &words("--requests 500 --connections 5 --key-pattern zipf --mix get=80,set=20"),
    );
    for needle in [
        "resp load: 500 requests",
        "GET",
        "SET",
        "p99 µs",
        "replies: 0 errors",
        "client CPU",
    ] {
        assert!(stdout.contains(needle), "text lacks {needle:?}:\n{stdout}");
    }
    assert_eq!(v["protocol"], "resp");
    assert_eq!(v["config"]["key_pattern"], "zipf:0.99");
    assert_eq!(v["config"]["workload"], "keys");
    assert_eq!(v["results"]["requests"], 500);
    assert_eq!(v["results"]["concurrency"], 5);
    assert_eq!(v["results"]["resp"]["workload"], "keys");
    assert_eq!(v["results"]["resp"]["error_replies"], 0);
}

/// A server that answers :-7 to everything (the setup's DELs pass, no
/// GET or INCR can): --verify catches it, and the run exits 1.
#[test]
fn verification_catches_a_lying_server() {
    let addr = fake_server(|mut s| {
        let mut chunk = [0u8; 4096];
        let mut pending = Vec::new();
        loop {
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => pending.extend_from_slice(&chunk[..n]),
            }
            let mut replies = Vec::new();
            while let Some(end) = command_end(&pending) {
                pending.drain(..end);
                replies.extend_from_slice(b":-7\r\n");
            }
            if s.write_all(&replies).is_err() {
                return;
            }
        }
    });
    let out = load(&words(&format!(
        "--addr {addr} --requests 50 --connections 2 --keys 10 --mix \
        get=1,incr=1 --verify --shared-keys 0"
    )));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("verification: 50 checks, 50 mismatches"),
        "{stdout}"
    );
    assert!(stdout.contains("answered :-7, expected"), "{stdout}");
}

/// Where the first whole command in `b` (an array of bulk strings) ends.
fn command_end(b: &[u8]) -> Option<usize> {
    let line = |at: usize| -> Option<(i64, usize)> {
        let cr = b[at..].iter().position(|&c| c == b'\r')? + at;
        let n = std::str::from_utf8(&b[at + 1..cr]).ok()?.parse().ok()?;
        Some((n, cr + 2))
    };
    let (n, mut at) = line(0)?;
    for _ in 0..n {
        let (len, next) = line(at)?;
        at = next + len as usize + 2;
        if at > b.len() {
            return None;
        }
    }
    Some(at)
}

#[test]
fn unreachable_server_exits_1() {
    unreachable_load_exits_1("resp", &["--requests", "1"]);
}

/// The open loop (the harness's, for every protocol): a verified keys run
/// at a Poisson rate with a warm-up, pipelined, and a verified board run
/// at a constant rate; each request's latency counts from its intended
/// send time.
#[test]
fn open_loop_verified() {
    let server = ServerProc::start("resp", &[]);
    let addr = server.addr.to_string();
    let load_flags = |flags: String| load(&flags.split_whitespace().collect::<Vec<_>>());
    let keys = load_flags(format!(
        "--addr {addr} --rate 2000 --arrivals poisson --duration 1s --warmup 200ms \
         --connections 4 --keys 200 --mix {EVERY_COMMAND} --pipeline 4 --verify --format json"
    ));
    let board = load_flags(format!(
        "--addr {addr} --workload board --rate 500 --duration 1s --warmup 0s \
         --posters 2 --readers 2 --verify --format json"
    ));
    for (out, model) in [(keys, "open-loop, poisson"), (board, "open-loop, constant")] {
        let said = text(&out.stdout) + &text(&out.stderr);
        assert!(out.status.success(), "{said}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect(&said);
        assert_eq!(v["load_model"], model, "{said}");
        assert_eq!(v["results"]["verification"]["mismatches"], 0, "{said}");
        assert!(v["results"]["requests"].as_u64() > Some(100), "{said}");
        let ops = v["results"]["operations"].as_array().expect(&said);
        assert!(
            ops.iter()
                .any(|o| o["service_us"]["p50"].as_f64() > Some(0.0)),
            "the service time is measured too: {said}"
        );
    }
    assert!(server.stop().0.success());
}

#[test]
fn bad_load_resp_flags_exit_2_naming_the_flag() {
    for (args, flag) in [
        (&["--mix", "hset=1"][..], "--mix"),
        (&["--mix", "get=0"], "--mix"),
        (&["--key-pattern", "normal"], "--key-pattern"),
        (&["--connections", "0"], "--connections"),
        (&["--keys", "0"], "--keys"),
        (&["--workload", "nosuch"], "--workload"),
        (&["--value-size", "big"], "--value-size"),
        (&["--verify", "--value-size", "10"], "--value-size"),
        (&["--verify", "--keys", "3", "--connections", "5"], "--keys"),
        (&["--format", "caps"], "--format"),
        (
            &["--workload", "board", "--reader-mix", "list=1"],
            "--reader-mix",
        ),
        (&["--duration", "1s", "--requests", "5"], "--requests"),
        (&["--requests", "5", "--warmup", "1s"], "--warmup"),
        (&["--requests", "5", "--search", "p99<=1ms"], "--search"),
        (&["--duration", "1s", "--scan", "1k:2k:1k"], "--scan"),
        (&["--rate", "1k", "--throttle", "5"], "--throttle"),
    ] {
        load_usage_error("resp", args, flag);
    }
}

/// The keys a RESP server at `addr` holds (`DBSIZE`).
fn dbsize(addr: std::net::SocketAddr) -> u64 {
    let mut c = Client::connect(addr);
    let reply = text(&c.req(b"*1\r\n$6\r\nDBSIZE\r\n"));
    reply
        .trim()
        .strip_prefix(':')
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("DBSIZE answered {reply:?}"))
}

/// A server killed part way through a timed load: the headline rate is
/// over the seconds it answered, not diluted over the whole window; the
/// JSON carries both, and the silence after; the run fails (exit 1).
#[test]
fn a_server_killed_part_way_is_rated_over_the_seconds_it_answered() {
    let server = ServerProc::start("resp", &[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("load.json");
    let addr = server.addr.to_string();
    let window = 30.0;
    let load = std::process::Command::new(BIN)
        .args(["load", "resp", "--addr", &addr, "--duration", "30s"])
        .args(["--warmup", "0s", "--mix", "set=100", "--connections", "2"])
        .args(["--keys", "1000000", "--json", json.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run serverlab load");
    // Once the server has answered a few hundred writes, it dies (310
    // applied: up to one per connection may be applied and not yet
    // answered when it is killed).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while dbsize(server.addr) < 310 {
        assert!(std::time::Instant::now() < deadline, "the load never began");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    server.signal(nix::sys::signal::Signal::SIGKILL);
    let out = load.wait_with_output().unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    let v = read_json(&json);
    let r = &v["results"];
    assert_eq!(r["duration_s"].as_f64(), Some(window), "the full window");
    let requests = r["requests"].as_u64().unwrap();
    assert!(requests >= 300, "{r}");
    let s = &r["served"];
    let served = s["duration_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("no served: {r}"));
    let silent = s["silent_s"].as_f64().unwrap();
    assert!(served > 0.0 && served < window, "{s}");
    assert!((served + silent - window).abs() < 1e-6, "{s}");
    let rate = s["throughput_rps"].as_f64().unwrap();
    assert!(
        (rate - requests as f64 / served).abs() <= 1e-6 * rate,
        "{s}"
    );
    let diluted = r["throughput_rps"].as_f64().unwrap();
    assert!(rate > diluted, "{rate} over {diluted}");
    let headline = stdout.lines().next().unwrap_or_default();
    for said in [
        format!("the server stopped answering at {served:.2} s"),
        format!("{requests} requests in {served:.2} s = {rate:.1} req/s"),
        format!("{silent:.2} s of the {window:.2} s window without replies"),
    ] {
        assert!(headline.contains(&said), "{said:?} in {headline:?}");
    }
}

/// A server that answers to the end has no `served`: its rate is the
/// window's.
#[test]
fn a_server_that_answers_to_the_end_is_rated_over_the_window() {
    let server = ServerProc::start("resp", &[]);
    let (stdout, v) = server.load_json("resp", &["--duration", "1s", "--warmup", "0s"]);
    assert!(v["results"].get("served").is_none(), "{v}");
    assert!(!stdout.contains("stopped answering"), "{stdout}");
}
