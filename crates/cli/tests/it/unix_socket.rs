//! `serve … --addr unix:PATH`: every strategy serves a Unix domain socket,
//! driven by `serverlab load … --addr unix:PATH`; the socket file's life
//! (a stale one replaced, a served one or a non-socket refused, the file
//! removed at a clean stop); and what refuses one (`check`, `serve
//! external`, a path too long).

use crate::support::*;
use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A socket path in a directory of the test's own.
fn socket_in(dir: &tempfile::TempDir, name: &str) -> (PathBuf, String) {
    let path = dir.path().join(name);
    let addr = format!("unix:{}", path.display());
    (path, addr)
}

/// The load's stdout, which must say it succeeded: no errors, nothing
/// mismatched, and some requests done.
fn assert_loaded(ctx: &str, out: &std::process::Output) {
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{ctx}: {stdout}{}", text(&out.stderr));
    assert!(stdout.contains("errors: none"), "{ctx}: {stdout}");
    assert!(stdout.contains(" 0 mismatches"), "{ctx}: {stdout}");
}

/// The server stops cleanly on SIGTERM, having served requests, and its
/// socket file is gone.
fn assert_stops_and_removes(ctx: &str, server: ServerProc, path: &Path) {
    let (status, served) = server.stop();
    assert!(status.success(), "{ctx}: {served}");
    assert!(stat(&served, "accepted") > 0, "{ctx}: {served}");
    assert!(
        !path.exists(),
        "{ctx}: the socket file is removed at the stop"
    );
}

/// A board server on a Unix socket under `strategy`, loaded over it with
/// every reply verified.
fn board_over_unix(strategy: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (path, addr) = socket_in(&dir, "board.sock");
    let server = ServerProc::start(
        "board",
        &with_threads(strategy, "2", &["--addr", &addr, "--strategy", strategy]),
    );
    assert_eq!(server.endpoint, addr, "the startup line names the socket");
    let out = server.load(
        "board",
        &words("--posters 2 --readers 2 --duration 1s --warmup 0s --verify"),
    );
    assert_loaded(strategy, &out);
    assert!(
        !text(&out.stdout).contains("board load: 0 requests"),
        "{strategy}: {}",
        text(&out.stdout)
    );
    assert_stops_and_removes(strategy, server, &path);
}

per_strategy!(board, board_over_unix);

/// RESP over a Unix socket, verified: the load deletes its keys first,
/// 3000 DELs of 100 keys, which must be sent in batches the server's
/// small replies cannot stall (`crates/load/src/resp/setup.rs`).
#[test]
fn resp_is_served_and_verified_over_a_unix_socket() {
    let dir = tempfile::tempdir().unwrap();
    let (path, addr) = socket_in(&dir, "resp.sock");
    let server = ServerProc::start("resp", &["--addr", &addr, "--strategy", "pool-locked"]);
    let out = server.load(
        "resp",
        &["--requests", "200", "--connections", "2", "--verify"],
    );
    assert_loaded("resp", &out);
    assert!(
        text(&out.stdout).contains("verification: 200 checks"),
        "{}",
        text(&out.stdout)
    );
    assert_stops_and_removes("resp", server, &path);
}

/// kv over a Unix socket, verified, on a path where a killed server left
/// its socket file: the stale file is replaced.
#[test]
fn kv_replaces_a_stale_socket_file_and_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let (path, addr) = socket_in(&dir, "kv.sock");
    // Bound and closed without removing the file: what a killed server
    // leaves.
    drop(UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let server = ServerProc::start("kv", &["--addr", &addr, "--strategy", "shared-nothing"]);
    let out = server.load(
        "kv",
        &words("--sessions 8 --requests-per-session 25 --concurrency 4 --preload --verify"),
    );
    assert_loaded("kv", &out);
    assert!(
        text(&out.stdout).contains("verification: 200 checks"),
        "{}",
        text(&out.stdout)
    );
    assert_stops_and_removes("kv", server, &path);
}

/// Run `serverlab args` to its end (a hang guard kills it after 20 s: a
/// server that should have been refused and serves instead).
fn run_to_end(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} still runs: it should have been refused");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap().code(), err)
}

/// A path a server listens on is refused to a second server (exit 1,
/// saying so), which leaves the first serving, its file in place.
#[test]
fn a_served_path_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (path, addr) = socket_in(&dir, "s.sock");
    let first = ServerProc::start("echo", &["--addr", &addr]);
    let (code, err) = run_to_end(&["serve", "board", "--addr", &addr]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&format!("cannot listen on {addr}")), "{err}");
    assert!(err.contains("already served"), "{err}");
    let mut c = UnixStream::connect(&path).expect("the first still serves");
    c.write_all(b"ping\n").unwrap();
    let mut reply = [0u8; 5];
    c.read_exact(&mut reply).unwrap();
    assert_eq!(&reply, b"gnip\n", "echo answers reversed");
    drop(c);
    assert_stops_and_removes("echo", first, &path);
}

/// A file that is not a socket is never replaced (exit 1, saying so).
#[test]
fn a_file_that_is_not_a_socket_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (path, addr) = socket_in(&dir, "notes.txt");
    std::fs::write(&path, "keep me").unwrap();
    let (code, err) = run_to_end(&["serve", "echo", "--addr", &addr]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("is not a socket"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep me");
}

/// The socket file goes at every clean stop: SIGINT, and a board EXIT
/// sent over the socket (a Unix-socket client is local, so the default
/// exit policy lets it stop the server).
#[test]
fn the_file_goes_at_sigint_and_at_exit() {
    let dir = tempfile::tempdir().unwrap();
    let (path, addr) = socket_in(&dir, "int.sock");
    let mut server = ServerProc::start("echo", &["--addr", &addr]);
    assert!(path.exists());
    server.signal(nix::sys::signal::Signal::SIGINT);
    let status = server.wait_exit(Duration::from_secs(20)).expect("exits");
    assert!(status.success());
    assert!(!path.exists(), "removed at SIGINT");

    let (path, addr) = socket_in(&dir, "exit.sock");
    let mut server = ServerProc::start("board", &["--addr", &addr]);
    let mut c = UnixStream::connect(&path).unwrap();
    c.write_all(b"EXIT\0").unwrap();
    let mut reply = Vec::new();
    c.read_to_end(&mut reply).unwrap();
    assert_eq!(reply, b"TERMINATING\0");
    let status = server.wait_exit(Duration::from_secs(20)).expect("exits");
    assert!(status.success());
    assert!(!path.exists(), "removed at EXIT");
}

/// What cannot take a Unix socket says so, exit 2: a path longer than a
/// socket's address holds; `check`; `serve external`.
#[test]
fn what_cannot_take_a_unix_socket_says_so() {
    let long = format!("unix:/tmp/{}", "x".repeat(120));
    usage_error(&["serve", "board", "--addr", &long], "1 to 107 bytes");
    usage_error(&["serve", "board", "--addr", &long], "--addr");
    usage_error(&["check", "board", "unix:/tmp/x.sock"], "TCP address only");
    usage_error(
        &words("serve external --command true --addr unix:/tmp/x.sock"),
        "--addr unix:… is not for serve external",
    );
}
