//! Numbers a newcomer reads in the first hour, and what they must not
//! mislead about: the client's CPU when it shares a core with the server,
//! what an overloaded open loop sent, and a run cut short by Ctrl-C (its
//! result kept, marked interrupted), the same for a scan, and a search
//! that finds no capacity.

use crate::support::*;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn f64_of(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Client and server pinned to the same CPU under a load that saturates
/// it: the client's polling is CPU time, never more than its whole CPU
/// time, and the warning says the client may have set the pace (before,
/// polling was wall time, exceeding user + system, and "working 0%"
/// suppressed the warning).
#[test]
fn a_client_on_the_servers_cpu_is_said_to_set_the_pace() {
    let _turn = heavy_turn();
    let server = ServerProc::start("board", &["--cpus", "0"]);
    let (stdout, v) = server.load_json(
        "board",
        &words("--cpus 0 --posters 8 --readers 8 --duration 2s --warmup 500ms"),
    );
    let c = &v["results"]["client_cpu"];
    let (user, system, poll) = (
        f64_of(&c["user_s"]),
        f64_of(&c["system_s"]),
        f64_of(&c["idle_poll_s"]),
    );
    assert!(poll <= user + system, "{c}");
    assert!(f64_of(&c["cores_busy"]) >= 0.9, "{c}");
    assert_eq!(c["bottleneck"], true, "{c}\n{stdout}");
    assert!(
        stdout.contains("warning: the client worked")
            // Pinned already (to the server's CPU): the advice is not to pin.
            && stdout.contains("The load is pinned already")
            && !stdout.contains("Pin server and client apart"),
        "{stdout}"
    );
    // The reference client's form has no room for it: it goes to stderr.
    let caps = server.load(
        "board",
        &words("--posters 8 --readers 8 --duration 1s --cpus 0 --format caps"),
    );
    assert!(
        text(&caps.stderr).contains("serverlab: warning: the client worked"),
        "{}",
        text(&caps.stderr)
    );
}

/// The sum of a board server's request counts in its final statistics.
fn server_requests(stats: &Value) -> u64 {
    let requests = stats["protocol"]["requests"].as_object().expect("requests");
    requests.values().map(|n| n.as_u64().unwrap()).sum()
}

/// An open loop far above what the server answers: "sent" counts what
/// went in the window (before, it counted requests due in the window, and
/// the warm-up's backlog pushed every one out: "0.0 sent"), within 5% of
/// what the server counted in it — all it counted less what the warm-up
/// sent.
#[test]
fn an_overloaded_open_loop_says_what_it_sent() {
    let _turn = heavy_turn();
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("stats.json");
    let server = ServerProc::start("board", &["--stats-json", stats.to_str().unwrap()]);
    let (stdout, v) = server.load_json(
        "board",
        &words("--posters 2 --readers 2 --rate 500k --duration 2s --warmup 1s"),
    );
    let (status, _) = server.stop();
    assert!(status.success());
    let s = &v["results"]["schedule"];
    let sent = s["sent_requests"].as_u64().unwrap();
    let warmup = s["warmup_sent_requests"].as_u64().unwrap();
    let in_window = server_requests(&read_json(&stats)) - warmup;
    assert!(
        sent.abs_diff(in_window) * 20 <= in_window,
        "sent {sent}, the server counted {in_window} in the window: {s}"
    );
    assert!(sent > 0 && s["backlog_requests"].as_u64() > Some(0), "{s}");
    assert!(stdout.contains("sent in the window"), "{stdout}");
    assert!(
        stdout.contains("due in the warm-up (its backlog"),
        "{stdout}"
    );
}

/// `serverlab load board --addr <server> <args>` started, its output
/// piped.
fn spawn_board_load(server: &ServerProc, args: &[&str]) -> Child {
    Command::new(BIN)
        .args(["load", "board", "--addr", &server.addr.to_string()])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the load")
}

fn signal(child: &Child, sig: Signal) {
    kill(Pid::from_raw(child.id() as i32), sig).expect("signal the load");
}

/// Wait for `child` (killed if it takes over `limit`), with how long it
/// took.
fn finish(child: Child, limit: Duration) -> (std::process::Output, Duration) {
    let t0 = Instant::now();
    let id = child.id();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(limit);
        let _ = kill(Pid::from_raw(id as i32), Signal::SIGKILL);
    });
    let out = child.wait_with_output().unwrap();
    drop(killer);
    (out, t0.elapsed())
}

/// Wait for `child` as [`finish`] does, within 20 s; it must exit 130
/// (interrupted). Its stdout, and how long it took.
fn interrupted(child: Child) -> (String, Duration) {
    let (out, took) = finish(child, Duration::from_secs(20));
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{stdout}{}",
        text(&out.stderr)
    );
    (stdout, took)
}

/// SIGINT mid-run: the window ends at once, the summary of what was
/// measured is printed marked interrupted, `--json` and the HDR log are
/// written, and the exit status is 130. The JSON's duration is the time
/// actually measured.
#[test]
fn ctrl_c_keeps_what_was_measured() {
    let _turn = heavy_turn();
    let server = ServerProc::start("board", &[]);
    let dir = tempfile::tempdir().unwrap();
    let (json, hdr) = (dir.path().join("run.json"), dir.path().join("run.hlog"));
    let child = spawn_board_load(
        &server,
        &words(&format!(
            "--duration 60s --warmup 500ms --json {} --hdr-log {}",
            json.display(),
            hdr.display()
        )),
    );
    let t0 = Instant::now();
    // Into the window before the signal, however long a busy machine
    // takes to start the load: its connections are open (the warm-up
    // starts then), and 2 s more pass.
    wait_for("the load's connections", Duration::from_secs(30), || {
        connections_to(server.addr) > 0
    });
    std::thread::sleep(Duration::from_secs(2));
    signal(&child, Signal::SIGINT);
    let at = t0.elapsed().as_secs_f64();
    let (stdout, took) = interrupted(child);
    // At once, not after the minute asked for (a busy machine may add
    // seconds to writing the results).
    assert!(took < Duration::from_secs(15), "it took {took:?} to stop");
    assert!(
        stdout.starts_with("interrupted: the window closed early"),
        "{stdout}"
    );
    assert!(
        stdout.contains("board load: ") && stdout.contains("client CPU"),
        "{stdout}"
    );
    let r = &read_json(&json)["results"];
    assert_eq!(r["interrupted"], true);
    let duration = f64_of(&r["duration_s"]);
    // Measured from the warm-up's end (connecting took a little) until
    // the signal.
    assert!(
        duration > 0.5 && duration <= at - 0.5,
        "{duration} s of {at} s"
    );
    assert!(r["requests"].as_u64() > Some(0), "{r}");
    assert_eq!(
        r["per_second"].as_array().unwrap().len(),
        duration.ceil() as usize
    );
    let log = std::fs::read_to_string(&hdr).expect("the HDR log");
    assert!(log.contains("Tag=READ,"), "{log}");
}

/// A second Ctrl-C while the first drains exits at once, printing
/// nothing more (a stopped server keeps the drain waiting).
#[test]
fn a_second_ctrl_c_exits_at_once() {
    let _turn = heavy_turn();
    let server = ServerProc::start("board", &[]);
    let child = spawn_board_load(&server, &["--duration", "60s", "--warmup", "0s"]);
    wait_for("the load's connections", Duration::from_secs(30), || {
        connections_to(server.addr) > 0
    });
    std::thread::sleep(Duration::from_millis(500));
    server.signal(Signal::SIGSTOP);
    std::thread::sleep(Duration::from_millis(100));
    signal(&child, Signal::SIGINT);
    std::thread::sleep(Duration::from_millis(200));
    signal(&child, Signal::SIGINT);
    let (stdout, took) = interrupted(child);
    server.signal(Signal::SIGCONT);
    // At once: the first signal's drain would wait for the stopped
    // server's replies until the 10 s reply timeout.
    assert!(
        took < Duration::from_secs(5),
        "the second signal took {took:?}"
    );
    assert!(!stdout.contains("board load:"), "{stdout}");
}

/// SIGINT during a scan keeps the steps already run: exit 130, the table
/// of those steps and the interrupted mark on stdout, and every one in
/// the `--json`.
#[test]
fn ctrl_c_in_a_scan_keeps_the_steps_run() {
    let _turn = heavy_turn();
    let server = ServerProc::start("board", &[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("scan.json");
    let child = spawn_board_load(
        &server,
        &words(&format!(
            "--scan 500:5k:500 --step-duration 1s --warmup 200ms --json {}",
            json.display()
        )),
    );
    std::thread::sleep(Duration::from_millis(3800));
    signal(&child, Signal::SIGINT);
    let (stdout, _) = interrupted(child);
    assert!(stdout.starts_with("interrupted in step "), "{stdout}");
    let v = read_json(&json);
    let steps = v["scan"]["steps"].as_array().unwrap();
    assert!(
        (2..10).contains(&steps.len()),
        "{} steps: {stdout}",
        steps.len()
    );
    assert_eq!(steps[0]["requested_rps"], 500.0);
    assert_eq!(v["results"]["interrupted"], true);
    for n in 1..=steps.len() {
        assert!(
            stdout.contains(&format!("\n  {n:>4} ")),
            "step {n}: {stdout}"
        );
    }
    // The table's head names each column once (it named p99 twice).
    let head = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("step "))
        .unwrap();
    let names: Vec<&str> = head.split_whitespace().collect();
    for name in &names {
        assert_eq!(names.iter().filter(|n| *n == name).count(), 1, "{head}");
    }
}

/// A search whose target no rate meets says so and exits 1.
#[test]
fn a_search_that_finds_no_capacity_exits_1() {
    let _turn = heavy_turn();
    let server = ServerProc::start("board", &[]);
    let args = words("--search p99<1us --step-duration 300ms --warmup 0s");
    let out = server.load("board", &args);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("capacity: none found at p99<1us"),
        "{stdout}"
    );
    assert!(stdout.contains("is under 1 µs"), "{stdout}");
}
