//! `serverlab load kv` against real servers: verified runs against every
//! strategy × store, outputs, and failures that must exit 1 or 2.

use crate::support::*;
use std::io::{Read, Write};

fn load(args: &[&str]) -> std::process::Output {
    crate::support::load("kv", args)
}

/// A short verified run with every method, on a preloaded store.
fn verified_run(strategy: &str, store: &str) {
    let server = ServerProc::start(
        "kv",
        &with_threads(strategy, "2", &["--strategy", strategy, "--store", store]),
    );
    let addr = server.addr.to_string();
    let out = load(&words(&format!(
        "--addr {addr} --sessions 16 --requests-per-session 25 \
        --concurrency 4 --keys 40 --mix get=50,head=10,put=20,post=10,delete=10 --preload \
        --verify --value-size 300"
    )));
    let stdout = text(&out.stdout);
    let ctx = format!("{strategy}/{store}");
    assert!(
        out.status.success(),
        "{ctx}: {stdout}\n{}",
        text(&out.stderr)
    );
    assert!(
        stdout.contains("verification: 400 checks, 0 mismatches"),
        "{ctx}: {stdout}"
    );
    assert!(
        stdout.contains("sessions: 16 of 16 completed, 0 failed"),
        "{ctx}: {stdout}"
    );
    assert!(stdout.contains("errors: none"), "{ctx}: {stdout}");
    let (status, served) = server.stop();
    assert!(status.success(), "{ctx}");
    // 40 preload PUTs and 400 measured requests reached the server.
    assert!(served.contains("requests: total 440,"), "{ctx}: {served}");
}

fn every_store(strategy: &str) {
    for store in stores() {
        verified_run(strategy, store);
    }
}

// Every strategy × store, from the code's lists.
per_strategy!(load_kv_verify, every_store);

#[test]
fn text_and_json_outputs() {
    let server = ServerProc::start("kv", &[]);
    let (stdout, v) = server.load_json(
        "kv",
        &words(
            "--sessions 10 --requests-per-session 10 --concurrency 3 --key-dist zipf:1.1 --verify",
        ),
    );
    for needle in [
        "kv load: 100 requests",
        "GET",
        "PUT",
        "p50 µs",
        "p90 µs",
        "p99 µs",
        "max µs",
        "statuses (in the window): ",
        "session time ms: mean",
        "median",
        "min",
        "client CPU",
    ] {
        assert!(stdout.contains(needle), "text lacks {needle:?}:\n{stdout}");
    }
    assert_eq!(v["schema"], "serverlab-load/3");
    assert_eq!(v["protocol"], "kv");
    assert_eq!(v["config"]["key_dist"], "zipf:1.1");
    assert_eq!(v["results"]["requests"], 100);
    assert_eq!(v["results"]["concurrency"], 3);
    let x = &v["results"]["kv"];
    let statuses = statuses_counted(x);
    assert_eq!(statuses, 100);
    assert_eq!(x["sessions"]["completed"], 10);
    for k in ["mean", "median", "min", "max"] {
        assert!(x["sessions"]["time_ms"][k].as_f64().unwrap() > 0.0, "{k}");
    }
    let ops = v["results"]["operations"].as_array().unwrap();
    let get = ops.iter().find(|o| o["name"] == "GET").unwrap();
    assert!(get["latency_us"]["p99"].as_f64().unwrap() > 0.0);
}

/// A timed run with a warm-up says one rate, over its window: kv's own
/// figures are the window's, statuses are counted there too, and the
/// warm-up is said apart, with why the server counts more. `--verify`
/// says what it does not check.
#[test]
fn a_timed_run_says_one_rate_over_its_window_and_its_warm_up_apart() {
    let server = ServerProc::start("kv", &[]);
    let (stdout, v) = server.load_json(
        "kv",
        &words("--duration 1s --warmup 1s --concurrency 2 --requests-per-session 5 --verify"),
    );
    let r = &v["results"];
    let requests = r["requests"].as_u64().unwrap();
    assert!(requests > 0, "{r}");
    let x = &r["kv"];
    let statuses = statuses_counted(x);
    assert_eq!(statuses, requests, "statuses over the window: {x}");
    assert_eq!(x["replies_per_s"], r["throughput_rps"], "{r}");
    assert_eq!(x["total_time_s"], r["duration_s"], "{r}");
    assert_eq!(r["warmup_s"], 1.0, "{r}");
    assert!(!stdout.contains("replies/s"), "one rate:\n{stdout}");
    assert!(
        stdout.contains("warm-up: the first 1.00 s of the run were not recorded"),
        "{stdout}"
    );
    let not_checked = r["verification"]["not_checked"]
        .as_str()
        .unwrap_or_default();
    assert!(not_checked.contains("lost updates"), "{r}");
    assert!(
        stdout.contains("not checked: order and lost updates")
            && stdout.contains("`serverlab check kv`"),
        "{stdout}"
    );
    // The server also counted the warm-up's requests.
    let (_, served) = server.stop();
    let total: u64 = served
        .split("requests: total ")
        .nth(1)
        .and_then(|t| t.split(',').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no total in {served}"));
    assert!(total > requests, "{total} served, {requests} counted");
}

/// A fake kv server that answers every request (after reading its body)
/// with `reply`. Returns its address.
fn fake_kv(reply: &'static str) -> String {
    fake_server(move |mut s| {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = text(&buf[..end]).to_ascii_lowercase();
                let body: usize = head
                    .split("content-length:")
                    .nth(1)
                    .and_then(|r| r.split("\r\n").next())
                    .map_or(0, |n| n.trim().parse().unwrap());
                if buf.len() < end + 4 + body {
                    break;
                }
                buf.drain(..end + 4 + body);
                if s.write_all(reply.as_bytes()).is_err() {
                    return;
                }
            }
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    })
}

/// A server that answers every request 200 with a wrong value and ETag:
/// --verify must notice and the run must exit 1.
#[test]
fn verification_catches_a_lying_server() {
    let addr = fake_kv(
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\
         ETag: \"00000000000000000000000000000000\"\r\n\r\nhello",
    );
    let out = load(&words(&format!(
        "--addr {addr} --sessions 2 --requests-per-session 5 --verify"
    )));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("verification: 10 checks, 10 mismatches"),
        "{stdout}"
    );
    assert!(
        text(&out.stderr).contains("the run failed"),
        "{}",
        text(&out.stderr)
    );
}

/// After a preload, with no DELETE in the mix, every key exists: reads
/// find it and writes replace it (200). A server that says 201 ("created")
/// to a write of a preloaded key has lost it.
#[test]
fn after_a_preload_writes_must_replace() {
    let server = ServerProc::start("kv", &["--strategy", "pool-locked", "--threads", "2"]);
    let addr = server.addr.to_string();
    let base = [
        "--addr",
        &addr,
        "--requests-per-session",
        "20",
        "--keys",
        "30",
        "--preload",
        "--verify",
    ];
    let mut args = base.to_vec();
    args.extend(["--sessions", "6", "--mix", "get=50,head=10,put=30,post=10"]);
    let out = load(&args);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("statuses (in the window): 200=120\n"),
        "{stdout}"
    );
    assert!(stdout.contains("120 checks, 0 mismatches"), "{stdout}");

    let created = fake_kv("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n");
    let mut args = base.to_vec();
    args[1] = &created;
    args.extend(["--mix", "put=1", "--sessions", "1"]);
    let out = load(&args);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("PUT /key") && stdout.contains("status 201, expected one of [200]"),
        "{stdout}"
    );
}

/// Every value this load writes is exactly --value-size bytes: values of
/// another size (left by an earlier run) fail a GET's and a HEAD's check.
#[test]
fn values_of_another_size_fail_verification() {
    let server = ServerProc::start("kv", &[]);
    let addr = server.addr.to_string();
    let run_with = |mix: &str, size: &str, verify: bool| {
        let line = format!(
            "--addr {addr} --sessions 1 --requests-per-session 40 \
            --keys 4 --mix {mix} --value-size {size}"
        );
        let mut args = words(&line);
        if verify {
            args.push("--verify");
        }
        load(&args)
    };
    let out = run_with("put=1", "300", true);
    assert!(out.status.success(), "{}", text(&out.stdout));
    let out = run_with("get=1", "200", true);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("a body of 300 bytes, but every value this load writes has 200"),
        "{}",
        text(&out.stdout)
    );
    let out = run_with("head=1", "200", true);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout)
            .contains("Content-Length 300, but every value this load writes has 200 bytes"),
        "{}",
        text(&out.stdout)
    );
    // Of the right size, they pass.
    let out = run_with("get=1,head=1", "300", true);
    assert!(out.status.success(), "{}", text(&out.stdout));
}

#[test]
fn unreachable_server_exits_1() {
    unreachable_load_exits_1("kv", &["--sessions", "1"]);
}

#[test]
fn bad_load_kv_flags_exit_2_naming_the_flag() {
    for (args, flag) in [
        (&["--mix", "patch=1"][..], "--mix"),
        (&["--mix", "get=0"], "--mix"),
        (&["--key-dist", "normal"], "--key-dist"),
        (&["--key-dist", "zipf:0"], "--key-dist"),
        (
            &["--key-dist", "gaussian:50,1", "--keys", "10"],
            "--key-dist",
        ),
        (&["--sessions", "0"], "--sessions"),
        (&["--requests-per-session", "0"], "--requests-per-session"),
        (&["--concurrency", "0"], "--concurrency"),
        (&["--keys", "0"], "--keys"),
        (&["--value-size", "big"], "--value-size"),
        (&["--verify", "--value-size", "10"], "--value-size"),
        (&["--format", "caps"], "--format"),
    ] {
        load_usage_error("kv", args, flag);
    }
}

/// `--duration`, as wrk's `-d`: sessions run until the window closes
/// (after its warm-up), every reply in it counted and checked; the JSON
/// says it was a timed run, not a count of sessions.
#[test]
fn duration_bounds_a_run_by_time() {
    let server = ServerProc::start("kv", &["--strategy", "pool-locked"]);
    let (stdout, json) = server.load_json(
        "kv",
        &words(
            "--duration 1500ms --warmup 300ms --concurrency 4 --requests-per-session 20 \
            --keys 1 --preload --verify",
        ),
    );
    let r = &json["results"];
    let measured = r["duration_s"].as_f64().unwrap();
    assert!((1.4..2.5).contains(&measured), "{measured}: {stdout}");
    assert_eq!(json["config"]["duration_s"], 1.5, "{}", json["config"]);
    assert!(json["config"]["sessions"].is_null(), "{}", json["config"]);
    let sessions = &r["kv"]["sessions"];
    assert_eq!(sessions["planned"], 0, "{sessions}");
    assert!(sessions["completed"].as_u64().unwrap() > 4, "{sessions}");
    assert!(r["requests"].as_u64().unwrap() > 0, "{stdout}");
    assert_eq!(r["verification"]["mismatches"], 0, "{stdout}");
    assert!(
        stdout.contains(" completed in the window, 0 failed"),
        "{stdout}"
    );
    assert!(stdout.contains("preload: 1 key written"), "{stdout}");
    // A count and a time do not go together; a warm-up needs a time.
    load_usage_error("kv", &["--duration", "1s", "--sessions", "5"], "--sessions");
    load_usage_error("kv", &["--warmup", "1s"], "--duration");
}

/// A server that answers each session's first request, then closes: every
/// session fails, and the output's errors and its count of failed sessions
/// do not contradict each other (the errors are lines, some naming several
/// sessions: no count of lines beside the count of sessions).
#[test]
fn failed_sessions_and_their_errors_agree() {
    let addr = fake_server(|mut s| {
        let mut buf = [0u8; 4096];
        if s.read(&mut buf).unwrap_or(0) > 0 {
            let _ = s.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let out = load(&words(&format!(
        "--addr {addr} --sessions 10 --concurrency 2 --requests-per-session 5"
    )));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("0 of 10 completed, 10 failed"), "{stdout}");
    assert!(stdout.contains("\n  errors:\n    "), "{stdout}");
    assert!(
        stderr.contains("the run failed (the errors above, 0 verification mismatches)"),
        "{stderr}"
    );
}

/// `--value-size MIN..MAX`: values of many sizes in the range are
/// written, each verified when read back; sizes the load does not write
/// are caught.
#[test]
fn values_sized_in_a_range_are_written_and_verified() {
    let server = ServerProc::start("kv", &[]);
    let addr = server.addr.to_string();
    let run = |mix: &str, size: &str| {
        load(&words(&format!(
            "--addr {addr} --sessions 4 --requests-per-session 50 --keys 20 \
            --mix {mix} --value-size {size} --verify"
        )))
    };
    let out = run("put=1", "100..300");
    assert!(out.status.success(), "{}", text(&out.stdout));
    let out = run("get=1,head=1", "100..300");
    assert!(out.status.success(), "{}", text(&out.stdout));
    let out = run("get=1", "64:1,4096:1");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("but every value this load writes has 64:1,4096:1"),
        "{}",
        text(&out.stdout)
    );
    let sizes: std::collections::BTreeSet<usize> = (0..20)
        .map(|k| {
            let mut s = std::net::TcpStream::connect(server.addr).unwrap();
            let req = format!("GET /key{k} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            s.write_all(req.as_bytes()).unwrap();
            let mut got = String::new();
            s.read_to_string(&mut got).unwrap();
            let (_, body) = got.split_once("\r\n\r\n").expect("a response");
            body.len()
        })
        .collect();
    assert!(sizes.iter().all(|s| (100..=300).contains(s)), "{sizes:?}");
    assert!(sizes.len() > 5, "sizes vary: {sizes:?}");
}

/// Every status kv's results counted, summed.
fn statuses_counted(kv: &serde_json::Value) -> u64 {
    let counts = kv["statuses"].as_object().unwrap().values();
    counts.map(|n| n.as_u64().unwrap()).sum()
}
