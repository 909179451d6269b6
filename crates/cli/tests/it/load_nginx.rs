//! `serverlab load http` against a real nginx (Debian's nginx-light, which
//! .ci/run installs; ignored by default, and failing, not skipping,
//! without it): three locations, a TCP and a Unix socket listener, each
//! plain and under TLS (a certificate made for the test), a targets file of weighted URLs, methods, headers and a body. nginx's
//! access log must count, path by path, what serverlab counts per target,
//! and the 404 target must be counted as errors by status, the run's
//! only errors (it fails, exit 1).

use crate::support::*;
use crate::tls::Pki;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const NEEDS: &str = "needs nginx (apt-get install nginx-light)";

/// nginx on 127.0.0.1:`port` and on a Unix socket, in a directory of its
/// own; killed when dropped.
struct Nginx {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
    /// Its TLS listener's port, with `pki`'s certificate for localhost.
    tls_port: u16,
    pki: Pki,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn nginx_binary() -> PathBuf {
    for p in ["nginx", "/usr/sbin/nginx"] {
        if Command::new(p).arg("-v").output().is_ok() {
            return PathBuf::from(p);
        }
    }
    panic!("nginx cannot run: {NEEDS}");
}

impl Nginx {
    fn start() -> Nginx {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let free = || {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let (port, tls_port) = (free(), free());
        let pki = Pki::new();
        let (cert, key) = (pki.path("cert.pem"), pki.path("key.pem"));
        std::fs::create_dir_all(d.join("www/static")).unwrap();
        std::fs::write(d.join("www/static/a.txt"), "alpha\n").unwrap();
        std::fs::write(d.join("www/static/b.txt"), "b".repeat(5000)).unwrap();
        let p = d.display();
        let conf = format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\npid {p}/nginx.pid;\n\
             error_log {p}/error.log;\nevents {{ worker_connections 1024; }}\n\
             http {{\n  log_format counted '$request_method $uri $status';\n\
               access_log {p}/access.log counted;\n\
               client_body_temp_path {p}/body;\n  proxy_temp_path {p}/proxy;\n\
               keepalive_requests 1000000;\n\
               server {{\n    listen 127.0.0.1:{port};\n    listen unix:{p}/nginx.sock;\n\
                 listen 127.0.0.1:{tls_port} ssl;\n    listen unix:{p}/nginx-tls.sock ssl;\n\
                 ssl_certificate {};\n    ssl_certificate_key {};\n\
                 root {p}/www;\n\
                 location /static/ {{ }}\n\
                 location /api/ {{ return 201 \"created\\n\"; }}\n\
                 location /missing/ {{ return 404; }}\n  }}\n}}\n",
            cert.display(),
            key.display()
        );
        std::fs::write(d.join("nginx.conf"), conf).unwrap();
        let child = Command::new(nginx_binary())
            .arg("-p")
            .arg(d)
            .arg("-c")
            .arg(d.join("nginx.conf"))
            .arg("-e")
            .arg(d.join("error.log"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("nginx cannot start ({e}): {NEEDS}"));
        let nginx = Nginx {
            child,
            dir,
            port,
            tls_port,
            pki,
        };
        let socks = ["nginx.sock", "nginx-tls.sock"].map(|s| nginx.dir.path().join(s));
        wait_for("nginx to listen", Duration::from_secs(20), || {
            [port, tls_port]
                .iter()
                .all(|p| std::net::TcpStream::connect(("127.0.0.1", *p)).is_ok())
                && socks.iter().all(|s| s.exists())
        });
        nginx
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The access log's lines, `METHOD URI STATUS`, counted.
    fn logged(&self) -> BTreeMap<String, u64> {
        let text = std::fs::read_to_string(self.path("access.log")).unwrap_or_default();
        let mut counts = BTreeMap::new();
        for line in text.lines() {
            *counts.entry(line.to_string()).or_insert(0) += 1;
        }
        counts
    }
}

/// The targets file: weighted URLs under `base` (`http://HOST:PORT`),
/// four methods, headers, a body with placeholders, and a location that
/// answers 404.
fn write_targets(nginx: &Nginx, base: &str) -> PathBuf {
    let body = nginx.path("body.json");
    std::fs::write(&body, "{\"id\": {key}, \"data\": \"{value}\"}").unwrap();
    let targets = format!(
        "GET {base}/static/a.txt weight=4\nAccept: text/plain\n\n\
         HEAD {base}/static/b.txt\n\n\
         POST {base}/api/items weight=3\nContent-Type: application/json\n\
         X-Request-Key: {{key}}\n@{}\n\n\
         GET {base}/missing/page weight=2\n",
        body.display()
    );
    let path = nginx.path("targets.txt");
    std::fs::write(&path, targets).unwrap();
    path
}

/// What each target is in the access log.
const LOGGED_AS: [(&str, &str); 4] = [
    ("/static/a.txt", "GET /static/a.txt 200"),
    ("/static/b.txt", "HEAD /static/b.txt 200"),
    ("/api/items", "POST /api/items 201"),
    ("/missing/page", "GET /missing/page 404"),
];

/// Run the targets under `base` against `addr` (a TCP address or
/// unix:PATH) with `extra` flags, and check nginx's log against
/// serverlab's counts (the log's counts before the run are `before`).
fn run_and_compare(
    nginx: &Nginx,
    (addr, base): (&str, &str),
    extra: &[&str],
    before: &BTreeMap<String, u64>,
) -> serde_json::Value {
    let targets = write_targets(nginx, base);
    let json = nginx.path("load.json");
    let mut args = vec![
        "--addr",
        addr,
        "--targets",
        targets.to_str().unwrap(),
        "--requests",
        "2000",
        "--connections",
        "4",
        "--pipeline",
        "2",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend(extra);
    let out = load("http", &args);
    let stdout = text(&out.stdout);
    // The 404s are errors of the run: it fails, and they alone.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{addr}: {stdout}{}",
        text(&out.stderr)
    );
    let v = read_json(&json);
    let h = &v["results"]["http"];
    let targets = h["targets"].as_array().unwrap();
    let expected: BTreeMap<String, u64> = LOGGED_AS
        .iter()
        .map(|(path, line)| {
            let t = targets
                .iter()
                .find(|t| t["target"].as_str().unwrap().ends_with(path))
                .unwrap_or_else(|| panic!("no target {path}: {h}"));
            let n = t["requests"].as_u64().unwrap();
            (
                line.to_string(),
                before.get(*line).copied().unwrap_or(0) + n,
            )
        })
        .collect();
    assert_eq!(
        expected.values().sum::<u64>() - before.values().sum::<u64>(),
        2000,
        "{h}"
    );
    // nginx logs a request once it has answered it: poll for the last.
    let mut logged = nginx.logged();
    wait_for(
        "nginx to log every request",
        Duration::from_secs(20),
        || {
            logged = nginx.logged();
            logged == expected
        },
    );
    assert_eq!(logged, expected, "{addr}: nginx's log against {h}");
    let missing = targets
        .iter()
        .find(|t| t["target"].as_str().unwrap().ends_with("/missing/page"))
        .unwrap();
    assert_eq!(missing["errors"], missing["requests"], "{h}");
    assert_eq!(h["errors_by_status"]["404"], missing["requests"], "{h}");
    assert_eq!(h["errors_by_status"].as_object().unwrap().len(), 1, "{h}");
    assert!(
        stdout.contains("errors by status (expected 2xx): 404="),
        "{stdout}"
    );
    let errors = v["results"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let line = errors[0].as_str().unwrap();
    assert!(
        line.starts_with(&format!("status 404: {} responses", missing["requests"])),
        "{line}"
    );
    assert!(stdout.contains(&format!("    {line}\n")), "{stdout}");
    v
}

#[test]
#[ignore = "needs nginx (apt-get install nginx-light)"]
fn nginx_counts_what_load_http_counts_over_tcp_and_a_unix_socket() {
    let nginx = Nginx::start();
    let tcp = format!("127.0.0.1:{}", nginx.port);
    let base = format!("http://{tcp}");
    run_and_compare(&nginx, (&tcp, &base), &[], &BTreeMap::new());
    let before = nginx.logged();
    let unix = format!("unix:{}", nginx.path("nginx.sock").display());
    run_and_compare(&nginx, (&unix, &base), &[], &before);
    assert!(Path::new(&nginx.path("nginx.sock")).exists());
}

#[test]
#[ignore = "needs nginx (apt-get install nginx-light)"]
fn nginx_counts_what_load_http_counts_over_tls_on_tcp_and_a_unix_socket() {
    let nginx = Nginx::start();
    let ca = nginx.pki.ca();
    let tcp = format!("127.0.0.1:{}", nginx.tls_port);
    let base = format!("https://localhost:{}", nginx.tls_port);
    let v = run_and_compare(&nginx, (&tcp, &base), &["--cacert", &ca], &BTreeMap::new());
    // Keep-alive: a handshake per connection (nginx keeps them open for
    // a million requests here).
    assert_eq!(v["results"]["tls"]["handshakes"], 4, "{}", v["results"]);
    let before = nginx.logged();
    let unix = format!("unix:{}", nginx.path("nginx-tls.sock").display());
    let v = run_and_compare(&nginx, (&unix, &base), &["--cacert", &ca], &before);
    assert_eq!(v["results"]["tls"]["handshakes"], 4, "{}", v["results"]);
    // The same listener, its certificate unchecked: said.
    let before = nginx.logged();
    let v = run_and_compare(&nginx, (&tcp, &base), &["--insecure"], &before);
    assert_eq!(v["results"]["tls"]["insecure"], true);
}
