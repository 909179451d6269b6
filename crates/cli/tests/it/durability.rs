//! Durability (docs/durability.md): servers with a write-ahead log, killed
//! with SIGKILL mid-load and restarted on the same directory, checked
//! against the ledger of every acknowledged write; torn and corrupt logs;
//! group commit in the statistics; a commit wait that stalls nobody else;
//! the flags' errors.

use crate::support::*;
use serverlab_check::ledger::Ledger;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A fresh data directory (and room for ledgers) for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("serverlab-it-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A number below `n`, different each run (the moment of a kill).
fn random_below(n: u64) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    u64::from(nanos) % n
}

/// The protocols with a log, and how a test writes and reads them.
#[derive(Clone, Copy)]
enum Proto {
    Kv,
    Resp,
}

impl Proto {
    fn name(self) -> &'static str {
        match self {
            Proto::Kv => "kv",
            Proto::Resp => "resp",
        }
    }

    /// Writes `value` to `key`; `Ok(())` once acknowledged.
    fn put(self, c: &mut BufReader<TcpStream>, key: &str, value: &str) -> std::io::Result<()> {
        let req = match self {
            Proto::Kv => format!(
                "PUT /{key} HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n{value}",
                value.len()
            ),
            Proto::Resp => format!(
                "*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n${}\r\n{value}\r\n",
                key.len(),
                value.len()
            ),
        };
        c.get_mut().write_all(req.as_bytes())?;
        let ok = match self {
            Proto::Kv => http_status(c)?,
            Proto::Resp => line(c)?,
        };
        if ok.starts_with("20") || ok == "+OK" {
            Ok(())
        } else {
            Err(std::io::Error::other(format!("write answered {ok}")))
        }
    }

    /// Reads `key` (kv: the body of a 200; resp: GET's reply line).
    fn get(self, c: &mut BufReader<TcpStream>, key: &str) -> std::io::Result<String> {
        match self {
            Proto::Kv => {
                let req = format!("GET /{key} HTTP/1.1\r\nHost: t\r\n\r\n");
                c.get_mut().write_all(req.as_bytes())?;
                http_status(c)
            }
            Proto::Resp => {
                let req = format!("*2\r\n$3\r\nGET\r\n${}\r\n{key}\r\n", key.len());
                c.get_mut().write_all(req.as_bytes())?;
                let head = line(c)?;
                if head != "$-1" {
                    line(c)?;
                }
                Ok(head)
            }
        }
    }
}

fn line(c: &mut BufReader<TcpStream>) -> std::io::Result<String> {
    let mut l = String::new();
    if c.read_line(&mut l)? == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(l.trim_end().to_string())
}

/// Reads one response; returns its status code, its body consumed.
fn http_status(c: &mut BufReader<TcpStream>) -> std::io::Result<String> {
    let status = line(c)?;
    let mut len = 0;
    loop {
        let h = line(c)?;
        if h.is_empty() {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; len];
    c.read_exact(&mut body)?;
    Ok(status.split(' ').nth(1).unwrap_or("").to_string())
}

fn connect(addr: SocketAddr) -> BufReader<TcpStream> {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    BufReader::new(s)
}

/// `conns` connections writing their own keys in lock-step, each write in
/// the ledger when sent and when acknowledged, until `stop` or an error
/// (the server was killed). Each returns how many writes were
/// acknowledged; `so_far` counts them all as they are.
fn write_load(
    proto: Proto,
    addr: SocketAddr,
    conns: usize,
    tag: &str,
    ledger: &Arc<Ledger>,
    stop: &Arc<AtomicBool>,
    so_far: &Arc<AtomicU64>,
) -> Vec<std::thread::JoinHandle<u64>> {
    (0..conns)
        .map(|c| {
            let (ledger, stop, tag) = (ledger.clone(), stop.clone(), tag.to_string());
            let so_far = so_far.clone();
            std::thread::spawn(move || {
                let mut conn = connect(addr);
                let mut acked = 0;
                for n in 0u64.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let key = format!("{tag}-c{c}-k{}", n % 16);
                    let value = format!("{tag}-c{c}-n{n}");
                    ledger.sent(key.as_bytes(), Some(value.as_bytes()));
                    if proto.put(&mut conn, &key, &value).is_err() {
                        break;
                    }
                    ledger.acked(key.as_bytes(), Some(value.as_bytes()));
                    acked += 1;
                    so_far.fetch_add(1, Ordering::Relaxed);
                }
                acked
            })
        })
        .collect()
}

fn serve(proto: Proto, dir: &Path, args: &[&str]) -> ServerProc {
    let mut all = vec!["--data-dir", dir.to_str().unwrap()];
    all.extend(args);
    ServerProc::start(proto.name(), &all)
}

/// `check <proto> ADDR --ledger FILE [extra]`: its exit code and stdout.
fn check_ledger(proto: Proto, addr: SocketAddr, ledger: &Path, extra: &[&str]) -> (i32, String) {
    let addr = addr.to_string();
    let mut args = vec![
        "check",
        proto.name(),
        &addr,
        "--ledger",
        ledger.to_str().unwrap(),
    ];
    args.extend(extra);
    let out = run(&args);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    (out.status.code().unwrap_or(-1), said)
}

/// Rounds of: start on `dir`, write with `conns` connections for a random
/// moment, SIGKILL, restart, and check every ledger so far.
fn crash_rounds(proto: Proto, dir: &Path, args: &[&str], rounds: usize, allow: &[&str]) {
    let mut ledgers = Vec::new();
    for round in 0..rounds {
        let server = serve(proto, dir, args);
        let path = dir.with_extension(format!("ledger{round}"));
        let ledger = Arc::new(Ledger::create(&path).unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let so_far = Arc::new(AtomicU64::new(0));
        let writers = write_load(
            proto,
            server.addr,
            8,
            &format!("r{round}"),
            &ledger,
            &stop,
            &so_far,
        );
        // Killed at a random moment after the first acknowledgement (a
        // fixed time could pass before it on a busy machine).
        wait_for("a write acknowledged", Duration::from_secs(60), || {
            so_far.load(Ordering::Relaxed) > 0
        });
        std::thread::sleep(Duration::from_millis(random_below(800)));
        server.signal(nix::sys::signal::Signal::SIGKILL);
        drop(server);
        stop.store(true, Ordering::Relaxed);
        let acked: u64 = writers.into_iter().map(|w| w.join().unwrap()).sum();
        assert!(acked > 0, "round {round}: no write was acknowledged");
        ledger.flush().unwrap();
        ledgers.push(path);

        let again = serve(proto, dir, args);
        assert!(again.stdout().contains("replayed "), "{}", again.stdout());
        for l in &ledgers {
            let (code, said) = check_ledger(proto, again.addr, l, allow);
            assert_eq!(code, 0, "round {round}, {}: {said}", l.display());
        }
        // It serves on.
        let mut c = connect(again.addr);
        proto.put(&mut c, "after", "crash").unwrap();
        drop(again);
    }
}

fn crash_always_kv(strategy: &str) {
    let _turn = heavy_turn();
    let dir = scratch(&format!("crash-kv-{strategy}"));
    let args = ["--strategy", strategy, "--durability", "always"];
    crash_rounds(Proto::Kv, &dir, &args, 5, &[]);
}
per_strategy!(crash_always_kv_loses_no_acknowledged_write, crash_always_kv);

fn crash_always_resp(strategy: &str) {
    let _turn = heavy_turn();
    let dir = scratch(&format!("crash-resp-{strategy}"));
    let args = ["--strategy", strategy, "--durability", "always"];
    crash_rounds(Proto::Resp, &dir, &args, 5, &[]);
}
per_strategy!(
    crash_always_resp_loses_no_acknowledged_write,
    crash_always_resp
);

#[test]
fn os_loses_nothing_to_a_process_crash() {
    let _turn = heavy_turn();
    let dir = scratch("crash-os");
    crash_rounds(Proto::Resp, &dir, &["--durability", "os"], 3, &[]);
}

#[test]
fn everysec_loses_at_most_the_last_moments() {
    let _turn = heavy_turn();
    let dir = scratch("crash-everysec");
    let args = ["--durability", "everysec"];
    crash_rounds(Proto::Kv, &dir, &args, 3, &["--allow-loss", "2s"]);
}

/// The one log segment holding records (the others are bare headers).
fn written_segment(dir: &Path) -> PathBuf {
    let mut logs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .filter(|p| std::fs::metadata(p).unwrap().len() > 24)
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    logs.pop().unwrap()
}

/// A server that wrote `n` keys under `always` and stopped.
fn written_and_stopped(dir: &Path, n: usize) {
    let server = serve(Proto::Kv, dir, &["--durability", "always"]);
    let mut c = connect(server.addr);
    for i in 0..n {
        Proto::Kv
            .put(&mut c, &format!("k{i}"), &format!("value-{i}"))
            .unwrap();
    }
    let (status, _) = server.stop();
    assert!(status.success());
}

#[test]
fn a_torn_tail_is_cut_and_said() {
    let dir = scratch("torn");
    written_and_stopped(&dir, 10);
    let seg = written_segment(&dir);
    let len = std::fs::metadata(&seg).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&seg).unwrap();
    f.set_len(len - 3).unwrap();
    drop(f);
    let server = serve(Proto::Kv, &dir, &["--durability", "always"]);
    let line = server.stdout();
    assert!(line.contains("replayed 9 records"), "{line}");
    assert!(!line.contains("dropped 0 bytes"), "{line}");
    assert!(line.contains("torn tail"), "{line}");
    let mut c = connect(server.addr);
    assert_eq!(Proto::Kv.get(&mut c, "k8").unwrap(), "200");
    assert_eq!(
        Proto::Kv.get(&mut c, "k9").unwrap(),
        "404",
        "the torn record"
    );
}

#[test]
fn a_flipped_early_byte_refuses_to_start_unless_truncate() {
    let dir = scratch("flipped");
    written_and_stopped(&dir, 10);
    let seg = written_segment(&dir);
    let mut bytes = std::fs::read(&seg).unwrap();
    // The header, the first record's frame, and into its payload.
    let header = serverlab_service::wal::format::HEADER_LEN;
    bytes[header + 8 + 2] ^= 0x40;
    std::fs::write(&seg, bytes).unwrap();
    let d = dir.to_str().unwrap();
    let out = run(&words(&format!(
        "serve kv --addr 127.0.0.1:0 --durability always --data-dir \
        {d}"
    )));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("byte offset {header}")) && err.contains("truncate"),
        "{err}"
    );

    let server = serve(
        Proto::Kv,
        &dir,
        &["--durability", "always", "--recover", "truncate"],
    );
    assert!(
        server.stdout().contains("corruption"),
        "{}",
        server.stdout()
    );
    let mut c = connect(server.addr);
    assert_eq!(Proto::Kv.get(&mut c, "k0").unwrap(), "404");
    Proto::Kv.put(&mut c, "k0", "again").unwrap();
}

/// The mean records per fsync in a stopped server's final statistics.
fn records_per_fsync(stats: &str) -> f64 {
    let line = stats
        .lines()
        .find(|l| l.contains("records_per_fsync:"))
        .unwrap_or_else(|| panic!("no records_per_fsync in {stats}"));
    let mean = line
        .split("mean ")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    mean.trim().parse().unwrap()
}

/// `writers` connections writing `each` times; the mean records per fsync.
fn group_commit(writers: usize, each: usize) -> f64 {
    let dir = scratch(&format!("group-{writers}"));
    let args = ["--durability", "always", "--fsync-delay", "2ms"];
    let server = serve(Proto::Kv, &dir, &args);
    let addr = server.addr;
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            std::thread::spawn(move || {
                let mut c = connect(addr);
                for i in 0..each {
                    Proto::Kv.put(&mut c, &format!("w{w}-{i}"), "v").unwrap();
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    let (status, out) = server.stop();
    assert!(status.success());
    records_per_fsync(&out)
}

#[test]
fn group_commit_shares_fsyncs_between_concurrent_writers() {
    let _turn = heavy_turn();
    let alone = group_commit(1, 50);
    let together = group_commit(64, 10);
    assert_eq!(alone, 1.0, "one writer in lock-step: one record per fsync");
    assert!(together > 2.0, "64 writers: {together} records per fsync");
}

fn commit_stalls_nobody(strategy: &str) {
    let _turn = heavy_turn();
    let dir = scratch(&format!("stall-{strategy}"));
    let line = format!("--strategy {strategy} --durability always --fsync-delay 1500ms");
    let base = words(&line);
    let args = with_threads(strategy, "1", &base);
    let server = serve(Proto::Kv, &dir, &args);
    let mut reader = connect(server.addr);
    assert_eq!(Proto::Kv.get(&mut reader, "nothing").unwrap(), "404");
    let addr = server.addr;
    let t0 = Instant::now();
    let writer = std::thread::spawn(move || {
        let mut c = connect(addr);
        Proto::Kv.put(&mut c, "slow", "v").unwrap();
        t0.elapsed()
    });
    std::thread::sleep(Duration::from_millis(200));
    let asked = Instant::now();
    assert_eq!(Proto::Kv.get(&mut reader, "nothing").unwrap(), "404");
    let read = asked.elapsed();
    let wrote = writer.join().unwrap();
    assert!(
        wrote >= Duration::from_millis(1400),
        "the PUT waited for its fsync: {wrote:?}"
    );
    assert!(
        read < Duration::from_millis(1000),
        "a GET waited {read:?} behind a commit"
    );
}
per_strategy!(
    a_waiting_commit_stalls_no_other_connection,
    commit_stalls_nobody
);

#[test]
fn bad_durability_flags() {
    usage_error(
        &["serve", "kv", "--durability", "always"],
        "--durability always needs --data-dir",
    );
    usage_error(&["serve", "resp", "--durability", "os"], "--data-dir");
    let dir = scratch("bad");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let under_file = file.join("data");
    let d = under_file.to_str().unwrap();
    assert!(refused("kv", d).contains(d));

    let data = dir.join("data");
    let _first = serve(Proto::Resp, &data, &["--durability", "os"]);
    let d = data.to_str().unwrap();
    let err = refused("resp", d);
    assert!(err.contains(d) && err.contains("in use"), "{err}");
}

/// `serve PROTOCOL --durability os --data-dir DIR` must refuse to start
/// (exit 1); what it said.
fn refused(protocol: &str, dir: &str) -> String {
    let out = run(&words(&format!(
        "serve {protocol} --addr 127.0.0.1:0 --durability os \
        --data-dir {dir}"
    )));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    text(&out.stderr)
}

#[test]
fn the_ledger_check_fails_a_server_that_lost_acknowledged_writes() {
    let dir = scratch("no-log");
    let path = dir.join("ledger");
    let server = ServerProc::start("kv", &[]);
    let ledger = Arc::new(Ledger::create(&path).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let so_far = Arc::new(AtomicU64::new(0));
    // One connection: with two, the first could reach the count alone and
    // the server be killed before the second connected (its thread then
    // failed the test on a busy machine).
    let writers = write_load(Proto::Kv, server.addr, 1, "lost", &ledger, &stop, &so_far);
    // Writes acknowledged (the ledger then holds writes the unlogged
    // server loses).
    wait_for("writes acknowledged", Duration::from_secs(60), || {
        so_far.load(Ordering::Relaxed) >= 20
    });
    server.signal(nix::sys::signal::Signal::SIGKILL);
    drop(server);
    let acked: u64 = writers.into_iter().map(|w| w.join().unwrap()).sum();
    assert!(acked > 0);
    ledger.flush().unwrap();
    // Without a log, the restarted server holds nothing.
    let again = ServerProc::start("kv", &[]);
    let (code, said) = check_ledger(Proto::Kv, again.addr, &path, &[]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("keys wrong"), "{said}");
    let (code, said) = check_ledger(Proto::Kv, again.addr, &path, &["--allow-loss", "1ms"]);
    assert_eq!(code, 1, "losses older than the window fail: {said}");
}

/// Snapshots in a data directory.
fn snapshots(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("snap-")
        })
        .count()
}

#[test]
fn compaction_under_load_and_crash_loses_nothing() {
    let _turn = heavy_turn();
    for proto in [Proto::Kv, Proto::Resp] {
        let dir = scratch(&format!("compaction-{}", proto.name()));
        let args = ["--durability", "always", "--compaction-floor", "4096"];
        crash_rounds(proto, &dir, &args, 5, &[]);
        assert!(snapshots(&dir) > 0, "{}: no compaction ran", proto.name());
    }
}

/// RESP's records do not all overwrite: a snapshot a moment off the cut
/// would count an INCR twice (or lose one), which the ledger's check of
/// the counters' values catches.
#[test]
fn resp_compaction_under_incrs_and_crash_keeps_the_exact_state() {
    let _turn = heavy_turn();
    let dir = scratch("compaction-resp-incr");
    let args = ["--durability", "always", "--compaction-floor", "4096"];
    for (round, (code, said)) in load_ledger_rounds(Proto::Resp, &dir, &args, 3)
        .iter()
        .enumerate()
    {
        assert_eq!(*code, 0, "round {round}: {said}");
        assert!(said.contains("none missing"), "round {round}: {said}");
    }
    assert!(snapshots(&dir) > 0, "no compaction ran");
}

/// `serverlab load PROTO --verify --ledger FILE` writing to `addr` until
/// its server is killed: the load's own arguments for a write-heavy run.
fn ledger_load(proto: Proto, addr: SocketAddr, ledger: &Path) -> std::process::Child {
    let addr = addr.to_string();
    let line = format!(
        "load {} --addr {addr} --verify --ledger {} --keys 200 --reply-timeout 3s",
        proto.name(),
        ledger.display()
    );
    let mut args = words(&line);
    args.extend(match proto {
        Proto::Kv => [
            "--mix",
            "get=40,put=45,delete=15",
            "--sessions",
            "1000000",
            "--concurrency",
            "8",
        ],
        Proto::Resp => [
            "--mix",
            "get=30,set=40,del=10,incr=10,mset=10",
            "--duration",
            "60s",
            "--connections",
            "8",
        ],
    });
    std::process::Command::new(BIN)
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run serverlab load")
}

/// Rounds of: start on `dir`, `load --verify --ledger` for a random
/// moment, SIGKILL the server, wait for the load to end, restart, and
/// `check --ledger` this round's ledger (the next round's load deletes or
/// overwrites the same keys, so only the last ledger describes the data).
/// Returns each round's check: its exit code and output.
fn load_ledger_rounds(
    proto: Proto,
    dir: &Path,
    args: &[&str],
    rounds: usize,
) -> Vec<(i32, String)> {
    let mut checks = Vec::new();
    for round in 0..rounds {
        let server = serve(proto, dir, args);
        let path = dir.with_extension(format!("load-ledger{round}"));
        let mut load = ledger_load(proto, server.addr, &path);
        // Killed at a random moment once the load has had a write
        // acknowledged (its ledger, written in 8 KiB blocks, shows one):
        // on a busy machine, with a sync per write, a fixed time may pass
        // before the first.
        wait_for(
            &format!("round {round}: an acknowledged write in the ledger"),
            Duration::from_secs(60),
            || {
                std::fs::read_to_string(&path)
                    .is_ok_and(|t| t.starts_with("A ") || t.contains("\nA "))
            },
        );
        std::thread::sleep(Duration::from_millis(random_below(800)));
        server.signal(nix::sys::signal::Signal::SIGKILL);
        drop(server);
        let started = Instant::now();
        let ended = loop {
            if let Some(status) = load.try_wait().unwrap() {
                break status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "round {round}: the load did not end after its server was killed"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut said = String::new();
        load.stderr
            .take()
            .unwrap()
            .read_to_string(&mut said)
            .unwrap();
        assert_eq!(
            ended.code(),
            Some(1),
            "round {round}: the load's errors: {said}"
        );

        let again = serve(proto, dir, args);
        checks.push(check_ledger(proto, again.addr, &path, &[]));
        drop(again);
    }
    checks
}

/// The acknowledged writes a ledger check counted ("N keys, M acknowledged writes").
fn acknowledged(said: &str) -> u64 {
    let at = said.find(" acknowledged writes").expect("a ledger verdict");
    said[..at].rsplit(' ').next().unwrap().parse().unwrap()
}

/// Under `always`, for kv and resp: two rounds of `load --verify --ledger`
/// killed mid-run, each checked after the restart.
fn load_ledger_always(strategy: &str) {
    let _turn = heavy_turn();
    for proto in [Proto::Kv, Proto::Resp] {
        let dir = scratch(&format!("load-ledger-{}-{strategy}", proto.name()));
        let args = ["--strategy", strategy, "--durability", "always"];
        let checks = load_ledger_rounds(proto, &dir, &args, 2);
        for (round, (code, said)) in checks.iter().enumerate() {
            let p = proto.name();
            assert_eq!(*code, 0, "{p} round {round}: {said}");
            assert!(said.contains("none missing"), "{p} round {round}: {said}");
            assert!(acknowledged(said) > 0, "{p} round {round}: {said}");
        }
    }
}
per_strategy!(
    a_loads_ledger_finds_no_acknowledged_write_lost,
    load_ledger_always
);

/// The same rounds against a server that keeps no log: the check must
/// find the acknowledged writes the restart lost, name a key, exit 1.
#[test]
fn a_loads_ledger_catches_a_server_that_loses_writes() {
    let _turn = heavy_turn();
    for proto in [Proto::Kv, Proto::Resp] {
        let dir = scratch(&format!("load-ledger-lossy-{}", proto.name()));
        // A server without a log refuses --data-dir: serve it plain.
        let (code, said) = {
            let server = ServerProc::start(proto.name(), &[]);
            let path = dir.join("ledger");
            let mut load = ledger_load(proto, server.addr, &path);
            // Writes acknowledged by then are lost with the server (a fixed
            // 700 ms passed before the first on a busy machine, and an
            // empty ledger finds nothing wrong).
            wait_for(
                "acknowledged writes in the ledger",
                Duration::from_secs(60),
                || std::fs::read_to_string(&path).is_ok_and(|t| t.matches("\nA ").count() >= 20),
            );
            drop(server);
            load.wait().unwrap();
            let again = ServerProc::start(proto.name(), &[]);
            check_ledger(proto, again.addr, &path, &[])
        };
        assert_eq!(code, 1, "{}: {said}", proto.name());
        assert!(said.contains("keys wrong"), "{}: {said}", proto.name());
    }
}

mod faults;
mod undo;
