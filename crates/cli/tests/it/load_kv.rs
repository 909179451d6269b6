//! `serverlab load kv` against real servers: verified runs against every
//! strategy × store, outputs, and failures that must exit 1 or 2.

use crate::support::*;
use std::io::{Read, Write};
use std::net::TcpListener;

fn load(args: &[&str]) -> std::process::Output {
    let mut all = vec!["load", "kv"];
    all.extend(args);
    run(&all)
}

/// A short verified run with every method, on a preloaded store.
fn verified_run(strategy: &str, store: &str) {
    let server = ServerProc::start(
        "kv",
        &["--strategy", strategy, "--store", store, "--threads", "2"],
    );
    let addr = server.addr.to_string();
    let out = load(&[
        "--addr",
        &addr,
        "--sessions",
        "16",
        "--requests-per-session",
        "25",
        "--concurrency",
        "4",
        "--keys",
        "40",
        "--mix",
        "get=50,head=10,put=20,post=10,delete=10",
        "--preload",
        "--verify",
        "--value-size",
        "300",
    ]);
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
    for store in ["mutex", "rwlock", "sharded", "lockfree"] {
        verified_run(strategy, store);
    }
}

#[test]
fn load_kv_verify_thread_per_connection() {
    every_store("thread-per-connection");
}

#[test]
fn load_kv_verify_thread_per_request() {
    every_store("thread-per-request");
}

#[test]
fn load_kv_verify_pool_locked() {
    every_store("pool-locked");
}

#[test]
fn load_kv_verify_pool_lockfree() {
    every_store("pool-lockfree");
}

#[test]
fn load_kv_verify_async() {
    every_store("async");
}

#[test]
fn load_kv_verify_shared_nothing() {
    every_store("shared-nothing");
}

#[test]
fn text_and_json_outputs() {
    let server = ServerProc::start("kv", &[]);
    let addr = server.addr.to_string();
    let file = std::env::temp_dir().join(format!("serverlab-kv-{}.json", std::process::id()));
    let out = load(&[
        "--addr",
        &addr,
        "--sessions",
        "10",
        "--requests-per-session",
        "10",
        "--concurrency",
        "3",
        "--key-dist",
        "zipf:1.1",
        "--verify",
        "--json",
        file.to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    for needle in [
        "kv load: 100 requests",
        "GET",
        "PUT",
        "p50 µs",
        "p90 µs",
        "p99 µs",
        "max µs",
        "replies/s",
        "statuses: ",
        "session time ms: mean",
        "median",
        "min",
        "client CPU",
    ] {
        assert!(stdout.contains(needle), "text lacks {needle:?}:\n{stdout}");
    }
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let _ = std::fs::remove_file(&file);
    assert_eq!(v["schema"], "serverlab-load/1");
    assert_eq!(v["protocol"], "kv");
    assert_eq!(v["config"]["key_dist"], "zipf:1.1");
    assert_eq!(v["results"]["requests"], 100);
    let x = &v["results"]["extra"];
    let statuses: u64 = x["statuses"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(statuses, 100);
    assert_eq!(x["sessions"]["completed"], 10);
    for k in ["mean", "median", "min", "max"] {
        assert!(x["sessions"]["time_ms"][k].as_f64().unwrap() > 0.0, "{k}");
    }
    let ops = v["results"]["operations"].as_array().unwrap();
    let get = ops.iter().find(|o| o["name"] == "GET").unwrap();
    assert!(get["latency_us"]["p99"].as_f64().unwrap() > 0.0);
}

/// A server that answers every request 200 with a wrong value and ETag:
/// --verify must notice and the run must exit 1.
#[test]
fn verification_catches_a_lying_server() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(20) {
            let Ok(mut s) = stream else { continue };
            std::thread::spawn(move || {
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
                        let reply = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\
                                     ETag: \"00000000000000000000000000000000\"\r\n\r\nhello";
                        if s.write_all(reply.as_bytes()).is_err() {
                            return;
                        }
                    }
                    match s.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
            });
        }
    });
    let out = load(&[
        "--addr",
        &addr,
        "--sessions",
        "2",
        "--requests-per-session",
        "5",
        "--verify",
    ]);
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

#[test]
fn unreachable_server_exits_1() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = load(&["--addr", &format!("127.0.0.1:{port}"), "--sessions", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("cannot connect"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn bad_load_kv_flags_exit_2_naming_the_flag() {
    for (args, flag) in [
        (&["--mix", "patch=1"][..], "--mix"),
        (&["--mix", "get=0"], "--mix"),
        (&["--key-dist", "normal"], "--key-dist"),
        (&["--key-dist", "zipf:0"], "--key-dist"),
        (&["--sessions", "0"], "--sessions"),
        (&["--requests-per-session", "0"], "--requests-per-session"),
        (&["--concurrency", "0"], "--concurrency"),
        (&["--keys", "0"], "--keys"),
        (&["--value-size", "big"], "--value-size"),
        (&["--verify", "--value-size", "10"], "--value-size"),
        (&["--format", "caps"], "--format"),
    ] {
        let out = load(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(flag),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}
