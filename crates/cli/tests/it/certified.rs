//! Figures that certify themselves (docs/measuring.md, "Certified
//! runs"): a steady server at a modest rate is certified, with each
//! percentile's interval and the ones too few samples leave bare; a load
//! that cannot keep its rate fails the schedule check with the
//! shortfall, and `--require-certified` exits 3 on it; under Poisson
//! arrivals the actual gaps between sends are tested.
//!
//! Designed to hold beside `stress-ng --cpu 4 --io 1`: the steady run
//! asks 500 req/s of a bucket server's reads (no delay), which any
//! machine keeps (the schedule check compares replies in the window with
//! the rate asked; lateness alone does not fail it); the stationarity
//! check needs a Mann–Kendall p under 0.001 over replies spaced to be
//! independent *and* the median changed 2× between the first and last
//! quarters (a false alarm under 0.1% on a steady run); independence
//! never fails a run, it widens the intervals; and 4,000 samples leave
//! p99 its interval for any lag-1 correlation up to 0.8 — past that (a
//! machine whose scheduling sets the latencies) the run fails on its
//! sample size, and the test accepts that failure — and, where the
//! client itself was stalled 10 ms or more (the machine, not the load),
//! a stationarity failure or a schedule short by no more than the run's
//! slowest reply explains (see `steady`). The failing run
//! fails by the server's own capacity (2 connections × 50 ms delays =
//! 40 req/s), whatever the machine.

use crate::support::*;
use serde_json::Value;

fn check<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["results"]["validity"]["checks"]
        .as_array()
        .expect("results.validity.checks")
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {}", v["results"]["validity"]))
}

/// The steady run's result: with `--require-certified` it exits 0 when
/// certified and 3 when not (nothing else fails it).
fn steady_run(server: &ServerProc) -> (String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("load.json");
    let out = server.load(
        "bucket",
        &words(&format!(
            "--delay 0 --keep-alive --connections 4 --rate 500 --duration 8s \
            --warmup 1s --require-certified --json {}",
            json.display()
        )),
    );
    let v = read_json(&json);
    let certified = v["results"]["validity"]["certified"] == true;
    let want = if certified { 0 } else { 3 };
    assert_eq!(out.status.code(), Some(want), "{}", text(&out.stderr));
    (text(&out.stdout), v)
}

/// The client's own lateness (a timer woken late, CPU taken from it)
/// that says the machine stalled the run: 10 ms, ten times what the
/// schedule counts as late.
const MACHINE_STALL_US: f64 = 10_000.0;

/// Whether the machine stalled the client during the run: its own
/// largest lateness (the schedule's `client_max_lag_us`, said in the text
/// as how late sends went) reached [`MACHINE_STALL_US`].
fn machine_stalled(v: &Value) -> bool {
    let lag = v["results"]["schedule"]["client_max_lag_us"].as_f64();
    lag.expect("results.schedule.client_max_lag_us") >= MACHINE_STALL_US
}

/// The schedule kept — or missed only as the machine explains: short
/// (never over), by no more replies than the rate asked in the run's own
/// slowest reply (from its intended send: a reply due in the window may
/// come that much after it closes), on a machine that stalled the client.
fn schedule_kept(v: &Value) -> bool {
    if check(v, "schedule")["passed"] == true {
        return true;
    }
    let r = &v["results"];
    let f = |x: &Value| x.as_f64().unwrap();
    let asked = f(&r["requested_rps"]);
    let got = f(&r["requests"]) - f(&r["schedule"]["backlog_requests"]);
    let short = asked * f(&r["duration_s"]) - got;
    let ops = r["operations"].as_array().unwrap();
    let slowest = ops.iter().map(|o| f(&o["latency_us"]["max"]) / 1e6);
    let late = asked * (slowest.fold(0.0, f64::max) + 0.01);
    machine_stalled(v) && short > 0.0 && short <= late
}

/// The checks that contention is designed not to flip: the schedule (or
/// its miss the machine explains), stationarity (or its failure on a
/// machine that stalled the client: a neighbour's work that starts or
/// ends mid-run changes the latencies for real, and beside `stress-ng
/// --cpu 4 --io 1` on 2 cores that can happen in every run; on a machine
/// that never stalls the client, it must pass), and independence.
fn steady(v: &Value) -> bool {
    let passed = |name| check(v, name)["passed"] == true;
    schedule_kept(v) && (passed("stationarity") || machine_stalled(v)) && passed("independence")
}

/// Certified — or, on a machine so busy that its scheduling sets the
/// latencies (beside `stress-ng --cpu 4 --io 1` on 2 cores, half the
/// runs: neighbours correlated at ρ 0.9 and more), failed on the sample
/// size alone, because the intervals were widened to too few effective
/// samples for p99, and saying so. Every other check must pass however
/// busy the machine (in one of three runs: see below): that contention
/// cannot flip them is their design.
#[test]
fn a_steady_server_at_a_modest_rate_is_certified() {
    let _turn = heavy_turn();
    let server = ServerProc::start("bucket", &[]);
    // A neighbour that starts or ends mid-run can move the medians for
    // real (the run is then, truly, not steady): up to three runs, the
    // first whose other checks pass (see `steady`) judged. A check that
    // always fails still fails the test, on a machine that never stalls.
    let (mut stdout, mut v) = steady_run(&server);
    for _ in 0..2 {
        if steady(&v) {
            break;
        }
        (stdout, v) = steady_run(&server);
    }
    let validity = &v["results"]["validity"];
    assert!(steady(&v), "{validity:#}");
    let all_kept = ["schedule", "stationarity"]
        .iter()
        .all(|name| check(&v, name)["passed"] == true);
    // Constant arrivals: nothing random to test.
    assert_eq!(check(&v, "arrivals")["passed"], Value::Null);
    let size = check(&v, "sample_size");
    let bias = check(&v, "client_bias");
    if validity["certified"] == true {
        assert_eq!(size["passed"], true, "{validity:#}");
        assert!(
            stdout.contains("  certified: every check passed"),
            "{stdout}"
        );
    } else if size["passed"] == false {
        let widened = check(&v, "independence")["detail"].as_str().unwrap();
        assert!(
            widened.contains("the intervals are widened"),
            "{validity:#}"
        );
        assert!(
            stdout.contains("  not certified:\n    sample_size: read: "),
            "{stdout}"
        );
    } else if all_kept || bias["passed"] == false {
        // What the client adds, on a machine that wakes it late, may be
        // as wide as p99's interval: said, with the figures.
        assert_eq!(bias["passed"], false, "{validity:#}");
        assert!(
            stdout.contains("    client_bias: the client adds p50 "),
            "{stdout}"
        );
    } else {
        // Not certified by a check `steady` excused: the machine stalled.
        assert!(machine_stalled(&v), "{validity:#}");
    }
    client_share_is_measured(&v, &stdout, bias, size);
    let read = v["results"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "read")
        .unwrap();
    let n = read["count"].as_u64().unwrap();
    let kept = check(&v, "schedule")["passed"] == true;
    assert!(n >= 3600 || !kept, "{n} reads");
    for view in ["latency_us", "service_us"] {
        let p = &read[view];
        let [lo, hi] = [0, 1].map(|i| p["ci95"]["p50"][i].as_f64().unwrap());
        let p50 = p["p50"].as_f64().unwrap();
        assert!(lo <= p50 && p50 <= hi, "{view}: {p}");
        if size["passed"] == true {
            let [lo, hi] = [0, 1].map(|i| p["ci95"]["p99"][i].as_f64().unwrap());
            let p99 = p["p99"].as_f64().unwrap();
            assert!(lo <= p99 && p99 <= hi, "{view}: {p}");
        }
        // 4,000 samples are far too few for p99.99 (36,887 at least).
        assert!(p["ci95"]["p99_99"].is_null(), "{view}: {p}");
    }
    assert!(
        stdout.contains(&format!("p99.99: {n} samples, too few")),
        "{stdout}"
    );
    assert!(stdout.contains("read 95% intervals: p50 "), "{stdout}");
    if size["passed"] == true {
        let detail = size["detail"].as_str().unwrap();
        assert!(
            detail.contains("too few samples for p99.99's in read"),
            "{detail}"
        );
    }
}

/// The steady run's client share: measured on a sample of the replies
/// recorded (one batch in 16 on average, at gaps of 1 to 31: here each
/// reply is a batch of its own), the kernel's receive timestamps on
/// loopback TCP included, and said beside the latency and in the verdict.
fn client_share_is_measured(v: &Value, stdout: &str, bias: &Value, size: &Value) {
    let share = &v["results"]["client_share"];
    let replies = share["replies"].as_u64().unwrap();
    let requests = v["results"]["requests"].as_u64().unwrap();
    // About requests / 16; never fewer than one in 31 (the gaps' bound)
    // but for each connection's last gap, cut short by the window's end.
    assert!(
        replies * 31 + 31 * 4 >= requests && replies <= requests / 4,
        "{replies} of {requests}: {share}"
    );
    let stamped = share["kernel_stamped"].as_u64().unwrap();
    // The kernel turns its timestamps on a moment after the first socket
    // asks: replies in that moment (in the warm-up) may go unstamped.
    assert!(stamped > replies / 2 && stamped <= replies, "{share}");
    let total = &share["total_us"];
    let (p50, p99) = (
        total["p50"].as_f64().unwrap(),
        total["p99"].as_f64().unwrap(),
    );
    assert!(0.0 < p50 && p50 <= p99, "{share}");
    assert!(share["receive_us"]["p50"].as_f64().is_some(), "{share}");
    assert!(stdout.contains("  client adds p50 "), "{stdout}");
    // Decided wherever p99 has an interval to compare the share with.
    assert_eq!(
        bias["passed"].is_boolean(),
        size["passed"] == true,
        "{bias}"
    );
    let detail = bias["detail"].as_str().unwrap();
    assert!(detail.starts_with("the client adds p50 "), "{detail}");
}

/// A bucket server whose every request takes 50 ms, over 2 connections:
/// 40 req/s at most, asked for 800.
fn beyond_capacity(server: &ServerProc, extra: &[&str]) -> std::process::Output {
    let mut args = words(
        "--delay-unit ms --delay 50 --connections 2 --keep-alive --rate 800 \
        --duration 2s --warmup 0s",
    );
    args.extend(extra);
    server.load("bucket", &args)
}

#[test]
fn a_load_that_cannot_keep_its_rate_fails_the_schedule_with_the_shortfall() {
    let server = ServerProc::start("bucket", &["--delay-unit", "ms"]);
    let out = beyond_capacity(&server, &["--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["results"]["validity"]["certified"], false);
    let c = check(&v, "schedule");
    assert_eq!(c["passed"], false, "{c}");
    let detail = c["detail"].as_str().unwrap();
    assert!(detail.contains("of the 800.0 req/s asked"), "{detail}");
    assert!(detail.contains("req/s short (more than 10.0%)"), "{detail}");
    assert!(c["fix"].as_str().unwrap().contains("--rate"), "{c}");

    // The text names each failed check and its fix; --require-certified
    // turns it into status 3.
    let out = beyond_capacity(&server, &["--require-certified"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("  not certified:\n    schedule: reached "),
        "{stdout}"
    );
    assert!(
        stdout.contains("      fix: the load did not keep its rate"),
        "{stdout}"
    );
    let stderr = text(&out.stderr);
    assert!(stderr.contains("not certified (schedule"), "{stderr}");
}

/// Under Poisson arrivals the gaps between actual sends are tested
/// against the exponential (whether they pass depends on how late a busy
/// machine's client went: only that the test was made is asserted).
#[test]
fn poisson_arrivals_have_their_gaps_tested() {
    let server = ServerProc::start("bucket", &[]);
    let (_, v) = server.load_json(
        "bucket",
        &words(
            "--delay 0 --keep-alive --connections 2 --rate 300 --arrivals poisson --duration \
            2s --warmup 0s",
        ),
    );
    let c = check(&v, "arrivals");
    assert!(c["passed"].is_boolean(), "{c}");
    let detail = c["detail"].as_str().unwrap();
    assert!(detail.starts_with("Anderson–Darling A² = "), "{detail}");
    assert!(detail.contains("gaps between sends"), "{detail}");
}

/// Every `load.json` under a sweep's `runs/`.
fn run_files(sweep: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for point in std::fs::read_dir(sweep.join("runs")).unwrap() {
        for rep in std::fs::read_dir(point.unwrap().path()).unwrap() {
            let f = rep.unwrap().path().join("load.json");
            if f.exists() {
                out.push(f);
            }
        }
    }
    out
}

/// Each operation's latency (its percentiles, their intervals and its
/// histogram) times `k`, in the run file at `path`; and the client's
/// share at p99 set to `client_p99` µs.
fn scale_latency(path: &std::path::Path, k: f64, client_p99: f64) {
    let mut v = read_json(path);
    let times = |x: &mut Value| {
        if let Some(f) = x.as_f64() {
            *x = (f * k).into();
        }
    };
    for op in v["results"]["operations"].as_array_mut().unwrap() {
        let lat = &mut op["latency_us"];
        for p in ["mean", "p50", "p90", "p99", "p99_9", "p99_99", "max"] {
            times(&mut lat[p]);
        }
        if let Some(ci) = lat["ci95"].as_object_mut() {
            for bounds in ci.values_mut().filter_map(|b| b.as_array_mut()) {
                bounds.iter_mut().for_each(times);
            }
        }
        for bucket in op["histogram_us"].as_array_mut().unwrap() {
            times(&mut bucket[0]);
        }
    }
    v["results"]["client_share"]["total_us"]["p99"] = client_p99.into();
    std::fs::write(path, v.to_string()).unwrap();
}

/// Issue 40: two configurations whose p99s differ by less than their
/// runs' own 95% intervals can tell apart — here the same runs on both
/// sides — are "within the intervals, not a difference" in `report
/// --compare`; intervals apart are said to be apart; and a gap no larger
/// than what the client itself adds at p99 may be the client's.
#[test]
fn report_compare_says_when_p99s_lie_within_their_intervals() {
    let _turn = heavy_turn();
    let tmp = tempfile::tempdir().unwrap();
    let exp = tmp.path().join("one.toml");
    std::fs::write(
        &exp,
        "name = \"one\"\nprotocol = \"board\"\nrepetitions = 1\n[server]\n\
         strategy = [\"pool-locked\"]\nthreads = 1\n[load]\nposters = 1\nreaders = 1\n\
         duration = \"2s\"\n",
    )
    .unwrap();
    let a = tmp.path().join("a");
    let out = run(&["sweep", exp.to_str().unwrap(), "--out", a.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let runs = run_files(&a);
    assert!(!runs.is_empty(), "no runs in {}", a.display());
    // Without an interval on a side (taken away here), no difference
    // can be told, and the row says why.
    let c = tmp.path().join("c");
    let cp = |from: &std::path::Path, to: &std::path::Path| {
        let status = std::process::Command::new("cp")
            .args(["-r", from.to_str().unwrap(), to.to_str().unwrap()])
            .status()
            .unwrap();
        assert!(status.success());
    };
    cp(&a, &c);
    for f in run_files(&c) {
        let mut v = read_json(&f);
        for op in v["results"]["operations"].as_array_mut().unwrap() {
            op["latency_us"]["ci95"]["effective_samples"] = 10.0.into();
        }
        std::fs::write(&f, v.to_string()).unwrap();
    }
    let out = run(&[
        "report",
        a.to_str().unwrap(),
        "--compare",
        c.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("a run gave p99 no interval (too few effective samples"),
        "{}",
        text(&out.stdout)
    );
    // The report reads each run's intervals as the run widened them; a
    // busy machine can correlate a short run's replies so much that p99
    // has none (and the row then says nothing of intervals). Read here
    // as if they were independent, so that every p99 has its interval.
    for f in &runs {
        let mut v = read_json(f);
        for op in v["results"]["operations"].as_array_mut().unwrap() {
            if let Some(ci) = op["latency_us"]["ci95"].as_object_mut() {
                ci.remove("effective_samples");
            }
        }
        std::fs::write(f, v.to_string()).unwrap();
    }
    let v = read_json(&runs[0]);
    let share = &v["results"]["client_share"];
    assert!(share["total_us"]["p99"].as_f64().is_some(), "{share}");
    let b = tmp.path().join("b");
    cp(&a, &b);
    let compare = |a: &std::path::Path, b: &std::path::Path| {
        let out = run(&[
            "report",
            a.to_str().unwrap(),
            "--compare",
            b.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    // The same runs: their intervals overlap.
    let same = compare(&a, &b);
    assert!(
        same.contains("within the intervals, not a difference: ["),
        "{same}"
    );
    assert!(
        same.contains("1 of the p99 rows lie within each other's intervals"),
        "{same}"
    );
    // A hundred times slower there: apart; the gap is no client's.
    for f in run_files(&b) {
        scale_latency(&f, 100.0, 1.0);
    }
    let apart = compare(&a, &b);
    assert!(apart.contains("apart: ["), "{apart}");
    assert!(!apart.contains("not a difference"), "{apart}");
    assert!(!apart.contains("may be the client's"), "{apart}");
    // A client that adds more than the gap: said.
    for f in run_files(&b) {
        scale_latency(&f, 1.0, 1e12);
    }
    let client = compare(&a, &b);
    assert!(
        client.contains("is no larger than what the client adds at p99"),
        "{client}"
    );
}
