//! `load … --metrics ADDR` and `--progress`: the load's Prometheus
//! endpoint scraped while a real load runs, its counters against the
//! result's counts once it is out (`--metrics-linger` keeps the endpoint
//! up for that), the endpoint's refusals, a taken address, and what the
//! live view writes where. Two ignored tests need Debian's `prometheus`
//! package (promtool, and a real Prometheus scraping `serve` and `load`)
//! and FAIL without it.

use crate::metrics::{http, promtool, sample, scrape};
use crate::support::*;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const NEEDS: &str = "needs prometheus (promtool and the server); apt-get install prometheus";

/// A running `serverlab load` with `--metrics 127.0.0.1:0`: where its
/// metrics are (its stderr's first line says), and its stderr so far.
struct LoadProc {
    child: Child,
    metrics: SocketAddr,
    stderr: Arc<Mutex<String>>,
}

impl Drop for LoadProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl LoadProc {
    fn start(protocol: &str, server: SocketAddr, args: &[&str]) -> LoadProc {
        let addr = server.to_string();
        let mut child = Command::new(BIN)
            .args([
                "load",
                protocol,
                "--addr",
                &addr,
                "--metrics",
                "127.0.0.1:0",
            ])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start serverlab load");
        let err = child.stderr.take().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("metrics at http://").nth(1) {
                    let _ = tx.send(rest.trim_end_matches("/metrics").to_string());
                }
                sink.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let at = rx.recv_timeout(Duration::from_secs(20));
        let at = at.unwrap_or_else(|_| panic!("no metrics address: {}", stderr.lock().unwrap()));
        LoadProc {
            child,
            metrics: at.parse().expect("a metrics address"),
            stderr,
        }
    }
}

/// Scrape `at` until `found` takes what it wants from the text (every
/// 100 ms; 20 s is a hang guard, failing with `what` and the last text).
fn scrape_until<T>(at: SocketAddr, what: &str, found: impl Fn(&str) -> Option<T>) -> T {
    let (mut text, mut got) = (String::new(), None);
    poll_until(Duration::from_secs(20), Duration::from_millis(100), || {
        text = scrape(at);
        got = found(&text);
        got.is_some()
    });
    got.unwrap_or_else(|| panic!("{what}: {text}"))
}

/// The result at `path`, once the load has written it whole.
fn wait_for_json(path: &std::path::Path, within: Duration) -> serde_json::Value {
    let deadline = Instant::now() + within;
    loop {
        let read = std::fs::read_to_string(path).ok();
        if let Some(v) = read.and_then(|t| serde_json::from_str(&t).ok()) {
            return v;
        }
        assert!(Instant::now() < deadline, "no result in {}", path.display());
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_running_load_is_scraped_and_its_counters_end_equal_to_the_result() {
    let server = ServerProc::start("board", &[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("load.json");
    let json_arg = json.to_str().unwrap();
    let load = LoadProc::start(
        "board",
        server.addr,
        &words("--duration 3s --rate 1000 --metrics-linger 30s"),
    );
    // During the window (after the 1 s warm-up): a second handed over.
    let during = scrape_until(load.metrics, "nothing counted", |text| {
        let answered = sample(text, "serverlab_load_responses_total", &[("op", "POST")]);
        answered.is_some_and(|n| n > 0.0).then(|| text.to_string())
    });
    let constant = [("protocol", "board"), ("agent", "0/1")];
    for (name, op) in [
        ("serverlab_load_requests_sent_total", "POST"),
        ("serverlab_load_responses_total", "READ"),
        ("serverlab_load_latency_seconds_count", "POST"),
        ("serverlab_load_service_seconds_count", "READ"),
    ] {
        let mut labels = constant.to_vec();
        labels.push(("op", op));
        assert!(
            sample(&during, name, &labels).is_some(),
            "no {name}{labels:?}: {during}"
        );
    }
    let bucket = [("op", "POST"), ("le", "+Inf")];
    assert!(sample(&during, "serverlab_load_latency_seconds_bucket", &bucket).is_some());
    assert!(
        during.contains("# TYPE serverlab_load_errors_total counter"),
        "{during}"
    );
    assert_eq!(
        sample(&during, "serverlab_load_requested_rate", &constant),
        Some(1000.0)
    );
    assert!(sample(&during, "serverlab_load_behind_schedule_seconds", &constant).is_some());
    assert!(sample(&during, "process_cpu_seconds_total", &[]).is_some());
    // Only GET /metrics is served.
    assert_eq!(http(load.metrics, "GET / HTTP/1.1\r\n\r\n").0, 404);
    assert_eq!(http(load.metrics, "GET /stats HTTP/1.0\r\n\r\n").0, 404);
    let post = "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n";
    assert_eq!(http(load.metrics, post).0, 405);
    drop(load);

    // Once the result is out, the counters are its counts.
    let load = LoadProc::start(
        "board",
        server.addr,
        &words(&format!(
            "--duration 2s --rate 1000 --metrics-linger 30s --format json --json \
            {json_arg}"
        )),
    );
    let result = wait_for_json(&json, Duration::from_secs(30));
    let after = scrape(load.metrics);
    let mut total = 0;
    for (op, count) in op_counts(&result) {
        let counted = sample(&after, "serverlab_load_responses_total", &[("op", &op)]);
        assert_eq!(counted, Some(count as f64), "{op}: {after}");
        let timed = sample(
            &after,
            "serverlab_load_latency_seconds_count",
            &[("op", &op)],
        );
        assert_eq!(timed, Some(count as f64), "{op}: {after}");
        total += count;
    }
    assert_eq!(result["results"]["requests"].as_u64(), Some(total));
    assert!(total > 0, "{result}");
    let sent: f64 = after
        .lines()
        .filter(|l| l.starts_with("serverlab_load_requests_sent_total{"))
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<f64>().unwrap())
        .sum();
    let scheduled = result["results"]["schedule"]["sent_requests"].as_f64();
    assert_eq!(Some(sent), scheduled, "{after}");
}

/// The verdict's gauges from a scrape: `serverlab_load_certified`, and
/// each `check` that has a `serverlab_load_check_passed`.
fn verdict_gauges(text: &str) -> (Option<f64>, Vec<(String, f64)>) {
    let checks = text
        .lines()
        .filter_map(|l| l.strip_prefix("serverlab_load_check_passed{"))
        .map(|rest| {
            let check = rest.split("check=\"").nth(1).unwrap().split('"').next();
            let value = rest.rsplit_once(' ').unwrap().1.parse().unwrap();
            (check.unwrap().to_string(), value)
        })
        .collect();
    (sample(text, "serverlab_load_certified", &[]), checks)
}

#[test]
fn the_verdict_is_a_gauge_per_check_once_the_run_ends() {
    let server = ServerProc::start("board", &[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("load.json");
    let args = [
        "--duration",
        "2s",
        "--rate",
        "500",
        "--metrics-linger",
        "30s",
        "--format",
        "json",
        "--json",
        json.to_str().unwrap(),
    ];
    let load = LoadProc::start("board", server.addr, &args);
    // While it runs (the result not written yet after the scrape): no
    // verdict, not a 0.
    scrape_until(load.metrics, "nothing counted", |text| {
        if json.exists() {
            return Some(());
        }
        let answered = sample(text, "serverlab_load_responses_total", &[("op", "POST")]);
        answered.map(|_| assert_eq!(verdict_gauges(text), (None, vec![]), "{text}"))
    });
    let result = wait_for_json(&json, Duration::from_secs(30));
    let validity = &result["results"]["validity"];
    let (certified, checks) = scrape_until(load.metrics, "no verdict", |text| {
        let (certified, checks) = verdict_gauges(text);
        certified.map(|c| (c, checks))
    });
    let want = if validity["certified"].as_bool().unwrap() {
        1.0
    } else {
        0.0
    };
    assert_eq!(certified, want, "{validity}");
    // Each check that decided, 1 passed and 0 failed; an undecided one
    // (null) absent.
    let decided: Vec<(String, f64)> = validity["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| {
            let passed = c["passed"].as_bool()?;
            Some((
                c["name"].as_str().unwrap().to_string(),
                f64::from(u8::from(passed)),
            ))
        })
        .collect();
    assert_eq!(checks, decided, "{validity}");
    // An open loop's schedule always decides, passed or not.
    assert!(decided.iter().any(|(n, _)| n == "schedule"), "{validity}");
    assert!(decided.len() >= 2, "{validity}");
}

#[test]
fn a_taken_load_metrics_address_fails_at_start_naming_it() {
    let server = ServerProc::start("board", &[]);
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = server.load("board", &["--duration", "1s", "--metrics", &addr]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains(&addr) && err.contains("--metrics"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(text(&out.stdout).is_empty(), "ran anyway");
    load_usage_error("board", &["--metrics", "127.0.0.1"], "--metrics");
    load_usage_error("board", &["--metrics-linger", "1s"], "--metrics");
}

#[test]
fn progress_line_writes_a_line_per_second_to_stderr_only() {
    let server = ServerProc::start("board", &[]);
    let args = ["--duration", "3s", "--rate", "500", "--format", "json"];
    let mut with_line = args.to_vec();
    with_line.extend(["--progress", "line"]);
    let out = server.load("board", &with_line);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout: JSON only");
    assert_eq!(json["results"]["per_second"].as_array().unwrap().len(), 3);
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "a line per second: {err}");
    for (k, line) in lines.iter().enumerate() {
        let head = format!("serverlab load: second {}: ", k + 1);
        assert!(line.starts_with(&head), "{line}");
        for part in ["req/s", "errors", "p50 ", "p99 ", "behind ", "s left"] {
            assert!(line.contains(part), "no {part}: {line}");
        }
    }
    assert!(lines[2].ends_with(", 0 s left"), "{err}");

    let mut none = args.to_vec();
    none.extend(["--progress", "none"]);
    let out = server.load("board", &none);
    assert!(out.status.success());
    assert_eq!(text(&out.stderr), "", "--progress none writes nothing");
    serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("stdout: JSON only");
    // Not on a terminal and no --progress: nothing either.
    let out = server.load("board", &args);
    assert_eq!(text(&out.stderr), "");
}

#[test]
#[ignore = "needs prometheus (promtool): apt-get install prometheus; run: cargo test --workspace -- --ignored"]
fn promtool_accepts_the_load_exposition() {
    let server = ServerProc::start("board", &[]);
    let load = LoadProc::start(
        "board",
        server.addr,
        &words("--duration 1s --rate 500 --metrics-linger 30s --warmup 0s"),
    );
    // Once the run is over: its verdict's gauges too.
    let text = scrape_until(load.metrics, "no verdict", |text| {
        sample(text, "serverlab_load_certified", &[]).map(|_| text.to_string())
    });
    let out = promtool(&["check", "metrics"], &text);
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}",
        crate::support::text(&out.stdout),
        crate::support::text(&out.stderr)
    );
}

/// A real Prometheus on 127.0.0.1, scraping its targets every second,
/// with a data directory of its own; stopped when dropped.
pub struct Prometheus {
    child: Child,
    pub web: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    pub fn start(targets: &[SocketAddr]) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        let list: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  \
                 - job_name: serverlab\n    static_configs:\n      - targets: [{}]\n",
                list.join(", ")
            ),
        )
        .unwrap();
        let web = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={web}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("`prometheus` cannot run ({e}): {NEEDS}"));
        Prometheus {
            child,
            web,
            _dir: dir,
        }
    }

    /// An instant query's one value at `at` (now if `None`), if it has one.
    pub fn query(&self, q: &str, at: Option<f64>) -> Option<f64> {
        TcpStream::connect(self.web).ok()?;
        let q: String = q
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let time = at.map_or(String::new(), |t| format!("&time={t:.3}"));
        let (status, body) = http(
            self.web,
            &format!(
                "GET /api/v1/query?query={q}{time} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            ),
        );
        if status != 200 {
            return None;
        }
        let body = body.trim_start_matches(|c: char| c != '{');
        let v: serde_json::Value =
            serde_json::from_str(body.trim_end_matches(|c: char| c != '}')).ok()?;
        v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
    }

    /// Wait until `q` has a value that `ok` accepts: the last value.
    fn until(&self, q: &str, ok: impl Fn(f64) -> bool) -> Option<f64> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut last = None;
        while Instant::now() < deadline {
            last = self.query(q, None);
            if last.is_some_and(&ok) {
                break;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        last
    }
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

#[test]
#[ignore = "needs prometheus (the server, Debian's prometheus package): apt-get install prometheus; run: cargo test --workspace -- --ignored"]
fn a_real_prometheus_sees_the_server_and_the_load_agree() {
    let _turn = heavy_turn();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("load.json");
    let server = ServerProc::start("board", &["--metrics", "127.0.0.1:0"]);
    let line = server.stdout();
    let served_metrics: SocketAddr = line
        .split("metrics at http://")
        .nth(1)
        .and_then(|r| r.split("/metrics").next())
        .unwrap_or_else(|| panic!("no metrics address: {line}"))
        .parse()
        .unwrap();
    // The load's endpoint first (port 0), then Prometheus on both; the
    // load starts its window (--warmup 0: it counts from the start) 4 s
    // later, so that Prometheus is scraping by then.
    let start_at = (unix_now() as u64 + 4).to_string();
    let load = LoadProc::start(
        "board",
        server.addr,
        &words(&format!(
            "--duration 6s --rate 2000 --warmup 0s --start-at {start_at} \
            --metrics-linger 30s --format json --json {}",
            json.display()
        )),
    );
    let prom = Prometheus::start(&[served_metrics, load.metrics]);
    let result = wait_for_json(&json, Duration::from_secs(60));
    let r = &result["results"];
    let requests = r["requests"].as_u64().unwrap() as f64;
    let late = r["late_replies"].as_u64().unwrap() as f64;
    // 5 posters and 5 readers, one request in flight each.
    let in_flight = 10.0;
    let q = "sum(serverlab_load_responses_total)";
    let counted = prom.until(q, |v| v == requests);
    assert_eq!(counted, Some(requests), "{q}");
    // The board load also asks each topic's COUNT outside its window (to
    // check the board): those the server answered are left out.
    let window_start = r["agent"]["window_start_unix_s"].as_f64().unwrap();
    let q = "sum(serverlab_requests_total)";
    let outside = "sum(serverlab_requests_total{op=\"COUNT\"})";
    let within = |v: f64| (v - requests - late).abs() <= in_flight;
    let served = prom.until(&format!("{q} - {outside}"), within);
    let served = served.unwrap_or_else(|| panic!("no {q}"));
    assert!(
        within(served),
        "{q} - {outside} = {served}, the load's JSON {requests} (+{late} late)"
    );
    // The rate Prometheus saw late in the window (a range whose first
    // sample is the counter's very first is not extrapolated in full: the
    // first seconds are not compared) against the load's own per-second
    // series over the same seconds: a loop hands a second over at its
    // end, so the counter at k + 0.5 s holds the seconds before k.
    let per_second: Vec<f64> = r["per_second"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_f64().unwrap())
        .collect();
    assert_eq!(per_second.len(), 6, "{per_second:?}");
    for k in [4usize, 5] {
        let expected = per_second[k - 3..k].iter().sum::<f64>() / 3.0;
        let at = window_start + k as f64 + 0.5;
        let q = "sum(rate(serverlab_load_responses_total[3s]))";
        let seen = prom.query(q, Some(at));
        let seen = seen.unwrap_or_else(|| panic!("no {q} at second {k}"));
        assert!(
            (seen / expected - 1.0).abs() <= 0.05,
            "{q} at second {k}: {seen}, the per-second series {expected} ({per_second:?}); \
             load stderr: {}",
            load.stderr.lock().unwrap()
        );
    }
}
