//! Issue 39's report items: near-identical problems said once, the
//! latency-against-load markers labelled with their point, a sharded
//! sweep's parent directory as the other side of a comparison, and shards
//! co-scheduled on one machine's CPUs warned of, their runs listed.

mod common;

use common::{caps_like, copy, copy_dir, fixture, read_json, set_machine, write_json};
use serverlab_report::{generate_shards, generate_with, Options};
use std::path::{Path, PathBuf};

/// The Problems section of a report, line by line.
fn problems(md: &str) -> Vec<&str> {
    md.split("## Problems")
        .nth(1)
        .unwrap_or_default()
        .split("\n## ")
        .next()
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("- "))
        .collect()
}

/// 100 runs on a busy machine (the issue had 104 lines): one line with
/// the count, each figure's range, and every point with its repetitions.
#[test]
fn near_identical_problems_are_one_line_with_a_count_and_the_points() {
    let tmp = tempfile::tempdir().unwrap();
    caps_like(tmp.path());
    let mut i = 0;
    for p in 1..=5 {
        for r in 1..=5 {
            for rep in 1..=4 {
                let others = 0.5 + 0.01 * f64::from(i % 40);
                set_machine(tmp.path(), &format!("posters={p},readers={r}"), rep, others);
                i += 1;
            }
        }
    }
    let w = generate_with(tmp.path(), &Options::default()).unwrap();
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    let busy: Vec<&str> = problems(&md)
        .into_iter()
        .filter(|l| l.contains("busy machine"))
        .collect();
    assert_eq!(busy.len(), 1, "{busy:#?}");
    let line = busy[0];
    assert!(
        line.contains(
            "100 runs: made on a busy machine (other processes 0.50–0.89 cores, steal 0.00 \
             cores, load average 1.50 → 2.50)"
        ),
        "{line}"
    );
    assert!(line.contains("`runs/<point>/rep-<k>/run.json`"), "{line}");
    for p in 1..=5 {
        for r in 1..=5 {
            let point = format!("posters={p},readers={r} (reps 1, 2, 3, 4)");
            assert!(line.contains(&point), "{point} not in {line}");
        }
    }
    // Two alike stay two lines.
    let tmp = copy("a");
    set_machine(tmp.path(), "posters=1", 1, 0.9);
    set_machine(tmp.path(), "posters=2", 1, 0.8);
    let w = generate_with(tmp.path(), &Options::default()).unwrap();
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    let busy = problems(&md)
        .into_iter()
        .filter(|l| l.contains("busy machine"))
        .count();
    assert_eq!(busy, 2, "{md}");
}

/// Every marker of the highest percentile says which point it is.
#[test]
fn latency_against_load_markers_name_their_point() {
    let tmp = tempfile::tempdir().unwrap();
    caps_like(tmp.path());
    generate_with(tmp.path(), &Options::default()).unwrap();
    let svg = std::fs::read_to_string(tmp.path().join("plots/latency-vs-load.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    for p in 1..=5 {
        for r in 1..=5 {
            let slug = format!("posters={p},readers={r}");
            assert_eq!(
                texts.iter().filter(|t| **t == slug).count(),
                1,
                "{slug}: {texts:?}"
            );
        }
    }
}

/// Fixture `a` split into two shards of one split under `parent`: blocks
/// 1 and 3 in `shard-0-of-2`, block 2 in `shard-1-of-2`, both on one
/// machine, run k of point i started at 100k + 20i seconds (none at once).
fn sharded(parent: &Path) -> [PathBuf; 2] {
    [0u32, 1].map(|index| {
        let dir = parent.join(format!("shard-{index}-of-2"));
        copy_dir(&fixture("a"), &dir);
        let mut m = read_json(&dir.join("sweep.json"));
        m["shard"] = serde_json::json!({"index": index, "count": 2});
        m["host"] = serde_json::json!({"hostname": "node7", "cpu_model": "EPYC", "cpus": 2});
        write_json(&dir.join("sweep.json"), &m);
        let block = serde_json::json!(["posters=1", "posters=2"]);
        let schedule = serde_json::json!({
            "schema": "serverlab-schedule/1", "order": "round-robin", "seed": 1,
            "blocks": [block, block, block], "shard": {"index": index, "count": 2}
        });
        write_json(&dir.join("schedule.json"), &schedule);
        for (i, slug) in ["posters=1", "posters=2"].iter().enumerate() {
            for rep in 1..=3u32 {
                let run = dir.join(format!("runs/{slug}/rep-{rep}"));
                if (rep - 1) % 2 != index {
                    std::fs::remove_dir_all(&run).unwrap();
                    continue;
                }
                start_at(&run, 1_700_000_000 + 100 * u64::from(rep) + 20 * i as u64);
            }
        }
        dir
    })
}

fn start_at(run: &Path, unix_s: u64) {
    let path = run.join("run.json");
    let mut record = read_json(&path);
    record["started_unix_s"] = unix_s.into();
    write_json(&path, &record);
}

/// `report --compare PARENT` where PARENT holds a sharded sweep's
/// directories (it was refused: no sweep.json there).
#[test]
fn a_sharded_sweeps_parent_directory_can_be_compared_with() {
    let tmp = tempfile::tempdir().unwrap();
    let parent = tmp.path().join("other");
    sharded(&parent);
    let this = copy("a");
    let opts = Options {
        compare: Some(&parent),
        ..Options::default()
    };
    let w = generate_with(this.path(), &opts).unwrap();
    let table = w.comparison_table.expect("a comparison");
    assert!(table.contains("posters=1"), "{table}");
    assert!(table.contains("posters=2"), "{table}");
}

/// Shards on one machine whose runs overlapped in time on the CPUs both
/// were pinned to: a warning in the Shards section and each run under
/// Problems; none where they ran one after another or on two machines.
#[test]
fn co_scheduled_shards_are_warned_of_and_their_runs_listed() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = sharded(tmp.path());
    let report = || {
        let w = generate_shards(&dirs, tmp.path(), &Options::default()).unwrap();
        std::fs::read_to_string(&w.markdown).unwrap()
    };
    let md = report();
    assert!(
        !md.contains("co-scheduled") && !md.contains("WARNING"),
        "{md}"
    );
    // Shard 1's block 2 moved onto shard 0's block 1: both on CPUs 0 and 1.
    for (i, slug) in ["posters=1", "posters=2"].iter().enumerate() {
        let run = dirs[1].join(format!("runs/{slug}/rep-2"));
        start_at(&run, 1_700_000_100 + 20 * i as u64);
    }
    let md = report();
    assert!(
        md.contains("WARNING: shards ran at the same time on one machine, pinned to the same CPUs (4 runs at 2 points"),
        "{md}"
    );
    let listed: Vec<&str> = problems(&md)
        .into_iter()
        .filter(|l| l.contains("co-scheduled"))
        .collect();
    assert_eq!(listed.len(), 1, "{listed:#?}");
    assert!(
        listed[0].starts_with("- 4 runs: co-scheduled: ran at the same time as shard")
            && listed[0].contains("on node7 (both pinned to CPUs 0,1)")
            && listed[0].contains("posters=1 (reps 1, 2), posters=2 (reps 1, 2)"),
        "{}",
        listed[0]
    );
    // On two machines they did not compete.
    let path = dirs[1].join("sweep.json");
    let mut m = read_json(&path);
    m["host"]["hostname"] = "node8".into();
    write_json(&path, &m);
    let w = generate_shards(&dirs, tmp.path(), &Options::default());
    // Two machines and no baseline: refused, but not for co-scheduling.
    let said = match w {
        Ok(w) => std::fs::read_to_string(&w.markdown).unwrap(),
        Err(e) => e.to_string(),
    };
    assert!(!said.contains("co-scheduled"), "{said}");
}
