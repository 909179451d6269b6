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
