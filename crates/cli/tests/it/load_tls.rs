//! TLS for the load: `load http` with `https://` URLs and `load resp
//! --tls`, against serverlab's own servers behind a TLS terminator (so
//! every reply is verified), the certificate checked against `--cacert`,
//! refused against Mozilla's roots or for another name, and unchecked,
//! loudly, with `--insecure`; each connection's handshake counted and
//! timed apart from the requests.

use crate::support::*;
use crate::tls::{Pki, Terminator};
use std::process::Output;

/// A `serve kv` behind a TLS terminator with `pki`'s certificate.
struct TlsKv {
    pki: Pki,
    _kv: ServerProc,
    tls: Terminator,
}

impl TlsKv {
    fn start(pki: Pki) -> TlsKv {
        let kv = ServerProc::start("kv", &[]);
        let tls = Terminator::start(&pki, kv.addr);
        TlsKv { pki, _kv: kv, tls }
    }

    /// `load http` PUTting keys to it as `host`, with `args` alone.
    fn put_unchecked(&self, host: &str, args: &[&str]) -> Output {
        let url = format!("https://{host}:{}/k{{key}}", self.tls.port);
        let mut all = vec!["--url", &url, "--method", "PUT", "--body", "{value}"];
        all.extend(args);
        load("http", &all)
    }

    /// The same, checked against its own CA.
    fn put(&self, host: &str, args: &[&str]) -> Output {
        let ca = self.pki.ca();
        let mut all = vec!["--cacert", &ca];
        all.extend(args);
        self.put_unchecked(host, &all)
    }
}

fn said(out: &Output) -> String {
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

fn json_of(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", said(out)))
}

/// The run failed (exit 1) saying `why`.
fn fails_saying(out: &Output, why: &str) {
    let said = said(out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains(why), "{said}");
}

#[test]
fn load_http_over_tls_is_checked_against_cacert_and_counts_each_handshake() {
    let kv = TlsKv::start(Pki::new());
    let args = [
        "--requests",
        "300",
        "--connections",
        "4",
        "--verify",
        "--format",
        "json",
    ];
    let out = kv.put("localhost", &args);
    assert!(out.status.success(), "{}", said(&out));
    let v = json_of(&out);
    let r = &v["results"];
    assert_eq!(r["requests"], 300, "{r}");
    let statuses = r["http"]["targets"][0]["statuses"].as_object().unwrap();
    let ok: u64 = statuses.values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(ok, 300, "{r}");
    assert!(statuses.keys().all(|s| s.starts_with('2')), "{r}");
    // Keep-alive: one handshake per connection, timed apart; and one
    // more before the run, that checks the server is there.
    assert_eq!(r["tls"]["handshakes"], 4, "{r}");
    assert_eq!(kv.tls.handshakes(), 1 + 4);
    assert!(
        r["tls"]["handshake_us"]["p50"].as_f64().unwrap() > 0.0,
        "{r}"
    );
    assert!(r["tls"].get("insecure").is_none(), "{r}");
    let addr = v["config"]["addr"].as_str().unwrap();
    assert!(addr.starts_with("tls://"), "{addr}");
}

#[test]
fn without_keepalive_every_request_pays_its_own_handshake() {
    let kv = TlsKv::start(Pki::new());
    let args = ["--requests", "60", "--connections", "3", "--no-keepalive"];
    let out = kv.put("localhost", &args);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", said(&out));
    assert!(stdout.contains("TLS: 60 handshakes"), "{stdout}");
    assert!(stdout.contains("apart from the latency above"), "{stdout}");
    let made = kv.tls.handshakes();
    assert_eq!(made, 1 + 60, "one more checks the server is there");
}

#[test]
fn a_certificate_the_client_cannot_trust_fails_the_run_saying_why() {
    let kv = TlsKv::start(Pki::new());
    // Mozilla's roots do not know the test CA: persistent connections
    // fail before the run, and a connection per request fails each time.
    for extra in [&[][..], &["--no-keepalive"][..]] {
        let mut args = vec!["--requests", "20", "--connections", "2"];
        args.extend(extra);
        fails_saying(&kv.put_unchecked("localhost", &args), "UnknownIssuer");
    }
    // The CA is right but the name is not: the certificate is localhost's.
    let out = kv.put("127.0.0.1", &["--requests", "5"]);
    fails_saying(&out, "not valid for name");
    assert_eq!(kv.tls.handshakes(), 0);
}

#[test]
fn insecure_runs_unchecked_and_says_so_loudly() {
    let kv = TlsKv::start(Pki::new());
    let out = kv.put_unchecked("127.0.0.1", &["--insecure", "--requests", "40"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    for said in [&stdout, &stderr] {
        assert!(said.contains("WARNING: --insecure"), "{said}");
    }
    let args = ["--insecure", "--requests", "40", "--format", "json"];
    let out = kv.put_unchecked("127.0.0.1", &args);
    assert_eq!(json_of(&out)["results"]["tls"]["insecure"], true);
}

#[test]
fn a_self_signed_certificate_given_as_cacert_is_trusted_for_its_name_only() {
    // webpki alone refuses a certificate that is its own CA at the end of
    // a chain; the user named this very certificate, so it is trusted.
    let kv = TlsKv::start(Pki::self_signed());
    let out = kv.put("localhost", &["--requests", "20"]);
    assert!(out.status.success(), "{}", said(&out));
    fails_saying(
        &kv.put("127.0.0.1", &["--requests", "5"]),
        "not valid for name",
    );
    // Another self-signed certificate is no trust at all.
    let other = Pki::self_signed();
    let out = kv.put_unchecked("localhost", &["--cacert", &other.ca(), "--requests", "5"]);
    fails_saying(&out, "invalid peer certificate");
}

#[test]
fn tls_flags_without_tls_are_usage_errors_naming_them() {
    let plain = ["--url", "http://127.0.0.1:1/"];
    load_usage_error(
        "http",
        &[&plain[..], &["--insecure"]].concat(),
        "--insecure",
    );
    load_usage_error(
        "http",
        &[&plain[..], &["--cacert", "x.pem"]].concat(),
        "--cacert",
    );
    let mixed = [
        "--url",
        "https://127.0.0.1:1/",
        "--url",
        "http://127.0.0.1:1/",
    ];
    load_usage_error("http", &mixed, "https://");
    load_usage_error("resp", &["--insecure"], "--tls");
    load_usage_error("resp", &["--sni", "x"], "--tls");
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "no certificate here\n").unwrap();
    let args = [
        "--url",
        "https://127.0.0.1:1/",
        "--cacert",
        empty.to_str().unwrap(),
    ];
    load_usage_error("http", &args, "--cacert");
}

#[test]
fn a_server_that_never_answers_the_handshake_times_the_connect_out() {
    // Accepts, reads nothing, says nothing.
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
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {}", said(&out));
    }
}

#[test]
fn load_resp_over_tls_is_verified_end_to_end() {
    let pki = Pki::new();
    let resp = ServerProc::start("resp", &[]);
    let tls = Terminator::start(&pki, resp.addr);
    let ca = pki.ca();
    let resp_over = |host: &str, extra: &[&str]| {
        let addr = format!("{host}:{}", tls.port);
        let mut args = vec!["--addr", &addr, "--tls", "--cacert", &ca];
        args.extend(extra);
        load("resp", &args)
    };
    let args = [
        "--sni",
        "localhost",
        "--connections",
        "3",
        "--requests",
        "400",
        "--verify",
        "--format",
        "json",
    ];
    let out = resp_over("127.0.0.1", &args);
    let v = json_of(&out);
    assert!(out.status.success(), "{v}{}", text(&out.stderr));
    assert_eq!(v["results"]["requests"], 400);
    assert_eq!(v["results"]["verification"]["mismatches"], 0, "{v}");
    assert_eq!(v["results"]["tls"]["handshakes"], 3);
    // Without --sni the name is --addr's host: an address the certificate
    // does not name, or the name it does.
    fails_saying(
        &resp_over("127.0.0.1", &["--requests", "10"]),
        "not valid for name",
    );
    let out = resp_over("localhost", &["--requests", "10"]);
    assert!(out.status.success(), "{}", said(&out));
}
