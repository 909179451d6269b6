//! A load split across agents (`load … --agent I/N --start-at T --out
//! DIR`) and `serverlab merge`: the split adds up to the whole load, the
//! merge adds histograms exactly, verification holds across agents, and
//! what makes a merge suspect is flagged.

use crate::support::*;
use nix::sys::signal::Signal;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A wall-clock instant `ahead` from now, as Unix seconds for --start-at.
fn start_in(ahead: Duration) -> String {
    let t = SystemTime::now().duration_since(UNIX_EPOCH).unwrap() + ahead;
    format!("{:.3}", t.as_secs_f64())
}

/// Start `serverlab load <protocol> <args> --agent I/N --out DIR` for each
/// agent `I` of `agents`, with `extra(I)` added to its flags.
fn spawn_agents(
    protocol: &str,
    args: &str,
    agents: &[usize],
    n: usize,
    dir: &Path,
    extra: impl Fn(usize) -> String,
) -> Vec<Child> {
    agents
        .iter()
        .map(|&i| {
            let flags = format!(
                "load {protocol} {args} --agent {i}/{n} --out {} {}",
                dir.display(),
                extra(i)
            );
            Command::new(BIN)
                .args(flags.split_whitespace())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start an agent")
        })
        .collect()
}

fn wait_all(children: Vec<Child>) -> Vec<Output> {
    children
        .into_iter()
        .map(|c| c.wait_with_output().expect("an agent ends"))
        .collect()
}

fn assert_ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// `serverlab merge DIR --format json`: its exit status and result.
fn merge(dir: &Path) -> (Output, Value) {
    let out = run(&["merge", dir.to_str().unwrap(), "--format", "json"]);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, v)
}

fn agent_json(dir: &Path, i: usize, n: usize) -> Value {
    let text = std::fs::read_to_string(dir.join(format!("agent-{i}-of-{n}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn ops(v: &Value) -> &Vec<Value> {
    v["results"]["operations"].as_array().unwrap()
}

/// Every latency value the agents recorded for `op` (from the intended
/// send time), in one histogram built from their HDR logs: its count,
/// and its value (µs) at each quantile of `qs`.
fn all_recorded(dir: &Path, n: usize, op: &str, qs: &[f64]) -> (u64, Vec<f64>) {
    let mut all = serverlab_load::record::new_histogram();
    for i in 0..n {
        let log = std::fs::read_to_string(dir.join(format!("agent-{i}-of-{n}.hlog"))).unwrap();
        let intervals = serverlab_load::merge::hlog::read(&log).unwrap();
        for iv in intervals.iter().filter(|iv| iv.tag == op) {
            all.add(&iv.histogram).unwrap();
        }
    }
    let at = qs
        .iter()
        .map(|&q| all.value_at_quantile(q) as f64 / 1000.0)
        .collect();
    (all.len(), at)
}

const BOARD: &str = "--posters 4 --readers 4 --warmup 1s --format json";

/// Four agents at a quarter of the rate each, started together, make
/// the whole load; the merged histogram is the sum of theirs, and its
/// percentiles are those of every value recorded, not an average.
#[test]
fn split_and_merge_exactly() {
    let _turn = heavy_turn();
    let server = ServerProc::start("board", &[]);
    let dir = tempfile::tempdir().unwrap();
    let (rate, secs) = (2000.0, 3.0);
    // Pipelined, so a reply late from a busy machine holds no request
    // back: what is sent is the schedules' doing alone (as the single
    // run's test of the schedule, load_openloop::the_schedule_is_kept).
    let args = format!(
        "--addr {} --rate 2000 --duration 3s --pipeline 32 {BOARD}",
        server.addr
    );
    let at = start_in(Duration::from_secs(3));
    let children = spawn_agents("board", &args, &[0, 1, 2, 3], 4, dir.path(), |_| {
        format!("--start-at {at}")
    });
    for (i, out) in wait_all(children).iter().enumerate() {
        assert_ok(out, &format!("agent {i}"));
    }
    let (out, merged) = merge(dir.path());
    assert_ok(&out, "merge");
    let r = &merged["results"];
    // Sent in the window and due in it: the warm-up's backlog, sent late
    // into the window by an agent a busy machine held back, was due
    // before it.
    let sent = r["schedule"]["sent_requests"].as_f64().unwrap();
    let backlog = r["schedule"]["backlog_requests"].as_f64().unwrap();
    let due = sent - backlog;
    // Never more than the schedule's; fewer by at most what was due in the
    // window's last moments and sent, late, after it closed.
    let late = rate * r["schedule"]["max_lag_us"].as_f64().unwrap() / 1e6;
    assert!(
        due <= 1.01 * rate * secs && due + late >= 0.99 * rate * secs,
        "merged requests sent {sent}, {backlog} of them the warm-up's backlog: want {} ± 1% \
         due in the window",
        rate * secs
    );
    let requests = r["requests"].as_f64().unwrap();
    assert!(requests >= 0.95 * sent, "{requests} answered of {sent}");
    assert_eq!(r["requested_rps"], rate);
    let agents: Vec<Value> = (0..4).map(|i| agent_json(dir.path(), i, 4)).collect();
    for a in &agents {
        let asked = a["results"]["requested_rps"].as_f64().unwrap();
        assert_eq!(asked, rate / 4.0, "each agent's share of the rate");
        assert!(a["results"]["agent"]["start_lag_ms"].as_f64().is_some());
    }
    for (k, op) in ops(&merged).iter().enumerate() {
        let name = op["name"].as_str().unwrap();
        let sum: u64 = agents
            .iter()
            .map(|a| ops(a)[k]["count"].as_u64().unwrap())
            .sum();
        assert_eq!(op["count"].as_u64().unwrap(), sum, "{name}: counts add up");
        if sum == 0 {
            continue;
        }
        let stats = ["p50", "p90", "p99", "p99_9", "max"];
        let (count, want) = all_recorded(dir.path(), 4, name, &[0.5, 0.9, 0.99, 0.999, 1.0]);
        assert_eq!(count, sum, "{name}: the logs hold every recorded value");
        for (stat, want) in stats.iter().zip(want) {
            let got = op["latency_us"][stat].as_f64().unwrap();
            assert_eq!(got, want, "{name} {stat}: the merged histogram's, exactly");
        }
        // Its p99's interval: the merged histogram's order statistics at
        // the ranks for the merged count — or, where an agent's latencies
        // correlated and its intervals were widened, for the effective
        // count the merge widened them to (too few of those: none).
        let effective = op["latency_us"]["ci95"]["effective_samples"].as_f64();
        let ranks = match effective {
            Some(e) => serverlab_load::certify::quantile::effective_ranks(sum, e, 0.99),
            None => serverlab_load::certify::quantile::ranks(sum, 0.99),
        };
        let ci = &op["latency_us"]["ci95"]["p99"];
        let Some((lo, hi)) = ranks else {
            assert!(
                ci.is_null(),
                "{name}: {effective:?} effective samples: {ci}"
            );
            continue;
        };
        let at = |k: u64| (k as f64 - 0.5) / sum as f64;
        let (_, bounds) = all_recorded(dir.path(), 4, name, &[at(lo), at(hi)]);
        assert_eq!(ci, &serde_json::json!(bounds), "{name}: p99's interval");
    }
    let lines = merged["results"]["merged"]["agents"].as_array().unwrap();
    assert_eq!(lines.len(), 4);
    // Four agents on this one machine had its cores, not four times them.
    let cores = |v: &Value| v["results"]["client_cpu"]["cores"].as_u64().unwrap();
    let one = agents.iter().map(cores).max().unwrap();
    assert_eq!(cores(&merged), one, "{}", r["client_cpu"]);
    let host = &agents[0]["environment"]["host"];
    assert!(host.as_str().is_some_and(|h| !h.is_empty()), "{host}");
    // Text, as a single run's, with a line per agent.
    let text_out = run(&["merge", dir.path().to_str().unwrap()]);
    let t = text(&text_out.stdout);
    assert!(
        t.starts_with("board load: ") && t.contains("agent 3: 2 clients"),
        "{t}"
    );
    merged_verdict(dir.path(), &merged, &t);
}

/// Issue 40: the merged result carries a verdict — the schedule judged
/// again on the agents' replies together, the sample size on the merged
/// intervals, the checks only an agent could decide carried from the
/// agents' own verdicts; an agent's failed check fails the merge's,
/// naming the agent.
fn merged_verdict(dir: &Path, merged: &Value, text_out: &str) {
    let v = &merged["results"]["validity"];
    let names: Vec<&str> = v["checks"]
        .as_array()
        .unwrap_or_else(|| panic!("no verdict: {v}"))
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "schedule",
            "arrivals",
            "stationarity",
            "independence",
            "sample_size",
            "client_bias"
        ],
        "{v}"
    );
    let check = |v: &Value, name: &str| {
        v["results"]["validity"]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .cloned()
            .unwrap()
    };
    let schedule = check(merged, "schedule");
    let detail = schedule["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("the 4 agents together reached "),
        "{schedule}"
    );
    assert!(schedule["passed"].is_boolean(), "{schedule}");
    // Constant arrivals: no agent decides it, nor does the merge.
    assert_eq!(check(merged, "arrivals")["passed"], Value::Null);
    let said = if v["certified"] == true {
        "  certified"
    } else {
        "  not certified:"
    };
    assert!(text_out.contains(said), "{text_out}");
    // One agent's run said not steady: so does the merge, naming it.
    let path = dir.join("agent-2-of-4.json");
    let mut agent: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for c in agent["results"]["validity"]["checks"]
        .as_array_mut()
        .unwrap()
    {
        if c["name"] == "stationarity" {
            c["passed"] = false.into();
            c["detail"] = "p99 rose from 1 ms in the first quarter to 9 ms in the last".into();
            c["fix"] = "find what changed during the run".into();
        }
    }
    std::fs::write(&path, agent.to_string()).unwrap();
    let (out, again) = merge(dir);
    assert_ok(&out, "merge");
    assert_eq!(again["results"]["validity"]["certified"], false);
    let c = check(&again, "stationarity");
    assert_eq!(c["passed"], false, "{c}");
    assert!(
        c["detail"]
            .as_str()
            .unwrap()
            .contains("agent 2: p99 rose from 1 ms in the first quarter to 9 ms in the last"),
        "{c}"
    );
    assert_eq!(c["fix"], "find what changed during the run");
}

/// A server stopped for a second in the middle of a four-agent run: every
/// agent and the merge see it, in the same wall-clock second.
/// Issue 29: a bucket load split into 4 agents against a pool of 4
/// threads. The bound's concurrency is the server's, not a sum of the
/// agents': min(16 connections, 4 server concurrency) = 4, as one run of
/// the whole load says (the merge said 16, and a rate four times the
/// bound, with the largest agent's mean delay).
#[test]
fn a_split_bucket_load_keeps_the_servers_bound() {
    let _turn = heavy_turn();
    let server = ServerProc::start(
        "bucket",
        &words("--strategy pool-locked --threads 4 --delay-mode sleep --delay-unit ms"),
    );
    let dir = tempfile::tempdir().unwrap();
    let args = format!(
        "--addr {} --delay 1-3 --delay-unit ms --delay-mode sleep --connections 16 \
         --duration 1s --server-concurrency 4 --keep-alive",
        server.addr
    );
    let at = start_in(Duration::from_secs(3));
    for (i, out) in wait_all(run_agents("bucket", &args, 4, dir.path(), &at))
        .iter()
        .enumerate()
    {
        assert_ok(out, &format!("agent {i}"));
    }
    let (out, merged) = merge(dir.path());
    assert_ok(&out, "merge");
    let b = &merged["results"]["bucket"];
    let bound = &b["bound"];
    assert_eq!(bound["concurrency"], 4, "{bound}");
    assert_eq!(
        bound["limited_by"], "min(16 client connections, 4 server concurrency)",
        "{bound}"
    );
    // The mean delay is the requests' mean over every agent: delay units
    // added over requests added, within the drawn range.
    let requests = merged["results"]["requests"].as_f64().unwrap();
    let units = b["delay_units"].as_f64().unwrap();
    let mean = b["mean_delay_units"].as_f64().unwrap();
    assert!((mean - units / requests).abs() < 1e-9, "{b}");
    assert!((1.0..=3.0).contains(&mean), "{b}");
    let rate = bound["rate_rps"].as_f64().unwrap();
    assert!((rate - 4.0 / (mean / 1e3)).abs() < 1e-6 * rate, "{bound}");
    // Four threads of 1–3 ms each cannot answer more than 4,000 a second.
    let throughput = merged["results"]["throughput_rps"].as_f64().unwrap();
    assert!(throughput <= 4000.0, "{throughput}");
}

#[test]
fn a_stall_seen_by_every_agent() {
    let _turn = heavy_turn();
    let server = ServerProc::start("board", &[]);
    let dir = tempfile::tempdir().unwrap();
    let args = format!("--addr {} --rate 2000 --duration 4s {BOARD}", server.addr);
    let lead = Duration::from_secs(3);
    let base = Instant::now();
    let at = start_in(lead);
    let children = spawn_agents("board", &args, &[0, 1, 2, 3], 4, dir.path(), |_| {
        format!("--start-at {at}")
    });
    // The window runs from 1 s after the start to 5 s: stop the server
    // for its second second (from 1.05 s to 2.05 s of the window), timed
    // from when the start was set, not from when the agents were spawned
    // (which takes a busy machine a while).
    let stop_at = base + lead + Duration::from_millis(2050);
    std::thread::sleep(stop_at.saturating_duration_since(Instant::now()));
    server.signal(Signal::SIGSTOP);
    std::thread::sleep(Duration::from_secs(1));
    server.signal(Signal::SIGCONT);
    for (i, out) in wait_all(children).iter().enumerate() {
        assert_ok(out, &format!("agent {i}"));
    }
    let (out, merged) = merge(dir.path());
    assert_ok(&out, "merge");
    let p99 = |v: &Value| {
        ops(v)
            .iter()
            .filter(|o| o["count"].as_u64() > Some(0))
            .map(|o| o["latency_us"]["p99"].as_f64().unwrap() / 1000.0)
            .fold(f64::MAX, f64::min)
    };
    // The second with the fewest replies: the gap.
    let gap = |v: &Value| {
        let per_second: Vec<u64> = v["results"]["per_second"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .collect();
        let k = (0..per_second.len())
            .min_by_key(|&k| per_second[k])
            .unwrap();
        (k, per_second)
    };
    let (merged_gap, series) = gap(&merged);
    assert_eq!(merged_gap, 1, "merged per second: {series:?}");
    assert!(series[1] * 4 < series[0], "merged per second: {series:?}");
    assert!(p99(&merged) >= 300.0, "merged p99 {} ms", p99(&merged));
    for i in 0..4 {
        let a = agent_json(dir.path(), i, 4);
        assert!(p99(&a) >= 300.0, "agent {i}: p99 {} ms", p99(&a));
        let (k, series) = gap(&a);
        assert_eq!(
            k, merged_gap,
            "agent {i}: the gap's second, per second {series:?}"
        );
    }
}

/// Three agents of each verifying load against one server: what each
/// owns is its own, so no agent sees another's writes as a mismatch.
#[test]
fn verification_holds_across_agents() {
    let _turn = heavy_turn();
    let loads = [
        ("board", "--posters 3 --readers 3 --duration 2s --warmup 0s --reader-mix read=60,count=30,list=10 --verify"),
        ("kv", "--sessions 12 --requests-per-session 20 --concurrency 3 --keys 60 --preload --verify --value-size 300"),
        ("resp", "--requests 3000 --connections 3 --keys 90 --pipeline 4 --preload --verify"),
    ];
    for (protocol, flags) in loads {
        let server = ServerProc::start(protocol, &[]);
        let dir = tempfile::tempdir().unwrap();
        let args = format!("--addr {} {flags}", server.addr);
        let at = start_in(Duration::from_secs(2));
        let children = spawn_agents(protocol, &args, &[0, 1, 2], 3, dir.path(), |_| {
            format!("--start-at {at}")
        });
        for (i, out) in wait_all(children).iter().enumerate() {
            assert_ok(out, &format!("{protocol} agent {i}"));
            assert!(
                text(&out.stdout).contains(", 0 mismatches"),
                "{protocol} agent {i}"
            );
        }
        let (out, merged) = merge(dir.path());
        assert_ok(&out, &format!("{protocol} merge"));
        let v = &merged["results"]["verification"];
        assert!(v["checked"].as_u64() > Some(0), "{protocol}: {v}");
        assert_eq!(v["mismatches"], 0, "{protocol}: {v}");
    }
}

/// Agents 0 to 2 of 4 under one --run-id, agent 2 started 200 ms after
/// the others: the missing agent is refused unless --allow-missing, and
/// then flagged, and each agent is flagged late exactly as its own file
/// says it started.
#[test]
fn merge_flags_late_agents_and_allows_missing_ones_if_told() {
    let _turn = heavy_turn();
    let server = ServerProc::start("board", &[]);
    let dir = tempfile::tempdir().unwrap();
    let args = format!(
        "--addr {} --rate 400 --duration 1s --run-id late-run {BOARD}",
        server.addr
    );
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let at = now + 2.0;
    // Agent 3 of 4 never runs.
    let children = spawn_agents("board", &args, &[0, 1, 2], 4, dir.path(), |i| match i {
        2 => format!("--start-at {:.3}", at + 0.2),
        _ => format!("--start-at {at:.3}"),
    });
    for (i, out) in wait_all(children).iter().enumerate() {
        assert_ok(out, &format!("agent {i}"));
    }
    let err = refused("agent 3 missing", dir.path());
    assert!(
        err.contains("agent-3-of-4.json: missing, 3 of 4 agents found")
            && err.contains("--allow-missing"),
        "{err}"
    );
    let (out, merged) = merge_with(dir.path(), &["--allow-missing"]);
    assert_ok(&out, "merge --allow-missing (flags warn, they do not fail)");
    let flags: Vec<String> = merged["results"]["merged"]["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    let has = |words: &[&str]| flags.iter().any(|f| words.iter().all(|w| f.contains(w)));
    assert!(has(&["missing", "3 of 4", "agent 3"]), "{flags:?}");
    assert!(!has(&["clock"]), "{flags:?}");
    // Agent 2 was told to start 200 ms after the others; a busy machine
    // may start any agent late besides. Each agent is flagged exactly as
    // its own file says it started: over 10 ms after the first agent's
    // window, or after its --start-at.
    let files: Vec<Value> = (0..3).map(|i| agent_json(dir.path(), i, 4)).collect();
    let agent = |v: &Value, key: &str| v["results"]["agent"][key].as_f64().unwrap();
    let first = files
        .iter()
        .map(|v| agent(v, "window_start_unix_s"))
        .fold(f64::INFINITY, f64::min);
    for (i, v) in files.iter().enumerate() {
        let after_first = (agent(v, "window_start_unix_s") - first) * 1e3;
        let lag = agent(v, "start_lag_ms");
        let me = format!("late: agent {i} started");
        assert_eq!(
            has(&[&me, "ms after the first"]),
            after_first > 10.0,
            "agent {i}: {after_first:.1} ms after the first: {flags:?}"
        );
        assert_eq!(
            has(&[&me, "after --start-at"]),
            lag > 10.0,
            "agent {i}: {lag:.1} ms after --start-at: {flags:?}"
        );
    }
    let t = text(&run(&["merge", "--allow-missing", dir.path().to_str().unwrap()]).stdout);
    assert!(
        t.contains("flag: missing") && t.contains("flag: late: agent"),
        "{t}"
    );
}

/// `serverlab merge DIR ARGS… --format json`: its exit status and result.
fn merge_with(dir: &Path, args: &[&str]) -> (Output, Value) {
    let mut all = vec!["merge", dir.to_str().unwrap(), "--format", "json"];
    all.extend(args);
    let out = run(&all);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, v)
}

/// `serverlab merge DIR` exits 1 with nothing on stdout: its stderr,
/// every line of it `serverlab: …`. `case`: what is wrong with DIR.
fn refused(case: &str, dir: &Path) -> String {
    let (out, _) = merge_with(dir, &[]);
    let err = text(&out.stderr);
    let flags = |v: Value| v["results"]["merged"]["flags"].to_string();
    let merged = serde_json::from_slice(&out.stdout).map_or(String::new(), flags);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{case}: merged, flags {merged}\n{err}"
    );
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(err.lines().all(|l| l.starts_with("serverlab: ")), "{err}");
    err
}

/// A copy of the agents' directory `from`, to make hostile.
fn copy_of(from: &Path) -> tempfile::TempDir {
    let to = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.path().join(e.file_name())).unwrap();
    }
    to
}

/// Rewrite the agent's JSON at `path` with `f`.
fn patch(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

/// Run agents `0..n` of a load, together, into `dir`, and wait for them.
fn run_agents(protocol: &str, args: &str, n: usize, dir: &Path, at: &str) -> Vec<Child> {
    let all: Vec<usize> = (0..n).collect();
    spawn_agents(protocol, args, &all, n, dir, |_| format!("--start-at {at}"))
}

/// What a cluster leaves beside a run: four board agents of the run
/// (`fresh`), an earlier run of the same load (`stale`, another start), a
/// 2-agent run (`two`) and a kv run (`kv`), each in its directory.
struct Runs {
    _dir: tempfile::TempDir,
    fresh: std::path::PathBuf,
    stale: std::path::PathBuf,
    two: std::path::PathBuf,
    kv: std::path::PathBuf,
}

impl Runs {
    /// Every run's agents, at once (the earlier run's window seconds
    /// after the others').
    fn run() -> Runs {
        let board = ServerProc::start("board", &[]);
        let kv = ServerProc::start("kv", &[]);
        let dir = tempfile::tempdir().unwrap();
        let [fresh, stale, two, kvs] = ["fresh", "stale", "two", "kv"].map(|d| dir.path().join(d));
        let flags = format!(
            "--addr {} --rate 400 --duration 1s --warmup 0s --posters 4 --readers 4 --format json",
            board.addr
        );
        let kv_flags = format!(
            "--addr {} --sessions 16 --requests-per-session 10 --concurrency 4 --keys 64 \
             --format json",
            kv.addr
        );
        let at = start_in(Duration::from_secs(2));
        let other = start_in(Duration::from_secs(5));
        let mut children = run_agents("board", &flags, 4, &fresh, &at);
        children.extend(run_agents("board", &flags, 4, &stale, &other));
        children.extend(run_agents("board", &flags, 2, &two, &at));
        children.extend(run_agents("kv", &kv_flags, 4, &kvs, &at));
        for (i, out) in wait_all(children).iter().enumerate() {
            assert_ok(out, &format!("agent process {i}"));
        }
        Runs {
            _dir: dir,
            fresh,
            stale,
            two,
            kv: kvs,
        }
    }
}

/// `agent-I-of-N.EXT`.
fn name(i: usize, n: usize, ext: &str) -> String {
    format!("agent-{i}-of-{n}.{ext}")
}

/// Agent `i` of `n`'s files from the run in `from`, into `to` (over its
/// own, if there).
fn take(from: &Path, to: &Path, i: usize, n: usize, exts: &[&str]) {
    for ext in exts {
        let f = name(i, n, ext);
        std::fs::copy(from.join(&f), to.join(&f)).unwrap();
    }
}

/// A hostile case: what it is, how the fresh run's copy is made so, and
/// the words the refusal must say.
type Case = (&'static str, fn(&Runs, &Path), &'static [&'static str]);

const CASES: &[Case] = &[
    (
        "an agent missing",
        |_, d| std::fs::remove_file(d.join(name(3, 4, "json"))).unwrap(),
        &["agent-3-of-4.json: missing", "--allow-missing"],
    ),
    (
        "an empty log",
        |_, d| std::fs::write(d.join(name(1, 4, "hlog")), "").unwrap(),
        &["agent-1-of-4.hlog: empty", "requests"],
    ),
    (
        "a kv agent's log",
        |r, d| take(&r.kv, d, 1, 4, &["hlog"]),
        &[
            "agent-1-of-4.hlog: line",
            "no operation of a board load",
            "another protocol",
        ],
    ),
    // Its intervals are not in this result's window.
    (
        "the earlier run's log",
        |r, d| take(&r.stale, d, 1, 4, &["hlog"]),
        &["agent-1-of-4.hlog", "another run"],
    ),
    (
        "counts that wrap",
        |_, d| {
            for i in [1, 2] {
                patch(&d.join(name(i, 4, "json")), |v| {
                    v["results"]["requests"] = u64::MAX.into()
                })
            }
        },
        &["agent-1-of-4.json: its requests", "2^64"],
    ),
    (
        "a renamed result",
        |_, d| {
            patch(&d.join(name(1, 4, "json")), |v| {
                v["results"]["agent"]["index"] = 2.into()
            })
        },
        &["agent-1-of-4.json: its result says agent 2 of 4, its name agent 1 of 4"],
    ),
    (
        "a kv agent's files",
        |r, d| take(&r.kv, d, 1, 4, &["json", "hlog"]),
        &[
            "agent-1-of-4.json: a kv load",
            "agent-0-of-4.json is a board load",
        ],
    ),
    (
        "a 2-agent run's files",
        |r, d| {
            for i in 0..2 {
                take(&r.two, d, i, 2, &["json", "hlog"])
            }
        },
        &[
            "agent-0-of-2.json: agent 0 of 2",
            "2-agent and a 4-agent run",
            "agent-1-of-2.json",
        ],
    ),
    // A stale agent 3 beside three fresh ones: it is named, not they.
    (
        "a stale agent",
        |r, d| take(&r.stale, d, 3, 4, &["json", "hlog"]),
        &["agent-3-of-4.json: of run", "agents of different runs"],
    ),
    (
        "other flags",
        |_, d| {
            patch(&d.join(name(1, 4, "json")), |v| {
                v["config"]["message_size"] = 64.into()
            })
        },
        &[
            "agent-1-of-4.json: run with other flags than",
            "message_size 64 vs 32",
        ],
    ),
    (
        "a file without a run id",
        |_, d| {
            patch(&d.join(name(2, 4, "json")), |v| {
                v["results"]["agent"]
                    .as_object_mut()
                    .unwrap()
                    .remove("run_id");
            })
        },
        &["agent-2-of-4.json: no run id", "cannot be checked"],
    ),
];

/// Four board agents of one run, and beside it what real clusters leave
/// around ([`Runs`]). Every file that cannot be merged with the run is
/// refused (exit 1), a line naming it and why, each file apart from the
/// run named alone; nothing is merged. (Each case merged, exit 0, before:
/// a missing agent silently, a log emptied or another protocol's leaving
/// an agent out of every percentile, wrapped counts, a renamed file, a kv
/// agent as board load, "6 of 4 agents", a stale agent making the fresh
/// ones "late".)
#[test]
fn merge_refuses_what_cannot_be_merged() {
    let _turn = heavy_turn();
    let runs = Runs::run();
    let (out, _) = merge(&runs.fresh);
    assert_ok(&out, "the fresh run merges");
    for (case, make, words) in CASES {
        let d = copy_of(&runs.fresh);
        make(&runs, d.path());
        let err = refused(case, d.path());
        assert!(
            words.iter().all(|w| err.contains(w)),
            "{case}: want {words:?}: {err}"
        );
        let files = if *case == "a 2-agent run's files" {
            2
        } else {
            1
        };
        assert_eq!(err.lines().count(), files, "{case}: {err}");
    }
}

/// The agent's clock moved by `delta_s`: its result's times and its
/// log's base time, as a machine whose clock is that far off writes them.
fn shift_clock(dir: &Path, i: usize, n: usize, delta_s: f64) {
    patch(&dir.join(format!("agent-{i}-of-{n}.json")), |v| {
        let a = &mut v["results"]["agent"];
        for key in ["started_unix_s", "window_start_unix_s"] {
            a[key] = (a[key].as_f64().unwrap() + delta_s).into();
        }
    });
    let log = dir.join(format!("agent-{i}-of-{n}.hlog"));
    let shifted: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| match l.strip_prefix("#[BaseTime: ") {
            Some(rest) => {
                let (t, tail) = rest.split_once(' ').unwrap();
                let t: f64 = t.parse().unwrap();
                format!("#[BaseTime: {:.3} {tail}", t + delta_s)
            }
            None => l.to_string(),
        })
        .collect();
    std::fs::write(&log, shifted.join("\n") + "\n").unwrap();
}

/// One agent whose clock says 1970 and one a year ahead (then ±10^12 s):
/// the merge runs in 1 GiB of address space, names both, and places
/// their seconds with the others'; nothing is lost. (Before: an abort
/// allocating 14 GB; 2.7 GB for the year ahead.)
#[test]
fn wrong_clocks_merge_in_bounded_memory() {
    let _turn = heavy_turn();
    let server = ServerProc::start("board", &[]);
    let dir = tempfile::tempdir().unwrap();
    let flags = format!(
        "--addr {} --rate 400 --duration 2s --warmup 0s --posters 4 --readers 4 --format json",
        server.addr
    );
    let at = start_in(Duration::from_secs(2));
    for (i, out) in wait_all(run_agents("board", &flags, 4, dir.path(), &at))
        .iter()
        .enumerate()
    {
        assert_ok(out, &format!("agent {i}"));
    }
    let (_, right) = merge(dir.path());
    let requests = right["results"]["requests"].as_u64().unwrap();
    // Agent 1's window moved to begin at `one` (Unix seconds), agent 2's
    // clock moved by `other`.
    for (one, other) in [(1000.0, 3.2e7), (-1e12, 1e12)] {
        let d = copy_of(dir.path());
        let start = agent_json(d.path(), 1, 4)["results"]["agent"]["window_start_unix_s"]
            .as_f64()
            .unwrap();
        shift_clock(d.path(), 1, 4, one - start);
        shift_clock(d.path(), 2, 4, other);
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit -v 1048576 && exec {BIN} merge {} --format json",
                d.path().display()
            ))
            .output()
            .unwrap();
        assert_ok(
            &out,
            &format!("merge under 1 GiB, clocks {one:+e} and {other:+e}"),
        );
        let merged: Value = serde_json::from_slice(&out.stdout).unwrap();
        let r = &merged["results"];
        assert_eq!(
            r["requests"].as_u64(),
            Some(requests),
            "no agent's load lost"
        );
        let seconds = r["per_second"].as_array().unwrap().len();
        assert!(seconds <= 4, "{seconds} merged seconds for a 2 s run");
        let flags = r["merged"]["flags"].to_string();
        assert!(
            flags.contains("clock: agent 1's window began -")
                && flags.contains("clock: agent 2's window began +"),
            "{flags}"
        );
        // (A busy machine may start an agent late, which is flagged as
        // such: not what this test is about.)
        assert!(!flags.contains("clock: agent 0"), "{flags}");
    }
}

/// Bad agents are usage errors that name the flag.
#[test]
fn bad_agents_are_usage_errors() {
    let board = |extra: &[&'static str]| {
        let mut a = vec!["load", "board", "--addr", "127.0.0.1:1"];
        a.extend(extra);
        a
    };
    usage_error(&board(&["--agent", "5/4"]), "--agent");
    usage_error(&board(&["--agent", "0/0"]), "--agent");
    usage_error(
        &board(&["--agent", "3/4", "--posters", "1", "--readers", "2"]),
        "at most 3 agents",
    );
    let search = board(&["--agent", "0/2", "--search", "p99<=1ms"]);
    usage_error(&search, "--search");
    usage_error(&search, "--scan");
    let out = Command::new(BIN)
        .args(board(&["--agent", "slurm"]))
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("SLURM_PROCID")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("--agent") && err.contains("SLURM_ARRAY_TASK_ID"),
        "{err}"
    );
    let out = Command::new(BIN)
        .args(board(&["--agent", "k8s"]))
        .env_remove("JOB_COMPLETION_INDEX")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("JOB_COMPLETION_INDEX"));
}

/// Under Slurm, the agent and its files come from the environment alone.
#[test]
fn slurm_agents_need_only_their_flags() {
    let _turn = heavy_turn();
    let server = ServerProc::start("board", &[]);
    let dir = tempfile::tempdir().unwrap();
    let at = start_in(Duration::from_secs(2));
    let children: Vec<Child> = (0..2)
        .map(|i| {
            Command::new(BIN)
                .args(["load", "board", "--addr", &server.addr.to_string()])
                .args(["--duration", "1s", "--agent", "slurm", "--start-at", &at])
                .args(["--out", dir.path().to_str().unwrap()])
                .env("SLURM_ARRAY_TASK_ID", i.to_string())
                .env("SLURM_ARRAY_TASK_COUNT", "2")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for out in wait_all(children) {
        assert_ok(&out, "a slurm agent");
    }
    let out = run(&["merge", dir.path().to_str().unwrap()]);
    assert_ok(&out, "merge");
    assert!(text(&out.stdout).contains("merged from 2 of 2 agents"));
}

/// A board server whose reads are stale: each READ answers the message
/// before the one asked for (the first message, for id 0); POST and
/// COUNT are right. Requests end with NUL or LF; replies with NUL.
fn stale_board(s: std::net::TcpStream) {
    let mut topics = std::collections::HashMap::new();
    answer_lines(s, |req| stale_reply(&mut topics, req));
}

fn stale_reply(
    topics: &mut std::collections::HashMap<Vec<u8>, Vec<Vec<u8>>>,
    req: &[u8],
) -> Vec<u8> {
    let split = |rest: &[u8]| {
        let hash = rest.iter().position(|&b| b == b'#').unwrap_or(rest.len());
        (
            rest[..hash].to_vec(),
            rest.get(hash + 1..).unwrap_or(&[]).to_vec(),
        )
    };
    if let Some(rest) = req.strip_prefix(b"POST@") {
        let (topic, message) = split(rest);
        let messages = topics.entry(topic).or_default();
        messages.push(message);
        return (messages.len() - 1).to_string().into_bytes();
    }
    if let Some(rest) = req.strip_prefix(b"READ@") {
        let (topic, id) = split(rest);
        let id: usize = String::from_utf8_lossy(&id).parse().unwrap_or(usize::MAX);
        let messages = topics.get(&topic).map(Vec::as_slice).unwrap_or_default();
        return match messages.get(id) {
            Some(_) => messages[id.saturating_sub(1)].clone(),
            None => Vec::new(),
        };
    }
    if let Some(topic) = req.strip_prefix(b"COUNT@") {
        return topics
            .get(topic)
            .map_or(0, Vec::len)
            .to_string()
            .into_bytes();
    }
    Vec::new()
}

/// Split across agents, verification still catches a broken server: a
/// stale read fails the agents that met it and shows in the merge.
#[test]
fn a_stale_read_is_caught_across_agents() {
    let addr = fake_server(stale_board);
    let dir = tempfile::tempdir().unwrap();
    let args = format!(
        "--addr {addr} --posters 3 --readers 3 --duration 1s --warmup 0s \
         --reader-mix read=100 --verify"
    );
    let at = start_in(Duration::from_secs(2));
    let children = spawn_agents("board", &args, &[0, 1, 2], 3, dir.path(), |_| {
        format!("--start-at {at}")
    });
    let outs = wait_all(children);
    assert!(
        outs.iter().any(|o| o.status.code() == Some(1)),
        "no agent failed: {}",
        text(&outs[0].stdout)
    );
    let (_, merged) = merge(dir.path());
    let v = &merged["results"]["verification"];
    assert!(v["mismatches"].as_u64() > Some(0), "{v}");
}

/// `serverlab merge DIR` in 1 GiB of address space, stopped after a
/// minute (a hang guard): its output.
fn merge_capped(dir: &Path) -> Output {
    Command::new("timeout")
        .arg("60")
        .arg("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 1048576 && exec {BIN} merge {} --format json",
            dir.display()
        ))
        .output()
        .unwrap()
}

/// `path` made a named pipe no one writes to (opening it to read waits
/// for ever).
fn fifo(path: &Path) {
    std::fs::remove_file(path).unwrap();
    let made = std::process::Command::new("mkfifo").arg(path).status();
    assert!(made.unwrap().success(), "mkfifo {}", path.display());
}

/// A hostile agent file: what it is, how one real agent's copy is made
/// so, and the words its refusal must say.
type Hostile = (&'static str, fn(&Path), &'static [&'static str]);

const HOSTILE: &[Hostile] = &[
    (
        "20,000 operation names",
        |d| {
            patch(&d.join(name(0, 1, "json")), |v| {
                let mut op = v["results"]["operations"][0].clone();
                op["histogram_us"] = Value::Array(Vec::new());
                let many: Vec<Value> = (0..20_000)
                    .map(|k| {
                        let mut op = op.clone();
                        op["name"] = format!("op{k}").into();
                        op
                    })
                    .collect();
                v["results"]["operations"] = many.into();
            })
        },
        &[
            "agent-0-of-1.json: operations 'op0', 'op1', 'op2' and 19997 more",
            "not a board load's (POST, READ, COUNT, LIST)",
        ],
    ),
    (
        "/dev/zero as the result",
        |d| {
            let json = d.join(name(0, 1, "json"));
            std::fs::remove_file(&json).unwrap();
            std::os::unix::fs::symlink("/dev/zero", json).unwrap();
        },
        &["agent-0-of-1.json: not a regular file"],
    ),
    (
        "a result past 256 MiB",
        |d| {
            let f = std::fs::OpenOptions::new()
                .append(true)
                .open(d.join(name(0, 1, "json")))
                .unwrap();
            f.set_len(257 << 20).unwrap();
        },
        &["agent-0-of-1.json: 269484032 bytes, past the 256 MiB"],
    ),
    (
        "/dev/zero as the log",
        |d| {
            let log = d.join(name(0, 1, "hlog"));
            std::fs::remove_file(&log).unwrap();
            std::os::unix::fs::symlink("/dev/zero", log).unwrap();
        },
        &["agent-0-of-1.hlog: not a regular file"],
    ),
    (
        "a named pipe as the result",
        |d| fifo(&d.join(name(0, 1, "json"))),
        &["agent-0-of-1.json: not a regular file"],
    ),
    (
        "a named pipe as the log",
        |d| fifo(&d.join(name(0, 1, "hlog"))),
        &["agent-0-of-1.hlog: not a regular file"],
    ),
    (
        "a log line without an end",
        |d| {
            let f = std::fs::OpenOptions::new()
                .append(true)
                .open(d.join(name(0, 1, "hlog")))
                .unwrap();
            let len = f.metadata().unwrap().len();
            f.set_len(len + (2 << 20)).unwrap();
        },
        &["agent-0-of-1.hlog: line", "longer than 1 MiB"],
    ),
];

/// Agent files no `load` wrote are refused before they are read whole or
/// allocated for: one with 20,000 operation names (each name was two
/// histograms, 264 KiB: an abort), /dev/zero as a result or a log (read
/// until out of memory), a result past the size cap, a log line without
/// an end. Each is refused (exit 1) in 1 GiB of address space, promptly,
/// in a line that quotes a few offenders, not all.
#[test]
fn hostile_agent_files_are_refused_before_they_are_allocated_for() {
    let server = ServerProc::start("board", &[]);
    let dir = tempfile::tempdir().unwrap();
    let flags = format!(
        "--addr {} --rate 200 --duration 1s --warmup 0s --posters 2 --readers 2 --format json",
        server.addr
    );
    let at = start_in(Duration::from_secs(1));
    for out in wait_all(run_agents("board", &flags, 1, dir.path(), &at)) {
        assert_ok(&out, "the agent");
    }
    assert_ok(&merge_capped(dir.path()), "the agent's own files merge");
    for (case, make, words) in HOSTILE {
        let d = copy_of(dir.path());
        make(d.path());
        let out = merge_capped(d.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{case}: {err}");
        assert!(
            words.iter().all(|w| err.contains(w)),
            "{case}: want {words:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{case}: {err}");
        assert!(err.len() < 500, "{case}: {} bytes: {err}", err.len());
    }
}
