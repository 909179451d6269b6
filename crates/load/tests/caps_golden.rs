//! The `caps` sink against a golden example of the reference client's
//! output, line by line.

mod common;

use serverlab_load::output::caps;
use serverlab_load::report::{ClientCpu, LoadReport, Results, ThreadSummary};

fn thread(role: &str, index: usize, per_second: &[u64], runtime_s: f64) -> ThreadSummary {
    ThreadSummary {
        role: role.into(),
        index,
        total: per_second.iter().sum(),
        per_second: per_second.to_vec(),
        runtime_s,
    }
}

fn fixture() -> LoadReport {
    common::closed_loop(
        "board",
        Results {
            duration_s: 3.0,
            requests: 85968,
            throughput_rps: 85968.0 / 3.0,
            concurrency: 3,
            per_second: vec![31671, 31699, 22598],
            threads: vec![
                thread("poster", 0, &[10671, 10697, 10596], 3.00012),
                thread("poster", 1, &[9000, 9001], 3.00017),
                thread("reader", 0, &[12000, 12001, 12002], 3.00025),
            ],
            client_cpu: ClientCpu::measure((0.0, 0.0), 0.0, 3.0, 1),
            ..Default::default()
        },
    )
}

#[test]
fn caps_matches_golden_line_by_line() {
    let got = caps::render(&fixture());
    let want = include_str!("golden/caps.txt");
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "line {}", i + 1);
    }
    assert_eq!(got.lines().count(), want.lines().count());
    assert_eq!(got, want, "byte for byte, including the final newline");
}
