//! Every benchmark script in benches/ runs, in its smallest mode, against
//! this build, and prints its table: a script the code moved away from
//! (benches/alloc.py once called a helper with an argument too few)
//! fails here rather than on the day someone measures with it.

use crate::support::*;
use std::path::Path;
use std::process::Command;

/// `python3 benches/SCRIPT ARGS…` from the repository root: exit 0 and a
/// Markdown table (a `|---` row) on its standard output.
fn runs_and_tabulates(script: &str, args: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("python3")
        .arg(root.join("benches").join(script))
        .args(args)
        .current_dir(&root)
        .output()
        .expect("python3 runs");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "{script} {args:?}: {:?}\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains("|---"),
        "{script}: no table\n{stdout}\n{stderr}"
    );
}

#[test]
#[ignore = "needs python3, redis-server, nginx, wrk and openssl (apt-get install python3 redis-server nginx-light wrk openssl); run: cargo test --workspace -- --ignored"]
fn every_bench_script_runs_in_its_smallest_mode() {
    let _turn = heavy_turn();
    // One strategy is enough to show a script runs.
    let one = strategies()[0];
    // Each script's arguments, split at spaces; BIN is this build.
    let small = [
        (
            "alloc.py",
            "--duration 1 --reps 1 --clients 5 --glibc BIN --mimalloc BIN --jemalloc BIN",
        ),
        ("agents.py", "--bin BIN --duration 1 --reps 1 --agents 2"),
        (
            "colocated_agents.py",
            "--bin BIN --duration 1 --warmup 0.5 --reps 1 --stall 0.2",
        ),
        (
            "openloop.py",
            "--bin BIN --duration 1 --steps 2 client-cost",
        ),
        ("openloop.py", "--bin BIN --duration 0.5 known-capacity"),
        (
            "strategies.py",
            "--bin BIN --duration 1 --reps 1 --strategies ONE",
        ),
        ("query_memory.py", "--bin BIN --clients 2 --strategies ONE"),
        (
            "hostile.py",
            "--bin BIN --clients 5 --duration 1 --reps 1 --strategies ONE",
        ),
        ("durability.py", "--quick --bin BIN"),
        ("fsync_ceiling.py", "--quick"),
        ("redis_compare.py", "--quick --bin BIN"),
        ("resp_hard.py", "--quick --bin BIN"),
        ("resp_hard.py", "--quick --only wakeup --bin BIN"),
        ("big_values.py", "--quick --bin BIN"),
        ("load_any_server.py", "--quick --bin BIN"),
        ("merge_memory.py", "--bin BIN --agents 3 --duration 1"),
        (
            "poll_vs_redis_benchmark.py",
            "--bin BIN --rounds 1 --duration 0.3",
        ),
        (
            "metrics_cost.py",
            "--bin BIN --strategy ONE --duration 1 --reps 1 --baseline-bin BIN",
        ),
        (
            "load_metrics_cost.py",
            "--bin BIN --strategy ONE --duration 1 --reps 1",
        ),
        ("coverage.py", "--bin BIN --runs 1 --duration 1"),
        ("coverage.py", "--self-test"),
        ("pubsub_table.py", "--self-test"),
        (
            "certify_cost.py",
            "--bin BIN --old-bin BIN --strategy ONE --duration 1 --reps 1",
        ),
    ];
    for (script, args) in small {
        let args: Vec<&str> = args
            .split(' ')
            .map(|a| match a {
                "BIN" => BIN,
                "ONE" => one,
                a => a,
            })
            .collect();
        runs_and_tabulates(script, &args);
    }
}
