//! The shipped deploy/slurm/*.sbatch, unchanged. Run by bash with a
//! task's SLURM_* variables and stub `serverlab` and `scontrol` programs
//! (the stub records the arguments it was given): any array numbering and
//! step gives shards and agents 0 to N − 1, an array that is not evenly
//! spaced and a number that is not a number stop the script before it
//! runs anything, and flags pass through as given. On a real one-node
//! Slurm cluster (deploy/slurm/local/cluster.sh start; .ci/run starts it;
//! ignored tests): load.sbatch as a 4-task array of agents against a local
//! board server, then the merge as a dependent job (the merged totals are
//! the agents' sums); sweep.sbatch as two shards numbered from 1, then the
//! report of both.

use crate::support::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A directory to run a script in, with stubs in `bin/`: `serverlab`
/// writes its arguments, NUL-separated, to `argv`; `scontrol show job`
/// says the array was submitted at 2026-01-01T12:00:00 (UTC).
struct Stubs(tempfile::TempDir);

/// 2026-01-01T12:00:00Z in Unix seconds.
const SUBMITTED: u64 = 1_767_268_800;

impl Stubs {
    fn new() -> Stubs {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let argv = tmp.path().join("argv");
        let stubs = [
            (
                "serverlab",
                format!("printf '%s\\0' \"$@\" > '{}'\n", argv.display()),
            ),
            (
                "scontrol",
                "echo \"JobId=$3 JobName=serverlab-load\"\n\
                 echo \"   SubmitTime=2026-01-01T12:00:00 EligibleTime=2026-01-01T12:00:00\"\n"
                    .into(),
            ),
        ];
        for (name, body) in stubs {
            let path = bin.join(name);
            std::fs::write(&path, format!("#!/usr/bin/env bash\n{body}")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Stubs(tmp)
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    /// `bash deploy/slurm/<script> ARGS` here, with only `env` and the
    /// stubs: its exit code, its stderr, and the arguments the stub
    /// `serverlab` was run with (None: it was not run).
    fn run(
        &self,
        script: &str,
        env: &[(String, String)],
        args: &[&str],
    ) -> (Option<i32>, String, Option<Vec<String>>) {
        let argv = self.path().join("argv");
        let _ = std::fs::remove_file(&argv);
        let out = Command::new("bash")
            .arg(repo().join("deploy/slurm").join(script))
            .args(args)
            .current_dir(self.path())
            .env_clear()
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", self.path().join("bin").display()),
            )
            .env("TZ", "UTC")
            .env("SERVERLAB", self.path().join("bin/serverlab"))
            .envs(env.iter().map(|(k, v)| (k, v)))
            .output()
            .expect("run bash");
        let ran = std::fs::read(&argv).ok().map(|bytes| {
            let args = String::from_utf8(bytes).unwrap();
            let args = args.strip_suffix('\0').unwrap_or(&args);
            args.split('\0').map(String::from).collect()
        });
        (out.status.code(), text(&out.stderr), ran)
    }
}

/// The SLURM_* variables of the task `id` of an array of `count` tasks
/// from `min` to `max` in steps of `step`, and `more`.
fn task(
    id: u32,
    (min, max, step): (u32, u32, u32),
    count: u32,
    more: &[(&str, &str)],
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = [
        ("SLURM_ARRAY_JOB_ID", "41".to_string()),
        ("SLURM_ARRAY_TASK_ID", id.to_string()),
        ("SLURM_ARRAY_TASK_MIN", min.to_string()),
        ("SLURM_ARRAY_TASK_MAX", max.to_string()),
        ("SLURM_ARRAY_TASK_STEP", step.to_string()),
        ("SLURM_ARRAY_TASK_COUNT", count.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    env.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    env
}

/// The value after `flag` in `args` (`--flag V` or `--flag=V`).
fn value_of<'a>(args: &'a [String], flag: &str) -> &'a str {
    let eq = format!("{flag}=");
    args.iter()
        .enumerate()
        .find_map(|(i, a)| match a.strip_prefix(&eq) {
            Some(v) => Some(v),
            None if a == flag => args.get(i + 1).map(String::as_str),
            None => None,
        })
        .unwrap_or_else(|| panic!("no {flag} in {args:?}"))
}

const SWEEP_ENV: [(&str, &str); 2] = [
    ("SERVERLAB_EXPERIMENT", "exp.toml"),
    ("SERVERLAB_OUT", "results"),
];
const LOAD_ENV: [(&str, &str); 2] = [
    ("SERVERLAB_ADDR", "server:7000"),
    ("SERVERLAB_OUT", "agents"),
];

/// Issue 29: `--array=1-4` (SLURM_ARRAY_TASK_MIN=1) gave task 4 the shard
/// "4/4" and shard 0 to no one; `5-8` and a step (`0-6:2`) likewise. Every
/// task's shard and agent is its place in the array, from 0.
#[test]
fn any_array_numbering_or_step_gives_shards_and_agents_from_zero() {
    let stubs = Stubs::new();
    for (min, max, step) in [(0, 3, 1), (1, 4, 1), (5, 8, 1), (0, 6, 2), (3, 12, 3)] {
        let ids = (min..=max).step_by(step as usize);
        for (place, id) in ids.enumerate() {
            let what = format!("--array={min}-{max}:{step}, task {id}");
            let env = task(id, (min, max, step), 4, &SWEEP_ENV);
            let (code, stderr, args) = stubs.run("sweep.sbatch", &env, &[]);
            assert_eq!(code, Some(0), "{what}: {stderr}");
            let args = args.unwrap_or_else(|| panic!("{what}: serverlab not run"));
            assert_eq!(args[..2], ["sweep", "exp.toml"], "{what}");
            assert_eq!(value_of(&args, "--shard"), format!("{place}/4"), "{what}");
            assert_eq!(
                value_of(&args, "--out"),
                format!("results/shard-{place}-of-4"),
                "{what}"
            );
            let env = task(id, (min, max, step), 4, &LOAD_ENV);
            let (code, stderr, args) = stubs.run("load.sbatch", &env, &[]);
            assert_eq!(code, Some(0), "{what}: {stderr}");
            let args = args.unwrap_or_else(|| panic!("{what}: serverlab not run"));
            assert_eq!(args[..2], ["load", "board"], "{what}");
            assert_eq!(value_of(&args, "--agent"), format!("{place}/4"), "{what}");
            assert_eq!(value_of(&args, "--addr"), "server:7000", "{what}");
            assert_eq!(
                value_of(&args, "--start-at"),
                (SUBMITTED + 10).to_string(),
                "{what}"
            );
        }
    }
}

/// An array that is not evenly spaced (`--array=1,2,7`) or a task that is
/// not one of the array's is refused, named, before anything runs.
#[test]
fn an_array_that_is_not_evenly_spaced_is_refused() {
    let stubs = Stubs::new();
    for script in ["sweep.sbatch", "load.sbatch"] {
        let env = task(7, (1, 7, 1), 3, &[SWEEP_ENV, LOAD_ENV].concat());
        let (code, stderr, args) = stubs.run(script, &env, &[]);
        assert_eq!(code, Some(2), "{script}: {stderr}");
        assert!(args.is_none(), "{script} ran {args:?}");
        assert!(stderr.contains("not evenly spaced"), "{script}: {stderr}");
        assert!(stderr.contains("--array=A-B:S"), "{script}: {stderr}");
        let env = task(5, (0, 6, 2), 4, &[SWEEP_ENV, LOAD_ENV].concat());
        let (code, stderr, args) = stubs.run(script, &env, &[]);
        assert_eq!(code, Some(2), "{script}: {stderr}");
        assert!(args.is_none(), "{script} ran {args:?}");
        assert!(stderr.contains("task 5 is not one"), "{script}: {stderr}");
    }
}

/// Issue 29: `SERVERLAB_START_DELAY='PATH[$(touch x)0]+5'` ran `touch x`
/// inside `$(( ))`, and the script went on to start the load with an empty
/// --start-at. Every number the scripts compute with is checked first: a
/// value that is not a whole number stops the script, named, before
/// anything runs.
#[test]
fn a_number_that_is_not_a_whole_number_stops_the_script_before_it_runs_anything() {
    let stubs = Stubs::new();
    let evil = "PATH[$(touch x)0]+5";
    let cases = [
        ("load.sbatch", "SERVERLAB_START_DELAY", evil),
        ("load.sbatch", "SERVERLAB_START_DELAY", "5s"),
        ("load.sbatch", "SERVERLAB_START_AT", evil),
        ("load.sbatch", "SERVERLAB_START_AT", "1e9"),
        ("load.sbatch", "SLURM_ARRAY_TASK_ID", evil),
        ("load.sbatch", "SLURM_ARRAY_TASK_MIN", ""),
        ("load.sbatch", "SERVERLAB_METRICS_PORT", evil),
        ("load.sbatch", "SERVERLAB_METRICS_PORT", "9470x"),
        ("load.sbatch", "SERVERLAB_SERVER_METRICS_PORT", ":9464"),
        ("sweep.sbatch", "SLURM_ARRAY_TASK_ID", evil),
        ("sweep.sbatch", "SLURM_ARRAY_TASK_STEP", "-2"),
        ("sweep.sbatch", "SLURM_ARRAY_TASK_COUNT", "four"),
    ];
    for (script, name, value) in cases {
        let mut env = task(1, (1, 4, 1), 4, &[SWEEP_ENV, LOAD_ENV].concat());
        env.retain(|(k, _)| k != name);
        env.push((name.into(), value.into()));
        let (code, stderr, args) = stubs.run(script, &env, &[]);
        let what = format!("{script} {name}={value:?}");
        assert_eq!(code, Some(2), "{what}: {stderr}");
        assert!(args.is_none(), "{what}: ran {args:?}");
        assert!(!stubs.path().join("x").exists(), "{what}: ran `touch x`");
        assert!(
            stderr.contains(&format!("{name} must be a whole number")),
            "{what}: {stderr}"
        );
    }
}

/// Issue 31: with SERVERLAB_METRICS_PORT each agent serves its counters
/// (`--metrics 0.0.0.0:PORT`) and writes a file_sd targets file naming its
/// node and port; with SERVERLAB_SERVER_METRICS_PORT task 0 names the
/// server's (SERVERLAB_ADDR's host). Without them: neither.
#[test]
fn a_metrics_port_serves_each_agents_metrics_and_names_it_for_prometheus() {
    let stubs = Stubs::new();
    let ports = [
        ("SERVERLAB_METRICS_PORT", "9470"),
        ("SERVERLAB_SERVER_METRICS_PORT", "9464"),
        ("SLURMD_NODENAME", "node3"),
    ];
    let targets = stubs.path().join("agents/targets");
    for (id, place) in [(1, 0), (2, 1)] {
        let env = task(id, (1, 4, 1), 4, &[LOAD_ENV.as_slice(), &ports].concat());
        let (code, stderr, args) = stubs.run("load.sbatch", &env, &[]);
        assert_eq!(code, Some(0), "task {id}: {stderr}");
        let args = args.unwrap_or_else(|| panic!("task {id}: serverlab not run"));
        assert_eq!(value_of(&args, "--metrics"), "0.0.0.0:9470", "{args:?}");
        assert_eq!(value_of(&args, "--agent"), format!("{place}/4"));
        let agent = json(&targets.join(format!("agent-{place}.json")));
        assert_eq!(
            agent,
            serde_json::json!([{
                "targets": ["node3:9470"],
                "labels": {"role": "load", "slurm_job": "41", "slurm_task": place.to_string()}
            }])
        );
    }
    let server = json(&targets.join("server.json"));
    assert_eq!(
        server,
        serde_json::json!([{
            "targets": ["server:9464"],
            "labels": {"role": "server", "slurm_job": "41"}
        }])
    );
    let mut names: Vec<String> = std::fs::read_dir(&targets)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["agent-0.json", "agent-1.json", "server.json"]);

    // SERVERLAB_TARGETS puts them elsewhere; a port out of range stops it.
    let elsewhere = [("SERVERLAB_TARGETS", "sd"), ports[0]];
    let env = task(1, (1, 4, 1), 4, &[LOAD_ENV.as_slice(), &elsewhere].concat());
    let (code, stderr, _) = stubs.run("load.sbatch", &env, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stubs.path().join("sd/agent-0.json").exists());
    for port in ["0", "65536"] {
        let bad = [("SERVERLAB_METRICS_PORT", port)];
        let env = task(1, (1, 4, 1), 4, &[LOAD_ENV.as_slice(), &bad].concat());
        let (code, stderr, args) = stubs.run("load.sbatch", &env, &[]);
        assert_eq!(code, Some(2), "{port}: {stderr}");
        assert!(args.is_none(), "{port}: ran {args:?}");
        assert!(
            stderr.contains("SERVERLAB_METRICS_PORT must be a port"),
            "{stderr}"
        );
    }

    // Without a port, no --metrics and no targets.
    let stubs = Stubs::new();
    let env = task(1, (1, 4, 1), 4, &LOAD_ENV);
    let (code, stderr, args) = stubs.run("load.sbatch", &env, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!args.unwrap().iter().any(|a| a.starts_with("--metrics")));
    assert!(!stubs.path().join("agents/targets").exists());
}

/// `prometheus.sh TARGETS` prints a configuration that promtool accepts,
/// with the targets files load.sbatch wrote (promtool reads them too, and
/// fails on one that is not a targets file).
#[test]
#[ignore = "needs prometheus (promtool); apt-get install prometheus; run: cargo test --workspace -- --ignored"]
fn the_slurm_prometheus_configuration_and_its_targets_pass_promtool() {
    let stubs = Stubs::new();
    let ports = [
        ("SERVERLAB_METRICS_PORT", "9470"),
        ("SERVERLAB_SERVER_METRICS_PORT", "9464"),
    ];
    for id in 0..2 {
        let env = task(id, (0, 1, 1), 2, &[LOAD_ENV.as_slice(), &ports].concat());
        let (code, stderr, _) = stubs.run("load.sbatch", &env, &[]);
        assert_eq!(code, Some(0), "{stderr}");
    }
    let config = stubs.path().join("prometheus.yml");
    let out = Command::new("bash")
        .arg(repo().join("deploy/slurm/prometheus.sh"))
        .arg("agents/targets")
        .current_dir(stubs.path())
        .output()
        .expect("run bash");
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::write(&config, &out.stdout).unwrap();
    let yaml = text(&out.stdout);
    let abs = stubs.path().join("agents/targets").canonicalize().unwrap();
    assert!(
        yaml.contains(&format!("'{}/*.json'", abs.display())),
        "{yaml}"
    );
    let check = || {
        Command::new("promtool")
            .args(["check", "config"])
            .arg(&config)
            .output()
            .expect("promtool is not installed: apt-get install prometheus (.ci/run installs it)")
    };
    let out = check();
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{yaml}\n{said}");
    // promtool reads the targets files: a broken one fails the check.
    std::fs::write(
        abs.join("broken.json"),
        "[{\"targets\": [\"x:1\"], \"label\": {}}]",
    )
    .unwrap();
    let out = check();
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        !out.status.success(),
        "a broken targets file passed: {said}"
    );
    // And a scrape interval that is not one stops the script.
    let out = Command::new("bash")
        .arg(repo().join("deploy/slurm/prometheus.sh"))
        .arg("agents/targets")
        .env("SERVERLAB_SCRAPE_INTERVAL", "1s\n  evil: x")
        .current_dir(stubs.path())
        .output()
        .expect("run bash");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("SERVERLAB_SCRAPE_INTERVAL"));
}

/// Issue 29: SERVERLAB_FLAGS was split and globbed unquoted (`--mix get=?`
/// matched the files `get=1` …), and a value with a space could not be
/// passed. Flags are split at blanks and never globbed; a flags file
/// passes one argument per line as written.
#[test]
fn flags_pass_as_given_unglobbed_and_a_value_with_a_space_through_the_flags_file() {
    let stubs = Stubs::new();
    for name in ["get=1", "get=2", "put=7x", "flag-a"] {
        std::fs::write(stubs.path().join(name), "").unwrap();
    }
    std::fs::write(
        stubs.path().join("flags"),
        "--description\nthree spaced words\n\n--mix\nput=* get=[12]\n",
    )
    .unwrap();
    let flags = [
        ("SERVERLAB_FLAGS", "--mix get=?  --x\tflag-*"),
        ("SERVERLAB_FLAGS_FILE", "flags"),
    ];
    let want = [
        "--mix",
        "get=?",
        "--x",
        "flag-*",
        "--description",
        "three spaced words",
        "--mix",
        "put=* get=[12]",
    ];
    for (script, env) in [("sweep.sbatch", SWEEP_ENV), ("load.sbatch", LOAD_ENV)] {
        let env = task(2, (1, 4, 1), 4, &[env.as_slice(), &flags].concat());
        let (code, stderr, args) = stubs.run(script, &env, &[]);
        assert_eq!(code, Some(0), "{script}: {stderr}");
        let args = args.unwrap_or_else(|| panic!("{script}: serverlab not run"));
        assert_eq!(args[args.len() - want.len()..], want, "{script}: {args:?}");
        // A flags file that is not there stops the script.
        let mut env = env;
        env.push(("SERVERLAB_FLAGS_FILE".into(), "no-such-file".into()));
        let (code, stderr, args) = stubs.run(script, &env, &[]);
        assert_eq!(code, Some(2), "{script}: {stderr}");
        assert!(args.is_none(), "{script}: ran {args:?}");
        assert!(
            stderr.contains("SERVERLAB_FLAGS_FILE"),
            "{script}: {stderr}"
        );
    }
}

/// The report and merge steps pass what follows the directory on
/// (`report DIR --allow-missing`).
#[test]
fn the_report_and_merge_steps_pass_their_flags_on() {
    let stubs = Stubs::new();
    let dir = stubs.path().join("run");
    std::fs::create_dir_all(dir.join("shard-0-of-2")).unwrap();
    std::fs::create_dir_all(dir.join("shard-1-of-2")).unwrap();
    let (code, stderr, args) =
        stubs.run("sweep.sbatch", &[], &["report", "run", "--allow-missing"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        args.unwrap(),
        [
            "report",
            "run/shard-0-of-2",
            "run/shard-1-of-2",
            "--allow-missing"
        ]
    );
    let (code, stderr, args) = stubs.run("load.sbatch", &[], &["merge", "run", "--allow-missing"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        args.unwrap(),
        [
            "merge",
            "run",
            "--json",
            "run/merged.json",
            "--allow-missing"
        ]
    );
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
    let ops = |r: &serde_json::Value| {
        let mut v = op_counts(r);
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

/// The shipped sweep.sbatch, unchanged: two shards as an array job
/// numbered from 1 (`--array=1-2%1`: shards 0/2 and 1/2), then the report of
/// both as a dependent job.
#[test]
#[ignore = "needs a Slurm cluster (apt-get install slurm-wlm munge; deploy/slurm/local/cluster.sh start); run: cargo test --workspace -- --ignored"]
fn the_shipped_sweep_sbatch_runs_two_shards_and_reports_them() {
    need_cluster();
    let tmp = tempfile::tempdir().unwrap();
    let experiment = tmp.path().join("exp.toml");
    write_small_experiment(&experiment, "slurm");
    let out = tmp.path().join("sweep");
    let env = [
        ("SERVERLAB", BIN),
        ("SERVERLAB_EXPERIMENT", experiment.to_str().unwrap()),
        ("SERVERLAB_OUT", out.to_str().unwrap()),
    ];
    let script = repo().join("deploy/slurm/sweep.sbatch");
    let script = script.to_str().unwrap();
    // One node: its shards one after another (`%1`). Two at once would
    // share its CPUs, and the second is refused (issue 39).
    let job = sbatch(tmp.path(), &env, &["--array=1-2%1", script]);
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
