//! `load resp` with the user's own commands (`--command`, weighted, with
//! `__key__` and `__data__`), `AUTH` and `SELECT` on every connection,
//! key distributions and value sizes whose shapes show in the keys the
//! server holds, thresholds that set the exit status, and a ramped open
//! loop (`--stages`) — against `serve resp`, and (ignored: they need
//! redis-server) against redis-server with `requirepass`, whose
//! `INFO commandstats` must agree with serverlab's counts.

use crate::resp::{cmd, Raw};
use crate::resp_interop::RedisServer;
use crate::support::*;
use std::collections::BTreeMap;
use std::net::SocketAddr;

fn serve() -> ServerProc {
    ServerProc::start("resp", &[])
}

/// `load resp --addr ADDR ARGS --format json`: its exit status, its
/// result and its stderr.
fn load_json(addr: &str, args: &[&str]) -> (Option<i32>, serde_json::Value, String) {
    let mut all = vec!["--addr", addr, "--format", "json"];
    all.extend(args);
    let out = load("resp", &all);
    let stdout = text(&out.stdout);
    let v = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {stdout}\n{}", text(&out.stderr)));
    (out.status.code(), v, text(&out.stderr))
}

/// Each operation's count, by name.
fn counts(v: &serde_json::Value) -> BTreeMap<String, u64> {
    v["results"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let n = o["count"].as_u64().unwrap();
            (o["name"].as_str().unwrap().to_string(), n)
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// Send `args` on `c` and return the reply's bytes.
fn call(c: &mut Raw, args: &[&str]) -> Vec<u8> {
    c.send(&cmd(args));
    c.reply()
}

/// The bulk strings of an array reply.
fn bulks(reply: &[u8]) -> Vec<String> {
    let t = text(reply);
    let mut lines = t.split("\r\n");
    let head = lines.next().unwrap();
    assert!(head.starts_with('*'), "not an array: {t:?}");
    lines
        .collect::<Vec<_>>()
        .chunks(2)
        .filter(|p| p.len() == 2 && p[0].starts_with('$'))
        .map(|p| p[1].to_string())
        .collect()
}

/// The string keys the server holds (`key:<12 digits>`), by index, with
/// their values (`auth`: sent first).
fn held(addr: SocketAddr, auth: Option<&str>) -> BTreeMap<usize, String> {
    let mut c = Raw::connect(addr);
    if let Some(pw) = auth {
        assert_eq!(call(&mut c, &["AUTH", pw]), b"+OK\r\n");
    }
    let names = bulks(&call(&mut c, &["KEYS", "key:*"]));
    names
        .iter()
        .map(|k| {
            let i = k["key:".len()..].parse().unwrap();
            let v = bulks(&[b"*1\r\n".as_slice(), &call(&mut c, &["GET", k])].concat());
            (i, v.into_iter().next().unwrap_or_default())
        })
        .collect()
}

/// Weighted commands of one's own: each counted under its name, in
/// about its weight's share, writing values of the sizes asked.
#[test]
fn own_commands_are_sent_by_weight_and_counted_by_name() {
    let server = serve();
    let addr = server.addr.to_string();
    let (code, v, err) = load_json(
        &addr,
        &[
            "--command",
            "SET __key__ __data__",
            "--command",
            "GET __key__",
            "--command-weight",
            "3",
            "--command-weight",
            "1",
            "--requests",
            "800",
            "--connections",
            "4",
            "--keys",
            "50",
            "--value-size",
            "100..200",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let n = counts(&v);
    assert_eq!(n.keys().collect::<Vec<_>>(), ["GET", "SET"], "{n:?}");
    assert_eq!(n["GET"] + n["SET"], 800);
    // Its operations are the commands given, each named once (not also
    // the built-in GET and SET, with nothing recorded).
    let names: Vec<&str> = v["results"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["SET", "GET"]);
    assert!((480..=720).contains(&n["SET"]), "3 in 4 are SETs: {n:?}");
    let r = &v["results"]["resp"];
    assert_eq!(r["workload"], "commands");
    assert_eq!(r["error_replies"], 0);
    assert_eq!(
        v["config"]["commands"][0]["command"],
        "SET __key__ __data__"
    );
    assert_eq!(v["config"]["commands"][0]["weight"], 3);
    assert_eq!(v["config"]["value_size"], "100..200");
    let keys = held(server.addr, None);
    assert!(!keys.is_empty() && keys.len() <= 50, "{}", keys.len());
    assert!(
        keys.values().all(|v| (100..=200).contains(&v.len())),
        "value sizes: {:?}",
        keys.values().map(String::len).collect::<Vec<_>>()
    );
    // Two commands of one name are told apart; the text says once that
    // there is no model of them.
    let out = server.load(
        "resp",
        &[
            "--command",
            "INCR __key__",
            "--command",
            "incr other",
            "--requests",
            "100",
            "--connections",
            "2",
        ],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("INCR#2"), "{stdout}");
    assert_eq!(stdout.matches("have no model").count(), 1, "{stdout}");
}

/// Error replies are counted by their prefix, and fail an error
/// threshold (exit 4) while the run itself succeeds.
#[test]
fn error_replies_are_counted_by_prefix_and_fail_a_threshold() {
    let server = serve();
    let addr = server.addr.to_string();
    // A list where GET wants a string: WRONGTYPE, every time.
    let mut c = Raw::connect(server.addr);
    assert_eq!(call(&mut c, &["RPUSH", "alist", "x"]), b":1\r\n");
    let (code, v, err) = load_json(
        &addr,
        &[
            "--command",
            "GET alist",
            "--command",
            "NOSUCHCOMMAND",
            "--requests",
            "200",
            "--connections",
            "2",
            "--threshold",
            "errors<0.1%",
            "--threshold",
            "p99<10s",
        ],
    );
    assert_eq!(code, Some(4), "{err}");
    let r = &v["results"]["resp"];
    assert_eq!(r["error_replies"], 200);
    let prefixes = &r["error_prefixes"];
    assert_eq!(
        prefixes["WRONGTYPE"].as_u64().unwrap() + prefixes["ERR"].as_u64().unwrap(),
        200,
        "{prefixes}"
    );
    let t = &v["results"]["thresholds"];
    assert_eq!(t[0]["threshold"], "errors<0.1%");
    assert_eq!(t[0]["passed"], false);
    assert_eq!(t[0]["actual"], 1.0);
    assert_eq!(t[1]["passed"], true);
    assert!(err.contains("threshold errors<0.1% failed"), "{err}");
}

/// A threshold that passes exits 0, one that fails exits 4; both are in
/// the text and the JSON, per operation or over all.
#[test]
fn thresholds_pass_exit_0_and_fail_exit_4() {
    let server = serve();
    let addr = server.addr.to_string();
    let base = ["--requests", "300", "--connections", "2"];
    let with = |ts: &[&'static str]| {
        let mut a: Vec<&str> = base.to_vec();
        for t in ts {
            a.extend(["--threshold", t]);
        }
        a
    };
    let (code, v, err) = load_json(&addr, &with(&["p99<30s", "get:max<=60s", "errors<1%"]));
    assert_eq!(code, Some(0), "{err}");
    let t = v["results"]["thresholds"].as_array().unwrap();
    assert_eq!(t.len(), 3);
    assert!(t.iter().all(|j| j["passed"] == true), "{t:?}");
    let (code, v, err) = load_json(&addr, &with(&["p99<30s", "set:p50<1ns"]));
    assert_eq!(code, Some(4), "{err}");
    assert_eq!(v["results"]["thresholds"][1]["passed"], false);
    assert!(err.contains("threshold set:p50<1ns failed"), "{err}");
    let out = server.load("resp", &with(&["p50<1ns"]));
    assert_eq!(out.status.code(), Some(4));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("thresholds: 1 of 1 failed") && stdout.contains("FAILED p50<1ns"),
        "{stdout}"
    );
    // What cannot be judged is refused before the run.
    load_usage_error(
        "resp",
        &["--addr", &addr, "--threshold", "hset:p99<1ms"],
        "hset",
    );
    load_usage_error(
        "resp",
        &["--addr", &addr, "--threshold", "rate>=0.99"],
        "--rate",
    );
    load_usage_error("resp", &["--addr", &addr, "--threshold", "p98<1ms"], "p98");
}

/// The slowest reply of a run, in seconds, from its intended send (an
/// open loop's latency counts the send's own lateness too).
fn slowest_reply_s(results: &serde_json::Value) -> f64 {
    let ops = results["operations"].as_array().unwrap();
    let max_us = ops.iter().map(|o| o["latency_us"]["max"].as_f64().unwrap());
    max_us.fold(0.0, f64::max) / 1e6
}

/// Replies by the end of each second (`got`, counted by when they came)
/// against the requests a ramp asked for (`want`, due by when they were
/// due): never more than had been asked by then, and short by at most
/// what the ramp asked in the run's `slowest` reply (sent late or
/// answered late, a reply may come that much after its request was due;
/// 10 ms more for the latency histogram's rounding), give or take a
/// request's rounding of the ramp.
fn assert_replies_follow(got: &[u64], want: &[f64], slowest: f64) {
    let top = want.iter().copied().fold(0.0, f64::max);
    let short = top * (slowest + 0.01) + 2.0;
    let (mut replies, mut asked) = (0.0, 0.0);
    for (s, (&g, &w)) in got.iter().zip(want).enumerate() {
        replies += g as f64;
        asked += w;
        assert!(
            replies <= asked + 2.0 && replies + short >= asked,
            "by second {s}'s end: {replies} replies, {asked} asked (slowest reply {slowest} s): \
             {got:?}"
        );
    }
}

/// A ramp (`--stages`): the rate asked, second by second, is the ramp's;
/// the replies follow it: by each second's end, never more than the ramp
/// had asked for, nor fewer than it had asked for the run's own slowest
/// reply earlier (a busy machine's stall moves replies across seconds'
/// edges, and the run says how long its stall was); and the verdict's
/// schedule check judges the ramp's mean, not a constant.
#[test]
fn a_ramp_follows_its_stages_second_by_second() {
    let server = serve();
    let addr = server.addr.to_string();
    let (code, v, err) = load_json(
        &addr,
        &["--stages", "2s:100,2s:300,2s:100", "--connections", "8"],
    );
    assert_eq!(code, Some(0), "{err}");
    let r = &v["results"];
    assert_eq!(v["load_model"], "open-loop, constant, ramped");
    assert_eq!(r["duration_s"], 6.0);
    assert_eq!(
        r["warmup_s"],
        serde_json::Value::Null,
        "a ramp's foot is its warm-up"
    );
    let asked: Vec<f64> = r["schedule"]["asked_per_second"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let want = [25.0, 75.0, 150.0, 250.0, 250.0, 150.0];
    assert_eq!(asked.len(), want.len());
    for (a, w) in asked.iter().zip(want) {
        assert!((a - w).abs() < 1e-6, "{asked:?}");
    }
    assert!((r["requested_rps"].as_f64().unwrap() - 150.0).abs() < 1e-6);
    let got: Vec<u64> = r["per_second"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_replies_follow(&got, &want, slowest_reply_s(r));
    let checks = r["validity"]["checks"].as_array().unwrap();
    let schedule = checks.iter().find(|c| c["name"] == "schedule").unwrap();
    assert!(
        schedule["detail"]
            .as_str()
            .unwrap()
            .contains("150.0 req/s asked"),
        "{schedule}"
    );
    // The text shows the ramp second by second.
    let out = server.load("resp", &["--stages", "1s:100,1s:100", "--connections", "2"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("stages 1s:100,1s:100, second by second:")
            && stdout.contains("asked")
            && stdout.contains("answered"),
        "{stdout}"
    );
    // The stages set the run's length: a duration beside them is refused.
    load_usage_error(
        "resp",
        &["--addr", &addr, "--stages", "1s:10", "--duration", "5s"],
        "--duration",
    );
    load_usage_error("resp", &["--addr", &addr, "--stages", "1s:x"], "--stages");
}

/// Sequential keys: each connection walks its own stride from its
/// index, so every key written is written once and each stride is
/// whole from its start. Gaussian keys: centred where asked.
fn key_shapes(addr: SocketAddr, auth: &[&str], ctx: &str) {
    let a = addr.to_string();
    let pw = auth.get(1).copied();
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(auth);
        let (code, v, err) = load_json(&a, &all);
        assert_eq!(code, Some(0), "{ctx}: {err}");
        v
    };
    run(&[
        "--command",
        "SET __key__ __data__",
        "--key-dist",
        "sequential",
        "--keys",
        "4000",
        "--connections",
        "4",
        "--requests",
        "400",
    ]);
    let keys = held(addr, pw);
    assert_eq!(keys.len(), 400, "{ctx}: each key once");
    for k in 0..4 {
        let stride: Vec<usize> = keys.keys().copied().filter(|i| i % 4 == k).collect();
        let whole: Vec<usize> = (0..stride.len()).map(|j| k + 4 * j).collect();
        assert_eq!(stride, whole, "{ctx}: connection {k} walks its stride");
    }
    let mut c = Raw::connect(addr);
    if let Some(pw) = pw {
        call(&mut c, &["AUTH", pw]);
    }
    assert_eq!(call(&mut c, &["FLUSHALL"]), b"+OK\r\n");
    let v = run(&[
        "--command",
        "INCR __key__",
        "--key-dist",
        "gaussian:600,25",
        "--keys",
        "1000",
        "--connections",
        "4",
        "--requests",
        "4000",
    ]);
    assert_eq!(v["config"]["key_pattern"], "gaussian:600,25");
    let keys = held(addr, pw);
    let hits: Vec<(usize, u64)> = keys.iter().map(|(&i, n)| (i, n.parse().unwrap())).collect();
    let total: u64 = hits.iter().map(|h| h.1).sum();
    assert_eq!(total, 4000, "{ctx}");
    let mean = hits.iter().map(|&(i, n)| i as f64 * n as f64).sum::<f64>() / total as f64;
    assert!((mean - 600.0).abs() < 3.0, "{ctx}: mean key {mean}");
    let near: u64 = hits
        .iter()
        .filter(|(i, _)| i.abs_diff(600) <= 50)
        .map(|h| h.1)
        .sum();
    assert!(
        near as f64 > 0.93 * total as f64,
        "{ctx}: {near} within 2 sd"
    );
    assert!(
        hits.iter().all(|(i, _)| i.abs_diff(600) < 200),
        "{ctx}: tails"
    );
}

#[test]
fn sequential_and_gaussian_keys_show_their_shapes_in_serve_resp() {
    let server = serve();
    key_shapes(server.addr, &[], "serve resp");
}

/// Flags that cannot go together, or cannot be read, are usage errors.
#[test]
fn own_commands_refuse_what_they_cannot_do() {
    let addr = "127.0.0.1:1";
    let bad = |args: &[&str], names: &str| {
        let mut all = vec!["--addr", addr];
        all.extend(args);
        load_usage_error("resp", &all, names);
    };
    bad(
        &[
            "--command",
            "GET x",
            "--command",
            "GET y",
            "--command-weight",
            "2",
        ],
        "--command-weight",
    );
    bad(&["--command", "GET x", "--verify"], "--verify");
    bad(
        &["--command", "GET x", "--workload", "board"],
        "--workload board",
    );
    bad(&["--command", "GET x", "--mix", "get=1"], "--mix");
    bad(&["--command", "SET 'open"], "quote");
    bad(&["--key-dist", "gaussian:5"], "gaussian");
    bad(&["--value-size", "9..3"], "--value-size");
    bad(&["--auth", ""], "--auth");
}

/// A redis-server of its own that wants `password`.
fn redis_with_password(password: &str) -> RedisServer {
    RedisServer::start_with(&["--requirepass", password])
}

/// INFO commandstats' calls of each command.
fn commandstats(addr: SocketAddr, password: &str) -> BTreeMap<String, u64> {
    let mut c = Raw::connect(addr);
    assert_eq!(call(&mut c, &["AUTH", password]), b"+OK\r\n");
    let info = text(&call(&mut c, &["INFO", "commandstats"]));
    info.lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = rest.split(',').find_map(|f| f.strip_prefix("calls="))?;
            Some((name.to_ascii_uppercase(), calls.parse().ok()?))
        })
        .collect()
}

/// `load resp --auth … --db N --command 'HSET __key__ f __data__'`
/// against redis-server with `requirepass`, over its Unix socket: every
/// connection AUTHs and SELECTs before the run, redis-server's INFO
/// commandstats (read over TCP) counts what serverlab counted, and the
/// keys land in the database asked for.
#[test]
#[ignore = "needs redis-server (apt-get install redis-server redis-tools); run: cargo test --workspace -- --ignored"]
fn own_commands_with_auth_agree_with_redis_commandstats() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("redis.sock").display().to_string();
    let redis = RedisServer::start_with(&["--requirepass", "s3cret", "--unixsocket", &sock]);
    let addr: SocketAddr = redis.addr().parse().unwrap();
    let (code, v, err) = load_json(
        &format!("unix:{sock}"),
        &[
            "--auth",
            "s3cret",
            "--db",
            "3",
            "--command",
            "HSET __key__ f __data__",
            "--command",
            "HGET __key__ f",
            "--command-weight",
            "3",
            "--command-weight",
            "1",
            "--requests",
            "2000",
            "--connections",
            "4",
            "--pipeline",
            "4",
            "--keys",
            "100",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["config"]["auth"], "***", "the password is never written");
    assert!(!v.to_string().contains("s3cret"));
    let ours = counts(&v);
    let theirs = commandstats(addr, "s3cret");
    assert_eq!(ours["HSET"] + ours["HGET"], 2000);
    assert_eq!(theirs["HSET"], ours["HSET"], "{theirs:?}");
    assert_eq!(theirs["HGET"], ours["HGET"], "{theirs:?}");
    // Each of the 4 connections and the setup's AUTHed and SELECTed.
    assert!(theirs["AUTH"] >= 5 && theirs["SELECT"] >= 5, "{theirs:?}");
    assert_eq!(v["results"]["resp"]["error_replies"], 0);
    let mut c = Raw::connect(addr);
    call(&mut c, &["AUTH", "s3cret"]);
    assert_eq!(call(&mut c, &["DBSIZE"]), b":0\r\n", "nothing in db 0");
    call(&mut c, &["SELECT", "3"]);
    let n = text(&call(&mut c, &["DBSIZE"]));
    let n: u64 = n.trim_start_matches(':').trim().parse().unwrap();
    assert!(n > 0 && n <= 100, "{n} keys in db 3");
    // A wrong password stops the run before it starts, and is not shown.
    let out = load(
        "resp",
        &[
            "--addr",
            &redis.addr(),
            "--auth",
            "nope",
            "--requests",
            "10",
        ],
    );
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("AUTH") && said.contains("WRONGPASS"),
        "{said}"
    );
    assert!(!said.contains("nope"), "{said}");
    // None at all: every reply is NOAUTH, counted by its prefix.
    let (code, v, err) = load_json(
        &redis.addr(),
        &[
            "--command",
            "GET __key__",
            "--requests",
            "50",
            "--connections",
            "1",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["results"]["resp"]["error_prefixes"]["NOAUTH"], 50);
}

#[test]
#[ignore = "needs redis-server (apt-get install redis-server redis-tools); run: cargo test --workspace -- --ignored"]
fn sequential_and_gaussian_keys_show_their_shapes_in_redis_server() {
    let redis = redis_with_password("pw");
    let addr: SocketAddr = redis.addr().parse().unwrap();
    key_shapes(addr, &["--auth", "pw"], "redis-server");
}

/// Two agents each run half of a ramp of one's own commands; `merge`
/// takes their commands' operations (named by the configuration) and
/// adds their asks second by second into the whole ramp's.
#[test]
fn agents_split_a_ramp_of_own_commands_and_merge_it() {
    let _turn = heavy_turn();
    let server = serve();
    let dir = tempfile::tempdir().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let at = format!(
        "{:.3}",
        (now + std::time::Duration::from_secs(2)).as_secs_f64()
    );
    let addr = server.addr.to_string();
    let agents: Vec<std::process::Child> = (0..2)
        .map(|i| {
            std::process::Command::new(BIN)
                .args(["load", "resp", "--addr", &addr])
                .args([
                    "--command",
                    "SET __key__ __data__",
                    "--command",
                    "GET __key__",
                ])
                .args(["--stages", "1s:200,1s:200", "--connections", "4"])
                .args(["--agent", &format!("{i}/2"), "--start-at", &at])
                .args(["--out", dir.path().to_str().unwrap()])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start an agent")
        })
        .collect();
    for (i, c) in agents.into_iter().enumerate() {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "agent {i}: {}", text(&out.stderr));
    }
    let out = run(&["merge", dir.path().to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = counts(&v);
    assert_eq!(n.keys().collect::<Vec<_>>(), ["GET", "SET"], "{n:?}");
    let asked: Vec<f64> = v["results"]["schedule"]["asked_per_second"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(
        (asked[0] - 100.0).abs() < 1e-6 && (asked[1] - 200.0).abs() < 1e-6,
        "{asked:?}"
    );
}

/// `load resp --tls` against redis-server's own TLS port (a certificate
/// made for the test, checked with `--cacert`, the name from `--addr`'s
/// host), with AUTH inside the session: redis-server's INFO
/// commandstats, read over its plain port, counts what serverlab
/// counted, and each connection's handshake is reported.
#[test]
#[ignore = "needs redis-server (apt-get install redis-server redis-tools); run: cargo test --workspace -- --ignored"]
fn load_resp_over_tls_agrees_with_redis_commandstats() {
    let pki = crate::tls::Pki::new();
    let tls_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let file = |name: &str| pki.path(name).display().to_string();
    let (cert, key, ca) = (file("cert.pem"), file("key.pem"), file("ca.pem"));
    let redis = RedisServer::start_with(&[
        "--requirepass",
        "s3cret",
        "--tls-port",
        &tls_port,
        "--tls-cert-file",
        &cert,
        "--tls-key-file",
        &key,
        "--tls-ca-cert-file",
        &ca,
        "--tls-auth-clients",
        "no",
    ]);
    let at = format!("localhost:{tls_port}");
    let (code, v, err) = load_json(
        &at,
        &[
            "--tls",
            "--cacert",
            &ca,
            "--auth",
            "s3cret",
            "--command",
            "HSET __key__ f __data__",
            "--requests",
            "1500",
            "--connections",
            "3",
            "--pipeline",
            "4",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let theirs = commandstats(redis.addr().parse().unwrap(), "s3cret");
    assert_eq!(counts(&v)["HSET"], 1500);
    assert_eq!(theirs["HSET"], 1500, "{theirs:?}");
    assert_eq!(v["results"]["tls"]["handshakes"], 3, "{}", v["results"]);
    assert_eq!(v["results"]["resp"]["error_replies"], 0);
}
