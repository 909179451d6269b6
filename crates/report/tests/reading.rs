//! How a report reads a run's numbers: a version-1 load result (from the
//! fixtures) still reports, with its concurrency guessed as before; a
//! current one says its concurrency itself, and the server's typed
//! statistics give the service time by name.

use serverlab_load::board::{BoardResults, Reads};
use serverlab_load::report::{LoadReport, SCHEMA};
use serverlab_report::data::Sweep;
use serverlab_report::generate;
use serverlab_report::points::PointStats;
use std::path::{Path, PathBuf};

mod common;
use common::{copy_dir, fixture};

/// Every run directory of a sweep: (point directory name, run directory).
fn runs(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for point in std::fs::read_dir(dir.join("runs")).unwrap() {
        let point = point.unwrap();
        for rep in std::fs::read_dir(point.path()).unwrap() {
            let name = point.file_name().to_string_lossy().into_owned();
            out.push((name, rep.unwrap().path()));
        }
    }
    out
}

#[test]
fn a_version_1_result_still_reports() {
    let text = std::fs::read_to_string(fixture("a/runs/posters=2/rep-1/load.json")).unwrap();
    assert!(text.contains("\"schema\": \"serverlab-load/1\""));
    let load: LoadReport = serde_json::from_str(&text).unwrap();
    assert_eq!(load.schema, "serverlab-load/1");
    // Its concurrency, which version 1 did not record, is posters + readers.
    assert_eq!(load.results.concurrency, 3);

    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixture("a"), tmp.path());
    let sweep = Sweep::read(tmp.path()).unwrap();
    let stats: Vec<PointStats> = sweep.points.iter().map(PointStats::of).collect();
    assert_eq!((stats[0].clients, stats[1].clients), (Some(2.0), Some(3.0)));
    assert_eq!(stats[0].throughput.unwrap().mean, 1200.0);
    // Service time from the old statistics, through the legacy search.
    assert_eq!(stats[1].service("p99").unwrap().mean, 90.0);
    // The whole report is written from it (its tables are report.rs's).
    let w = generate(tmp.path(), None).unwrap();
    assert_eq!(w.failed_runs, 1, "only the repetition that failed");
}

#[test]
fn a_current_result_says_its_concurrency_and_the_server_its_service_time() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixture("a"), tmp.path());
    for (point, run) in runs(tmp.path()) {
        let path = run.join("load.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue; // the failed repetition wrote none
        };
        let mut load: LoadReport = serde_json::from_str(&text).unwrap();
        // Written now: no key names to guess from, the concurrency said.
        load.schema = SCHEMA.into();
        load.config = serde_json::json!({"addr": "127.0.0.1:40000"});
        load.results.concurrency = if point == "posters=1" { 7 } else { 9 };
        load.results.protocol = Some(
            BoardResults {
                reads: Reads::of(4, 1),
                posts_acknowledged: 10,
            }
            .into(),
        );
        std::fs::write(&path, serverlab_load::output::json(&load)).unwrap();
        let stats = serde_json::json!({
            "connections": {"accepted": 3},
            "service_time_us": {"count": 100, "min": 1.0, "mean": 6.0, "p50": 5.0,
                "p90": 8.0, "p99": 12.0, "max": 40.0},
            "protocol": {"requests": {"POST": 100}},
        });
        std::fs::write(run.join("server.json"), stats.to_string()).unwrap();
    }
    let sweep = Sweep::read(tmp.path()).unwrap();
    let stats: Vec<PointStats> = sweep.points.iter().map(PointStats::of).collect();
    assert_eq!((stats[0].clients, stats[1].clients), (Some(7.0), Some(9.0)));
    for s in &stats {
        assert_eq!(s.service("median").unwrap().mean, 5.0);
        assert_eq!(s.service("p99").unwrap().mean, 12.0);
    }
    let w = generate(tmp.path(), None).unwrap();
    assert_eq!(w.failed_runs, 1, "only the repetition that failed");
}
