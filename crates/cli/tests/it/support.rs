//! Starting the real binary and talking to it over real sockets.

#![allow(dead_code, unused_macros)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_serverlab");

pub use serverlab_server::{ServerConfig, StrategyKind, Threads};
pub use serverlab_store::StoreKind;
pub use serverlab_util::Named;

/// Every strategy this machine can run, as `--strategy` spells it: the
/// code's one list (`serverlab_server::for_each_strategy!`), so a strategy
/// added there is tested here. No test names strategies by hand
/// (`lists.rs` checks). One the machine cannot run (`uring` without
/// io_uring) is skipped, saying why.
pub fn strategies() -> Vec<&'static str> {
    StrategyKind::ALL
        .iter()
        .filter(|s| runnable(**s))
        .map(|s| s.name())
        .collect()
}

/// Every strategy, whether or not this machine can run it.
pub fn all_strategies() -> Vec<&'static str> {
    StrategyKind::ALL.iter().map(|s| s.name()).collect()
}

/// Whether this machine can run `kind`; if not, say why (the test using
/// it is skipped).
pub fn runnable(kind: StrategyKind) -> bool {
    let cfg = ServerConfig::new(SocketAddr::from(([127, 0, 0, 1], 0)), kind);
    match cfg.preflight() {
        Ok(()) => true,
        Err(why) => {
            eprintln!("skipped: {why}");
            false
        }
    }
}

/// Every store, as `--store` spells it (the board and kv offer each).
pub fn stores() -> Vec<&'static str> {
    StoreKind::ALL.iter().map(|s| s.name()).collect()
}

/// The stores the bucket protocol offers.
pub fn bucket_stores() -> Vec<&'static str> {
    serverlab_store::bucket::KINDS
        .iter()
        .map(|s| s.name())
        .collect()
}

/// `--threads n` for a strategy that has threads to size; nothing for one
/// `--threads` does not apply to (it would be a usage error).
pub fn threads(strategy: &str, n: &'static str) -> Vec<&'static str> {
    let kind: StrategyKind = strategy.parse().expect("a strategy");
    match kind.threads() {
        Threads::Sizes(_) => vec!["--threads", n],
        Threads::Unused(_) => vec![],
    }
}

/// `args` with `--threads n` added where `strategy` takes it.
pub fn with_threads<'a>(strategy: &str, n: &'static str, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = args.to_vec();
    all.extend(threads(strategy, n));
    all
}

/// `per_strategy!(module, test_fn)`: a module of tests, one per strategy
/// in the code's list and named after it, each calling `test_fn(name)`.
macro_rules! per_strategy {
    ($module:ident, $test:ident) => {
        mod $module {
            #[allow(unused_imports)]
            use super::*;
            serverlab_server::for_each_strategy!(per_strategy_tests, $test);
        }
    };
}

macro_rules! per_strategy_tests {
    ([$test:ident] $($snake:ident: $variant:ident => $imp:path),* $(,)?) => {
        $(
            #[test]
            fn $snake() {
                if !$crate::support::runnable($crate::support::StrategyKind::$variant) {
                    return;
                }
                $test(<$crate::support::StrategyKind as $crate::support::Named>::name(
                    $crate::support::StrategyKind::$variant,
                ));
            }
        )*
    };
}

/// `per_strategy_and_store!(module, test_fn)`: a module per strategy, and
/// in it a test per store, both from the code's lists, each calling
/// `test_fn(strategy, store)`.
macro_rules! per_strategy_and_store {
    ($module:ident, $test:ident) => {
        mod $module {
            #[allow(unused_imports)]
            use super::*;
            serverlab_server::for_each_strategy!(per_strategy_stores, $test);
        }
    };
}

macro_rules! per_strategy_stores {
    ([$test:ident] $($snake:ident: $variant:ident => $imp:path),* $(,)?) => {
        $(
            mod $snake {
                #[allow(unused_imports)]
                use super::*;
                serverlab_store::for_each_store!(per_store_tests, $test, $variant);
            }
        )*
    };
}

macro_rules! per_store_tests {
    ([$test:ident, $strategy:ident] $($snake:ident: $variant:ident),* $(,)?) => {
        $(
            #[test]
            fn $snake() {
                use $crate::support::{Named, StoreKind, StrategyKind};
                if !$crate::support::runnable(StrategyKind::$strategy) {
                    return;
                }
                $test(StrategyKind::$strategy.name(), StoreKind::$variant.name());
            }
        )*
    };
}

/// A `serverlab serve` child process.
pub struct ServerProc {
    child: Child,
    /// Its TCP address; 0.0.0.0:0 for a server on a Unix socket (see
    /// `endpoint`).
    pub addr: SocketAddr,
    /// Where it listens as `--addr` takes it: `HOST:PORT` or `unix:PATH`.
    pub endpoint: String,
    stdout: Arc<Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
    /// What it printed on stderr, when started to keep it.
    stderr: Option<Arc<Mutex<String>>>,
}

impl ServerProc {
    /// Start `serverlab serve <protocol> --addr 127.0.0.1:0 <args>` and wait
    /// until it listens.
    pub fn start(protocol: &str, args: &[&str]) -> ServerProc {
        Self::start_with_env(protocol, args, &[])
    }

    /// Run `serverlab load <protocol> --addr <this server> <args>`.
    pub fn load(&self, protocol: &str, args: &[&str]) -> Output {
        let mut all = vec!["--addr", self.endpoint.as_str()];
        all.extend(args);
        load(protocol, &all)
    }

    /// Run `serverlab load <protocol> --addr <this server> <args> --json
    /// FILE`, which must succeed: its stdout and what it wrote to FILE.
    pub fn load_json(&self, protocol: &str, args: &[&str]) -> (String, serde_json::Value) {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("load.json");
        let mut all = args.to_vec();
        all.extend(["--json", json.to_str().unwrap()]);
        let out = self.load(protocol, &all);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
        (stdout, read_json(&json))
    }

    /// As `start`, with these environment variables set for the server.
    pub fn start_with_env(protocol: &str, args: &[&str], env: &[(&str, &str)]) -> ServerProc {
        let mut all = vec!["serve", protocol];
        if !args.contains(&"--addr") {
            all.extend(["--addr", "127.0.0.1:0"]);
        }
        all.extend(args);
        Self::spawn_with_env(&all, env)
    }

    /// As `start`, with the soft limit on open files set to `soft` in the
    /// server's process before it runs (the hard limit unchanged, unless
    /// `hard` is given).
    pub fn start_with_nofile(
        protocol: &str,
        args: &[&str],
        soft: u64,
        hard: Option<u64>,
    ) -> ServerProc {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(BIN);
        cmd.args(["serve", protocol, "--addr", "127.0.0.1:0"])
            .args(args);
        // SAFETY: between fork and exec the closure only calls
        // getrlimit/setrlimit, which are async-signal-safe, and allocates
        // nothing.
        unsafe {
            cmd.pre_exec(move || {
                let mut l = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                l.rlim_cur = soft;
                l.rlim_max = hard.unwrap_or(l.rlim_max);
                if libc::setrlimit(libc::RLIMIT_NOFILE, &l) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Self::spawn_command(cmd, args)
    }

    /// `serve <protocol> --addr 127.0.0.1:0 <args>` run by `wrapper` (a
    /// command and its arguments, before the binary: `strace -f …`; none
    /// for the binary alone), its stderr kept (see `stderr`).
    pub fn start_wrapped(wrapper: &[&str], protocol: &str, args: &[&str]) -> ServerProc {
        let mut cmd = match wrapper.split_first() {
            Some((program, rest)) => {
                let mut c = Command::new(program);
                c.args(rest).arg(BIN);
                c
            }
            None => Command::new(BIN),
        };
        cmd.env_remove("MALLOC_ARENA_MAX")
            .env_remove("GLIBC_TUNABLES")
            .args(["serve", protocol, "--addr", "127.0.0.1:0"])
            .args(args)
            .stderr(Stdio::piped());
        let mut server = Self::spawn_command(cmd, args);
        let err = server.child.stderr.take().expect("piped stderr");
        let kept = Arc::new(Mutex::new(String::new()));
        let sink = kept.clone();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(err);
            let mut line = String::new();
            while lines.read_line(&mut line).unwrap_or(0) > 0 {
                sink.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        server.stderr = Some(kept);
        server
    }

    /// Everything the server printed on stderr so far (started with
    /// `start_wrapped`).
    pub fn stderr(&self) -> String {
        let kept = self.stderr.as_ref().expect("started with start_wrapped");
        kept.lock().unwrap().clone()
    }

    /// Start the binary with exactly these arguments (a `serve` command).
    pub fn spawn(args: &[&str]) -> ServerProc {
        Self::spawn_with_env(args, &[])
    }

    fn spawn_with_env(args: &[&str], env: &[(&str, &str)]) -> ServerProc {
        let mut cmd = Command::new(BIN);
        // The allocator's settings are the server's own unless a test
        // gives them (memory bounds and the startup line depend on them).
        cmd.env_remove("MALLOC_ARENA_MAX")
            .env_remove("GLIBC_TUNABLES")
            .args(args)
            .envs(env.iter().copied());
        Self::spawn_command(cmd, args)
    }

    /// Run `cmd` (`args` name it in errors; its stderr inherited unless
    /// the command says otherwise) and wait until it listens.
    fn spawn_command(mut cmd: Command, args: &[&str]) -> ServerProc {
        let mut child = cmd.stdout(Stdio::piped()).spawn().expect("start serverlab");
        let out = child.stdout.take().expect("piped stdout");
        let stdout = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = stdout.clone();
        let reader = std::thread::spawn(move || {
            let mut lines = BufReader::new(out);
            let mut line = String::new();
            let mut sent = false;
            while lines.read_line(&mut line).unwrap_or(0) > 0 {
                // Kept before the address is sent, so that `stdout()` has
                // the startup line once `start` returns.
                sink.lock().unwrap().push_str(&line);
                if !sent {
                    if let Some(rest) = line.split("listening on ").nth(1) {
                        let endpoint = rest.split_whitespace().next().unwrap().to_string();
                        tx.send(endpoint).unwrap();
                        sent = true;
                    }
                }
                line.clear();
            }
        });
        let endpoint = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| {
                let _ = child.kill();
                panic!("server {args:?} did not start listening")
            });
        let addr = match endpoint.strip_prefix("unix:") {
            Some(_) => SocketAddr::from(([0, 0, 0, 0], 0)),
            None => endpoint.parse().unwrap(),
        };
        ServerProc {
            child,
            addr,
            endpoint,
            stdout,
            reader: Some(reader),
            stderr: None,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn signal(&self, sig: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.child.id() as i32), sig)
            .expect("signal server");
    }

    /// Wait up to `timeout` for the process to exit by itself.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let status = serverlab_util::child::wait_within(&mut self.child, timeout)?;
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        Some(status)
    }

    /// Everything the server printed so far.
    pub fn stdout(&self) -> String {
        self.stdout.lock().unwrap().clone()
    }

    /// SIGTERM, then wait for a graceful exit.
    pub fn stop(mut self) -> (ExitStatus, String) {
        self.signal(nix::sys::signal::Signal::SIGTERM);
        let status = self
            .wait_exit(Duration::from_secs(20))
            .expect("server exits after SIGTERM");
        (status, self.stdout())
    }
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        // A server run by a wrapper (strace) is the wrapper's child, which
        // killing the wrapper would leave running, holding its port and
        // its data directory.
        let pid = self.child.id();
        let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"));
        let children: Vec<i32> = children
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|c| c.parse().ok())
            .collect();
        for &c in &children {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(c),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The wrapper's death does not wait for its child's: a traced
        // server stops at each thread's exit until strace lets it go, and
        // only then closes its files, its data directory's lock among
        // them. A test that restarts on the directory at once would find
        // it "in use by another server"; so the child is waited for too.
        // Waiting is a hang guard only, and it never panics: a panic in
        // Drop while a failing test unwinds aborts the whole test binary.
        for c in children {
            if !poll_until(Duration::from_secs(20), Duration::from_millis(5), || {
                exited(c)
            }) {
                eprintln!("process {c} is still running 20 s after SIGKILL");
                return;
            }
        }
    }
}

/// Whether every thread of `pid` has exited (a thread closes its files
/// before it turns zombie; a gone process has no threads).
fn exited(pid: i32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return true;
    };
    tasks.flatten().all(|t| {
        let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
        // `pid (comm) S …`: the state follows the last ')'.
        let state = stat.rsplit(')').next().unwrap_or("").trim_start();
        stat.is_empty() || state.starts_with('Z') || state.starts_with('X')
    })
}

/// A raw client speaking terminator-framed requests.
pub struct Client {
    pub stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        Client {
            stream,
            buf: Vec::new(),
        }
    }

    /// A client on a stream connected (and configured) elsewhere.
    pub fn on(stream: TcpStream) -> Client {
        Client {
            stream,
            buf: Vec::new(),
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("send");
    }

    /// The next reply up to (not including) a NUL or LF.
    pub fn recv(&mut self) -> Vec<u8> {
        self.try_recv().expect("a reply")
    }

    /// The next reply, or None if the server closed the connection first.
    pub fn try_recv(&mut self) -> Option<Vec<u8>> {
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == 0 || b == b'\n') {
                let reply = self.buf[..i].to_vec();
                self.buf.drain(..=i);
                return Some(reply);
            }
            let mut chunk = [0u8; 65536];
            match self.stream.read(&mut chunk) {
                Ok(0) => return None,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return None,
                Err(e) => panic!("read failed: {e}"),
            }
        }
    }

    /// Send `request` NUL-terminated and return its reply.
    pub fn req(&mut self, request: &[u8]) -> Vec<u8> {
        let mut wire = request.to_vec();
        wire.push(0);
        self.send(&wire);
        self.recv()
    }

    /// Raw bytes until the server closes (for checking exact terminators).
    pub fn read_exact_bytes(&mut self, n: usize) -> Vec<u8> {
        while self.buf.len() < n {
            let mut chunk = [0u8; 65536];
            let got = self.stream.read(&mut chunk).expect("read");
            assert!(got > 0, "closed after {} of {n} bytes", self.buf.len());
            self.buf.extend_from_slice(&chunk[..got]);
        }
        self.buf.drain(..n).collect()
    }

    /// True when the server has closed this connection (EOF or reset).
    pub fn closed_by_server(&mut self) -> bool {
        self.try_recv().is_none()
    }
}

/// Run the binary to completion.
/// Tests that load the machine hard (many clients, busy-polling loads) or
/// judge what they measure (latency, CPU, memory) take turns through this
/// one lock, so on a small machine none measures another: an open-loop
/// capacity search beside a test spinning up 50 never-reading clients
/// measures the machine, not the method.
static HEAVY: Mutex<()> = Mutex::new(());

/// Take a turn among the heavy or measuring tests (see [`HEAVY`]).
pub fn heavy_turn() -> std::sync::MutexGuard<'static, ()> {
    HEAVY.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run serverlab")
}

/// What a server may still hold, over where it started, once a burst of
/// clients asking for megabyte replies has gone and it has given freed
/// memory back: glibc keeps the free top of each malloc arena, up to twice
/// the largest block freed (a 1 MiB reply's buffer grown to 2 MiB), and
/// `serve` allows it two arenas per CPU (crates/cli/src/serve/memory.rs);
/// plus 8 MiB for thread stacks and caches. With glibc's own eight arenas
/// per CPU a thread-per-request server kept 30 to 55 MB on two CPUs.
pub fn kept_after_burst_kib() -> u64 {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    2 * cpus * 4 * 1024 + 8 * 1024
}

/// A process's resident memory, in KiB (Linux: `VmRSS` in /proc).
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/<pid>/status")
}

/// The peak resident memory of process `pid` so far (VmHWM), in KiB.
pub fn hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Waits for `child`, watching its peak resident memory: its exit code
/// (`None`: killed at `limit`, a hang guard) and the peak in KiB.
pub fn wait_watching_peak(child: &mut std::process::Child, limit: Duration) -> (Option<i32>, u64) {
    let t0 = Instant::now();
    let mut hwm = 0;
    let code = loop {
        // VmHWM only grows: the last reading before the exit is the peak
        // to within one poll.
        if let Some(kib) = hwm_kib(child.id()) {
            hwm = hwm.max(kib);
        }
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code();
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    (code, hwm)
}

/// Run `cmd` with `input` on its stdin (closed after it) and collect its
/// output; a program that cannot start panics with `missing`, which says
/// how to install it.
pub fn with_stdin(cmd: &mut Command, input: &str, missing: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{:?} cannot run ({e}): {missing}", cmd.get_program()));
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// `run` against a fresh `serve <protocol>` of each strategy, all at
/// once (a thread each).
pub fn every_strategy_at_once(protocol: &str, run: fn(SocketAddr)) {
    std::thread::scope(|s| {
        for strategy in strategies() {
            s.spawn(move || {
                let server = ServerProc::start(protocol, &["--strategy", strategy]);
                run(server.addr);
            });
        }
    });
}

/// Command-line words written as one line: `words("--posters 2 --readers 2")`.
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The binary exits 2 on `args` and its stderr names `names`.
pub fn usage_error(args: &[&str], names: &str) {
    let out = run(args);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: {}",
        text(&out.stderr)
    );
    let err = text(&out.stderr);
    assert!(
        err.contains(names),
        "{args:?}: stderr does not name {names}: {err}"
    );
}

/// Run `serverlab load <protocol> <args>`.
pub fn load(protocol: &str, args: &[&str]) -> Output {
    let mut all = vec!["load", protocol];
    all.extend(args);
    run(&all)
}

/// The JSON file at `path` (a `--json` or `--stats-json` output).
pub fn read_json(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("the --json file");
    serde_json::from_str(&text).expect("the --json file is JSON")
}

/// `serverlab load <protocol> <args>` exits 2 and its stderr names `flag`.
pub fn load_usage_error(protocol: &str, args: &[&str], flag: &str) {
    let mut all = vec!["load", protocol];
    all.extend(args);
    usage_error(&all, flag);
}

/// A stand-in server on 127.0.0.1:0 that runs `serve` on a thread per
/// connection (a deliberately broken server, to show checks fail).
/// Returns its address.
pub fn fake_server(serve: impl Fn(TcpStream) + Send + Sync + 'static) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let serve = Arc::new(serve);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let serve = serve.clone();
            std::thread::spawn(move || serve(stream));
        }
    });
    addr
}

/// `load <protocol>` against an address nobody listens on exits 1 and
/// says it cannot connect.
pub fn unreachable_load_exits_1(protocol: &str, extra: &[&str]) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let mut args = vec!["--addr", addr.as_str()];
    args.extend(extra);
    let out = load(protocol, &args);
    assert_eq!(out.status.code(), Some(1));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    // One line, the cause once, and what to do next.
    assert_eq!(stdout, "", "no table of zeros");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("cannot connect to {addr}")),
        "{stderr}"
    );
    assert_eq!(stderr.matches("Connection refused").count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("serverlab serve {protocol} --addr {addr}")),
        "{stderr}"
    );
}

/// A stand-in board-like server's loop on one connection: each request
/// (ended by NUL or LF, the end cut off) gets `answer(request)`, sent
/// with a NUL after it, until the client closes.
pub fn answer_lines(mut s: TcpStream, mut answer: impl FnMut(&[u8]) -> Vec<u8>) {
    let mut buf = [0u8; 65536];
    let mut pending = Vec::new();
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            return;
        }
        pending.extend_from_slice(&buf[..n]);
        while let Some(i) = pending.iter().position(|&b| b == 0 || b == b'\n') {
            let req: Vec<u8> = pending.drain(..=i).collect();
            let mut reply = answer(&req[..req.len() - 1]);
            reply.push(0);
            if s.write_all(&reply).is_err() {
                return;
            }
        }
    }
}

/// A number from the final statistics' `connections:` line.
pub fn stat(out: &str, name: &str) -> u64 {
    out.lines()
        .find(|l| l.trim_start().starts_with("connections:"))
        .and_then(|l| l.split(&format!(" {name} ")).nth(1))
        .and_then(|v| v.split(',').next())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {out}"))
}

/// A server's flags to log every write to `dir` and acknowledge it once
/// on disk: `--durability always --data-dir DIR`.
pub fn logged_always(dir: &std::path::Path) -> [&str; 4] {
    let dir = dir.to_str().expect("a UTF-8 path");
    ["--durability", "always", "--data-dir", dir]
}

/// A load result's operations and their counts, in its order.
pub fn op_counts(json: &serde_json::Value) -> Vec<(String, u64)> {
    json["results"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["name"].as_str().unwrap().to_string(),
                o["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// A small board experiment named `name` written to `path`: two points
/// (one and two posters), two repetitions of a second each, and an echo
/// baseline; what a deployment's tests sweep.
pub fn write_small_experiment(path: &std::path::Path, name: &str) {
    let experiment = format!(
        "name = \"{name}\"\nprotocol = \"board\"\nrepetitions = 2\n[server]\nstrategy = \
         \"pool-locked\"\nthreads = 1\n[load]\nposters = [1, 2]\nreaders = 1\nduration = \
         \"1s\"\n[baseline.server]\nprotocol = \"echo\"\n[baseline.load]\nposters = 1\n\
         readers = 1\nduration = \"1s\"\n"
    );
    std::fs::write(path, experiment).unwrap();
}

/// The subcommands `serverlab [command…] --help` lists under "Commands:"
/// (clap's `help` among them).
pub fn listed_subcommands(command: &[&str]) -> Vec<String> {
    let mut args = command.to_vec();
    args.push("--help");
    let out = run(&args);
    assert!(out.status.success(), "{args:?}");
    text(&out.stdout)
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// Poll `done` every 10 ms until it holds; panic naming `what` if it
/// still does not after `limit` (a hang guard, generous: on a busy
/// machine a condition takes long, and a test waits for it rather than
/// sleeping a fixed time and hoping).
pub fn wait_for(what: &str, limit: Duration, done: impl FnMut() -> bool) {
    let held = poll_until(limit, Duration::from_millis(10), done);
    assert!(held, "not within {limit:?}: {what}");
}

/// Check `done` every `every` until it holds (true) or `limit` has passed
/// (false): [`wait_for`]'s loop without its panic, for callers that must
/// not panic (a `Drop`) or that say more when it fails.
pub fn poll_until(limit: Duration, every: Duration, mut done: impl FnMut() -> bool) -> bool {
    let t0 = Instant::now();
    while !done() {
        if t0.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(every);
    }
    true
}

/// Whether the server end of `stream` has read everything sent on it so
/// far: its socket in /proc/net/tcp or /proc/net/tcp6 holds no unread
/// bytes. False while the server has not accepted or read it, or where it
/// cannot be found.
pub fn read_by_server(stream: &TcpStream) -> bool {
    let (Ok(ours), Ok(theirs)) = (stream.local_addr(), stream.peer_addr()) else {
        return false;
    };
    // Seen from the server: local is its address, remote is ours.
    let unread = |table: &str, local: &str, remote: &str| {
        let table = std::fs::read_to_string(table).unwrap_or_default();
        table.lines().skip(1).any(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            f.len() > 4
                && f[1] == local
                && f[2] == remote
                && f[4]
                    .split_once(':')
                    .is_some_and(|(_, rx)| u64::from_str_radix(rx, 16) == Ok(0))
        })
    };
    let in_v4 = match (proc_net_v4(theirs), proc_net_v4(ours)) {
        (Some(local), Some(remote)) => unread("/proc/net/tcp", &local, &remote),
        _ => false,
    };
    // An IPv6 socket (an IPv4 peer of a dual-stack one as ::ffff:a.b.c.d).
    in_v4 || unread("/proc/net/tcp6", &proc_net_v6(theirs), &proc_net_v6(ours))
}

/// `a` as /proc/net/tcp writes an address, if IPv4: the address as one
/// 32-bit word in host order, then the port, in hex.
fn proc_net_v4(a: SocketAddr) -> Option<String> {
    let SocketAddr::V4(v4) = a else {
        return None;
    };
    let word = u32::from_ne_bytes(v4.ip().octets());
    Some(format!("{word:08X}:{:04X}", a.port()))
}

/// `a` as /proc/net/tcp6 writes an address: four 32-bit words in host
/// order, then the port, in hex (IPv4 as IPv4-mapped).
fn proc_net_v6(a: SocketAddr) -> String {
    let ip = match a {
        SocketAddr::V4(v4) => v4.ip().to_ipv6_mapped(),
        SocketAddr::V6(v6) => *v6.ip(),
    };
    let words: String = ip
        .octets()
        .chunks(4)
        .map(|w| format!("{:08X}", u32::from_ne_bytes([w[0], w[1], w[2], w[3]])))
        .collect();
    format!("{words}:{:04X}", a.port())
}

/// How many connections to `server` (an IPv4 listener) are established,
/// accepted or not: its side's sockets in /proc/net/tcp.
pub fn connections_to(server: SocketAddr) -> usize {
    let Some(local) = proc_net_v4(server) else {
        return 0;
    };
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    table
        .lines()
        .skip(1)
        .filter(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            f.len() > 3 && f[1] == local && f[3] == "01"
        })
        .count()
}

/// [`poll_until`] says whether `done` held in time and never panics: a
/// `Drop` relies on that.
#[test]
fn poll_until_gives_up_without_panicking_and_sees_a_condition_come_true() {
    let every = Duration::from_millis(1);
    assert!(!poll_until(Duration::from_millis(20), every, || false));
    let mut calls = 0;
    assert!(poll_until(Duration::from_secs(20), every, || {
        calls += 1;
        calls == 3
    }));
    assert_eq!(calls, 3);
}

/// [`read_by_server`] finds the server's socket over IPv4, over IPv6,
/// and on a dual-stack listener reached over IPv4: false while bytes
/// wait unread, true once the server has read them.
#[test]
fn read_by_server_sees_ipv4_ipv6_and_dual_stack_sockets() {
    use std::net::TcpListener;
    for (listen, connect_to) in [
        ("127.0.0.1:0", None),
        ("[::1]:0", None),
        ("[::]:0", Some("127.0.0.1")),
    ] {
        let listener = match TcpListener::bind(listen) {
            Ok(l) => l,
            Err(e) if listen.starts_with('[') && no_ipv6(&e) => {
                eprintln!("skipping {listen}: this host has no IPv6 ({e})");
                continue;
            }
            Err(e) => panic!("{listen}: {e}"),
        };
        let mut at = listener.local_addr().unwrap();
        if let Some(ip) = connect_to {
            at.set_ip(ip.parse().unwrap());
        }
        let mut client = TcpStream::connect(at).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        client.write_all(b"hello").unwrap();
        let limit = Duration::from_secs(20);
        wait_for(&format!("{listen}: bytes waiting"), limit, || {
            !read_by_server(&client)
        });
        let mut got = [0; 5];
        server.read_exact(&mut got).unwrap();
        wait_for(&format!("{listen}: read"), limit, || {
            read_by_server(&client)
        });
    }
}

/// Whether a bind failed because the host has no IPv6 (Docker's default):
/// the address is not there, or the family is not supported (EAFNOSUPPORT).
fn no_ipv6(e: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        e.kind(),
        ErrorKind::AddrNotAvailable | ErrorKind::Unsupported
    ) || e.raw_os_error() == Some(97)
}

#[test]
fn no_ipv6_knows_a_missing_family_from_a_taken_port() {
    use std::io::Error;
    assert!(no_ipv6(&Error::from_raw_os_error(97))); // EAFNOSUPPORT
    assert!(no_ipv6(&Error::from_raw_os_error(99))); // EADDRNOTAVAIL
    assert!(!no_ipv6(&Error::from_raw_os_error(98))); // EADDRINUSE
}
