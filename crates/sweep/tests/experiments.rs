//! The experiment files shipped in experiments/ parse into the grids they
//! promise, and those with a fixed load duration fit in 10 minutes.

use serverlab_sweep::{Experiment, Plan};
use std::path::Path;

fn plan(name: &str) -> Plan {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments")
        .join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&path).unwrap();
    Plan::new(Experiment::parse(&path.display().to_string(), &text).unwrap()).unwrap()
}

fn keys(p: &Plan) -> Vec<&str> {
    p.axes.iter().map(|a| a.key.as_str()).collect()
}

/// Every run's load duration plus starting and stopping a server, the
/// baseline's runs included.
fn minutes(p: &Plan) -> f64 {
    let runs = (0..p.experiment.design.repetitions).flat_map(|_| p.block());
    p.estimate_seconds(runs).expect("a --duration") / 60.0
}

#[test]
fn caps_is_posters_by_readers() {
    let p = plan("caps");
    assert_eq!(keys(&p), ["posters", "readers"]);
    assert_eq!(p.points.len(), 25);
    assert!(minutes(&p) < 10.0, "{} min", minutes(&p));
    assert!(p.points[24].load_flags.contains(&"--verify".to_string()));
    let b = p.baseline.as_ref().expect("a baseline");
    assert_eq!(b.server_protocol, "echo");
    assert_eq!(
        b.server_flags,
        ["--strategy", "thread-per-connection", "--cpus", "0"]
    );
    assert_eq!(p.runs(), 104);
}

#[test]
fn erss_is_strategy_cores_delay_buckets_in_ms() {
    let p = plan("erss");
    assert_eq!(keys(&p), ["buckets", "strategy", "cpus", "delay"]);
    assert_eq!(p.points.len(), 16);
    assert!(minutes(&p) < 10.0, "{} min", minutes(&p));
    let last = &p.points[15];
    for flags in [&last.server_flags, &last.load_flags] {
        let text = flags.join(" ");
        assert!(text.contains("--buckets 2048"), "{text}");
        assert!(text.contains("--delay-unit ms"), "{text}");
    }
    // The pool has 8 workers; thread-per-request takes no --threads.
    for point in &p.points {
        let text = point.server_flags.join(" ");
        let pool = text.contains("--strategy pool-locked");
        assert_eq!(text.contains("--threads 8"), pool, "{text}");
    }
    let b = p.baseline.as_ref().expect("a baseline");
    assert!(b.server_flags.join(" ").contains("--buckets 32"));
    assert!(b.load_flags.join(" ").contains("--buckets 32"));
}

#[test]
fn kvstore_is_queue_threads_store() {
    let p = plan("kvstore");
    assert_eq!(keys(&p), ["strategy", "threads", "store"]);
    assert_eq!(p.points.len(), 16);
    // No --duration: a fixed amount of work, 20 000 requests a run.
    assert!(p.load_seconds(&p.points[0]).is_none());
    let b = p.baseline.as_ref().expect("a baseline");
    assert_eq!(
        b.load_flags, p.points[0].load_flags,
        "the same load as every point"
    );
    assert_eq!(p.runs(), 51);
}

#[test]
fn redis_is_serverlab_against_redis_server() {
    let p = plan("redis");
    assert_eq!(keys(&p), ["protocol", "strategy", "mix", "pipeline"]);
    assert_eq!(p.points.len(), 48);
    for point in &p.points {
        let serve = point.serve_args("s.json").join(" ");
        assert_eq!(point.load_protocol, "resp");
        match point.server_protocol.as_str() {
            "resp" => assert!(serve.contains("--store sharded") && !serve.contains("--command")),
            "external" => {
                assert!(serve.contains("--command redis-server") && !serve.contains("--store"))
            }
            other => panic!("{other}"),
        }
        assert!(serve.contains("--cpus 0"));
    }
}

fn plan_on(name: &str, cpus: usize) -> Plan {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments")
        .join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&path).unwrap();
    let e = Experiment::parse(&path.display().to_string(), &text).unwrap();
    Plan::on(e, &serverlab_sweep::Topology::flat(cpus)).unwrap()
}

/// Seconds of warm-up each run of `p` spends before its `--duration`.
fn warmup_minutes(p: &Plan) -> f64 {
    let warmup = p.points[0]
        .load_flags
        .iter()
        .position(|f| f == "--warmup")
        .map(|i| serverlab_util::duration::parse(&p.points[0].load_flags[i + 1]).unwrap());
    let runs = p.runs() as f64;
    runs * warmup.expect("a --warmup").as_secs_f64() / 60.0
}

#[test]
fn scaling_is_every_strategy_and_store_over_cores_up_to_half() {
    let p = plan_on("scaling", 16);
    assert_eq!(keys(&p), ["strategy", "store", "cores", "pipeline"]);
    assert_eq!(p.points.len(), 7 * 4 * 4 * 2);
    let cores: Vec<String> = p.axes[2].values.iter().map(|v| v.to_string()).collect();
    assert_eq!(cores, ["1", "2", "4", "8"]);
    assert_eq!(p.shared_cpus().count(), 0, "the load has the other half");
    assert!(p
        .points
        .iter()
        .all(|q| q.load_flags.ends_with(&["--cpus".into(), "8-15".into()])));
    // As shipped it runs anywhere: on 2 CPUs, k = 1 only, and it says why.
    let two = plan_on("scaling", 2);
    assert_eq!(two.points.len(), 7 * 4 * 2);
    assert!(
        two.notes[0].contains("no scaling beyond k = 1"),
        "{:?}",
        two.notes
    );
}

#[test]
fn scaling_quick_runs_in_about_5_minutes_on_16_cpus() {
    let p = plan_on("scaling-quick", 16);
    assert_eq!(keys(&p), ["strategy", "store", "cores", "pipeline"]);
    assert_eq!(p.points.len(), 7 * 2 * 4 * 2);
    let total = minutes(&p) + warmup_minutes(&p);
    assert!((3.0..5.5).contains(&total), "{total} min");
}

#[test]
fn scaling_stores_is_the_other_two_stores_pipelined() {
    let p = plan_on("scaling-stores", 16);
    assert_eq!(keys(&p), ["strategy", "store", "cores"]);
    assert_eq!(p.points.len(), 7 * 2 * 4);
    assert!(p.points.iter().all(|pt| {
        let flags = pt.load_flags.join(" ");
        flags.contains("--pipeline 16")
    }));
    let total = minutes(&p) + warmup_minutes(&p);
    assert!(total < 3.0, "{total} min");
}

#[test]
fn stores_one_core_is_every_store_by_strategy_on_one_core() {
    let p = plan_on("stores-one-core", 2);
    assert_eq!(keys(&p), ["strategy", "store", "cores"]);
    assert_eq!(p.points.len(), 7 * 4);
    assert!(p.points.iter().all(|pt| {
        let server = pt.server_flags.join(" ");
        server.contains("--cpus 0") && pt.load_flags.join(" ").contains("--cpus 1")
    }));
    let total = minutes(&p) + warmup_minutes(&p);
    assert!(total < 6.0, "{total} min");
}
