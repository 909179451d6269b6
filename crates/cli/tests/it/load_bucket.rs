//! `serverlab load bucket` against real servers: `--verify` against every
//! strategy × store, the outputs, and failures that must exit 1.

use crate::support::*;
use std::io::{BufRead, BufReader, Write};

fn load(args: &[&str]) -> std::process::Output {
    crate::support::load("bucket", args)
}

/// A short verified run (microsecond delays, some of them 0 so reads mix
/// in) against a fresh server; one-request-per-connection or keep-alive.
fn verified(strategy: &str, store: &str, keep_alive: bool) {
    let server = ServerProc::start(
        "bucket",
        &words(&format!(
            "--strategy {strategy} --store {store} --buckets 8 --delay-unit us"
        )),
    );
    let addr = server.addr.to_string();
    let line = format!(
        "--addr {addr} --connections 6 --requests 300 --delay 0-50 \
        --delay-unit us --buckets 8 --verify"
    );
    let mut args = words(&line);
    if keep_alive {
        args.push("--keep-alive");
    }
    let out = load(&args);
    let ctx = format!("{strategy}/{store}/keep-alive {keep_alive}");
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{ctx}: {stdout}\n{}",
        text(&out.stderr)
    );
    assert!(stdout.contains(" 0 mismatches"), "{ctx}: {stdout}");
    assert!(
        stdout.contains("bucket load: 300 requests"),
        "{ctx}: {stdout}"
    );
    let (status, stats) = server.stop();
    assert!(status.success(), "{ctx}");
    // 300 requests, plus 8 reads before and 8 after the run.
    let served = stats
        .lines()
        .find_map(|l| l.trim().strip_prefix("requests: add "))
        .and_then(|rest| {
            let (adds, reads) = rest.split_once(", read ")?;
            Some(adds.parse::<u64>().ok()? + reads.parse::<u64>().ok()?)
        });
    assert_eq!(served, Some(316), "{ctx}: {stats}");
}

/// Every bucket store under one strategy, one-request-per-connection and
/// keep-alive taking turns down the code's lists of strategies and stores.
fn verify_every_store(strategy: &str) {
    let i = strategies().iter().position(|s| *s == strategy).unwrap();
    for (j, store) in bucket_stores().into_iter().enumerate() {
        verified(strategy, store, (i * 3 + j) % 2 == 1);
    }
}

per_strategy!(verify, verify_every_store);

/// Text output: requests, errors, time, throughput, percentiles, and the
/// bound with its share; the note when the server's concurrency is unknown.
#[test]
fn text_output_reports_the_bound() {
    let server = ServerProc::start(
        "bucket",
        &words("--strategy pool-locked --threads 2 --delay-unit ms"),
    );
    let addr = server.addr.to_string();
    let base = [
        "--addr",
        &addr,
        "--connections",
        "4",
        "--duration",
        "1s",
        "--delay",
        "1-3",
        "--delay-unit",
        "ms",
    ];
    let out = load(&base);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    for needle in [
        "bucket load:",
        " in 1.00 s = ",
        "req/s (closed-loop, one request per connection)",
        "add ",
        "p50 µs",
        "p90 µs",
        "p99 µs",
        "max µs",
        "bound (spin): 4 client connections = 4 at once / ",
        "ms mean delay = ",
        "reached ",
        "note: the server's concurrency is unknown",
        "errors: none",
        "TCP connections opened:",
    ] {
        assert!(stdout.contains(needle), "lacks {needle:?}:\n{stdout}");
    }
    let mut with = base.to_vec();
    with.extend(["--server-concurrency", "2", "--keep-alive"]);
    let stdout = text(&load(&with).stdout);
    assert!(
        stdout
            .contains("bound (spin): min(4 client connections, 2 server concurrency) = 2 at once"),
        "{stdout}"
    );
    assert!(!stdout.contains("note:"), "{stdout}");
    assert!(stdout.contains("(closed-loop, keep-alive)"), "{stdout}");
}

/// JSON: the schema, protocol "bucket", the configuration, and the bound.
#[test]
fn json_output_has_config_and_bound() {
    let server = ServerProc::start("bucket", &["--delay-unit", "us", "--delay-mode", "work"]);
    let file = std::env::temp_dir().join(format!("serverlab-bucket-{}.json", std::process::id()));
    let out = load(&words(&format!(
        "--addr {} --requests 50 --delay 20 --delay-unit us \
        --delay-mode work --server-cores 1 --format json --json {}",
        server.addr,
        file.display()
    )));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let _ = std::fs::remove_file(&file);
    assert_eq!(v, saved);
    assert_eq!(v["schema"], "serverlab-load/3");
    assert_eq!(v["protocol"], "bucket");
    assert_eq!(v["config"]["stop"]["requests"], 50);
    assert_eq!(v["config"]["delay"]["lo"], 20);
    assert_eq!(v["config"]["delay_unit"], "us");
    assert_eq!(v["results"]["requests"], 50);
    assert_eq!(v["results"]["concurrency"], 8);
    let extra = &v["results"]["bucket"];
    assert_eq!(extra["delay_unit"], "us");
    assert_eq!(extra["delay_mode"], "work");
    assert_eq!(extra["mean_delay_units"], 20.0);
    assert_eq!(extra["connections_opened"], 50);
    let bound = &extra["bound"];
    assert_eq!(bound["delay_mode"], "work");
    assert_eq!(bound["concurrency"], 1);
    assert!((bound["rate_rps"].as_f64().unwrap() - 50_000.0).abs() < 1e-6);
    assert!(bound["share"].as_f64().unwrap() > 0.0);
    assert_eq!(v["results"]["operations"][0]["name"], "add");
}

/// Issue 40: `--delays exp:MEAN` draws exponential delays — every one a
/// whole unit of at least 1 (an add, never a read), their mean MEAN
/// within the sample's noise — which the server spends, verified, and the
/// configuration says how they were drawn.
#[test]
fn exponential_delays_are_drawn_about_their_mean() {
    let server = ServerProc::start("bucket", &["--delay-unit", "us", "--max-delay", "100000"]);
    let out = load(&words(&format!(
        "--addr {} --requests 2000 --connections 16 --keep-alive \
        --delays exp:100 --delay-unit us --verify --format json",
        server.addr
    )));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(v["config"]["delay"]["exp_mean"], 100, "{}", v["config"]);
    assert_eq!(v["results"]["verification"]["mismatches"], 0);
    let ops = v["results"]["operations"].as_array().unwrap();
    let count = |name: &str| ops.iter().find(|o| o["name"] == name).unwrap()["count"].clone();
    assert_eq!((count("add"), count("read")), (2000.into(), 0.into()));
    // 2,000 exponential draws of mean 100: a standard error of 2.2.
    let mean = v["results"]["bucket"]["mean_delay_units"].as_f64().unwrap();
    assert!((mean - 100.0).abs() < 10.0, "{mean}");
}

/// A bucket server that loses updates: every add answers as if the bucket
/// were empty, and nothing is kept.
fn lossy_bucket(s: std::net::TcpStream) {
    let mut w = s.try_clone().unwrap();
    for line in BufReader::new(s).lines() {
        let Ok(line) = line else { return };
        let delay = line.split(',').next().unwrap_or("0").to_string();
        if w.write_all(format!("{delay}\n").as_bytes()).is_err() {
            return;
        }
    }
}

/// --verify fails the run against a server that loses updates.
#[test]
fn verify_catches_lost_updates() {
    let addr = fake_server(lossy_bucket);
    let out = load(&[
        "--addr",
        &addr,
        "--requests",
        "40",
        "--buckets",
        "2",
        "--delay",
        "1-5",
        // It answers at once: in seconds, that is an error of its own
        // (a reply before its delay), said before the final check.
        "--delay-unit",
        "us",
        "--verify",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("lost, doubled or misreported"), "{stdout}");
    assert!(!stdout.contains(" 0 mismatches"), "{stdout}");
}

/// `ERR` replies are errors: more buckets asked for than the server has.
#[test]
fn err_replies_fail_the_run() {
    let server = ServerProc::start("bucket", &["4", "--delay-unit", "us"]);
    let out = load(&words(&format!(
        "--addr {} --requests 50 --buckets 64 --delay-unit us",
        server.addr
    )));
    // One line, before the run: the server's count and the flag to pass
    // (not one error per connection).
    says_the_server_has_4_buckets(&out);
    // With --verify, the check before the run says what is wrong.
    let out = load(&words(&format!(
        "--addr {} --requests 5 --buckets 64 --verify",
        server.addr
    )));
    says_the_server_has_4_buckets(&out);
}

/// Exit 1 and one line: the server's bucket count and the flag to pass.
fn says_the_server_has_4_buckets(out: &std::process::Output) {
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("the server has 4 buckets") && err.contains("pass --buckets 4"),
        "{err}"
    );
}

/// Against a server that closes after each reply (the assignment's), the
/// default one-request-per-connection load verifies; keep-alive cannot.
#[test]
fn one_request_per_connection_matches_the_assignment_server() {
    let server = ServerProc::start("bucket", &["--close-after-reply", "--delay-unit", "us"]);
    let addr = server.addr.to_string();
    let base = [
        "--addr",
        &addr,
        "--requests",
        "100",
        "--delay",
        "1-9",
        "--delay-unit",
        "us",
        "--verify",
    ];
    let out = load(&base);
    assert!(out.status.success(), "{}", text(&out.stdout));
    let mut keep = base.to_vec();
    keep.push("--keep-alive");
    let out = load(&keep);
    assert_eq!(out.status.code(), Some(1));
    // The reads before the run already find the connection closed.
    let all = text(&out.stdout) + &text(&out.stderr);
    assert!(all.contains("closed the connection"), "{all}");
    keep.retain(|&a| a != "--verify");
    let out = load(&keep);
    assert_eq!(out.status.code(), Some(1));
    let all = text(&out.stdout) + &text(&out.stderr);
    assert!(
        all.contains("closed the connection before answering"),
        "{all}"
    );
}

#[test]
fn unreachable_server_exits_1() {
    unreachable_load_exits_1("bucket", &["--requests", "3"]);
}

#[test]
fn bad_flags_exit_2_naming_the_flag() {
    usage_error(&["serve", "bucket", "--buckets", "0"], "--buckets");
    usage_error(&["serve", "bucket", "0"], "[N]");
    usage_error(&["serve", "bucket", "4", "--buckets", "5"], "--buckets");
    usage_error(&["serve", "bucket", "--store", "rwlock"], "--store");
    usage_error(&["serve", "bucket", "--delay-unit", "h"], "--delay-unit");
    usage_error(&["serve", "bucket", "--delay-mode", "nap"], "--delay-mode");
    usage_error(&["serve", "bucket", "--max-delay", "soon"], "--max-delay");
    usage_error(&["serve", "bucket", "--max-line", "0"], "--max-line");
    usage_error(&["load", "bucket", "--delay", "3-1"], "--delay");
    usage_error(&["load", "bucket", "--delay", "x"], "--delay");
    usage_error(&["load", "bucket", "--delays", "exp:0"], "--delay");
    usage_error(&["load", "bucket", "--connections", "0"], "--connections");
    usage_error(&["load", "bucket", "--requests", "0"], "--requests");
    usage_error(
        &["load", "bucket", "--requests", "5", "--duration", "1s"],
        "--duration",
    );
    usage_error(&["load", "bucket", "--format", "caps"], "--format");
    usage_error(&["load", "bucket", "--buckets", "0"], "--buckets");
    usage_error(
        &["load", "bucket", "--server-concurrency", "0"],
        "--server-concurrency",
    );
}
