//! Durability under faults (docs/durability.md, "When the disk fails"):
//! a disk whose `fdatasync` fails — the server's test-only
//! `--fail-syncs-after`, and strace's fault injector — and a slow one,
//! with a reader that must not see a write before it is on disk.

use super::*;

/// How a test's server meets the failing disk.
#[derive(Clone, Copy)]
pub(super) enum Disk {
    /// The server's own test hook: every data fsync after the third fails.
    Hook,
    /// strace's `-e inject=`: every `fdatasync` from the fourth fails with
    /// EIO, below the server, as a failing disk's would.
    Strace,
}

/// strace running the server, injecting `inject` into its `fdatasync`s.
fn strace(inject: &'static str) -> Vec<&'static str> {
    let trace = ["strace", "-f", "-o", "/dev/null", "-e", "trace=fdatasync"];
    [&trace[..], &["-e", inject]].concat()
}

impl Disk {
    pub(super) fn wrapper(self) -> Vec<&'static str> {
        match self {
            Disk::Hook => Vec::new(),
            Disk::Strace => strace("inject=fdatasync:error=EIO:when=4+"),
        }
    }

    pub(super) fn args(self) -> Vec<&'static str> {
        match self {
            Disk::Hook => vec!["--fail-syncs-after", "3"],
            Disk::Strace => Vec::new(),
        }
    }
}

/// A kv response's status and body.
fn kv_body(c: &mut BufReader<TcpStream>, path: &str) -> (String, String) {
    let req = format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n");
    c.get_mut().write_all(req.as_bytes()).unwrap();
    let status = line(c).unwrap();
    let mut len = 0;
    loop {
        let h = line(c).unwrap();
        if h.is_empty() {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; len];
    c.read_exact(&mut body).unwrap();
    (status, text(&body))
}

/// RESP `INFO section`'s text.
fn info(c: &mut BufReader<TcpStream>, section: &str) -> String {
    let req = format!("*2\r\n$4\r\nINFO\r\n${}\r\n{section}\r\n", section.len());
    c.get_mut().write_all(req.as_bytes()).unwrap();
    let head = line(c).unwrap();
    let len: usize = head.trim_start_matches('$').parse().unwrap();
    let mut body = vec![0; len + 2];
    c.read_exact(&mut body).unwrap();
    text(&body)
}

/// What the server says about its log: kv's `/_/stats`, RESP's INFO.
fn log_state(proto: Proto, c: &mut BufReader<TcpStream>) -> String {
    match proto {
        Proto::Kv => kv_body(c, "/_/stats").1,
        Proto::Resp => info(c, "persistence"),
    }
}

/// A value read back as `Proto::get` says it: kv's status, RESP's head.
fn present(proto: Proto, said: &str) -> bool {
    match proto {
        Proto::Kv => said == "200",
        Proto::Resp => said != "$-1",
    }
}

/// Writes on one connection until one is not acknowledged (its fsync
/// failed: the server resets the connection instead of replying).
/// Returns how many were acknowledged.
fn write_until_refused(proto: Proto, addr: SocketAddr) -> usize {
    let mut c = connect(addr);
    for n in 0..20 {
        if proto
            .put(&mut c, &format!("k{n}"), &format!("v{n}"))
            .is_err()
        {
            return n;
        }
    }
    panic!("20 writes acknowledged: the disk never failed")
}

/// The whole story of a failing disk, as a client and an operator see it,
/// with `--committer committer`.
fn a_failing_disk_stops_the_writes(proto: Proto, strategy: &str, disk: Disk, committer: &str) {
    let dir = scratch(&format!("eio-{}-{strategy}-{committer}", proto.name()));
    let d = dir.to_str().unwrap();
    let line =
        format!("--data-dir {d} --strategy {strategy} --durability always --committer {committer}");
    let mut args = words(&line);
    args.extend(disk.args());
    if committer == "leader" {
        // The writer's own thread syncs: one worker, so that strace's
        // `when=4+`, counted per thread, counts every fdatasync.
        args = with_threads(strategy, "1", &args);
    }
    let server = ServerProc::start_wrapped(&disk.wrapper(), proto.name(), &args);
    let acked = write_until_refused(proto, server.addr);
    assert!(acked >= 1, "no write was acknowledged before the failure");
    let mut c = connect(server.addr);
    // The write whose fsync failed was applied, then taken back.
    let failed = proto.get(&mut c, &format!("k{acked}")).unwrap();
    assert!(
        !present(proto, &failed),
        "a write that failed is served: {failed}"
    );
    assert!(present(proto, &proto.get(&mut c, "k0").unwrap()));
    // Every write from now on is refused with an error reply, unapplied,
    // and the connection stays open.
    let refused = proto.put(&mut c, "later", "x").unwrap_err().to_string();
    let want = match proto {
        Proto::Kv => "write answered 503",
        Proto::Resp => "write answered -MISCONF the write-ahead log failed: fdatasync of",
    };
    assert!(refused.starts_with(want), "{refused}");
    assert!(!present(proto, &proto.get(&mut c, "later").unwrap()));
    let state = log_state(proto, &mut c);
    let want = match proto {
        Proto::Kv => "\"call\": \"fdatasync\"",
        Proto::Resp => "aof_last_write_status:err",
    };
    assert!(state.contains(want), "{state}");
    // Said at once, once, naming the file.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !server.stderr().contains("the write-ahead log failed") {
        assert!(Instant::now() < deadline, "nothing said on stderr");
        std::thread::sleep(Duration::from_millis(20));
    }
    let said = server.stderr();
    assert_eq!(
        said.matches("the write-ahead log failed").count(),
        1,
        "{said}"
    );
    assert!(
        said.contains("fdatasync of ") && said.contains("wal-"),
        "{said}"
    );
    drop(server);
    // What a restart finds is exactly what was acknowledged.
    let again = serve(proto, &dir, &["--durability", "always"]);
    let mut c = connect(again.addr);
    for n in 0..acked {
        let got = proto.get(&mut c, &format!("k{n}")).unwrap();
        assert!(present(proto, &got), "acknowledged k{n} lost");
    }
    // The write whose fsync failed was never acknowledged: its record was
    // written, and whether the disk kept it a failed fsync does not say,
    // so it may be there. A refused write never is.
    assert!(!present(proto, &proto.get(&mut c, "later").unwrap()));
}

fn failing_disk_kv(strategy: &str) {
    a_failing_disk_stops_the_writes(Proto::Kv, strategy, Disk::Hook, "thread");
}
per_strategy!(a_failing_disk_stops_kv_writes, failing_disk_kv);

fn failing_disk_resp(strategy: &str) {
    a_failing_disk_stops_the_writes(Proto::Resp, strategy, Disk::Hook, "thread");
}
per_strategy!(a_failing_disk_stops_resp_writes, failing_disk_resp);

#[test]
#[ignore = "needs strace (Debian package strace; .ci/run installs it)"]
fn strace_eio_on_fdatasync_stops_the_writes_under_every_strategy() {
    let _turn = heavy_turn();
    for strategy in strategies() {
        for proto in [Proto::Kv, Proto::Resp] {
            a_failing_disk_stops_the_writes(proto, strategy, Disk::Strace, "thread");
        }
    }
}

/// A write waits for a slow fsync; a reader of the same key meanwhile gets
/// the value only once it is on disk, and (with the log's thread
/// committing) a reader of another key at once: under `--committer
/// leader` the writer's own thread, worker or loop makes the fsync, and
/// a reader it serves waits with it.
fn a_reader_never_sees_a_write_before_it_is_on_disk(
    proto: Proto,
    strategy: &str,
    slow: &[&str],
    committer: &str,
) {
    let _turn = heavy_turn();
    let dir = scratch(&format!("barrier-{}-{strategy}-{committer}", proto.name()));
    let d = dir.to_str().unwrap();
    let line =
        format!("--data-dir {d} --strategy {strategy} --durability always --committer {committer}");
    let base = words(&line);
    let mut args = with_threads(strategy, "2", &base);
    let (wrapper, delay) = match slow {
        [] => (Vec::new(), ["--fsync-delay", "1500ms"].to_vec()),
        w => (w.to_vec(), Vec::new()),
    };
    args.extend(delay);
    let server = ServerProc::start_wrapped(&wrapper, proto.name(), &args);
    let mut reader = connect(server.addr);
    let mut other = connect(server.addr);
    assert!(!present(proto, &proto.get(&mut reader, "x").unwrap()));
    let addr = server.addr;
    let t0 = Instant::now();
    let writer = std::thread::spawn(move || {
        let mut c = connect(addr);
        proto.put(&mut c, "x", "new").unwrap();
        t0.elapsed()
    });
    std::thread::sleep(Duration::from_millis(200));
    let asked = Instant::now();
    assert!(!present(
        proto,
        &proto.get(&mut other, "unrelated").unwrap()
    ));
    let unrelated = asked.elapsed();
    let got = proto.get(&mut reader, "x").unwrap();
    let seen = t0.elapsed();
    let wrote = writer.join().unwrap();
    assert!(
        wrote >= Duration::from_millis(1400),
        "the PUT waited for its fsync: {wrote:?}"
    );
    if present(proto, &got) {
        assert!(
            seen >= Duration::from_millis(1400),
            "a reader saw the write {seen:?} after it began, before its 1.5 s fsync"
        );
    }
    assert!(
        committer == "leader" || unrelated < Duration::from_millis(1000),
        "a read of another key waited {unrelated:?} behind the commit"
    );
}

fn barrier_kv(strategy: &str) {
    a_reader_never_sees_a_write_before_it_is_on_disk(Proto::Kv, strategy, &[], "thread");
}
per_strategy!(a_kv_reader_never_sees_an_unsynced_write, barrier_kv);

fn barrier_resp(strategy: &str) {
    a_reader_never_sees_a_write_before_it_is_on_disk(Proto::Resp, strategy, &[], "thread");
}
per_strategy!(a_resp_reader_never_sees_an_unsynced_write, barrier_resp);

#[test]
#[ignore = "needs strace (Debian package strace; .ci/run installs it)"]
fn strace_delayed_fdatasync_holds_the_readers_under_every_strategy() {
    let slow = strace("inject=fdatasync:delay_enter=1500000");
    for strategy in strategies() {
        for proto in [Proto::Kv, Proto::Resp] {
            a_reader_never_sees_a_write_before_it_is_on_disk(proto, strategy, &slow, "thread");
        }
    }
}

/// Whether nobody holds `dir`'s lock (DIR/LOCK, flock'ed while a log is
/// open): taken without waiting, and let go at once.
fn lock_is_free(dir: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(dir.join("LOCK")).expect("the server made DIR/LOCK");
    // SAFETY: flock on a descriptor this function owns.
    let took = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    took == 0
}

/// A server run under strace, once dropped, has let go of its data
/// directory: the next server on it (the restarts above) must not find it
/// "in use by another server". Several rounds under every strategy, since
/// the server's exit raced the wrapper's.
#[test]
#[ignore = "needs strace (Debian package strace; .ci/run installs it)"]
fn a_server_dropped_under_strace_has_let_go_of_its_data_directory() {
    let _turn = heavy_turn();
    let wrapper = strace("inject=fdatasync:error=EIO:when=1000+");
    for strategy in strategies() {
        let dir = scratch(&format!("strace-drop-{strategy}"));
        let d = dir.to_str().unwrap();
        for round in 0..5 {
            let line = format!("--data-dir {d} --strategy {strategy} --durability always");
            let args = words(&line);
            let server = ServerProc::start_wrapped(&wrapper, "resp", &args);
            let mut c = connect(server.addr);
            Proto::Resp.put(&mut c, &format!("k{round}"), "v").unwrap();
            drop(server);
            assert!(
                lock_is_free(&dir),
                "{strategy}, round {round}: the dropped server still holds {d}/LOCK"
            );
        }
    }
}

#[test]
fn on_log_error_exit_stops_the_server_and_loses_nothing_acknowledged() {
    let dir = scratch("eio-exit");
    let d = dir.to_str().unwrap();
    let line =
        format!("--data-dir {d} --durability always --on-log-error exit --fail-syncs-after 3");
    let args = words(&line);
    let mut server = ServerProc::start_wrapped(&[], "kv", &args);
    let acked = write_until_refused(Proto::Kv, server.addr);
    assert_eq!(acked, 3);
    let status = server
        .wait_exit(Duration::from_secs(10))
        .expect("the server exits on a failed fsync");
    assert_eq!(status.code(), Some(1), "{status:?}");
    let said = server.stderr();
    assert!(
        said.contains("the write-ahead log failed: fdatasync of ")
            && said.contains("exiting (--on-log-error exit)"),
        "{said}"
    );
    drop(server);
    let again = serve(Proto::Kv, &dir, &["--durability", "always"]);
    let mut c = connect(again.addr);
    for n in 0..3 {
        assert_eq!(Proto::Kv.get(&mut c, &format!("k{n}")).unwrap(), "200");
    }
    assert_eq!(Proto::Kv.get(&mut c, "k4").unwrap(), "404");
}

/// `--committer loop`: each ring writes and syncs its pass's records
/// itself. No acknowledged write is lost to a kill, and no write fails
/// silently.
#[test]
fn a_ring_that_commits_its_own_pass_loses_no_acknowledged_write() {
    let _turn = heavy_turn();
    for proto in [Proto::Kv, Proto::Resp] {
        let dir = scratch(&format!("loop-crash-{}", proto.name()));
        let args = words("--strategy uring --durability always --committer loop");
        crash_rounds(proto, &dir, &args, 3, &[]);
    }
}

#[test]
fn a_ring_that_commits_its_own_pass_stops_writes_on_a_failing_disk() {
    for proto in [Proto::Kv, Proto::Resp] {
        let dir = scratch(&format!("loop-eio-{}", proto.name()));
        let d = dir.to_str().unwrap();
        let line = format!(
            "--data-dir {d} --strategy uring --durability always --committer loop \
             --fail-syncs-after 3"
        );
        let args = words(&line);
        let server = ServerProc::start_wrapped(&[], proto.name(), &args);
        assert!(
            server.stdout().contains("(each ring commits its pass)"),
            "{}",
            server.stdout()
        );
        assert_eq!(write_until_refused(proto, server.addr), 3);
        let mut c = connect(server.addr);
        assert!(!present(proto, &proto.get(&mut c, "k3").unwrap()));
        assert!(proto.put(&mut c, "later", "x").is_err());
        assert!(present(proto, &proto.get(&mut c, "k2").unwrap()));
    }
}

/// `--committer leader`: no log thread; the writer that waits commits
/// when no commit is in flight. No acknowledged write is lost to a kill.
fn leader_crash(strategy: &str) {
    let _turn = heavy_turn();
    for proto in [Proto::Kv, Proto::Resp] {
        let dir = scratch(&format!("leader-crash-{}-{strategy}", proto.name()));
        let line = format!("--strategy {strategy} --durability always --committer leader");
        crash_rounds(proto, &dir, &words(&line), 3, &[]);
    }
}
per_strategy!(a_leading_writer_loses_no_acknowledged_write, leader_crash);

fn leader_failing_disk(strategy: &str) {
    for proto in [Proto::Kv, Proto::Resp] {
        a_failing_disk_stops_the_writes(proto, strategy, Disk::Hook, "leader");
    }
}
per_strategy!(
    a_leading_writer_stops_writes_on_a_failing_disk,
    leader_failing_disk
);

fn leader_barrier(strategy: &str) {
    for proto in [Proto::Kv, Proto::Resp] {
        a_reader_never_sees_a_write_before_it_is_on_disk(proto, strategy, &[], "leader");
    }
}
per_strategy!(
    a_leading_writers_reader_never_sees_an_unsynced_write,
    leader_barrier
);

#[test]
#[ignore = "needs strace (Debian package strace; .ci/run installs it)"]
fn strace_eio_on_fdatasync_stops_a_leading_writer_under_every_strategy() {
    let _turn = heavy_turn();
    // thread-per-request syncs each request on a new thread, where
    // strace's per-thread count starts again: the hook covers it.
    for strategy in strategies()
        .into_iter()
        .filter(|s| *s != "thread-per-request")
    {
        for proto in [Proto::Kv, Proto::Resp] {
            a_failing_disk_stops_the_writes(proto, strategy, Disk::Strace, "leader");
        }
    }
}

#[test]
#[ignore = "needs strace (Debian package strace; .ci/run installs it)"]
fn strace_delayed_fdatasync_holds_a_leading_writers_readers_under_every_strategy() {
    let slow = strace("inject=fdatasync:delay_enter=1500000");
    for strategy in strategies() {
        for proto in [Proto::Kv, Proto::Resp] {
            a_reader_never_sees_a_write_before_it_is_on_disk(proto, strategy, &slow, "leader");
        }
    }
}

/// `--committer leader` says so at start; like `--committer loop`, it is
/// accepted (and has nothing to do) under the other durabilities.
#[test]
fn the_leader_committer_says_so_and_is_idle_without_always() {
    for durability in ["always", "os", "everysec"] {
        let dir = scratch(&format!("leader-{durability}"));
        let d = dir.to_str().unwrap();
        let line = format!("--data-dir {d} --durability {durability} --committer leader");
        let server = ServerProc::start("kv", &words(&line));
        let says = server.stdout().contains("(the waiting writer commits)");
        assert_eq!(says, durability == "always", "{}", server.stdout());
        let mut c = connect(server.addr);
        Proto::Kv.put(&mut c, "k", durability).unwrap();
        drop(server);
        let again = serve(
            Proto::Kv,
            &dir,
            &words(&format!("--durability {durability}")),
        );
        let mut c = connect(again.addr);
        assert_eq!(Proto::Kv.get(&mut c, "k").unwrap(), "200");
    }
}

#[test]
fn the_loop_committer_needs_uring() {
    usage_error(
        &words(
            "serve kv --strategy async --durability always --data-dir /tmp/never-opened \
            --committer loop",
        ),
        "--committer loop needs --strategy uring",
    );
}
