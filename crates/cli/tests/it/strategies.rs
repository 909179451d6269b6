//! Strategy properties: pinning, and fairness of the pools.

use crate::support::*;

/// `--cpus 0` pins every thread of the server, whatever the strategy.
#[test]
fn cpus_pins_every_thread() {
    for strategy in STRATEGIES {
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
/// every reply (no connection monopolises a worker).
#[test]
fn two_workers_serve_a_hundred_connections() {
    for strategy in [
        "pool-locked",
        "pool-lockfree",
        "thread-per-request",
        "async",
        "shared-nothing",
    ] {
        let server = ServerProc::start("board", &["--strategy", strategy, "--threads", "2"]);
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
