//! `serverlab load board` against real servers: verification, outputs,
//! the reference client's form, and failures that must exit 1.

use crate::support::*;
use std::time::Duration;

fn load(args: &[&str]) -> std::process::Output {
    crate::support::load("board", args)
}

#[test]
fn verified_run_passes_and_reports_every_operation() {
    let server = ServerProc::start("board", &["--store", "lockfree"]);
    let addr = server.addr.to_string();
    let out = load(&words(&format!(
        "--addr {addr} --posters 3 --readers 3 --duration 1s \
        --verify --reader-mix read=80,count=15,list=5 --topics 4"
    )));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    for needle in [
        "POST",
        "READ",
        "COUNT",
        "LIST",
        "p99.9 µs",
        "verification:",
        " 0 mismatches",
        "client CPU",
        "errors: none",
    ] {
        assert!(
            stdout.contains(needle),
            "text output lacks {needle:?}:\n{stdout}"
        );
    }
    assert!(stdout.contains("found a message"), "{stdout}");
}

#[test]
fn json_output_parses_with_config_environment_results() {
    let server = ServerProc::start("board", &[]);
    let addr = server.addr.to_string();
    let file = std::env::temp_dir().join(format!("serverlab-json-{}.json", std::process::id()));
    let out = load(&words(&format!(
        "--addr {addr} --posters 2 --readers 2 --duration 2s \
        --pipeline 8 --verify --format json --json {}",
        file.display()
    )));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let from_file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    std::fs::remove_file(&file).ok();
    assert_eq!(v["results"]["requests"], from_file["results"]["requests"]);
    assert_eq!(v["schema"], "serverlab-load/3");
    assert_eq!(v["protocol"], "board");
    assert_eq!(v["results"]["concurrency"], 4);
    assert_eq!(v["config"]["pipeline"], 8);
    assert_eq!(v["config"]["posters"], 2);
    assert!(v["environment"]["cores_online"].as_u64().unwrap() >= 1);
    let r = &v["results"];
    assert_eq!(r["per_second"].as_array().unwrap().len(), 2);
    let total: u64 = r["per_second"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .sum();
    assert_eq!(total, r["requests"].as_u64().unwrap());
    assert!(r["requests"].as_u64().unwrap() > 100);
    assert_eq!(r["threads"].as_array().unwrap().len(), 4);
    let post = &r["operations"][0];
    assert_eq!(post["name"], "POST");
    assert!(post["latency_us"]["p50"].as_f64().unwrap() > 0.0);
    assert!(
        post["latency_us"]["p50"].as_f64().unwrap() <= post["latency_us"]["max"].as_f64().unwrap()
    );
    assert!(!post["histogram_us"].as_array().unwrap().is_empty());
    assert_eq!(r["verification"]["mismatches"], 0);
    assert!(r["verification"]["checked"].as_u64().unwrap() > 100);
    // The board's own results, typed under its name.
    let board = &r["board"];
    let reads = &board["reads"];
    // Every READ counted is a hit or a miss, and only those: the warm-up's
    // READs are checked, not counted, here as beside them.
    let answered = reads["hits"].as_u64().unwrap() + reads["misses"].as_u64().unwrap();
    let counted = r["operations"][1]["count"].as_u64().unwrap();
    assert!(counted > 0);
    assert_eq!(answered, counted);
    assert!(board["posts_acknowledged"].as_u64().unwrap() >= post["count"].as_u64().unwrap());
}

/// The reference client's form: IP POSTERS READERS SECONDS THROTTLE on
/// port 12345, `caps` output, and EXIT on a new connection at the end.
#[test]
fn reference_form_prints_caps_and_sends_exit() {
    // Any 127.x address is loopback: pick one of our own so port 12345 is free.
    let ip = format!(
        "127.{}.{}.{}",
        10 + std::process::id() % 200,
        1 + std::process::id() % 250,
        7
    );
    let mut server = ServerProc::spawn(&["serve", "board", "--addr", &format!("{ip}:12345")]);
    let out = load(&[&ip, "2", "1", "2", "0"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    let mut i = 0;
    for (label, n) in [("POST", 0), ("POST", 1), ("READ", 0)] {
        assert_eq!(lines[i], format!("{label} thread {n} sent:"));
        for s in 0..2 {
            let l = lines[i + 1 + s];
            assert!(
                l.starts_with(&format!("\tSecond {s}: ")) && l.ends_with(" requests."),
                "{l:?}"
            );
        }
        assert!(
            lines[i + 3].starts_with("\tAverage: ") && lines[i + 3].ends_with(" requests."),
            "{:?}",
            lines[i + 3]
        );
        assert!(
            lines[i + 4].starts_with("\tRuntime: 2") && lines[i + 4].ends_with(" seconds."),
            "{:?}",
            lines[i + 4]
        );
        i += 5;
    }
    assert_eq!(lines[i], "");
    let summary = [
        "Total poster requests: ",
        "Average requests per poster thread: ",
        "Total reader requests: ",
        "Average requests per reader thread: ",
        "Total requests: ",
        "Average requests per thread: ",
        "Average requests per thread per second: ",
    ];
    for (k, prefix) in summary.iter().enumerate() {
        let l = lines[i + 1 + k];
        assert!(l.starts_with(prefix) && l.ends_with('.'), "{l:?}");
    }
    assert_eq!(lines.len(), i + 8, "{stdout}");
    let num = |k: usize| -> u64 {
        lines[i + 1 + k]
            .trim_end_matches('.')
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(num(0) + num(2), num(4));
    assert_eq!(num(1), num(0) / 2);
    assert_eq!(num(5), num(4) / 3);
    // The EXIT at the end stopped the server.
    let status = server
        .wait_exit(Duration::from_secs(20))
        .expect("the reference form sends EXIT");
    assert!(status.success());
}

#[test]
fn unreachable_server_exits_1() {
    unreachable_load_exits_1("board", &["--duration", "1s"]);
}

#[test]
fn server_dying_mid_run_exits_1() {
    let server = ServerProc::start("board", &[]);
    let addr = server.addr.to_string();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(700));
        drop(server);
    });
    let out = load(&words(&format!(
        "--addr {addr} --posters 2 --readers 2 --duration 3s"
    )));
    killer.join().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let all = text(&out.stdout) + &text(&out.stderr);
    assert!(all.contains("mid-run") || all.contains("reset"), "{all}");
}

/// A broken board server: every POST gets id 0, every READ the wrong text.
fn broken_board(s: std::net::TcpStream) {
    answer_lines(s, |req| {
        if req.starts_with(b"READ") {
            b"not what you posted".to_vec()
        } else {
            b"0".to_vec()
        }
    });
}

/// --verify must catch a broken server and fail the run.
#[test]
fn verify_catches_a_broken_server() {
    let addr = fake_server(broken_board);
    let out = load(&words(&format!(
        "--addr {addr} --posters 2 --readers 2 --duration 1s --verify"
    )));
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("already handed out"), "{stdout}");
    assert!(!stdout.contains(" 0 mismatches"), "{stdout}");
}

#[test]
fn load_against_echo_measures_the_ceiling() {
    let server = ServerProc::start("echo", &[]);
    let out = load(&words(&format!(
        "--addr {} --posters 1 --readers 1 --duration 1s",
        server.addr
    )));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("req/s"));
    // An echo is no message found or missing.
    assert!(
        !text(&out.stdout).contains("found a message"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn throttle_paces_each_connection() {
    // A paced count over 2 s: taken in turn, so no other heavy test
    // holds the client back.
    let _turn = heavy_turn();
    let server = ServerProc::start("board", &[]);
    let out = load(&words(&format!(
        "--addr {} --posters 1 --readers 0 --duration 2s --throttle \
        100 --format json",
        server.addr
    )));
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = v["results"]["requests"].as_u64().unwrap();
    assert!((180..=201).contains(&n), "100/s for 2 s gave {n}");
    assert_eq!(v["load_model"], "closed-loop, throttled");
}
