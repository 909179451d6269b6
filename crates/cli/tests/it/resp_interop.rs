//! Interoperability with Redis's own tools and clients, over real sockets
//! under every strategy: redis-cli, redis-benchmark and redis-py against
//! `serve resp`, and `load resp --verify` against redis-server itself.
//! These need Debian's redis-server, redis-tools and python3-redis
//! (redis-py; `.ci/run` installs them); they are ignored by default and
//! FAIL when a tool is missing.

use crate::resp::{cmd, Raw};
use crate::support::*;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Run `tool`; a missing tool fails the test, saying how to install it.
pub fn tool(name: &str, args: &[&str]) -> Output {
    Command::new(name)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("`{name}` cannot run ({e}): {NEEDS}"))
}

fn all_output(out: &Output) -> String {
    text(&out.stdout) + &text(&out.stderr)
}

fn serve(strategy: &str) -> ServerProc {
    ServerProc::start(
        "resp",
        &with_threads(strategy, "2", &["--strategy", strategy]),
    )
}

/// redis-cli: set, get, incr, and a pipeline from a file (`--pipe`).
fn redis_cli(strategy: &str) {
    let server = serve(strategy);
    let port = server.addr.port().to_string();
    let cli = |args: &[&str]| {
        let mut all = vec!["-h", "127.0.0.1", "-p", &port];
        all.extend(args);
        let out = tool("redis-cli", &all);
        assert!(
            out.status.success(),
            "{strategy}: {args:?}: {}",
            all_output(&out)
        );
        text(&out.stdout).trim_end().to_string()
    };
    assert_eq!(cli(&["set", "greeting", "hello world"]), "OK");
    assert_eq!(cli(&["get", "greeting"]), "hello world");
    assert_eq!(cli(&["incr", "visits"]), "1");
    assert_eq!(cli(&["incr", "visits"]), "2");
    assert_eq!(cli(&["get", "nothing"]), "");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pipe.txt");
    let mut wire = Vec::new();
    for i in 0..1000 {
        wire.extend(cmd(&["RPUSH", "piped", &i.to_string()]));
    }
    wire.extend(cmd(&["SET", "after", "pipe"]));
    std::fs::write(&file, &wire).unwrap();
    let out = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port, "--pipe"])
        .stdin(std::fs::File::open(&file).unwrap())
        .stdout(Stdio::piped())
        .output()
        .expect("redis-cli --pipe");
    let said = all_output(&out);
    assert!(out.status.success(), "{strategy}: {said}");
    assert!(
        said.contains("errors: 0, replies: 1001"),
        "{strategy}: {said}"
    );
    assert_eq!(cli(&["llen", "piped"]), "1000");
    assert_eq!(cli(&["lindex", "piped", "-1"]), "999");
    assert_eq!(cli(&["get", "after"]), "pipe");
    assert!(server.stop().0.success());
}

/// redis-benchmark's tests, lock-step and pipelined: no errors, every
/// test run, and the server counts no error of any kind.
fn redis_benchmark(strategy: &str) {
    let server = serve(strategy);
    let port = server.addr.port().to_string();
    for pipeline in ["1", "16"] {
        let out = tool(
            "redis-benchmark",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-t",
                "set,get,incr,lpush,rpush,lrange_100",
                "-n",
                "20000",
                "-P",
                pipeline,
                "-q",
            ],
        );
        let said = all_output(&out);
        assert!(out.status.success(), "{strategy} -P {pipeline}: {said}");
        for test in [
            "SET:",
            "GET:",
            "INCR:",
            "LPUSH:",
            "RPUSH:",
            "LRANGE_100 (first 100 elements):",
        ] {
            assert!(
                said.contains(test),
                "{strategy} -P {pipeline}: no {test} in {said}"
            );
        }
        assert!(!said.contains("rror"), "{strategy} -P {pipeline}: {said}");
    }
    let (status, out) = server.stop();
    assert!(status.success());
    for zero in [
        "wrong_arity 0",
        "syntax 0",
        "wrongtype 0",
        "not_an_integer_value 0",
    ] {
        assert!(out.contains(zero), "{strategy}: {out}");
    }
    assert!(out.contains("lrange 40000"), "{strategy}: {out}");
}

/// redis-py: a script of every supported command, each reply asserted.
fn redis_py(strategy: &str) {
    let server = serve(strategy);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/resp/redis_py.py");
    let out = tool("python3", &[script, &server.addr.port().to_string()]);
    let said = all_output(&out);
    assert!(!said.contains("No module named 'redis'"), "{said}{NEEDS}");
    assert!(out.status.success(), "{strategy}: {said}");
    assert!(text(&out.stdout).contains("every command answered as expected"));
    assert!(server.stop().0.success());
}

const NEEDS: &str = "needs redis-server, redis-tools and redis-py \
     (apt-get install redis-server redis-tools python3-redis); run: cargo test --workspace -- --ignored";

macro_rules! ignored_per_strategy {
    ($module:ident, $test:ident) => {
        mod $module {
            #[allow(unused_imports)]
            use super::*;
            serverlab_server::for_each_strategy!(ignored_tests, $test);
        }
    };
}

macro_rules! ignored_tests {
    ([$test:ident] $($snake:ident: $variant:ident => $imp:path),* $(,)?) => {
        $(
            #[test]
            #[ignore = "needs redis-server, redis-tools and redis-py (apt-get install redis-server redis-tools python3-redis); run: cargo test --workspace -- --ignored"]
            fn $snake() {
                $test(<$crate::support::StrategyKind as $crate::support::Named>::name(
                    $crate::support::StrategyKind::$variant,
                ));
            }
        )*
    };
}

ignored_per_strategy!(resp_redis_cli, redis_cli);
ignored_per_strategy!(resp_redis_benchmark, redis_benchmark);
ignored_per_strategy!(resp_redis_py, redis_py);

/// A redis-server of its own on a free port, stopped when dropped.
pub struct RedisServer {
    child: std::process::Child,
    pub port: u16,
}

impl RedisServer {
    pub fn start() -> RedisServer {
        Self::start_with(&[])
    }

    /// With more of redis-server's options (`--requirepass PW`).
    pub fn start_with(options: &[&str]) -> RedisServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let p = port.to_string();
        let child = Command::new("redis-server")
            .args([
                "--port",
                &p,
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--logfile",
                "",
            ])
            .args(options)
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("redis-server cannot run ({e}): {NEEDS}"));
        // Owned at once, so it is killed and reaped however this ends.
        let server = RedisServer { child, port };
        let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        for _ in 0..200 {
            if std::net::TcpStream::connect(addr).is_ok() {
                let mut c = Raw::connect(addr);
                c.send(&cmd(&["PING"]));
                // A server that wants a password answers, but NOAUTH.
                let said = text(&c.reply());
                assert!(
                    said == "+PONG\r\n" || said.starts_with("-NOAUTH"),
                    "{said:?}"
                );
                return server;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("redis-server did not start on port {port}");
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `load resp --verify` against redis-server itself: every command and
/// the board workload, 0 mismatches. This shows the client right
/// independently of serverlab's server.
#[test]
#[ignore = "needs redis-server, redis-tools and redis-py (apt-get install redis-server redis-tools python3-redis); run: cargo test --workspace -- --ignored"]
fn load_resp_verifies_against_redis_server() {
    let redis = RedisServer::start();
    let addr = redis.addr();
    crate::load_resp::verified_every_command(&addr, "redis-server");
    crate::load_resp::verified_board(&addr, "redis-server");
    // And redis-benchmark against redis-server, so the interop tests show
    // the tool's own output shape is what they read.
    let out = tool(
        "redis-benchmark",
        &[
            "-h",
            "127.0.0.1",
            "-p",
            &redis.port.to_string(),
            "-t",
            "get",
            "-n",
            "1000",
            "-q",
        ],
    );
    assert!(text(&out.stdout).contains("GET:"), "{}", all_output(&out));
}

/// Commands whose replies once differed from Redis 7.0.15's, sent to
/// redis-server and to `serve resp` on one connection each: the replies
/// are the same bytes (Redis reads LINDEX's key before its index, calls a
/// count that is not a number "out of range", and says NOPROTO in its own
/// words).
#[test]
#[ignore = "needs redis-server, redis-tools and redis-py (apt-get install redis-server redis-tools python3-redis); run: cargo test --workspace -- --ignored"]
fn replies_once_different_are_redis_servers_bytes() {
    let redis = RedisServer::start();
    let ours = serve(strategies()[0]);
    let cases: &[&[&str]] = &[
        &["LINDEX", "missing", "abc"],
        &["SET", "s", "v"],
        &["LINDEX", "s", "0"],
        &["LINDEX", "s", "abc"],
        &["RPUSH", "l", "a", "b"],
        &["LINDEX", "l", "abc"],
        &["LINDEX", "l", "-1"],
        &["LPOP", "missing", "abc"],
        &["LPOP", "l", "-1"],
        &["LPOP", "s", "abc"],
        &["HELLO", "4"],
        &["HELLO", "abc"],
    ];
    let mut wire = Vec::new();
    for c in cases {
        wire.extend(cmd(c));
    }
    // Ours first: its bytes say how many to read from Redis.
    let mut a = Raw::connect(ours.addr);
    a.send(&wire);
    let mut b = Raw::connect(redis.addr().parse().unwrap());
    b.send(&wire);
    let mut mine = Vec::new();
    for _ in cases {
        mine.extend(read_reply(&mut a));
    }
    let theirs = b.read_n(mine.len());
    assert_eq!(text(&mine), text(&theirs));
    // Nothing more from Redis than from us: both answer the next PING next.
    a.expect(&cmd(&["PING"]), "+PONG\r\n");
    b.expect(&cmd(&["PING"]), "+PONG\r\n");
}

/// One reply of the simple kinds these cases get (status, error,
/// integer, bulk or nil), as its bytes.
fn read_reply(c: &mut Raw) -> Vec<u8> {
    let mut line = Vec::new();
    while !line.ends_with(b"\r\n") {
        let byte = c.read_n(1);
        assert!(!byte.is_empty(), "closed after {:?}", text(&line));
        line.extend(byte);
    }
    if line[0] == b'$' && line[1] != b'-' {
        let len: usize = text(&line[1..line.len() - 2]).parse().unwrap();
        line.extend(c.read_n(len + 2));
    }
    line
}

/// `check resp --assignment` against redis-server: Redis's own behaviour
/// passes every case that is not serverlab's choice, and its keys are
/// linearizable. This shows the cases and the model are Redis's, not
/// fitted to serverlab's server.
#[test]
#[ignore = "needs redis-server, redis-tools and redis-py (apt-get install redis-server redis-tools python3-redis); run: cargo test --workspace -- --ignored"]
fn check_resp_assignment_passes_against_redis_server() {
    let redis = RedisServer::start();
    let out = run(&[
        "check",
        "resp",
        &redis.addr(),
        "--assignment",
        "--duration",
        "300ms",
        "--format",
        "json",
    ]);
    let said = text(&out.stdout) + &text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect(&said);
    assert_eq!(
        (v["passed"].as_u64(), v["failed"].as_u64()),
        (Some(23), Some(0)),
        "{said}"
    );
    assert_eq!(v["concurrency"]["verdict"], "linearizable", "{said}");
}

/// A sweep runs redis-server (`serve external`) beside `serve resp`
/// under the same load, and both runs succeed and record their loads.
#[test]
#[ignore = "needs redis-server, redis-tools and redis-py (apt-get install redis-server redis-tools python3-redis); run: cargo test --workspace -- --ignored"]
fn a_sweep_runs_redis_server_beside_serve_resp() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("mini.toml");
    std::fs::write(
        &toml,
        r#"
protocol = "resp"
repetitions = 1
[server]
protocol = ["resp", "external"]
[server.when.protocol.external]
command = "redis-server --bind $HOST --port $PORT --save '' --appendonly no"
[load]
requests = 2000
connections = 4
keys = 100
verify = true
"#,
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let out = run(&[
        "sweep",
        toml.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    for point in ["protocol=resp", "protocol=external"] {
        let load = out_dir
            .join("runs")
            .join(point)
            .join("rep-1")
            .join("load.json");
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&load).unwrap()).unwrap();
        assert_eq!(v["results"]["requests"], 2000, "{point}");
        assert_eq!(v["results"]["verification"]["mismatches"], 0, "{point}");
    }
}

/// The introspection script (`resp_introspect::SCRIPT`: COMMAND GETKEYS
/// and LIST, RESET) is redis-server's own, in order from a fresh server.
#[test]
#[ignore = "needs redis-server, redis-tools and redis-py (apt-get install redis-server redis-tools python3-redis); run: cargo test --workspace -- --ignored"]
fn the_introspection_script_is_redis_servers_bytes() {
    replies_are_redis_servers(crate::resp_introspect::SCRIPT);
}

/// SORT's script (`resp_sort::SORTS`, which every strategy is held to
/// byte for byte) is redis-server's own, in order from a fresh server.
#[test]
#[ignore = "needs redis-server, redis-tools and redis-py (apt-get install redis-server redis-tools python3-redis); run: cargo test --workspace -- --ignored"]
fn the_sort_script_is_redis_servers_bytes() {
    replies_are_redis_servers(crate::resp_sort::SORTS);
}

/// The collections' script (`resp_colls::SCRIPT`, which every strategy
/// and store is held to byte for byte) is redis-server's own: each of its
/// replies is what a fresh redis-server 7.0.15 answers, in order.
#[test]
#[ignore = "needs redis-server, redis-tools and redis-py (apt-get install redis-server redis-tools python3-redis); run: cargo test --workspace -- --ignored"]
fn the_collections_script_is_redis_servers_bytes() {
    replies_are_redis_servers(crate::resp_colls::SCRIPT);
}

/// Each of `script`'s replies is what a fresh redis-server answers, in
/// order: every difference is listed.
fn replies_are_redis_servers(script: &[(&[&str], &str)]) {
    let redis = RedisServer::start();
    let mut c = Raw::connect(redis.addr().parse().unwrap());
    let mut differ = Vec::new();
    for (args, want) in script {
        c.send(&cmd(args));
        let got = text(&c.reply());
        if got != *want {
            differ.push(format!(
                "{args:?}: redis-server {got:?}, the script {want:?}"
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
