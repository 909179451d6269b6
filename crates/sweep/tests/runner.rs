//! The runner against a stand-in for the serverlab binary (a shell script:
//! `serve` announces an address and waits for SIGTERM, `load` writes a
//! result whose throughput comes from a list per point), so run order,
//! resume and adaptive repetitions are checked on fixed numbers, not on
//! timing.

use serverlab_sweep::{
    Experiment, Observer, Options, Plan, Point, RunRecord, RunRef, Schedule, Summary, SweepError,
};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const FAKE: &str = r#"#!/bin/sh
dir="$(dirname "$0")"
cmd="$1"; shift
arg() {
  want="--$1"; shift
  while [ $# -gt 0 ]; do
    if [ "$1" = "$want" ]; then echo "$2"; return; fi
    shift
  done
}
case "$cmd" in
serve)
  stats=$(arg stats-json "$@")
  trap 'echo "{}" > "$stats"; exit 0' TERM
  echo "listening on 127.0.0.1:9"
  while :; do sleep 0.02; done ;;
load)
  json=$(arg json "$@"); posters=$(arg posters "$@")
  n=$(cat "$dir/count-$posters" 2>/dev/null || echo 0); n=$((n+1))
  echo "$n" > "$dir/count-$posters"
  echo "$posters" >> "$dir/order"
  t=$(sed -n "${n}p" "$dir/throughput-$posters")
  r=1000; [ "$t" = "0.0" ] && r=0
  sed "s/THROUGHPUT/$t/; s/REQUESTS/$r/" "$dir/load-template.json" > "$json" ;;
esac
"#;

/// A serverlab-load/1 result; the script fills in THROUGHPUT, and
/// REQUESTS: 1000, or 0 with a throughput of 0 (a load that measured
/// nothing).
const LOAD_TEMPLATE: &str = r#"{"schema":"serverlab-load/1","protocol":"board","load_model":"closed-loop",
"config":{},"environment":{"serverlab_version":"0","os":"linux","arch":"x86_64","kernel":"k",
"cores_online":2,"client_cpus":[],"started_unix_s":0},
"results":{"duration_s":1.0,"requests":REQUESTS,"throughput_rps":THROUGHPUT,"operations":[],
"per_second":[],"threads":[],"late_replies":0,"errors":[],
"verification":{"enabled":false,"checked":0,"mismatches":0,"examples":[]},
"client_cpu":{"user_s":0.1,"system_s":0.1,"cores":1,"utilization":0.2,"bottleneck":false},
"extra":{}}}"#;

/// A directory with the fake binary and, per `posters` value, the
/// throughputs its successive loads report.
fn fake(lists: &[(u32, Vec<f64>)]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let exe = bin.join("serverlab");
    std::fs::write(&exe, FAKE).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(bin.join("load-template.json"), LOAD_TEMPLATE).unwrap();
    for (posters, values) in lists {
        let lines: Vec<String> = values.iter().map(|v| format!("{v:.1}")).collect();
        std::fs::write(
            bin.join(format!("throughput-{posters}")),
            lines.join("\n") + "\n",
        )
        .unwrap();
    }
    (tmp, exe)
}

fn plan(extra: &str) -> Plan {
    let text = format!(
        "protocol = \"board\"\n{extra}\n[load]\nposters = [1, 2, 3]\n\
         [baseline.server]\nprotocol = \"echo\"\n[baseline.load]\nposters = 9\n"
    );
    Plan::new(Experiment::parse("t.toml", &text).unwrap()).unwrap()
}

/// Twice the relative standard error: near enough a 95% CI for a test.
fn precision(v: &[f64]) -> Option<f64> {
    let n = v.len() as f64;
    if v.len() < 2 {
        return None;
    }
    let mean = v.iter().sum::<f64>() / n;
    let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    Some(2.0 * sd / mean / n.sqrt())
}

/// Counts runs, and asks to stop after `stop_after` of them.
struct Watch {
    finished: usize,
    stop_after: Option<usize>,
    stop: Arc<AtomicBool>,
    extended: Vec<(u32, Vec<String>)>,
}

impl Observer for Watch {
    fn planned(&mut self, _: &Plan, _: &Schedule, _: &[&Point], _: usize) {}
    fn started(&mut self, _: RunRef<'_>) {}
    fn finished(&mut self, _: RunRef<'_>, _: &RunRecord, _: Option<f64>) {
        self.finished += 1;
        if Some(self.finished) == self.stop_after {
            self.stop.store(true, Ordering::Relaxed);
        }
    }
    fn extended(&mut self, block: u32, added: &[(&Point, Option<f64>)]) {
        let slugs = added.iter().map(|(p, _)| p.slug.clone()).collect();
        self.extended.push((block, slugs));
    }
}

fn sweep(
    plan: &Plan,
    exe: &Path,
    out: &Path,
    force: bool,
    stop_after: Option<usize>,
) -> (Result<Summary, SweepError>, Watch) {
    let stop = Arc::new(AtomicBool::new(false));
    let opts = Options {
        exe: exe.to_path_buf(),
        out: out.to_path_buf(),
        force,
        interrupted: stop.clone(),
        precision,
        shard: None,
    };
    let mut watch = Watch {
        finished: 0,
        stop_after,
        stop,
        extended: vec![],
    };
    let result = serverlab_sweep::run(plan, &opts, &mut watch);
    (result, watch)
}

/// The `posters` value of each load the fake ran, in order.
fn calls(exe: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(exe.parent().unwrap().join("order")).unwrap_or_default();
    text.lines().map(String::from).collect()
}

/// The order the schedule asks for, as the fake's `posters` values.
fn expected(schedule: &Schedule) -> Vec<String> {
    schedule
        .runs()
        .map(|(_, _, slug)| match slug {
            "baseline" => "9".to_string(),
            s => s.trim_start_matches("posters=").to_string(),
        })
        .collect()
}

fn constant(v: f64) -> Vec<f64> {
    vec![v; 20]
}

#[test]
fn runs_interleave_in_the_recorded_order_and_a_stopped_sweep_resumes_it() {
    let (tmp, exe) = fake(&[
        (1, constant(100.0)),
        (2, constant(200.0)),
        (3, constant(300.0)),
        (9, constant(900.0)),
    ]);
    let out = tmp.path().join("out");
    let p = plan("repetitions = 3");

    let (result, _) = sweep(&p, &exe, &out, false, Some(5));
    assert!(matches!(result, Err(SweepError::Interrupted)), "{result:?}");
    let schedule = Schedule::read(&out).expect("schedule.json is written before the first run");
    assert_eq!(schedule.blocks.len(), 3);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(manifest["order"], "random");
    assert_eq!(manifest["seed"], schedule.seed);
    let want = expected(&schedule);
    assert_eq!(
        calls(&exe),
        want[..5],
        "the first five runs follow the schedule"
    );
    // Interleaved: every block runs every point once before the next starts.
    for (b, block) in want.chunks(4).enumerate() {
        let mut sorted = block.to_vec();
        sorted.sort();
        assert_eq!(sorted, ["1", "2", "3", "9"], "block {}", b + 1);
    }

    // Resumed: the same schedule (the seed was recorded), the rest of it.
    let (result, _) = sweep(&p, &exe, &out, false, None);
    let summary = result.unwrap();
    assert_eq!((summary.ran, summary.skipped), (7, 5));
    assert_eq!(Schedule::read(&out).unwrap(), schedule);
    assert_eq!(calls(&exe), want, "resumed in the recorded order");
    // Each run records its place in that order.
    for (sequence, repetition, slug) in schedule.runs() {
        let path = out.join(format!("runs/{slug}/rep-{repetition}/run.json"));
        let record = RunRecord::read(&path).unwrap();
        assert_eq!(record.sequence, sequence, "{}", path.display());
        assert!(
            record.machine.is_some(),
            "{}: no machine state",
            path.display()
        );
    }

    // --force: every run again, in a freshly seeded order.
    let (result, _) = sweep(&p, &exe, &out, true, None);
    assert_eq!(result.unwrap().ran, 12);
    let again = Schedule::read(&out).unwrap();
    assert_ne!(again.seed, schedule.seed);
    assert_eq!(calls(&exe)[12..], expected(&again));
}

#[test]
fn a_target_adds_repetitions_until_met_or_max_repetitions() {
    let steady = vec![1000.0, 1100.0, 900.0]
        .into_iter()
        .chain(std::iter::repeat_n(1000.0, 17))
        .collect();
    let wild = [500.0, 1500.0].repeat(10);
    let (tmp, exe) = fake(&[
        (1, constant(1000.0)),
        (2, steady),
        (3, wild),
        (9, constant(900.0)),
    ]);
    let out = tmp.path().join("out");
    let p =
        plan("repetitions = 3\norder = \"round-robin\"\ntarget_ci = \"5%\"\nmax_repetitions = 8");

    let (result, watch) = sweep(&p, &exe, &out, false, None);
    let summary = result.unwrap();
    // posters=1 is exact after 3; posters=2 (1000, 1100, 900, then 1000s)
    // reaches ±5% at 7 (2·sd/mean/√n = 0.0436); posters=3 never does.
    let reps = |slug: &str| {
        (1..=20)
            .filter(|k| out.join(format!("runs/{slug}/rep-{k}/run.json")).exists())
            .count()
    };
    assert_eq!(reps("posters=1"), 3);
    assert_eq!(reps("posters=2"), 7);
    assert_eq!(reps("posters=3"), 8);
    assert_eq!(reps("baseline"), 8, "the baseline runs in every block");
    let schedule = Schedule::read(&out).unwrap();
    assert_eq!(schedule.blocks[3], ["baseline", "posters=2", "posters=3"]);
    assert_eq!(schedule.blocks[7], ["baseline", "posters=3"]);
    assert_eq!(watch.extended.len(), 5);
    assert_eq!(watch.extended[0].0, 4);
    assert_eq!(calls(&exe), expected(&schedule));
    assert_eq!(summary.unresolved.len(), 1, "{:?}", summary.unresolved);
    let u = &summary.unresolved[0];
    assert_eq!((u.slug.as_str(), u.repetitions, u.ok), ("posters=3", 8, 8));
    assert!(
        u.why().contains("after 8 repetitions (max_repetitions)"),
        "{}",
        u.why()
    );
    assert_eq!(summary.ran, 3 * 4 + 4 * 3 + 2);

    // Run again: nothing to add, nothing redone.
    let (result, _) = sweep(&p, &exe, &out, false, None);
    let again = result.unwrap();
    assert_eq!((again.ran, again.skipped), (0, 26));
}

/// A load that exits well but measured no request (a server or machine
/// stalled for its whole window) is a failed run, not an "ok" one with a
/// throughput of 0: the sweep says why and goes on, and a resumed sweep
/// runs it again.
#[test]
fn a_load_that_measured_no_request_fails_its_run_and_is_run_again() {
    let (tmp, exe) = fake(&[
        (1, constant(100.0)),
        (2, vec![0.0, 200.0]),
        (3, constant(300.0)),
        (9, constant(900.0)),
    ]);
    let out = tmp.path().join("out");
    let p = plan("repetitions = 1");

    let (result, _) = sweep(&p, &exe, &out, false, None);
    let summary = result.unwrap();
    assert_eq!((summary.ran, summary.failed), (4, 1), "{summary:?}");
    let record = RunRecord::read(&out.join("runs/posters=2/rep-1/run.json")).unwrap();
    assert_eq!(record.status, serverlab_sweep::Status::Failed);
    let error = record.error.unwrap_or_default();
    assert!(error.contains("measured 0 requests"), "{error}");
    assert_eq!(record.load.exit_code, Some(0));

    // Resumed: only the failed run again; now it measured something.
    let (result, _) = sweep(&p, &exe, &out, false, None);
    let again = result.unwrap();
    assert_eq!((again.ran, again.skipped, again.failed), (1, 3, 0));
    let record = RunRecord::read(&out.join("runs/posters=2/rep-1/run.json")).unwrap();
    assert_eq!(record.status, serverlab_sweep::Status::Ok, "{record:?}");
}
