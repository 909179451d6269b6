//! Command-line contract: bad usage names the flag and exits 2.

use crate::support::*;

#[test]
fn bad_flags_exit_2_naming_the_flag() {
    usage_error(&["serve", "board", "--strategy", "fastest"], "--strategy");
    usage_error(&["serve", "board", "--store", "magic"], "--store");
    usage_error(&["serve", "board", "--cpus", "0-x"], "--cpus");
    usage_error(&["serve", "board", "--cpus", "1000"], "--cpus");
    usage_error(&["serve", "board", "--threads", "0"], "--threads");
    usage_error(
        &["serve", "board", "--exit-policy", "sometimes"],
        "--exit-policy",
    );
    usage_error(&["serve", "board", "--max-request", "0"], "--max-request");
    usage_error(&["serve", "echo", "--addr", "nowhere"], "--addr");
    usage_error(&["serve", "board", "--bogus"], "--bogus");
    usage_error(&["load", "board", "--pipeline", "0"], "--pipeline");
    usage_error(&["load", "board", "--duration", "soon"], "--duration");
    usage_error(
        &["load", "board", "--reader-mix", "write=1"],
        "--reader-mix",
    );
    usage_error(&["load", "board", "--format", "xml"], "--format");
    usage_error(
        &["load", "board", "--posters", "0", "--readers", "0"],
        "--posters",
    );
    usage_error(&["load", "board", "127.0.0.1", "5", "5", "10"], "5 values");
    usage_error(
        &["load", "board", "127.0.0.1", "5", "5", "10", "7"],
        "THROTTLE",
    );
    usage_error(&["load", "board", "localhost", "5", "5", "10", "0"], "IP");
    usage_error(&["frobnicate"], "frobnicate");
}

/// `serve external` refuses the serving flags only serverlab's own
/// servers act on, as it refuses `--metrics`: exit 2, the flag named and
/// why (before: taken and ignored). Refused before the command runs: it
/// would make a file.
#[test]
fn serve_external_refuses_the_flags_it_cannot_pass_on() {
    let dir = tempfile::tempdir().unwrap();
    let ran = dir.path().join("ran");
    let command = format!("touch {} && sleep 30", ran.display());
    for flags in [
        &["--strategy", "async"][..],
        &["--threads", "2"],
        &["--time-all"],
        // (Without --strategy uring it is refused as meaningless first.)
        &["--uring-sqpoll", "--strategy", "uring"],
        &["--max-connections", "10"],
        &["--write-timeout", "1s"],
    ] {
        let mut args = vec!["serve", "external", "--addr", ":0", "--command", &command];
        args.extend(flags);
        usage_error(&args, &format!("{} is not for serve external", flags[0]));
        assert!(!ran.exists(), "{flags:?}: the command ran");
    }
}

#[test]
fn serve_help_lists_strategies_and_stores() {
    let out = run(&["serve", "--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for name in strategies().into_iter().chain(stores()) {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(name)),
            "serve --help lacks {name}:\n{help}"
        );
    }
}

/// A server that names no store gets the one that scales with cores, and
/// its startup line says which (docs/strategies.md, "The default stores").
#[test]
fn the_default_stores_are_named_in_the_startup_line() {
    use serverlab_store::{board, bucket, kv, resp};
    for (protocol, store) in [
        ("board", board::DEFAULT),
        ("kv", kv::DEFAULT),
        ("resp", resp::DEFAULT),
        ("bucket", bucket::DEFAULT),
    ] {
        let line = ServerProc::start(protocol, &[]).stdout();
        assert!(
            line.contains(&format!("store {}", store.name())),
            "serve {protocol}: {line}"
        );
    }
    // The defaults docs/strategies.md argues for ("The default stores").
    assert_eq!(
        [board::DEFAULT, kv::DEFAULT],
        [
            serverlab_store::StoreKind::LockFree,
            serverlab_store::StoreKind::Sharded
        ]
    );
}

/// A port in use: one line that names the address, the process holding it
/// and what to do next.
#[test]
fn port_in_use_is_a_clear_runtime_error() {
    let server = ServerProc::start("board", &[]);
    let addr = server.addr.to_string();
    let out = run(&["serve", "board", "--addr", &addr]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains(&addr), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let holder = format!("process {} (", server.pid());
    assert!(err.contains(&holder), "does not name {holder}: {err}");
    assert!(err.contains("serverlab serve board"), "{err}");
    assert!(err.contains(&format!("kill {}", server.pid())), "{err}");
    assert!(err.contains("--addr 127.0.0.1:0"), "{err}");
}

/// A port free on 127.0.0.1 now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `serve` started with `--addr addr` listens where it says, and there.
fn listens_at(addr: &str, expected: impl Fn(std::net::SocketAddr) -> bool) {
    let server = ServerProc::spawn(&["serve", "board", "--addr", addr]);
    assert!(
        expected(server.addr),
        "--addr {addr}: listening on {}",
        server.addr
    );
    let mut c = Client::connect(server.addr);
    assert_eq!(c.req(b"COUNT@t\0"), b"0", "--addr {addr}");
    let (status, _) = server.stop();
    assert!(status.success(), "--addr {addr}");
}

/// `serve --addr` takes what `load --addr` takes: `:PORT`, `HOST` alone
/// (the protocol's port) and a host name that resolves.
#[test]
fn serve_addr_takes_every_form_load_takes() {
    let port = free_port();
    listens_at(&format!(":{port}"), |a| {
        a.to_string() == format!("127.0.0.1:{port}")
    });
    let port = free_port();
    listens_at(&format!("localhost:{port}"), |a| {
        a.ip().is_loopback() && a.port() == port
    });
    // HOST alone: the board's port, 12345, on a 127.x address of our own
    // (any is loopback), so a server the user runs on 127.0.0.1 is not met.
    let pid = std::process::id();
    let ip = format!("127.{}.{}.9", 30 + pid % 200, 1 + (pid / 200) % 250);
    listens_at(&ip, |a| a.to_string() == format!("{ip}:12345"));
}

/// One request is "1 request", not "1 requests".
#[test]
fn a_count_of_one_is_singular() {
    let server = ServerProc::start("resp", &[]);
    let args = ["--requests", "1", "--connections", "1", "--mix", "get=1"];
    let out = server.load("resp", &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("resp load: 1 request in"), "{stdout}");
    assert!(!stdout.contains(" 1 requests"), "{stdout}");
}

/// A server whose output nobody reads any more (`serve … | head -1`)
/// serves on, stops cleanly on SIGTERM and still writes `--stats-json`:
/// printing the final statistics to a closed pipe once panicked and lost
/// them.
#[test]
fn a_server_whose_output_is_closed_serves_on_and_keeps_its_statistics() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("stats.json");
    let mut child = Command::new(BIN)
        .args(["serve", "echo", "--addr", "127.0.0.1:0", "--stats-json"])
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // The reader is dropped: the server's standard output is now a pipe
    // nobody reads.
    let addr: std::net::SocketAddr = line
        .split("listening on ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    let mut c = Client::connect(addr);
    assert_eq!(c.req(b"hello"), b"olleh");
    drop(c);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server did not stop within 20 s of SIGTERM");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(stats["connections"]["accepted"], 1, "{stats}");
}

/// `--version` names the commit the binary was built from, one this
/// repository holds (or says it is unknown, built without git).
#[test]
fn version_names_the_commit() {
    let out = run(&["--version"]);
    assert!(out.status.success());
    let said = text(&out.stdout);
    let rest = said
        .trim()
        .strip_prefix(concat!(
            "serverlab ",
            env!("CARGO_PKG_VERSION"),
            " (commit "
        ))
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{said}"));
    if rest == "unknown" {
        return;
    }
    assert!(
        rest.len() >= 7 && rest.bytes().all(|b| b.is_ascii_hexdigit()),
        "{said}"
    );
    let known = std::process::Command::new("git")
        .args(["cat-file", "-e", &format!("{rest}^{{commit}}")])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status();
    if let Ok(status) = known {
        assert!(status.success(), "{rest} is not a commit here");
    }
}

/// Each load's `--help` gives its own `--reply-timeout` default, not the
/// other protocols'.
#[test]
fn each_load_says_its_own_reply_timeout_default() {
    for (protocol, default) in [
        ("board", "[default: 10s]"),
        ("resp", "[default: 10s]"),
        ("kv", "[default: 30s]"),
        ("bucket", "[default: 30s past twice the longest delay]"),
    ] {
        let out = run(&["load", protocol, "--help"]);
        assert!(out.status.success(), "{protocol}");
        let help = text(&out.stdout);
        let section = help
            .split("--reply-timeout <T>")
            .nth(1)
            .and_then(|s| s.split("\n\n").next())
            .unwrap_or_else(|| panic!("load {protocol} --help: {help}"));
        assert!(section.contains(default), "load {protocol}: {section}");
        assert!(
            !section.contains("; kv") && !section.contains("bucket 30s"),
            "{section}"
        );
    }
}
