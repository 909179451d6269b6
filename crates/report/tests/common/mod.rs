//! Helpers the report's tests share: copies of the hand-made fixtures to
//! edit, and a CAPS-sized sweep (5 × 5 points, 4 repetitions, a baseline)
//! written from the fixtures' files with chosen numbers.

#![allow(dead_code)]

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A copy of a fixture in a temporary directory (a report writes into it).
pub fn copy(name: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixture(name), tmp.path());
    tmp
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

pub fn write_json(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

/// Give one run of a copied fixture another throughput.
pub fn set_throughput(dir: &Path, slug: &str, rep: u32, value: f64) {
    let path = dir.join(format!("runs/{slug}/rep-{rep}/load.json"));
    let mut load = read_json(&path);
    load["results"]["throughput_rps"] = value.into();
    write_json(&path, &load);
}

/// More repetitions of `slug` in a copy of fixture a (the manifest then
/// asks every point for as many): copies of its rep 1 at these throughputs.
pub fn add_repetitions(dir: &Path, slug: &str, throughputs: &[f64]) {
    let manifest_path = dir.join("sweep.json");
    let mut m = read_json(&manifest_path);
    let first = m["repetitions"].as_u64().unwrap() as usize + 1;
    m["repetitions"] = (first - 1 + throughputs.len()).into();
    write_json(&manifest_path, &m);
    for (k, t) in throughputs.iter().enumerate() {
        let rep = first + k;
        copy_dir(
            &dir.join(format!("runs/{slug}/rep-1")),
            &dir.join(format!("runs/{slug}/rep-{rep}")),
        );
        set_throughput(dir, slug, rep as u32, *t);
    }
}

/// Add a baseline to a copy of fixture a: the same flags as `posters=1`,
/// run in each of its 3 blocks at these throughputs.
pub fn add_baseline(dir: &Path, throughputs: [f64; 3]) {
    let manifest_path = dir.join("sweep.json");
    let mut m = read_json(&manifest_path);
    let mut point = m["points"][0].clone();
    point["slug"] = "baseline".into();
    point["index"] = 2.into();
    point["params"] = json!({});
    m["baseline"] = point;
    write_json(&manifest_path, &m);
    for (k, t) in throughputs.iter().enumerate() {
        let rep = k + 1;
        let from = dir.join(format!("runs/posters=1/rep-{rep}"));
        let to = dir.join(format!("runs/baseline/rep-{rep}"));
        copy_dir(&from, &to);
        set_throughput(dir, "baseline", rep as u32, *t);
    }
}

/// Record a machine state in one run's `run.json`: other processes used
/// `others_cores` cores on average over 2 s.
pub fn set_machine(dir: &Path, slug: &str, rep: u32, others_cores: f64) {
    let path = dir.join(format!("runs/{slug}/rep-{rep}/run.json"));
    let mut run = read_json(&path);
    run["machine"] = json!({
        "cores": 2, "wall_s": 2.0,
        "loadavg_start": [1.5, 1.0, 0.5], "loadavg_end": [2.5, 1.2, 0.6],
        "machine_cpu_s": 2.0 + 2.0 * others_cores, "own_cpu_s": 2.0,
        "others_cpu_s": 2.0 * others_cores, "steal_s": 0.0
    });
    write_json(&path, &run);
}

/// A CAPS-sized sweep in `dir`: posters 1–5 × readers 1–5, 4 repetitions,
/// a baseline, throughput that grows with the connections up to 6 and
/// then stays flat (±3% from run to run), latency that grows with them.
pub fn caps_like(dir: &Path) {
    let a = fixture("a");
    let template_load = read_json(&a.join("runs/posters=1/rep-1/load.json"));
    let template_run = read_json(&a.join("runs/posters=1/rep-1/run.json"));
    let axis =
        |key: &str| json!({"key": key, "source": {"load-flag": key}, "values": [1, 2, 3, 4, 5]});
    let mut points = Vec::new();
    for p in 1..=5 {
        for r in 1..=5 {
            points.push(json!({
                "index": points.len(), "slug": format!("posters={p},readers={r}"),
                "params": {"posters": p, "readers": r},
                "server_protocol": "board",
                "server_flags": ["--strategy", "thread-per-connection", "--cpus", "0"],
                "load_protocol": "board",
                "load_flags": ["--posters", p.to_string(), "--readers", r.to_string(), "--duration", "3s"]
            }));
        }
    }
    let baseline = json!({
        "index": 25, "slug": "baseline", "params": {},
        "server_protocol": "echo", "server_flags": ["--cpus", "0"],
        "load_protocol": "board", "load_flags": ["--posters", "2", "--readers", "2", "--duration", "3s"]
    });
    let manifest = json!({
        "schema": "serverlab-sweep/2", "name": "caps",
        "description": "CAPS grid: posters 1–5 × readers 1–5 against `serve board` (thread per connection), server on CPU 0, client on CPU 1.",
        "repetitions": 4, "order": "random", "seed": 12345, "target_ci": null, "max_repetitions": null,
        "baseline": baseline.clone(), "client_cpus": "1", "timeout_s": 60.0, "serverlab_version": "0.1.0",
        "axes": [axis("posters"), axis("readers")], "points": points.clone()
    });
    write_json(&dir.join("sweep.json"), &manifest);
    let templates = (&template_run, &template_load);
    for rep in 1..=4 {
        // The machine runs a little faster or slower in each block.
        let drift = 1.0 + 0.04 * (rep as f64 - 2.5);
        for point in &points {
            let (p, r) = (
                point["params"]["posters"].as_f64().unwrap(),
                point["params"]["readers"].as_f64().unwrap(),
            );
            let c = p + r;
            let wobble =
                1.0 + 0.01 * (((rep * 7 + (p as usize) * 3 + r as usize) % 5) as f64 - 2.0);
            let numbers = (4000.0 * c.min(6.0) * drift * wobble, 40.0 * c * wobble);
            write_run(dir, templates, point, rep, numbers);
        }
        write_run(dir, templates, &baseline, rep, (30_000.0 * drift, 30.0));
    }
}

/// One run of `point` in `dir`, from the templates (run.json, load.json),
/// with this (throughput, p50 latency in µs).
pub fn write_run(
    dir: &Path,
    (run, load): (&Value, &Value),
    point: &Value,
    rep: usize,
    (throughput, latency): (f64, f64),
) {
    let slug = point["slug"].as_str().unwrap();
    let run_dir = dir.join(format!("runs/{slug}/rep-{rep}"));
    let mut run = run.clone();
    run["slug"] = slug.into();
    run["point"] = point["index"].clone();
    run["repetition"] = rep.into();
    run["params"] = point["params"].clone();
    run["server"]["protocol"] = point["server_protocol"].clone();
    run["server"]["flags"] = point["server_flags"].clone();
    run["load"]["flags"] = point["load_flags"].clone();
    run["started_unix_s"] = (1_700_000_000 + rep * 100).into();
    write_json(&run_dir.join("run.json"), &run);
    let mut load = load.clone();
    let r = &mut load["results"];
    r["throughput_rps"] = throughput.into();
    r["requests"] = ((throughput * 3.0) as u64).into();
    r["duration_s"] = 3.0.into();
    let op = &mut r["operations"][0];
    op["rate_rps"] = throughput.into();
    op["count"] = ((throughput * 3.0) as u64).into();
    for (name, k) in [("p50", 1.0), ("p90", 2.0), ("p99", 6.0), ("p99_9", 20.0)] {
        op["latency_us"][name] = (latency * k).into();
    }
    load["config"]["posters"] = point["params"]["posters"].clone();
    load["config"]["readers"] = point["params"]["readers"].clone();
    write_json(&run_dir.join("load.json"), &load);
    write_json(
        &run_dir.join("server.json"),
        &json!({"connections": {"accepted": 2}}),
    );
}
