//! Strategy properties: pinning, and fairness of the pools.

use crate::support::*;
use std::process::Command;

/// `--cpus 0` pins every thread of the server, whatever the strategy.
#[test]
fn cpus_pins_every_thread() {
    for strategy in strategies() {
        let server = ServerProc::start("board", &["--strategy", strategy, "--cpus", "0"]);
        // Exercise the server so lazily started threads exist too.
        let mut c = Client::connect(server.addr);
        assert_eq!(c.req(b"POST@t#m"), b"0");
        let tasks = std::fs::read_dir(format!("/proc/{}/task", server.pid())).unwrap();
        let mut n = 0;
        for task in tasks {
            let status =
                std::fs::read_to_string(task.unwrap().path().join("status")).unwrap_or_default();
            let allowed = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(str::trim);
            if let Some(allowed) = allowed {
                assert_eq!(allowed, "0", "{strategy}: a thread runs on {allowed}");
                n += 1;
            }
        }
        assert!(n >= 2, "{strategy}: saw {n} threads");
        assert!(server.stop().0.success());
    }
}

/// 2 workers, 100 persistent lock-step connections: every connection gets
/// every reply (no connection monopolises a worker). Strategies without
/// workers to size (`--threads` does not apply) run with their own
/// concurrency.
#[test]
fn two_workers_serve_a_hundred_connections() {
    for strategy in strategies() {
        let server = ServerProc::start(
            "board",
            &with_threads(strategy, "2", &["--strategy", strategy]),
        );
        let mut conns: Vec<Client> = (0..100).map(|_| Client::connect(server.addr)).collect();
        for round in 0..20 {
            for (i, c) in conns.iter_mut().enumerate() {
                c.send(format!("POST@f{}#r{round}\0", i % 7).as_bytes());
            }
            for c in conns.iter_mut() {
                let id: u64 = text(&c.recv()).parse().expect("an id");
                assert!(id < 20 * 100, "{strategy}");
            }
        }
        let mut c = Client::connect(server.addr);
        let total: u64 = (0..7)
            .map(|t| {
                text(&c.req(format!("COUNT@f{t}").as_bytes()))
                    .parse::<u64>()
                    .unwrap()
            })
            .sum();
        assert_eq!(total, 2000, "{strategy}");
        assert!(server.stop().0.success());
    }
}

/// `--threads` is a usage error with a strategy it does not apply to, and
/// the error says what sets the concurrency instead; the announcement says
/// the same. With a strategy it sizes, the server announces what it sized.
#[test]
fn threads_only_where_the_strategy_has_them() {
    for strategy in strategies() {
        let kind: StrategyKind = strategy.parse().unwrap();
        let (server, want) = match kind.threads() {
            Threads::Unused(instead) => {
                let why = format!("--threads does not apply to {strategy}: it runs {instead}");
                usage_error(
                    &["serve", "board", "--strategy", strategy, "--threads", "7"],
                    &why,
                );
                let server = ServerProc::start("board", &["--strategy", strategy]);
                (server, format!("(strategy {strategy}, {instead},"))
            }
            Threads::Sizes(what) => {
                let server =
                    ServerProc::start("board", &["--strategy", strategy, "--threads", "3"]);
                (server, format!("(strategy {strategy}, 3 {what},"))
            }
        };
        let (status, out) = server.stop();
        assert!(status.success(), "{strategy}");
        assert!(out.contains(&want), "{strategy}: {out}");
    }
}

/// A sweep that would give `--threads` to such a strategy is refused
/// before anything runs, naming the point.
#[test]
fn a_sweep_giving_threads_where_they_do_not_apply_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let unused: Vec<&str> = strategies()
        .into_iter()
        .filter(|s| {
            matches!(
                s.parse::<StrategyKind>().unwrap().threads(),
                Threads::Unused(_)
            )
        })
        .collect();
    let Some(strategy) = unused.first() else {
        eprintln!("skipped: every strategy takes --threads");
        return;
    };
    let file = dir.path().join("x.toml");
    let toml = format!("protocol = \"echo\"\n[server]\nstrategy = '{strategy}'\nthreads = 2\n");
    std::fs::write(&file, toml).unwrap();
    usage_error(
        &["sweep", file.to_str().unwrap(), "--dry-run"],
        "--threads does not apply",
    );
}

/// Where io_uring cannot run, `--strategy uring` fails at start, before it
/// announces that it listens: exit 1, naming the reason and a strategy
/// that works, which then does start on the same machine. The machine
/// without io_uring is faked through a switch only test builds honour.
#[test]
fn uring_where_io_uring_is_unavailable_fails_at_start_naming_why() {
    let cases = [
        ("disabled", "io_uring_disabled is 2"),
        ("restricted", "io_uring_group"),
        ("seccomp", "seccomp"),
        ("old-kernel", "too old"),
    ];
    for (case, reason) in cases {
        let out = Command::new(BIN)
            .args([
                "serve",
                "board",
                "--strategy",
                "uring",
                "--addr",
                "127.0.0.1:0",
            ])
            .env("SERVERLAB_TEST_URING_UNAVAILABLE", case)
            .output()
            .expect("run serverlab");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{case}: {err}");
        assert!(
            err.contains("--strategy uring cannot run here"),
            "{case}: {err}"
        );
        assert!(err.contains(reason), "{case}: {err}");
        assert!(!text(&out.stdout).contains("listening"), "{case}");
        let instead = err
            .split("--strategy ")
            .last()
            .and_then(|rest| rest.split_whitespace().next())
            .expect("a strategy suggested");
        let works = ServerProc::start_with_env(
            "board",
            &["--strategy", instead],
            &[("SERVERLAB_TEST_URING_UNAVAILABLE", case)],
        );
        assert!(works.stop().0.success(), "{case}: --strategy {instead}");
    }
}

/// `--uring-sqpoll` gives uring's rings a kernel polling thread and
/// serves as ever; with any other strategy it is a usage error.
#[test]
fn uring_sqpoll_serves_and_applies_only_to_uring() {
    if runnable(StrategyKind::Uring) {
        let server = ServerProc::start(
            "board",
            &["--strategy", "uring", "--uring-sqpoll", "--threads", "1"],
        );
        let mut c = Client::connect(server.addr);
        assert_eq!(c.req(b"POST@s#a"), b"0");
        let mut wire = Vec::new();
        for i in 1..=100 {
            wire.extend_from_slice(format!("POST@s#{i}\0").as_bytes());
        }
        c.send(&wire);
        for i in 1..=100u32 {
            assert_eq!(c.recv(), i.to_string().as_bytes());
        }
        assert_eq!(c.req(b"COUNT@s"), b"101");
        assert!(server.stop().0.success());
    }
    usage_error(
        &["serve", "board", "--strategy", "async", "--uring-sqpoll"],
        "--uring-sqpoll applies only to --strategy uring",
    );
}

/// uring spends a sleep on its ring's timer, not in a `poll` on the socket
/// as the other strategies' delay threads do (`hostile_flow` covers
/// spinning, under every strategy): the timer too is given up when the
/// client has gone (the ring's tick looks) and when the stop passes its
/// drain limit, the request unapplied and counted. Each part waits until
/// the server has read the requests, never a fixed time, and judges what
/// the server did, not how long it took: a busy machine only delays it.
#[test]
fn uring_abandons_sleeps_for_clients_that_left_and_at_the_drain_limit() {
    use crate::hostile_flow::{read_stats, stats_file};
    use std::time::Duration;
    if !runnable(StrategyKind::Uring) {
        return;
    }
    let (_dir, stats) = stats_file();
    let stats_arg = stats.to_str().unwrap();
    let line = format!("--strategy uring --delay-mode sleep --stats-json {stats_arg}");
    let sleeping = words(&line);
    // 1 s sleeps, and the client leaves; then the stop, whose drain would
    // answer all it read, up to its 5 s limit. The first reply meets the
    // client's reset, and the next sleep is cancelled within a tick (0.1 s
    // of its second): one request applied (two only if the ring waited a
    // whole second for the CPU). Spent whole, the drain would apply five.
    let server = ServerProc::start(
        "bucket",
        &[
            &sleeping[..],
            &["--delay-unit", "ms", "--max-delay", "1000"],
        ]
        .concat(),
    );
    let mut c = Client::connect(server.addr);
    c.send("1000,1\n".repeat(20).as_bytes());
    wait_for(
        "the server reads the requests",
        Duration::from_secs(30),
        || read_by_server(&c.stream),
    );
    drop(c);
    assert!(server.stop().0.success());
    let s = read_stats(&stats);
    assert_eq!(s["connections"]["delays_abandoned"], 1, "{s}");
    assert!(s["protocol"]["requests"]["add"].as_u64() <= Some(2), "{s}");
    assert_eq!(s["connections"]["closed"], 1, "{s}");
    // Minute-long sleeps, then SIGTERM: past the 5 s drain limit the sleep
    // in progress is abandoned and the server exits, long before the
    // minute is up.
    let mut server = ServerProc::start("bucket", &sleeping);
    let mut c = Client::connect(server.addr);
    c.send("60,1\n".repeat(8).as_bytes());
    wait_for(
        "the server reads the requests",
        Duration::from_secs(30),
        || read_by_server(&c.stream),
    );
    server.signal(nix::sys::signal::Signal::SIGTERM);
    let status = server.wait_exit(Duration::from_secs(40));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    assert!(c.closed_by_server());
    let s = read_stats(&stats);
    assert_eq!(s["connections"]["delays_abandoned"], 1, "{s}");
    assert_eq!(s["protocol"]["requests"]["add"], 0, "{s}");
}
