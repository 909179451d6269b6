//! What a report says about noise, on fixture data: outliers flagged and
//! listed with their files (and left out only when asked), the share of a
//! baseline run in the same block, runs made on a busy machine, the
//! summary first, and the summary's knee and noise verdict on a CAPS-sized
//! sweep.

mod common;

use common::{add_baseline, add_repetitions, caps_like, copy, set_machine, set_throughput};
use serverlab_report::data::Sweep;
use serverlab_report::points::PointStats;
use serverlab_report::{generate, generate_with, Options};

#[test]
fn one_wild_run_is_flagged_as_an_outlier_and_listed() {
    let tmp = copy("a");
    // posters=1: 1000, 1200, 1100, 1300 and a wild 50,000 req/s.
    set_throughput(tmp.path(), "posters=1", 3, 50_000.0);
    add_repetitions(tmp.path(), "posters=1", &[1100.0, 1300.0]);
    let sweep = Sweep::read(tmp.path()).unwrap();
    let one = PointStats::of(&sweep.points[0]);
    assert_eq!(one.outliers.len(), 1, "{:?}", one.outliers);
    let o = &one.outliers[0];
    assert_eq!((o.repetition, o.value, o.median), (3, 50_000.0, 1200.0));
    // On the logs: median ln 1200, MAD ln(1200/1100) → robust sd 0.12899;
    // ln(50,000/1200) = 3.7297 is 28.9 of them out (the bar at 5 runs: 8).
    let z = (50_000f64 / 1200.0).ln() / (1.4826 * (1200f64 / 1100.0).ln());
    assert!((o.z - z).abs() < 1e-9, "{o:?}");
    assert_eq!(o.dir, std::path::Path::new("runs/posters=1/rep-3"));
    assert_eq!(one.throughput.unwrap().n, 5, "kept unless asked");

    let w = generate(tmp.path(), None).unwrap();
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    assert!(
        md.contains("posters=1 rep 3: outlier: throughput 50,000 req/s against the point's median 1,200, 28.9 robust sds above it on the log scale (the bar at 5 runs is 8) (`runs/posters=1/rep-3/load.json`); kept in the numbers"),
        "{md}"
    );

    let opts = Options {
        drop_outliers: true,
        ..Options::default()
    };
    let w = generate_with(tmp.path(), &opts).unwrap();
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    assert!(
        md.contains("left out of every number (--drop-outliers)"),
        "{md}"
    );
    assert!(md.contains("| 1 | 4 | 1,150 |"), "n = 4 without it: {md}");
    let dropped = PointStats::with(&sweep.points[0], None, true);
    assert_eq!(dropped.dropped, [3]);
    assert_eq!(dropped.throughput.unwrap().n, 4);
}

#[test]
fn throughput_is_also_a_share_of_the_baseline_in_the_same_block() {
    let tmp = copy("a");
    // Twice posters=1's throughput in each block: its share is exactly 50%
    // though its absolute throughput varies by 16.7%.
    add_baseline(tmp.path(), [2000.0, 2400.0, 2800.0]);
    let sweep = Sweep::read(tmp.path()).unwrap();
    let base = sweep.baseline.as_ref().unwrap();
    assert_eq!(base.runs.len(), 3);
    let one = PointStats::with(&sweep.points[0], Some(base), false);
    let share = one.share.unwrap();
    assert!((share.centre() - 0.5).abs() < 1e-12 && share.cv.unwrap() < 1e-12);
    let two = PointStats::with(&sweep.points[1], Some(base), false);
    let share = two.share.unwrap();
    // 2000 / 2000 and 2600 / 2400 (rep 3 failed).
    assert_eq!(share.n, 2);
    assert!((share.mean - (1.0 + 2600.0 / 2400.0) / 2.0).abs() < 1e-12);

    let w = generate(tmp.path(), None).unwrap();
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    assert!(
        md.contains("| share of baseline (95% CI) | share CV |"),
        "{md}"
    );
    assert!(md.contains("| 50% (50% – 50%) | 0% |"), "{md}");
    assert!(
        md.contains("As a share of the baseline run in the same block they vary by"),
        "{md}"
    );
    assert!(md.contains("Baseline: `serverlab serve board"), "{md}");
    assert!(
        w.plots
            .iter()
            .any(|p| p.ends_with("share-of-baseline-vs-clients.svg")),
        "{:?}",
        w.plots
    );
}

#[test]
fn runs_on_a_busy_machine_are_flagged() {
    let tmp = copy("a");
    set_machine(tmp.path(), "posters=1", 2, 0.9);
    set_machine(tmp.path(), "posters=1", 3, 0.01);
    let sweep = Sweep::read(tmp.path()).unwrap();
    let one = PointStats::of(&sweep.points[0]);
    assert_eq!(one.busy.len(), 1);
    assert_eq!(one.busy[0].0, 2);
    let w = generate(tmp.path(), None).unwrap();
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    assert!(
        md.contains("posters=1 rep 2: made on a busy machine (other processes 0.90 cores, steal 0.00 cores, load average 1.50 → 2.50)"),
        "{md}"
    );
    assert!(
        !md.contains("posters=1 rep 3: made on a busy machine"),
        "{md}"
    );
}

/// Summary, then plots, then problems, then the appendix, in both files.
#[test]
fn the_summary_comes_first() {
    let tmp = copy("a");
    let w = generate(tmp.path(), None).unwrap();
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    let sections: Vec<&str> = md.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        sections,
        [
            "## Summary",
            "## Plots",
            "## Problems",
            "## Appendix: full tables"
        ],
        "{md}"
    );
    assert!(md.find("## Summary").unwrap() < md.find("![").unwrap());
    let html = std::fs::read_to_string(&w.html).unwrap();
    let first_h2 = html.find("<h2").unwrap();
    assert_eq!(&html[first_h2..first_h2 + 20], "<h2 id=\"summary\">Sum");
    let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("no {needle}"));
    assert!(at("id=\"summary\"") < at("<figure"));
    assert!(at("<figure") < at("id=\"problems\""));
    assert!(at("id=\"problems\"") < at("<table"));
    assert!(at("Highest throughput") < at("<figure"));
    assert!(at("Noise: these runs vary by") < at("<figure"));
}

/// The summary of a CAPS-sized sweep: the best point, the knee per
/// poster count, the noise verdict, and the share of the baseline.
#[test]
fn a_caps_sized_summary_names_the_best_point_the_knee_and_the_noise() {
    let tmp = tempfile::tempdir().unwrap();
    caps_like(tmp.path());
    let w = generate(tmp.path(), None).unwrap();
    let summary = w.summary.join("\n");
    assert!(summary.contains("**caps**: 25 points × 4 repetitions + a baseline run in every block: 104 runs succeeded"), "{summary}");
    assert!(
        summary.contains("randomized blocks (seed 12345)"),
        "{summary}"
    );
    assert!(
        summary.contains("Highest throughput: posters="),
        "{summary}"
    );
    // Throughput grows up to 6 connections and is flat after: with one
    // poster the readers take it there at 5 readers (the last), with two
    // at 4, with five at the first.
    assert!(
        summary
            .contains("posters=1: throughput still grows at the most client connections tried, 6"),
        "{summary}"
    );
    assert!(
        summary.contains("posters=2: throughput stops growing at client connections = 6"),
        "{summary}"
    );
    assert!(
        summary.contains("posters=5: throughput is flat over client connections 6–10"),
        "{summary}"
    );
    assert!(summary.contains("Noise: these runs vary by"), "{summary}");
    assert!(summary.contains("As a share of the baseline"), "{summary}");
}
