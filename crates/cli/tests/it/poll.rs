//! `--poll`: how a load waits for replies that are due. `sleep` never
//! polls in vain, `spin` polls without sleeping, `auto` (the default)
//! spins on CPUs given to the load alone and says why; the JSON says
//! which was used.

use crate::support::*;
use serde_json::Value;

/// A short closed-loop board load against `server` polling as `poll`
/// says (nothing: the default), and its JSON result.
fn board(server: &ServerProc, poll: &[&str]) -> Value {
    let mut args = words("--posters 2 --readers 2 --duration 1s --warmup 0s");
    args.extend(poll);
    server.load_json("board", &args).1
}

/// What the JSON says of the loops' polling.
fn polled(v: &Value) -> (&str, f64, &str, f64) {
    let c = &v["results"]["client_cpu"];
    let p = &c["poll"];
    (
        p["mode"]
            .as_str()
            .unwrap_or_else(|| panic!("no poll.mode: {c}")),
        p["spin_share"].as_f64().expect("poll.spin_share"),
        p["why"].as_str().expect("poll.why"),
        c["idle_poll_s"].as_f64().expect("idle_poll_s"),
    )
}

/// A closed loop always has replies due: spinning, it polls in vain
/// between each request and its reply; sleeping, it never does.
#[test]
fn sleep_never_polls_in_vain_and_spin_does() {
    let _turn = heavy_turn();
    let server = ServerProc::start("board", &[]);
    let v = board(&server, &["--poll", "sleep"]);
    assert!(v["results"]["requests"].as_u64().unwrap() > 100, "{v}");
    let (mode, share, why, idle) = polled(&v);
    assert_eq!((mode, share, idle), ("sleep", 0.0, 0.0), "{why}");

    let v = board(&server, &["--poll", "spin"]);
    let (mode, share, _, idle) = polled(&v);
    assert_eq!((mode, share), ("spin", 1.0));
    assert!(
        idle > 0.0,
        "a spinning closed loop polled in vain for {idle} s"
    );
}

/// auto is the default; pinned to some CPUs of the machine it spins all
/// the time there, and says so; not pinned, it says what it spins on.
#[test]
fn auto_is_the_default_and_says_why() {
    let _turn = heavy_turn();
    let server = ServerProc::start("board", &[]);
    let v = board(&server, &[]);
    let (mode, share, why, _) = polled(&v);
    assert_eq!(mode, "auto");
    assert!((0.0..=1.0).contains(&share), "{share}");
    assert!(why.contains("no CPUs of its own"), "{why}");
    if std::thread::available_parallelism().map_or(1, |n| n.get()) > 1 {
        let v = board(&server, &["--poll", "auto", "--cpus", "0"]);
        let (mode, share, why, _) = polled(&v);
        assert_eq!((mode, share), ("auto", 1.0), "{why}");
        assert!(why.contains("pinned with --cpus"), "{why}");
    }
}

#[test]
fn an_unknown_poll_mode_is_named() {
    load_usage_error("board", &["--poll", "busy"], "--poll");
}

/// What a RESP load polling as auto did, as its JSON says: `--cpus 0`,
/// `connections` each keeping `pipeline` requests in flight.
fn resp_auto(server: &ServerProc, connections: &str, pipeline: &str) -> Value {
    let args = [
        "--connections",
        connections,
        "--pipeline",
        pipeline,
        "--cpus",
        "0",
        "--duration",
        "1s",
        "--warmup",
        "0s",
    ];
    server.load_json("resp", &args).1["results"]["client_cpu"].clone()
}

/// Many replies due on one loop (50 connections × 16 pipelined, on one
/// CPU): auto sleeps, whether the load has CPUs of its own or not —
/// spinning there cost the client a third of its rate against
/// redis-server (docs/measuring.md) — and the JSON says what it resolved
/// to. Lock-step on CPUs of its own, it still spins.
#[test]
fn auto_sleeps_where_many_replies_are_due_on_one_loop() {
    let _turn = heavy_turn();
    let server = ServerProc::start("resp", &[]);
    let c = resp_auto(&server, "50", "16");
    let p = &c["poll"];
    assert_eq!(p["mode"], "auto", "{c}");
    assert_eq!(p["resolved"], "sleep", "{c}");
    assert_eq!(p["spin_share"], 0.0, "{c}");
    assert_eq!(c["idle_poll_s"], 0.0, "{c}");
    let why = p["why"].as_str().unwrap();
    assert!(why.contains("up to 800 replies due at once"), "{why}");
    if std::thread::available_parallelism().map_or(1, |n| n.get()) > 1 {
        let c = resp_auto(&server, "1", "1");
        assert_eq!(c["poll"]["resolved"], "spin", "{c}");
        assert_eq!(c["poll"]["spin_share"], 1.0, "{c}");
    }
}
