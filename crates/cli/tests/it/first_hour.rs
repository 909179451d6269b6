//! What a new user trips over in the first hour (issue 15): conflicting
//! flags, addresses as people write them, the wrong protocol's server,
//! negative numbers, and pinning the load.

use crate::support::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The reference form sets posters, readers, time and throttle: flags
/// that set them too are a usage error naming both sides, not ignored.
#[test]
fn reference_form_conflicts_with_the_flags_it_sets() {
    let form = ["load", "board", "127.0.0.1", "5", "5", "1", "0"];
    for flag in [
        &["--duration", "3s"][..],
        &["--posters", "1"],
        &["--readers", "1"],
        &["--addr", "127.0.0.1:1"],
        &["--throttle", "5"],
        &["--send-exit"],
    ] {
        let args = [&form[..], flag].concat();
        usage_error(&args, flag[0]);
        usage_error(
            &args,
            "the reference client's form (IP POSTERS READERS SECONDS THROTTLE)",
        );
        let err = text(&run(&args).stderr);
        assert!(!err.contains("'[POSITIONAL]...'"), "{err}");
    }
}

/// `--duration -5` is a bad value of --duration, without clap's advice to
/// write `-- -5` (which would make it a positional value).
#[test]
fn negative_numbers_are_bad_values_not_flags() {
    for (args, flag) in [
        (&["load", "board", "--duration", "-5"][..], "--duration"),
        (&["load", "board", "--posters", "-1"], "--posters"),
        (&["load", "kv", "--sessions", "-3"], "--sessions"),
        (&["load", "bucket", "--connections", "-2"], "--connections"),
        (&["serve", "board", "--threads", "-1"], "--threads"),
        (&["check", "board", "--concurrency", "-1"], "--concurrency"),
    ] {
        usage_error(args, flag);
        let err = text(&run(args).stderr);
        assert!(!err.contains("tip:"), "{args:?}: {err}");
    }
}

/// kv and bucket have no reference client's output: their help does not
/// offer `caps`.
#[test]
fn formats_offered_are_the_formats_accepted() {
    for protocol in ["kv", "bucket"] {
        let help = text(&run(&["load", protocol, "--help"]).stdout);
        assert!(help.contains("--format"), "{help}");
        assert!(
            !help.contains("caps"),
            "load {protocol} --help offers caps:\n{help}"
        );
        usage_error(&["load", protocol, "--format", "caps"], "--format");
    }
}

/// `--addr` takes HOST:PORT with a name, and :PORT; a bad one shows the
/// forms it takes.
#[test]
fn addr_takes_the_forms_people_write() {
    let server = ServerProc::start("kv", &[]);
    let port = server.addr.port().to_string();
    for addr in [format!("localhost:{port}"), format!(":{port}")] {
        let out = load(
            "kv",
            &words(&format!(
                "--addr {addr} --sessions 2 --requests-per-session 3"
            )),
        );
        assert!(out.status.success(), "--addr {addr}: {}", text(&out.stderr));
        assert!(
            text(&out.stdout).contains("6 requests"),
            "{}",
            text(&out.stdout)
        );
    }
    for p in ["board", "kv", "bucket"] {
        usage_error(&["load", p, "--addr", "nowhere.invalid"], "HOST:PORT");
        usage_error(&["load", p, "--addr", "nowhere.invalid"], ":PORT");
    }
    usage_error(&["check", "kv", "nowhere.invalid"], "HOST:PORT");
}

/// Run `load protocol args`; its exit code, stderr, and how long it took.
fn timed_load(protocol: &str, args: &[&str]) -> (Option<i32>, String, Duration) {
    let t0 = Instant::now();
    let out = load(protocol, args);
    (out.status.code(), text(&out.stderr), t0.elapsed())
}

/// A kv load against a board server says so at the first reply, well
/// before its reply timeout; so does a board load against a kv server,
/// and a bucket load against a board server.
#[test]
fn the_wrong_protocol_is_named_at_once() {
    let board = ServerProc::start("board", &[]);
    let kv = ServerProc::start("kv", &[]);
    let (b, k) = (board.addr.to_string(), kv.addr.to_string());
    let cases: [(&str, Vec<&str>); 3] = [
        (
            "kv",
            vec!["--addr", &b, "--sessions", "5", "--reply-timeout", "20s"],
        ),
        ("board", vec!["--addr", &k, "--duration", "20s"]),
        ("bucket", vec!["--addr", &b, "--requests", "5"]),
    ];
    for (protocol, args) in cases {
        let (code, err, took) = timed_load(protocol, &args);
        assert_eq!(code, Some(1), "{protocol}: {err}");
        assert_eq!(err.lines().count(), 1, "{protocol}: {err}");
        let wanted = match protocol {
            "kv" => "this does not look like a kv (HTTP/1.1) server (it sent \"\\n",
            "board" => "this does not look like a board server (it sent \"HTTP/1.1 400",
            _ => "this does not look like a bucket server (it sent \"\"",
        };
        assert!(err.contains(wanted), "{protocol}: {err}");
        assert!(took < Duration::from_secs(10), "{protocol}: took {took:?}");
    }
}

/// A bucket or resp load against a board server says what the server
/// looks like and which address to check, in one line, whether or not
/// `--verify` reads the server first.
#[test]
fn the_wrong_server_hint_does_not_depend_on_verify() {
    let board = ServerProc::start("board", &[]);
    let b = board.addr.to_string();
    let cases: [(&str, Vec<&str>); 4] = [
        ("bucket", vec!["--requests", "5", "--delay", "0"]),
        (
            "bucket",
            vec!["--requests", "5", "--delay", "0", "--verify"],
        ),
        ("resp", vec!["--duration", "1s"]),
        ("resp", vec!["--duration", "1s", "--verify"]),
    ];
    for (protocol, flags) in cases {
        let mut args = vec!["--addr", b.as_str()];
        args.extend(&flags);
        let (code, err, _) = timed_load(protocol, &args);
        let ctx = format!("load {protocol} {flags:?}");
        assert_eq!(code, Some(1), "{ctx}: {err}");
        assert_eq!(err.lines().count(), 1, "{ctx}: {err}");
        assert!(
            err.contains(&format!("this does not look like a {protocol} server")),
            "{ctx}: {err}"
        );
        assert!(
            err.contains(&format!("is --addr {b} the {protocol} server?")),
            "{ctx}: {err}"
        );
        if protocol == "resp" {
            assert!(
                err.contains("replies ended by NUL or LF as a board, bucket or echo server sends"),
                "{ctx}: {err}"
            );
        }
    }
}

/// A kv server that never answers: `--reply-timeout` bounds the wait.
#[test]
fn reply_timeout_is_a_flag() {
    let addr = fake_server(|s| {
        std::thread::sleep(Duration::from_secs(30));
        drop(s);
    });
    let (code, err, took) = timed_load(
        "kv",
        &words(&format!("--addr {addr} --sessions 1 --reply-timeout 300ms")),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no reply within 0.3 s"), "{err}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
    usage_error(
        &["load", "kv", "--reply-timeout", "soon"],
        "--reply-timeout",
    );
}

/// `load --cpus 0` runs every client thread on CPU 0, as /proc shows
/// while the load runs.
#[test]
fn load_cpus_pins_the_client() {
    let server = ServerProc::start("board", &[]);
    let addr = server.addr.to_string();
    let child = Command::new(BIN)
        .args([
            "load",
            "board",
            "--addr",
            &addr,
            "--duration",
            "3s",
            "--cpus",
            "0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let tasks = std::fs::read_dir(format!("/proc/{}/task", child.id())).unwrap();
    let mut n = 0;
    for task in tasks {
        let status =
            std::fs::read_to_string(task.unwrap().path().join("status")).unwrap_or_default();
        if let Some(allowed) = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        {
            assert_eq!(allowed.trim(), "0");
            n += 1;
        }
    }
    assert!(n >= 2, "saw {n} threads");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    usage_error(&["load", "kv", "--cpus", "9999"], "--cpus");
}

/// The demo explains its numbers, warns only about what the user can
/// change (it has pinned server and client apart itself), and ends with
/// the commands to run next.
#[test]
fn demo_explains_and_suggests_next_steps() {
    let out = run(&["demo", "--duration", "1s"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    for line in [
        "every reply verified",
        "verification: ",
        "Reading it:",
        "p50 … max: each request's latency in microseconds",
        "the client's own COUNT per topic before and after the run (32)",
        "Next:",
        "serverlab check board",
        "serverlab sweep experiments/caps.toml",
    ] {
        assert!(stdout.contains(line), "the demo lacks {line:?}:\n{stdout}");
    }
    let pinned = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))
        .map(|s| {
            (0..nix::sched::CpuSet::count())
                .filter(|&c| s.is_set(c).unwrap_or(false))
                .count()
                >= 2
        })
        .unwrap();
    if pinned {
        assert!(stdout.contains("server on CPU"), "{stdout}");
        assert!(!stdout.contains("pin server and client apart"), "{stdout}");
        assert!(!stdout.contains("warning"), "{stdout}");
    }
}

/// A server that closes every connection at once: the cause said once,
/// on one line.
#[test]
fn a_closed_connection_is_said_once() {
    let addr = fake_server(drop);
    let out = load("board", &["--addr", &addr, "--duration", "1s"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    // Closed before or after the request came (a reset): either, once.
    let said = err.matches("closed the connection").count() + err.matches("reset by peer").count();
    assert_eq!(said, 1, "{err}");
    assert!(err.contains("then closed it"), "no next step: {err}");
}
