//! TLS for the load: `load http` with `https://` URLs and `load resp
//! --tls`, against serverlab's own servers behind a TLS terminator (so
//! every reply is verified), the certificate checked against `--cacert`,
//! refused against Mozilla's roots or for another name, and unchecked,
//! loudly, with `--insecure`; each connection's handshake counted and
//! timed apart from the requests.

use crate::support::*;
use crate::tls::{Pki, Terminator};

/// `load http` PUTting keys through TLS to a `serve kv`, with `args`.
fn put_over_tls(tls: &Terminator, host: &str, args: &[&str]) -> std::process::Output {
    let url = format!("https://{host}:{}/k{{key}}", tls.port);
    let mut all = vec!["--url", &url, "--method", "PUT", "--body", "{value}"];
    all.extend(args);
    load("http", &all)
}

fn json_of(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)))
}

#[test]
fn load_http_over_tls_is_checked_against_cacert_and_counts_each_handshake() {
    let pki = Pki::new();
    let kv = ServerProc::start("kv", &[]);
    let tls = Terminator::start(&pki, kv.addr);
    let ca = pki.ca();
    let out = put_over_tls(
        &tls,
        "localhost",
        &[
            "--cacert",
            &ca,
            "--requests",
            "300",
            "--connections",
            "4",
            "--verify",
            "--format",
            "json",
        ],
    );
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let v = json_of(&out);
    let r = &v["results"];
    assert_eq!(r["requests"], 300, "{r}");
    assert_eq!(
        r["http"]["targets"][0]["statuses"]["200"]
            .as_u64()
            .unwrap_or(0)
            + r["http"]["targets"][0]["statuses"]["201"]
                .as_u64()
                .unwrap_or(0)
            + r["http"]["targets"][0]["statuses"]["204"]
                .as_u64()
                .unwrap_or(0),
        300,
        "{r}"
    );
    // Keep-alive: one handshake per connection, timed apart.
    assert_eq!(r["tls"]["handshakes"], 4, "{r}");
    // And one more before the run, that checks the server is there.
    assert_eq!(tls.handshakes(), 1 + 4);
    assert!(
        r["tls"]["handshake_us"]["p50"].as_f64().unwrap() > 0.0,
        "{r}"
    );
    assert!(r["tls"].get("insecure").is_none(), "{r}");
    assert!(
        v["config"]["addr"].as_str().unwrap().starts_with("tls://"),
        "{v}"
    );
}

#[test]
fn without_keepalive_every_request_pays_its_own_handshake() {
    let pki = Pki::new();
    let kv = ServerProc::start("kv", &[]);
    let tls = Terminator::start(&pki, kv.addr);
    let ca = pki.ca();
    let out = put_over_tls(
        &tls,
        "localhost",
        &[
            "--cacert",
            &ca,
            "--requests",
            "60",
            "--connections",
            "3",
            "--no-keepalive",
        ],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("TLS: 60 handshakes"), "{stdout}");
    assert!(stdout.contains("apart from the latency above"), "{stdout}");
    assert_eq!(
        tls.handshakes(),
        1 + 60,
        "one more checks the server is there"
    );
}

#[test]
fn a_certificate_the_client_cannot_trust_fails_the_run_saying_why() {
    let pki = Pki::new();
    let kv = ServerProc::start("kv", &[]);
    let tls = Terminator::start(&pki, kv.addr);
    // Mozilla's roots do not know the test CA: persistent connections
    // fail before the run, and a connection per request fails each time.
    for extra in [&[][..], &["--no-keepalive"][..]] {
        let mut args = vec!["--requests", "20", "--connections", "2"];
        args.extend(extra);
        let out = put_over_tls(&tls, "localhost", &args);
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {said}");
        assert!(said.contains("UnknownIssuer"), "{extra:?}: {said}");
    }
    // The CA is right but the name is not: the certificate is localhost's.
    let ca = pki.ca();
    let out = put_over_tls(&tls, "127.0.0.1", &["--cacert", &ca, "--requests", "5"]);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("not valid for name"), "{said}");
    assert_eq!(tls.handshakes(), 0);
}

#[test]
fn insecure_runs_unchecked_and_says_so_loudly() {
    let pki = Pki::new();
    let kv = ServerProc::start("kv", &[]);
    let tls = Terminator::start(&pki, kv.addr);
    let out = put_over_tls(&tls, "127.0.0.1", &["--insecure", "--requests", "40"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    for said in [&stdout, &stderr] {
        assert!(said.contains("WARNING: --insecure"), "{said}");
    }
    let out = put_over_tls(
        &tls,
        "127.0.0.1",
        &["--insecure", "--requests", "40", "--format", "json"],
    );
    assert_eq!(json_of(&out)["results"]["tls"]["insecure"], true);
}

#[test]
fn tls_flags_without_tls_are_usage_errors_naming_them() {
    load_usage_error(
        "http",
        &["--url", "http://127.0.0.1:1/", "--insecure"],
        "--insecure",
    );
    load_usage_error(
        "http",
        &["--url", "http://127.0.0.1:1/", "--cacert", "x.pem"],
        "--cacert",
    );
    load_usage_error(
        "http",
        &[
            "--url",
            "https://127.0.0.1:1/",
            "--url",
            "http://127.0.0.1:1/",
        ],
        "https://",
    );
    load_usage_error("resp", &["--insecure"], "--tls");
    load_usage_error("resp", &["--sni", "x"], "--tls");
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "no certificate here\n").unwrap();
    load_usage_error(
        "http",
        &[
            "--url",
            "https://127.0.0.1:1/",
            "--cacert",
            empty.to_str().unwrap(),
        ],
        "--cacert",
    );
}

#[test]
fn a_server_that_never_answers_the_handshake_times_the_connect_out() {
    // Accepts, reads the ClientHello, says nothing.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            held.push(s);
        }
    });
    let url = format!("https://127.0.0.1:{port}/");
    for extra in [&[][..], &["--no-keepalive"][..]] {
        let mut args = vec![
            "--url",
            &url,
            "--insecure",
            "--requests",
            "3",
            "--connections",
            "1",
        ];
        args.extend(extra);
        let out = load("http", &args);
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {said}");
    }
}

#[test]
fn load_resp_over_tls_is_verified_end_to_end() {
    let pki = Pki::new();
    let resp = ServerProc::start("resp", &[]);
    let tls = Terminator::start(&pki, resp.addr);
    let addr = format!("127.0.0.1:{}", tls.port);
    let ca = pki.ca();
    let out = load(
        "resp",
        &[
            "--addr",
            &addr,
            "--tls",
            "--cacert",
            &ca,
            "--sni",
            "localhost",
            "--connections",
            "3",
            "--requests",
            "400",
            "--verify",
            "--format",
            "json",
        ],
    );
    let v = json_of(&out);
    assert!(out.status.success(), "{v}{}", text(&out.stderr));
    assert_eq!(v["results"]["requests"], 400);
    assert_eq!(v["results"]["verification"]["mismatches"], 0, "{v}");
    assert_eq!(v["results"]["tls"]["handshakes"], 3);
    // Without --sni the name is --addr's host, an address the certificate
    // does not name.
    let out = load(
        "resp",
        &[
            "--addr",
            &addr,
            "--tls",
            "--cacert",
            &ca,
            "--requests",
            "10",
        ],
    );
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("not valid for name"), "{said}");
    let localhost = format!("localhost:{}", tls.port);
    let out = load(
        "resp",
        &[
            "--addr",
            &localhost,
            "--tls",
            "--cacert",
            &ca,
            "--requests",
            "10",
        ],
    );
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[test]
fn a_self_signed_certificate_given_as_cacert_is_trusted_for_its_name_only() {
    // webpki alone refuses a certificate that is its own CA at the end of
    // a chain; the user named this very certificate, so it is trusted.
    let pki = Pki::self_signed();
    let kv = ServerProc::start("kv", &[]);
    let tls = Terminator::start(&pki, kv.addr);
    let ca = pki.ca();
    let out = put_over_tls(&tls, "localhost", &["--cacert", &ca, "--requests", "20"]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let out = put_over_tls(&tls, "127.0.0.1", &["--cacert", &ca, "--requests", "5"]);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("not valid for name"), "{said}");
    // Another self-signed certificate is no trust at all.
    let other = Pki::self_signed();
    let out = put_over_tls(
        &tls,
        "localhost",
        &["--cacert", &other.ca(), "--requests", "5"],
    );
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("invalid peer certificate"), "{said}");
}
