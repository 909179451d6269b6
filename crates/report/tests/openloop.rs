//! What a report makes of open-loop sweeps: latency against the offered
//! rate per strategy (the hockey stick, log latency axis) and achieved
//! against offered when the rate is an axis; each point's capacity when
//! the runs searched for it.

mod common;

use common::{fixture, read_json, write_json};
use serde_json::{json, Value};
use serverlab_load::board::{BoardResults, Reads};
use serverlab_load::report::{LoadReport, SearchReport, Step};
use serverlab_report::generate;
use std::path::Path;

/// A load result from the fixtures, as the current schema writes it.
fn template() -> LoadReport {
    let v = read_json(&fixture("a").join("runs/posters=1/rep-1/load.json"));
    let mut load = LoadReport::from_value(v).unwrap();
    load.schema = serverlab_load::report::SCHEMA.into();
    let board = BoardResults {
        reads: Reads::of(1, 0),
        posts_acknowledged: 1,
    };
    load.results.protocol = Some(board.into());
    load
}

/// A sweep in `dir` over `axes` (key, source, values) with one run per
/// point and repetition from `run(params, rep)`.
fn sweep(dir: &Path, axes: Value, points: Vec<Value>, run: impl Fn(&Value, u32) -> LoadReport) {
    let manifest = json!({
        "schema": "serverlab-sweep/2", "name": "openloop", "description": "open loop",
        "repetitions": 3, "order": "round-robin", "seed": 1, "target_ci": null,
        "max_repetitions": null, "baseline": null, "client_cpus": "1", "timeout_s": 60.0,
        "serverlab_version": "0.1.0", "axes": axes, "points": points.clone()
    });
    write_json(&dir.join("sweep.json"), &manifest);
    let template_run = read_json(&fixture("a").join("runs/posters=1/rep-1/run.json"));
    for point in &points {
        let slug = point["slug"].as_str().unwrap();
        for rep in 1..=3u32 {
            let rdir = dir.join(format!("runs/{slug}/rep-{rep}"));
            let mut r = template_run.clone();
            r["slug"] = slug.into();
            r["point"] = point["index"].clone();
            r["repetition"] = rep.into();
            r["params"] = point["params"].clone();
            r["server"]["flags"] = point["server_flags"].clone();
            r["load"]["flags"] = point["load_flags"].clone();
            write_json(&rdir.join("run.json"), &r);
            let load = run(&point["params"], rep);
            std::fs::write(rdir.join("load.json"), serverlab_load::output::json(&load)).unwrap();
            write_json(&rdir.join("server.json"), &json!({}));
        }
    }
}

fn point(index: usize, params: Value, strategy: &str, load_flags: &[&str]) -> Value {
    let slug = params
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
        .collect::<Vec<_>>()
        .join(",");
    json!({
        "index": index, "slug": slug, "params": params,
        "server_protocol": "board", "server_flags": ["--strategy", strategy],
        "load_protocol": "board", "load_flags": load_flags,
    })
}

/// Each strategy's capacity, requests/s.
fn capacity(strategy: &str) -> f64 {
    if strategy == "async" {
        3000.0
    } else {
        1500.0
    }
}

/// Two strategies × offered rates 1k, 2k, 4k: flat latency below each
/// strategy's capacity, a queue above it.
fn rate_sweep(dir: &Path) {
    let strategies = ["async", "pool-locked"];
    let rates = [("1k", 1000.0), ("2k", 2000.0), ("4k", 4000.0)];
    let axes = json!([
        {"key": "strategy", "source": {"server-flag": "strategy"}, "values": strategies},
        {"key": "rate", "source": {"load-flag": "rate"}, "values": ["1k", "2k", "4k"]},
    ]);
    let mut points = Vec::new();
    for s in strategies {
        for (r, _) in rates {
            let params = json!({"strategy": s, "rate": r});
            points.push(point(points.len(), params, s, &["--rate", r]));
        }
    }
    sweep(dir, axes, points, |params, rep| {
        let strategy = params["strategy"].as_str().unwrap();
        let rate = rates.iter().find(|r| r.0 == params["rate"]).unwrap().1;
        let mut load = template();
        let r = &mut load.results;
        r.requested_rps = Some(rate);
        r.throughput_rps = rate.min(capacity(strategy)) * (1.0 + 0.01 * rep as f64);
        // Flat below the capacity, a queue above it.
        let p50 = if rate <= capacity(strategy) {
            100.0
        } else {
            200_000.0
        };
        let op = &mut r.operations[0];
        op.latency_us.p50 = p50;
        op.latency_us.p99 = p50 * 5.0;
        op.latency_us.p99_9 = p50 * 10.0;
        r.operations.truncate(1);
        load
    });
}

#[test]
fn a_rate_axis_draws_the_hockey_stick_and_achieved_against_offered() {
    let tmp = tempfile::tempdir().unwrap();
    rate_sweep(tmp.path());
    let w = generate(tmp.path(), None).unwrap();
    let names: Vec<String> = w
        .plots
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for want in [
        "latency-vs-offered-rate.svg",
        "achieved-vs-offered-rate.svg",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} not in {names:?}");
    }
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    assert!(
        md.contains("Latency vs offered rate, open loop (p50 solid, p99, p99.9 dashed)"),
        "{md}"
    );
    assert!(md.contains("The y axis is logarithmic."), "{md}");
    assert!(md.contains("Achieved vs offered rate, open loop"), "{md}");
    let svg =
        std::fs::read_to_string(tmp.path().join("plots/latency-vs-offered-rate.svg")).unwrap();
    for series in [
        "strategy=async p50",
        "strategy=pool-locked p99.9",
        "offered rate (requests/s)",
    ] {
        assert!(svg.contains(series), "{series} not drawn");
    }
    let svg =
        std::fs::read_to_string(tmp.path().join("plots/achieved-vs-offered-rate.svg")).unwrap();
    assert!(svg.contains("achieved = offered"));
    assert!(!md.contains("## Capacity"), "no run searched");
}

#[test]
fn searched_runs_tabulate_each_points_capacity() {
    let tmp = tempfile::tempdir().unwrap();
    let strategies = ["async", "pool-locked"];
    let axes =
        json!([{"key": "strategy", "source": {"server-flag": "strategy"}, "values": strategies}]);
    let points = strategies
        .iter()
        .enumerate()
        .map(|(i, s)| point(i, json!({"strategy": s}), s, &["--search", "p99<=1ms"]))
        .collect();
    sweep(tmp.path(), axes, points, |params, rep| {
        let strategy = params["strategy"].as_str().unwrap();
        let mut load = template();
        let found =
            (strategy == "async" || rep < 3).then(|| capacity(strategy) + rep as f64 * 10.0);
        let step = Step::of(&load, Some(900.0));
        load.search = Some(SearchReport {
            target: "p99<=1ms".into(),
            stat: "p99".into(),
            limit_us: 1000.0,
            step_s: 3.0,
            warmup_s: 1.0,
            probe: step.clone(),
            steps: vec![step],
            capacity_rps: found,
            note: None,
        });
        load
    });
    let w = generate(tmp.path(), None).unwrap();
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    assert!(md.contains("## Capacity"), "{md}");
    assert!(
        md.contains("| strategy | target | capacity, req/s (95% CI) | runs with a capacity |"),
        "{md}"
    );
    // async: 3010, 3020, 3030 → a geometric mean of 3020; pool-locked
    // found one in 2 of its 3 runs.
    let row = md.lines().find(|l| l.starts_with("| async |")).unwrap();
    assert!(
        row.contains("`p99<=1ms`") && row.contains("3,020") && row.contains("3 of 3"),
        "{row}"
    );
    let row = md
        .lines()
        .find(|l| l.starts_with("| pool-locked |"))
        .unwrap();
    assert!(row.contains("2 of 3"), "{row}");
}
