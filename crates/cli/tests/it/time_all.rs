//! Service time, sampled or timed in full (issue 24, point 6): by default
//! each server thread times one request in 64, and the final statistics
//! say "sampled 1 in 64" beside the figures (a maximum is a sample's);
//! `serve --time-all` times every request, so the timed count is the
//! request count. Under a reactor strategy the statistics also give the
//! time a worker held each request (`worker_busy_us`), timed the same way.

use crate::support::*;

/// Requests sent on one connection.
const REQUESTS: u64 = 200;

/// `REQUESTS` board requests, then the final statistics' service-time
/// line.
fn service_time_line(extra: &[&str]) -> String {
    let server = ServerProc::start("board", extra);
    let mut c = Client::connect(server.addr);
    for _ in 0..REQUESTS {
        assert_eq!(c.req(b"COUNT@t"), b"0");
    }
    drop(c);
    let (status, out) = server.stop();
    assert!(status.success(), "{out}");
    out.lines()
        .find(|l| l.trim_start().starts_with("service_time_us:"))
        .unwrap_or_else(|| panic!("no service time in {out}"))
        .to_string()
}

/// A number on the service-time line.
fn field(line: &str, name: &str) -> u64 {
    line.split(&format!(" {name} "))
        .nth(1)
        .and_then(|v| v.split(',').next())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {line}"))
}

#[test]
fn by_default_the_statistics_say_service_time_is_sampled_1_in_64() {
    let line = service_time_line(&[]);
    assert!(line.contains("sampled 1 in 64"), "{line}");
    assert_eq!(field(&line, "count"), REQUESTS, "{line}");
    assert!(field(&line, "timed") < REQUESTS, "{line}");
}

#[test]
fn time_all_times_every_request() {
    let line = service_time_line(&["--time-all"]);
    assert_eq!(field(&line, "count"), REQUESTS, "{line}");
    assert_eq!(field(&line, "timed"), REQUESTS, "{line}");
    assert!(line.contains("every request timed"), "{line}");
}

/// Asked delay of each request in the busy-time test, µs.
const DELAY_US: f64 = 2000.0;

/// One server's final statistics after 20 lock-step and 4 pipelined
/// bucket requests of `DELAY_US` each, spun, every run timed.
fn busy_stats(strategy: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("stats.json");
    let args = with_threads(
        strategy,
        "1",
        &[
            "--strategy",
            strategy,
            "--delay-unit",
            "us",
            "--delay-mode",
            "spin",
            "--max-delay",
            "10000",
            "--time-all",
            "--stats-json",
            json.to_str().unwrap(),
        ],
    );
    let server = ServerProc::start("bucket", &args);
    let mut c = Client::connect(server.addr);
    for n in 1..=20 {
        c.send(b"2000,1\n");
        // The reply is the bucket's sum of delays so far.
        assert_eq!(text(&c.recv()), (2000 * n).to_string(), "{strategy}");
    }
    c.send(b"2000,2\n2000,2\n2000,2\n2000,2\n");
    for n in 1..=4 {
        let want = (2000 * n).to_string();
        assert_eq!(text(&c.recv()), want, "{strategy}: pipelined");
    }
    drop(c);
    let (status, out) = server.stop();
    assert!(status.success(), "{out}");
    read_json(&json)
}

/// A reactor worker's busy time per request: every request answered is
/// counted, and with `--time-all` timed, each at no less than the delay it
/// asked for (the worker holds it through its delay), lock-step or
/// pipelined (a run of several gives each its share). The JSON's
/// histogram holds every timed request. A strategy without workers
/// reports none.
#[test]
fn worker_busy_time_holds_each_requests_delay() {
    let (timed, untimed): (Vec<StrategyKind>, Vec<StrategyKind>) =
        StrategyKind::ALL.iter().partition(|k| k.times_workers());
    assert!(!timed.is_empty() && !untimed.is_empty());
    for strategy in timed.iter().map(|k| k.name()) {
        let v = busy_stats(strategy);
        let busy = &v["worker_busy_us"];
        let n = |k: &str| busy[k].as_u64().unwrap_or_else(|| panic!("{k}: {v}"));
        let f = |k: &str| busy[k].as_f64().unwrap_or_else(|| panic!("{k}: {v}"));
        assert_eq!((n("count"), n("timed")), (24, 24), "{strategy}: {busy}");
        // A worker that finds the next request already there answers it in
        // the same run (one run may answer them all), and a run may answer
        // none (the close).
        assert!(n("runs") >= 1, "{strategy}: {busy}");
        // A bucket is under 1% wide: its lowest value may lie that much
        // below the 2 ms recorded.
        assert!(f("min") >= DELAY_US * 0.99, "{strategy}: {busy}");
        assert!(f("p50") >= DELAY_US * 0.99, "{strategy}: {busy}");
        let hist = busy["histogram"].as_array().expect("a histogram");
        let total: u64 = hist.iter().map(|p| p[1].as_u64().unwrap()).sum();
        assert_eq!(total, 24, "{strategy}: {busy}");
        for pair in hist {
            assert!(pair[0].as_f64().unwrap() >= DELAY_US * 0.995, "{pair}");
        }
    }
    for strategy in untimed.iter().filter(|&&k| runnable(k)).map(|k| k.name()) {
        let v = busy_stats(strategy);
        assert!(v.get("worker_busy_us").is_none(), "{strategy}: {v}");
    }
}
