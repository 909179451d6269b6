//! The shipped deploy/slurm/*.sbatch, unchanged, on a real one-node Slurm
//! cluster (deploy/slurm/local/cluster.sh start; .ci/run starts it):
//! load.sbatch as a 4-task array of agents against a local board server,
//! then the merge as a dependent job (the merged totals are the agents'
//! sums); sweep.sbatch as two shards, then the report of both.

use crate::support::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// An idle node to run on, or a failure that says how to get one.
fn need_cluster() {
    let sinfo = Command::new("sinfo").args(["-h", "-o", "%T"]).output();
    let states = match sinfo {
        Ok(out) => text(&out.stdout),
        Err(e) => panic!(
            "no sinfo ({e}): apt-get install -y slurm-wlm munge, then \
             deploy/slurm/local/cluster.sh start (.ci/run does both)"
        ),
    };
    assert!(
        states.lines().any(|s| s == "idle" || s == "mixed"),
        "no idle Slurm node ({states:?}): deploy/slurm/local/cluster.sh start"
    );
}

/// `sbatch --parsable --wait ARGS` in `dir` with `env`: the job id.
fn sbatch(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> String {
    let out = Command::new("sbatch")
        .current_dir(dir)
        .envs(env.iter().copied())
        .args(["--parsable", "--wait"])
        .args(args)
        .output()
        .expect("run sbatch");
    let logs: String = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".out"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(
        out.status.success(),
        "sbatch {args:?}: {}{}\njob output:\n{logs}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
        .trim()
        .split(';')
        .next()
        .unwrap()
        .to_string()
}

/// The names of the job output files (`*.out`) in `dir`.
fn out_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".out"))
        .collect()
}

#[test]
#[ignore = "needs a Slurm cluster (apt-get install slurm-wlm munge; deploy/slurm/local/cluster.sh start); run: cargo test --workspace -- --ignored"]
fn the_shipped_load_sbatch_runs_four_agents_and_merges_them() {
    need_cluster();
    let server = ServerProc::start("board", &["--strategy", "pool-locked"]);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("agents");
    let script = repo().join("deploy/slurm/load.sbatch");
    let addr = server.addr.to_string();
    let env = [
        ("SERVERLAB", BIN),
        ("SERVERLAB_ADDR", addr.as_str()),
        ("SERVERLAB_PROTO", "board"),
        ("SERVERLAB_FLAGS", "--posters 4 --readers 4 --duration 1s"),
        ("SERVERLAB_OUT", out.to_str().unwrap()),
        ("SERVERLAB_START_DELAY", "3"),
    ];
    let script = script.to_str().unwrap();
    let job = sbatch(tmp.path(), &env, &["--array=0-3", script]);
    let dependency = format!("--dependency=afterok:{job}");
    let merge = sbatch(
        tmp.path(),
        &env,
        &[
            &dependency,
            "--output=serverlab-load-merge-%j.out",
            script,
            "merge",
            out.to_str().unwrap(),
        ],
    );
    // As deploy/README.md submits it: the merge's output file by its job
    // id, not with Slurm's placeholder for no array index.
    let files = out_files(tmp.path());
    assert!(
        files.contains(&format!("serverlab-load-merge-{merge}.out")),
        "{files:?}"
    );
    assert!(!files.iter().any(|f| f.contains("4294967294")), "{files:?}");

    let agents: Vec<serde_json::Value> = (0..4)
        .map(|i| json(&out.join(format!("agent-{i}-of-4.json"))))
        .collect();
    for i in 0..4 {
        assert!(
            out.join(format!("agent-{i}-of-4.hlog")).exists(),
            "agent {i}'s log"
        );
    }
    let merged = json(&out.join("merged.json"));
    let requests = |r: &serde_json::Value| r["results"]["requests"].as_u64().unwrap();
    let sum: u64 = agents.iter().map(requests).sum();
    assert!(sum > 0, "the agents did nothing");
    assert_eq!(requests(&merged), sum, "merged requests");
    let ops = |r: &serde_json::Value| -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = r["results"]["operations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                (
                    o["name"].as_str().unwrap().to_string(),
                    o["count"].as_u64().unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    for (name, count) in ops(&merged) {
        let agents_count: u64 = agents
            .iter()
            .flat_map(ops)
            .filter(|(n, _)| *n == name)
            .map(|(_, c)| c)
            .sum();
        assert_eq!(count, agents_count, "merged {name} count");
    }
    let printed = std::fs::read_to_string(out.join("merged.txt")).unwrap();
    assert!(!printed.trim().is_empty(), "merge printed nothing");
}

/// The shipped sweep.sbatch, unchanged: two shards as an array job, then
/// the report of both as a dependent job.
#[test]
#[ignore = "needs a Slurm cluster (apt-get install slurm-wlm munge; deploy/slurm/local/cluster.sh start); run: cargo test --workspace -- --ignored"]
fn the_shipped_sweep_sbatch_runs_two_shards_and_reports_them() {
    need_cluster();
    let tmp = tempfile::tempdir().unwrap();
    let experiment = tmp.path().join("exp.toml");
    std::fs::write(
        &experiment,
        "name = \"slurm\"\nprotocol = \"board\"\nrepetitions = 2\n[server]\nstrategy = \
         \"pool-locked\"\nthreads = 1\n[load]\nposters = [1, 2]\nreaders = 1\nduration = \
         \"200ms\"\n[baseline.server]\nprotocol = \"echo\"\n[baseline.load]\nposters = 1\n\
         readers = 1\nduration = \"200ms\"\n",
    )
    .unwrap();
    let out = tmp.path().join("sweep");
    let env = [
        ("SERVERLAB", BIN),
        ("SERVERLAB_EXPERIMENT", experiment.to_str().unwrap()),
        ("SERVERLAB_OUT", out.to_str().unwrap()),
    ];
    let script = repo().join("deploy/slurm/sweep.sbatch");
    let script = script.to_str().unwrap();
    let job = sbatch(tmp.path(), &env, &["--array=0-1", script]);
    let dependency = format!("--dependency=afterany:{job}");
    let report = sbatch(
        tmp.path(),
        &env,
        &[
            &dependency,
            "--output=serverlab-sweep-report-%j.out",
            script,
            "report",
            out.to_str().unwrap(),
        ],
    );
    let files = out_files(tmp.path());
    assert!(!files.iter().any(|f| f.contains("4294967294")), "{files:?}");
    for i in 0..2 {
        let m = json(&out.join(format!("shard-{i}-of-2/sweep.json")));
        assert_eq!(m["shard"]["index"], i, "{m}");
    }
    let printed: String = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(&report))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(printed.contains("2 shards ran on one machine"), "{printed}");
    assert!(
        printed.contains("ratio to own block's baseline"),
        "{printed}"
    );
    assert!(out.join("report.md").exists());
}
