//! `serverlab check resp`: every strategy × RESP store passes every case
//! and the concurrency phase; a small RESP server whose INCRBY (or
//! GETSET) reads and writes back without holding its lock is caught by
//! the model (a witness naming it), and passes without that bug.

use crate::resp::resp_stores;
use crate::support::*;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};

fn check(addr: &str, args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let mut all = vec!["check", "resp", addr, "--format", "json"];
    all.extend(args);
    let out = run(&all);
    let json = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", text(&out.stdout), text(&out.stderr)));
    (out.status.code(), json)
}

fn every_store(strategy: &str) {
    for store in resp_stores() {
        let server = ServerProc::start(
            "resp",
            &with_threads(strategy, "2", &["--strategy", strategy, "--store", store]),
        );
        let (code, report) = check(
            &server.addr.to_string(),
            &["--duration", "300ms", "--seed", "7"],
        );
        assert_eq!(code, Some(0), "{strategy}/{store}: {report:#}");
        assert_eq!(report["passed"], 26, "{strategy}/{store}");
        assert_eq!(report["concurrency"]["verdict"], "linearizable");
        assert!(server.stop().0.success());
    }
}

per_strategy!(check_resp_passes, every_store);

/// The arguments of the first whole command in `buf` and its length.
fn command(buf: &[u8]) -> Option<(Vec<Vec<u8>>, usize)> {
    let line = |at: usize| -> Option<(usize, usize)> {
        let cr = buf.get(at..)?.iter().position(|&c| c == b'\r')? + at;
        let n = std::str::from_utf8(&buf[at + 1..cr]).ok()?.parse().ok()?;
        Some((n, cr + 2))
    };
    let (n, mut at) = line(0)?;
    let mut args = Vec::new();
    for _ in 0..n {
        let (len, start) = line(at)?;
        args.push(buf.get(start..start + len)?.to_vec());
        at = start + len + 2;
    }
    (buf.len() >= at).then_some((args, at))
}

#[derive(Default)]
struct Db {
    strings: HashMap<Vec<u8>, Vec<u8>>,
    lists: HashMap<Vec<u8>, Vec<Vec<u8>>>,
}

const WRONGTYPE: &[u8] = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";

fn bulk(v: Option<&Vec<u8>>) -> Vec<u8> {
    match v {
        None => b"$-1\r\n".to_vec(),
        Some(v) => [format!("${}\r\n", v.len()).as_bytes(), v, b"\r\n"].concat(),
    }
}

/// INCRBY: read, and (with the bug) let go of the lock before writing.
/// How long a racy command holds the old value it read with the lock let
/// go: long enough that a concurrent command on the same key lands in it
/// on a busy machine too, where the checker's clients send few commands
/// (300 µs was missed there: no lost update, nothing to catch).
const RACE_WINDOW: std::time::Duration = std::time::Duration::from_millis(5);

fn incrby(db: &Mutex<Db>, key: &[u8], by: i64, racy: bool) -> Vec<u8> {
    let mut g = db.lock().unwrap();
    if g.lists.contains_key(key) {
        return WRONGTYPE.to_vec();
    }
    let old = match g.strings.get(key).map(|v| {
        std::str::from_utf8(v)
            .ok()
            .and_then(|s| s.parse::<i64>().ok())
    }) {
        None => 0,
        Some(Some(n)) => n,
        Some(None) => return b"-ERR value is not an integer or out of range\r\n".to_vec(),
    };
    if racy {
        drop(g);
        std::thread::sleep(RACE_WINDOW);
        g = db.lock().unwrap();
    }
    g.strings
        .insert(key.to_vec(), (old + by).to_string().into_bytes());
    format!(":{}\r\n", old + by).into_bytes()
}

/// The bug a small server has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bug {
    Incr,
    GetSet,
}

fn answer(db: &Mutex<Db>, args: &[Vec<u8>], racy: Option<Bug>) -> Vec<u8> {
    let name = String::from_utf8_lossy(&args[0]).to_ascii_uppercase();
    let k = args.get(1).cloned().unwrap_or_default();
    let int = |i: usize| -> i64 { String::from_utf8_lossy(&args[i]).parse().unwrap_or(0) };
    if name == "INCRBY" {
        return incrby(db, &k, int(2), racy == Some(Bug::Incr));
    }
    let racy = racy == Some(Bug::GetSet);
    let mut g = db.lock().unwrap();
    let is_list = g.lists.contains_key(&k);
    let is_str = g.strings.contains_key(&k);
    match name.as_str() {
        "SET" => {
            g.lists.remove(&k);
            g.strings.insert(k, args[2].clone());
            b"+OK\r\n".to_vec()
        }
        "GET" if is_list => WRONGTYPE.to_vec(),
        "GET" => bulk(g.strings.get(&k)),
        "DEL" => format!(
            ":{}\r\n",
            u8::from(g.strings.remove(&k).is_some() || g.lists.remove(&k).is_some())
        )
        .into_bytes(),
        "GETSET" | "GETDEL" if is_list => WRONGTYPE.to_vec(),
        "GETSET" => {
            let old = bulk(g.strings.get(&k));
            if racy {
                // The bug: the old value read, the lock let go, then the
                // write: two GETSETs can both return the same old value.
                drop(g);
                std::thread::sleep(RACE_WINDOW);
                g = db.lock().unwrap();
            }
            g.strings.insert(k, args[2].clone());
            old
        }
        "GETDEL" => bulk(g.strings.remove(&k).as_ref()),
        "RPUSH" | "LINDEX" | "LLEN" | "LMOVE" if is_str => WRONGTYPE.to_vec(),
        "LMOVE" => match g.lists.get_mut(&k) {
            None => bulk(None),
            Some(l) => {
                let last = l.pop().expect("never empty");
                l.insert(0, last.clone());
                bulk(Some(&last))
            }
        },
        "RPUSH" => {
            let l = g.lists.entry(k).or_default();
            l.push(args[2].clone());
            format!(":{}\r\n", l.len()).into_bytes()
        }
        "LLEN" => format!(":{}\r\n", g.lists.get(&k).map_or(0, Vec::len)).into_bytes(),
        "LINDEX" => {
            let l = g.lists.get(&k).cloned().unwrap_or_default();
            let i = int(2);
            let i = if i < 0 { l.len() as i64 + i } else { i };
            bulk(usize::try_from(i).ok().and_then(|i| l.get(i)))
        }
        _ => b"-ERR unknown command\r\n".to_vec(),
    }
}

/// A thread-per-connection RESP server of the commands the concurrency
/// phase sends.
fn small_server(racy: Option<Bug>) -> String {
    let db = Arc::new(Mutex::new(Db::default()));
    fake_server(move |mut s: TcpStream| {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            while let Some((args, len)) = command(&buf) {
                buf.drain(..len);
                if s.write_all(&answer(&db, &args, racy)).is_err() {
                    return;
                }
            }
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    })
}

#[test]
fn a_lost_incr_is_caught_with_a_witness() {
    let (code, report) = check(&small_server(None), &lin_args("100ms"));
    assert_eq!(code, Some(0), "{report:#}");
    for (bug, named) in [(Bug::Incr, "INCRBY"), (Bug::GetSet, "GETSET")] {
        let report = caught(bug);
        assert_eq!(report["concurrency"]["verdict"], "not-linearizable");
        let witness = serde_json::to_string(&report["concurrency"]["partitions"]).unwrap();
        assert!(witness.contains(named), "{bug:?}: {witness}");
    }
}

/// The linearizability phase alone, `duration` long. A short history and
/// a small budget: shrinking a violation of a counter searches many
/// orders of optional INCRs, each up to the budget (docs/protocols/resp.md).
fn lin_args(duration: &str) -> Vec<&str> {
    let mut args = vec!["--only", "linearizable", "--duration", duration];
    args.extend([
        "--seed",
        "5",
        "--timeout",
        "2s",
        "--concurrency",
        "3",
        "--budget",
        "20000",
    ]);
    args
}

/// The check's report against a small server with `bug`, once it has
/// caught it (exit 1). A race is caught only where commands overlap:
/// a machine busy with other work lets the clients send few in a phase
/// (3 in 100 ms, seen), so a phase that caught nothing is run again,
/// twice as long each time (up to 1.6 s), before the check is said to
/// miss the bug. Each phase has a fresh server.
fn caught(bug: Bug) -> serde_json::Value {
    let mut missed = Vec::new();
    for duration in ["100ms", "200ms", "400ms", "800ms", "1600ms"] {
        let (code, report) = check(&small_server(Some(bug)), &lin_args(duration));
        // Caught is not-linearizable; an inconclusive check (out of budget
        // on a starved machine) also exits 1, and is tried again, longer.
        if code == Some(1) && report["concurrency"]["verdict"] == "not-linearizable" {
            return report;
        }
        assert!(matches!(code, Some(0 | 1)), "{bug:?}: {report:#}");
        missed.push(format!(
            "{duration}: {} operations",
            report["concurrency"]["operations"]
        ));
    }
    panic!("{bug:?}: never caught ({})", missed.join(", "))
}

/// The `bulk-over-max` case, from a report.
fn bulk_over_max(report: &serde_json::Value) -> &serde_json::Value {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "bulk-over-max")
        .unwrap()
}

/// A server whose bulk limit is larger than --max-bulk follows the
/// protocol: the limit is its choice. The case is skipped, saying so;
/// the server's own limit, given as --max-bulk, is checked.
#[test]
fn a_larger_bulk_limit_is_skipped_with_its_reason() {
    let server = ServerProc::start("resp", &["--max-bulk", "16MiB", "--max-query", "32MiB"]);
    let addr = server.addr.to_string();
    let (code, report) = check(&addr, &["--only", "bulk-over-max"]);
    assert_eq!(code, Some(0), "{report:#}");
    let case = bulk_over_max(&report);
    assert_eq!(case["status"], "skipped", "{report:#}");
    let reason = case["reason"].as_str().unwrap();
    assert!(reason.contains("its limit is larger"), "{reason}");
    assert!(reason.contains("--max-bulk"), "{reason}");
    let (code, report) = check(&addr, &["--only", "bulk-over-max", "--max-bulk", "16MiB"]);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(bulk_over_max(&report)["status"], "passed", "{report:#}");
    assert!(server.stop().0.success());
}

/// A server that takes an over-long bulk string but then answers it
/// wrongly, or closes without a word, still fails the case.
#[test]
fn a_server_that_takes_a_long_bulk_and_answers_wrongly_fails() {
    for wrong in [&b"+OK\r\n"[..], b""] {
        let db = Arc::new(Mutex::new(Db::default()));
        let addr = fake_server(move |mut s: TcpStream| {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 65536];
            loop {
                while let Some((args, len)) = command(&buf) {
                    buf.drain(..len);
                    // The case's SET of 8 MiB + 1 bytes: answered
                    // wrongly, or the connection closed without a word.
                    let long = args.iter().any(|a| a.len() > 1024 * 1024);
                    let reply = if long {
                        wrong.to_vec()
                    } else if args[0] == b"PING" {
                        b"+PONG\r\n".to_vec()
                    } else {
                        answer(&db, &args, None)
                    };
                    if (long && wrong.is_empty()) || s.write_all(&reply).is_err() {
                        return;
                    }
                }
                match s.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
        });
        let (code, report) = check(&addr, &["--only", "bulk-over-max"]);
        assert_eq!(code, Some(1), "{report:#}");
        let case = bulk_over_max(&report);
        assert_eq!(case["status"], "failed", "{report:#}");
    }
}

/// `check resp`, every case, against redis-server, whose bulk and array
/// limits are larger than --max-bulk's and --max-args' defaults:
/// `bulk-over-max` and `args-over-max` are skipped as the server's
/// choice, not failed, and the concurrency phase runs and passes. Redis
/// follows the protocol; it passes.
#[test]
#[ignore = "needs redis-server (apt-get install redis-server); run: cargo test --workspace -- --ignored"]
fn redis_server_s_larger_limits_are_skipped_not_failed() {
    let redis = crate::resp_interop::RedisServer::start();
    let (code, report) = check(&redis.addr(), &["--duration", "300ms"]);
    assert_eq!(code, Some(0), "{report:#}");
    let case = bulk_over_max(&report);
    assert_eq!(case["status"], "skipped", "{report:#}");
    assert!(
        case["reason"]
            .as_str()
            .unwrap()
            .contains("Redis's bulk limit is 512 MB"),
        "{report:#}"
    );
    assert_eq!(
        (report["failed"].as_u64(), report["skipped"].as_u64()),
        (Some(0), Some(2)),
        "{report:#}"
    );
    assert_eq!(
        report["concurrency"]["verdict"], "linearizable",
        "{report:#}"
    );
}
