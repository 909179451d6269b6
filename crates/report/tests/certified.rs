//! Each run's verdict (`results.validity` in its load.json) in the
//! report: counted in the summary and on the CLI's stdout, each failed
//! check under Problems (near-identical ones as one line), the point
//! marked ‡ in the tables and ringed in the plots; results made before
//! runs were judged are unknown, never uncertified.
#![allow(clippy::too_many_lines)]

mod common;

use common::{caps_like, copy, read_json, write_json};
use serde_json::{json, Value};
use serverlab_load::report::{LoadReport, SCHEMA};
use serverlab_report::generate;
use std::path::Path;

fn check(name: &str, passed: Option<bool>, detail: &str) -> Value {
    json!({"name": name, "passed": passed, "detail": detail})
}

/// Record a verdict in one run's load.json, rewritten in the current
/// schema (the fixtures are version 1, which had none): these checks
/// failed (with their details), every other passed, independence
/// undecided.
fn set_verdict(dir: &Path, slug: &str, rep: u32, failed: &[(&str, &str)]) {
    let path = dir.join(format!("runs/{slug}/rep-{rep}/load.json"));
    let old: LoadReport = serde_json::from_value(read_json(&path)).unwrap();
    let mut load = serde_json::to_value(&old).unwrap();
    load["schema"] = SCHEMA.into();
    // What version 1 could not type, as a run writes it now.
    load["results"]["board"] = json!({
        "reads": {"hits": 0, "misses": 0, "hit_share": 0.0}, "posts_acknowledged": 0
    });
    let mut checks = vec![];
    for name in ["schedule", "arrivals", "stationarity", "sample_size"] {
        let passed = match failed.iter().find(|(n, _)| *n == name) {
            Some((_, detail)) => check(name, Some(false), detail),
            None => check(name, Some(true), "fine"),
        };
        checks.push(passed);
    }
    checks.push(check(
        "independence",
        None,
        "12 pairs of replies: too few to judge",
    ));
    load["results"]["validity"] = json!({"certified": failed.is_empty(), "checks": checks});
    write_json(&path, &load);
}

const TREND: &str = "p99 rose from 1.10 ms in the first quarter to 9.40 ms in the last \
    (median 0.51 ms → 2.70 ms; Mann–Kendall τ = 0.412, p = 1.2e-9, over 300 of the 4000 \
    replies kept, 1 in 13): the run is not steady; the percentiles describe a mixture";

fn has_row(table: &str, first_cell: &str) -> bool {
    table
        .lines()
        .any(|l| l.trim_start_matches('|').trim().starts_with(first_cell))
}

#[test]
fn uncertified_runs_are_counted_listed_and_marked() {
    let tmp = copy("a");
    let dir = tmp.path();
    set_verdict(
        dir,
        "posters=1",
        1,
        &[
            ("stationarity", TREND),
            (
                "sample_size",
                "p99 of POST: 40 samples, too few for its interval",
            ),
        ],
    );
    set_verdict(dir, "posters=1", 2, &[("stationarity", TREND)]);
    set_verdict(dir, "posters=1", 3, &[]);
    // posters=2: rep 1 certified, rep 2 made before runs were judged.
    set_verdict(dir, "posters=2", 1, &[]);

    let w = generate(dir, None).unwrap();
    let t = &w.certification;
    assert_eq!(
        (t.judged, t.unknown, t.uncertified_runs),
        (4, 1, 2),
        "{t:?}"
    );
    assert_eq!((t.points, t.uncertified_points), (2, 1));
    assert_eq!(
        t.failed_checks,
        vec![
            ("stationarity".to_string(), 2),
            ("sample_size".to_string(), 1)
        ]
    );
    let sentence = w
        .summary
        .iter()
        .find(|l| l.contains("not certified"))
        .unwrap_or_else(|| panic!("{:#?}", w.summary));
    assert!(
        sentence.starts_with("2 of 4 judged runs (1 of 2 points, marked ‡"),
        "{sentence}"
    );
    assert!(sentence.contains("1 more made before runs were judged have no verdict"));
    assert!(sentence.contains("stationarity failed in 2 runs, sample_size in 1 run"));

    // The tables mark posters=1, not posters=2.
    assert!(
        has_row(&w.throughput_table, "1 ‡"),
        "{}",
        w.throughput_table
    );
    assert!(
        has_row(&w.throughput_table, "2 |"),
        "{}",
        w.throughput_table
    );
    assert!(!has_row(&w.throughput_table, "2 ‡"));

    let md = std::fs::read_to_string(&w.markdown).unwrap();
    assert!(
        md.contains("- posters=1 rep 1: not certified: stationarity failed: p99 rose from 1.10 ms")
    );
    assert!(md.contains(
        "- posters=1 rep 1: not certified: sample_size failed: p99 of POST: 40 samples, too \
         few for its interval (`runs/posters=1/rep-1/load.json`)"
    ));
    assert!(md.contains("- posters=1 rep 2: not certified: stationarity failed"));
    assert!(!md.contains("posters=1 rep 3: not certified"));
    assert!(!md.contains("posters=2 rep 1: not certified"));
    assert!(md.contains("‡ after a point: at least one of its runs was not certified"));
    let html = std::fs::read_to_string(&w.html).unwrap();
    assert!(html.contains("1 ‡"));
    assert!(html.contains("posters=1 rep 2: not certified"));

    // The plot of throughput against posters rings posters=1: one ring,
    // one ‡, and says so under its title.
    let svg = std::fs::read_to_string(dir.join("plots/throughput-vs-clients.svg")).unwrap();
    assert_eq!(svg.matches('‡').count(), 1, "{svg}");
    assert!(md.contains("A ring and ‡ around a marker"));
}

#[test]
fn results_without_verdicts_are_unknown_not_uncertified() {
    let tmp = copy("a");
    let w = generate(tmp.path(), None).unwrap();
    let t = &w.certification;
    assert_eq!((t.judged, t.unknown, t.uncertified_runs), (0, 5, 0));
    assert!(w.summary.iter().all(|l| !l.contains("certified")));
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    assert!(!md.contains('‡'), "{md}");
    assert!(!md.contains("not certified"));
    let svg = std::fs::read_to_string(tmp.path().join("plots/throughput-vs-clients.svg")).unwrap();
    assert!(!svg.contains('‡'));
}

#[test]
fn every_run_certified_says_so() {
    let tmp = copy("a");
    for (slug, rep) in [("posters=1", 1), ("posters=1", 2), ("posters=1", 3)] {
        set_verdict(tmp.path(), slug, rep, &[]);
    }
    let w = generate(tmp.path(), None).unwrap();
    assert!(w.summary.iter().any(|l| l
        == "Every one of the 3 judged runs was certified (2 more made before runs were judged \
            have no verdict)."));
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    assert!(!md.contains('‡'));
}

/// A hundred runs failing alike are one Problems line, with their count,
/// the figures' ranges and the points they cover.
#[test]
fn alike_failures_are_said_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    caps_like(dir);
    for (k, slug) in ["posters=5,readers=4", "posters=5,readers=5"]
        .iter()
        .enumerate()
    {
        for rep in 1..=4 {
            let detail = format!(
                "reached {}.0 of the 20000.0 req/s asked (9{k}.{rep}%), 1500.0 req/s under \
                 (more than 10.0%)",
                18_000 + 100 * rep
            );
            set_verdict(dir, slug, rep, &[("schedule", &detail)]);
        }
    }
    let w = generate(dir, None).unwrap();
    assert_eq!(w.certification.uncertified_runs, 8);
    assert_eq!(w.certification.uncertified_points, 2);
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    let line = md
        .lines()
        .find(|l| l.contains("runs: not certified"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        line.starts_with(
            "- 8 runs: not certified: schedule failed: reached 18100.0–18400.0 of the 20000.0 \
             req/s asked (90.1–91.4%)"
        ),
        "{line}"
    );
    assert!(line
        .ends_with("posters=5,readers=4 (reps 1, 2, 3, 4), posters=5,readers=5 (reps 1, 2, 3, 4)"));
    assert_eq!(md.matches("not certified: schedule").count(), 1);
    // Each of the two points is marked in the throughput table.
    assert_eq!(w.throughput_table.matches('‡').count(), 2);
}

/// A run whose `--threshold` failed (`results.thresholds` in its
/// load.json) is listed under Problems with what failed; one that passed
/// is not.
#[test]
fn failed_thresholds_are_listed_under_problems() {
    let tmp = copy("a");
    let dir = tmp.path();
    set_verdict(dir, "posters=1", 1, &[]);
    set_verdict(dir, "posters=1", 2, &[]);
    let judged = |path: &Path, passed: bool| {
        let mut load = read_json(path);
        load["results"]["thresholds"] = json!([{
            "threshold": "p99<10ms",
            "passed": passed,
            "actual": 12500.0,
            "detail": "p99 12.50 ms, must be under 10.00 ms",
        }]);
        write_json(path, &load);
    };
    judged(&dir.join("runs/posters=1/rep-1/load.json"), false);
    judged(&dir.join("runs/posters=1/rep-2/load.json"), true);
    let w = generate(dir, None).unwrap();
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    assert!(
        md.contains(
            "- posters=1 rep 1: threshold p99<10ms failed: p99 12.50 ms, must be under \
             10.00 ms (`runs/posters=1/rep-1/load.json`)"
        ),
        "{md}"
    );
    assert!(!md.contains("posters=1 rep 2: threshold"), "{md}");
}
