//! Interoperability with real HTTP clients (Debian's curl, httperf, wrk;
//! `.ci/run` installs them). Each test is ignored by default, named with
//! the tool it needs, and fails (never passes quietly) when run without
//! it: `cargo test --workspace -- --ignored`.

use crate::support::*;
use std::process::Command;

/// `tool` runs here, or the test fails saying how to install it.
fn need(tool: &str) {
    let ok = Command::new(tool)
        .arg(if tool == "httperf" {
            "--version"
        } else {
            "--help"
        })
        .output()
        .is_ok();
    assert!(
        ok,
        "`{tool}` is not installed: apt-get install {tool} (.ci/run installs it)"
    );
}

fn tool(cmd: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new(cmd).args(args).output().expect("run the tool");
    (
        out.status.success(),
        format!("{}{}", text(&out.stdout), text(&out.stderr)),
    )
}

#[test]
#[ignore = "needs curl (apt-get install curl); run: cargo test --workspace -- --ignored"]
fn curl_basics() {
    need("curl");
    let server = ServerProc::start("kv", &["--strategy", "pool-locked"]);
    let base = format!("http://{}", server.addr);
    let code = |args: &[&str]| {
        let mut all = vec!["-s", "-o", "/dev/null", "-w", "%{http_code}"];
        all.extend(args);
        let (ok, out) = tool("curl", &all);
        assert!(ok, "curl {args:?}: {out}");
        out
    };
    let key = format!("{base}/curl%20key");
    assert_eq!(
        code(&["-X", "PUT", "--data-binary", "hello curl", &key]),
        "201"
    );
    assert_eq!(
        code(&["-X", "PUT", "--data-binary", "hello again", &key]),
        "200"
    );
    let (ok, body) = tool("curl", &["-s", &key]);
    assert!(ok);
    assert_eq!(body, "hello again");
    let (_, head) = tool("curl", &["-s", "-I", &key]);
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    assert!(head.contains("Content-Length: 11"), "{head}");
    let etag = head
        .lines()
        .find_map(|l| l.strip_prefix("ETag: "))
        .expect("an ETag")
        .trim()
        .to_string();
    assert_eq!(etag.len(), 34, "{etag}");
    assert_eq!(
        code(&["-H", &format!("If-None-Match: {etag}"), &key]),
        "304"
    );
    assert_eq!(code(&["--http1.0", &key]), "200");
    assert_eq!(code(&["-X", "DELETE", &key]), "200");
    assert_eq!(code(&["-X", "DELETE", &key]), "404");
    assert_eq!(code(&[&key]), "404");
    assert_eq!(code(&["-X", "PATCH", &key]), "405");
    let (_, health) = tool("curl", &["-s", &format!("{base}/_/health")]);
    assert_eq!(health, "ok");
    let (_, stats) = tool("curl", &["-s", &format!("{base}/_/stats")]);
    let v: serde_json::Value = serde_json::from_str(&stats).expect("stats JSON");
    assert!(v["requests"]["total"].as_u64().unwrap() >= 10, "{v}");
    // A 2 MiB upload: curl sends Expect: 100-continue, the server answers
    // 413 at once, and curl never sends the body.
    let big = std::env::temp_dir().join(format!("serverlab-kv-big-{}", std::process::id()));
    std::fs::write(&big, vec![b'x'; 2 << 20]).unwrap();
    let upload = format!("@{}", big.display());
    assert_eq!(code(&["-X", "PUT", "--data-binary", &upload, &key]), "413");
    // Exactly 1 MiB is accepted (through 100 Continue).
    std::fs::write(&big, vec![b'y'; 1 << 20]).unwrap();
    assert_eq!(code(&["-X", "PUT", "--data-binary", &upload, &key]), "201");
    let _ = std::fs::remove_file(&big);
    assert!(server.stop().0.success());
}

/// httperf: 200 connections × 50 calls to a stored key, all 2xx, no errors.
#[test]
#[ignore = "needs httperf (apt-get install httperf); run: cargo test --workspace -- --ignored"]
fn httperf_sessions() {
    need("httperf");
    let server = ServerProc::start("kv", &["--strategy", "pool-locked", "--threads", "2"]);
    let mut c = crate::kv::Http::connect(server.addr);
    assert_eq!(
        c.request("PUT", "/hot", Some(b"a stored value")).status,
        201
    );
    drop(c);
    let port = server.addr.port().to_string();
    let (ok, out) = tool(
        "httperf",
        &words(&format!(
            "--server 127.0.0.1 --port {port} --uri /hot --num-conns 200 \
            --num-calls 50 --timeout 30"
        )),
    );
    assert!(ok, "{out}");
    assert!(
        out.contains("Reply status: 1xx=0 2xx=10000 3xx=0 4xx=0 5xx=0"),
        "{out}"
    );
    assert!(out.contains("Errors: total 0 "), "{out}");
    let (status, served) = server.stop();
    assert!(status.success());
    assert!(served.contains("GET 10000"), "{served}");
}

/// wrk for 2 s: no non-2xx responses, no socket errors.
#[test]
#[ignore = "needs wrk (apt-get install wrk); run: cargo test --workspace -- --ignored"]
fn wrk_two_seconds() {
    need("wrk");
    let server = ServerProc::start("kv", &["--strategy", "async", "--threads", "2"]);
    let mut c = crate::kv::Http::connect(server.addr);
    assert_eq!(
        c.request("PUT", "/hot", Some(b"a stored value")).status,
        201
    );
    drop(c);
    let url = format!("http://{}/hot", server.addr);
    let (ok, out) = tool(
        "wrk",
        &["-t", "1", "-c", "8", "-d", "2s", "--timeout", "10s", &url],
    );
    assert!(ok, "{out}");
    assert!(out.contains("Requests/sec:"), "{out}");
    assert!(!out.contains("Non-2xx or 3xx responses"), "{out}");
    assert!(!out.contains("Socket errors"), "{out}");
    assert!(server.stop().0.success());
}
