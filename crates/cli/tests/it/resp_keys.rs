//! The keyspace and its deadlines over real sockets: KEYS, SCAN, RENAME,
//! RENAMENX, COPY, MOVE, RANDOMKEY, TYPE, TOUCH, UNLINK, the EXPIRE
//! family with NX/XX/GT/LT, TTL, PTTL, EXPIRETIME, PEXPIRETIME and
//! PERSIST, byte for byte as Redis 7.0.15 answers, under every strategy;
//! SELECT, MOVE, COPY … DB and SWAPDB across databases; a SCAN that
//! returns every key present throughout exactly once while keys come and
//! go; keys past their deadline gone for GET, TTL, KEYS and DBSIZE under
//! every store, and deleted by the active expirer when nobody touches
//! them; a durable server restarted with the same keys and deadlines.

use crate::resp::{cmd, now_ms, resp_stores, Raw};
use crate::support::*;
use std::collections::HashSet;
use std::time::{Duration, Instant};

fn bulk(s: &str) -> String {
    format!("${}\r\n{s}\r\n", s.len())
}

fn int(n: i64) -> String {
    format!(":{n}\r\n")
}

fn arr(items: &[&str]) -> String {
    let mut out = format!("*{}\r\n", items.len());
    items.iter().for_each(|i| out += &bulk(i));
    out
}

fn err(msg: &str) -> String {
    format!("-{msg}\r\n")
}

const OK: &str = "+OK\r\n";
const NIL: &str = "$-1\r\n";

/// Sends each command (space-separated words) and expects its reply.
fn script(c: &mut Raw, steps: &[(&str, String)]) {
    for (line, reply) in steps {
        let words: Vec<&str> = line.split(' ').collect();
        c.expect(&cmd(&words), reply);
    }
}

/// The keyspace commands in one database, and their errors.
fn keyspace_steps() -> Vec<(&'static str, String)> {
    vec![
        ("SET a 1", OK.into()),
        ("SET b 2", OK.into()),
        ("RPUSH l x y z", int(3)),
        ("KEYS *", arr(&["a", "b", "l"])),
        ("KEYS [ab]", arr(&["a", "b"])),
        ("KEYS A", arr(&[])),
        ("KEYS ?", arr(&["a", "b", "l"])),
        ("TYPE a", "+string\r\n".into()),
        ("TYPE l", "+list\r\n".into()),
        ("TYPE nope", "+none\r\n".into()),
        ("TOUCH a b nope a", int(3)),
        ("UNLINK nope", int(0)),
        ("UNLINK a nope", int(1)),
        ("EXISTS a", int(0)),
        ("RENAME nope x", err("ERR no such key")),
        ("RENAMENX nope x", err("ERR no such key")),
        ("RENAME b b", OK.into()),
        ("RENAMENX b b", int(0)),
        ("RENAME b c", OK.into()),
        ("GET c", bulk("2")),
        ("GET b", NIL.into()),
        ("SET b 2", OK.into()),
        ("RENAMENX b c", int(0)),
        ("RENAMENX b d", int(1)),
        ("RENAME d l", OK.into()),
        ("TYPE l", "+string\r\n".into()),
        ("GET l", bulk("2")),
        // The deadline moves with the value; the target's own does not stay.
        ("EXPIRE c 100", int(1)),
        ("TTL c", int(100)),
        ("RENAME c d", OK.into()),
        ("TTL d", int(100)),
        ("TTL c", int(-2)),
        ("SET e 1", OK.into()),
        ("RENAME e d", OK.into()),
        ("TTL d", int(-1)),
    ]
}

/// EXPIRE's options, errors and edges; TTL and its kin.
fn expire_steps() -> Vec<(&'static str, String)> {
    let both = "ERR NX and XX, GT or LT options at the same time are not compatible";
    vec![
        ("EXPIRE d 100 XX", int(0)),
        ("EXPIRE d 100 NX", int(1)),
        ("EXPIRE d 200 NX", int(0)),
        ("EXPIRE d 50 GT", int(0)),
        ("EXPIRE d 300 gt", int(1)),
        ("TTL d", int(300)),
        ("EXPIRE d 400 LT", int(0)),
        ("EXPIRE d 10 LT", int(1)),
        ("TTL d", int(10)),
        ("EXPIRE d 10 NX XX", err(both)),
        ("EXPIRE d 10 NX GT", err(both)),
        (
            "EXPIRE d 10 GT LT",
            err("ERR GT and LT options at the same time are not compatible"),
        ),
        ("EXPIRE d 10 foo", err("ERR Unsupported option foo")),
        (
            "EXPIRE d abc",
            err("ERR value is not an integer or out of range"),
        ),
        ("EXPIRE d abc foo", err("ERR Unsupported option foo")),
        (
            "EXPIRE d 9223372036854775807",
            err("ERR invalid expire time in 'expire' command"),
        ),
        (
            "EXPIRE d -9223372036854775807",
            err("ERR invalid expire time in 'expire' command"),
        ),
        (
            "PEXPIRE d 9223372036854775807",
            err("ERR invalid expire time in 'pexpire' command"),
        ),
        (
            "EXPIREAT d 9223372036854775807",
            err("ERR invalid expire time in 'expireat' command"),
        ),
        ("TTL d", int(10)),
        ("PERSIST d", int(1)),
        ("PERSIST d", int(0)),
        ("PERSIST nope", int(0)),
        ("TTL d", int(-1)),
        ("PTTL d", int(-1)),
        ("EXPIRETIME d", int(-1)),
        ("PEXPIRETIME d", int(-1)),
        ("TTL nope", int(-2)),
        ("PTTL nope", int(-2)),
        ("EXPIRETIME nope", int(-2)),
        ("PEXPIRETIME nope", int(-2)),
        ("EXPIREAT d 33177117420", int(1)),
        ("EXPIRETIME d", int(33177117420)),
        ("PEXPIRETIME d", int(33177117420000)),
        ("PEXPIREAT d 33177117420623", int(1)),
        ("PEXPIRETIME d", int(33177117420623)),
        ("EXPIRETIME d", int(33177117421)),
        ("EXPIRE nope 10", int(0)),
        // A deadline already past deletes the key, and answers 1.
        ("EXPIRE d -1", int(1)),
        ("EXISTS d", int(0)),
        ("SET f 1", OK.into()),
        ("PEXPIRE f 0", int(1)),
        ("EXISTS f", int(0)),
        ("SET f 1", OK.into()),
        ("EXPIREAT f 1", int(1)),
        ("GET f", NIL.into()),
        // GT against no deadline (an infinite one) fails; LT passes.
        ("SET f 1", OK.into()),
        ("EXPIRE f 10 GT", int(0)),
        ("EXPIRE f 10 LT", int(1)),
        ("EXPIRE f -5 GT", int(0)),
        ("TTL f", int(10)),
        // SET drops the deadline.
        ("SET f 2", OK.into()),
        ("TTL f", int(-1)),
    ]
}

/// MOVE, COPY … DB and SWAPDB across databases (the connection starts in
/// database 0 and ends there).
fn database_steps() -> Vec<(&'static str, String)> {
    let same = "ERR source and destination objects are the same";
    let range = "ERR DB index is out of range";
    let not_int = "ERR value is not an integer or out of range";
    vec![
        ("SET g v", OK.into()),
        ("EXPIRE g 100", int(1)),
        ("MOVE g 0", err(same)),
        ("MOVE g x", err(not_int)),
        ("MOVE g 16", err(range)),
        ("MOVE g -1", err(range)),
        (
            "MOVE g 99999999999",
            err("ERR value is out of range, value must between -2147483648 and 2147483647"),
        ),
        ("MOVE nope 1", int(0)),
        ("MOVE g 1", int(1)),
        ("EXISTS g", int(0)),
        ("SELECT 1", OK.into()),
        ("TTL g", int(100)),
        ("GET g", bulk("v")),
        ("SELECT 0", OK.into()),
        ("SET g mine", OK.into()),
        ("MOVE g 1", int(0)),
        ("GET g", bulk("mine")),
        ("COPY g h", int(1)),
        ("GET h", bulk("mine")),
        ("COPY g h", int(0)),
        ("COPY g h REPLACE", int(1)),
        ("COPY g g", err(same)),
        ("COPY g g DB 0", err(same)),
        ("COPY g g DB 1", int(0)),
        ("COPY g g db 1 replace", int(1)),
        ("COPY g h DB", err("ERR syntax error")),
        ("COPY g h DB x", err(not_int)),
        ("COPY g h DB 99", err(range)),
        ("COPY g h foo", err("ERR syntax error")),
        ("COPY nope h", int(0)),
        ("COPY g h2 DB 2", int(1)),
        ("SELECT 1", OK.into()),
        // Replaced, with the copy's (absent) deadline.
        ("GET g", bulk("mine")),
        ("TTL g", int(-1)),
        ("SELECT 2", OK.into()),
        ("GET h2", bulk("mine")),
        ("SELECT 0", OK.into()),
        // A copy is independent of its source, and has its deadline.
        ("RPUSH list a b c", int(3)),
        ("EXPIRE list 1000", int(1)),
        ("COPY list lc", int(1)),
        ("RPUSH lc d", int(4)),
        ("LLEN list", int(3)),
        ("LRANGE lc 0 -1", arr(&["a", "b", "c", "d"])),
        ("TTL lc", int(1000)),
        ("COPY g lc REPLACE", int(1)),
        ("TTL lc", int(-1)),
        // SWAPDB swaps the deadlines with the keys.
        ("SET s0 v", OK.into()),
        ("EXPIRE s0 500", int(1)),
        ("SWAPDB 0 1", OK.into()),
        ("EXISTS s0", int(0)),
        ("TTL g", int(-1)),
        ("SELECT 1", OK.into()),
        ("TTL s0", int(500)),
        ("SWAPDB 1 0", OK.into()),
        ("SELECT 0", OK.into()),
        ("TTL s0", int(500)),
        // An empty database, then one key.
        ("SELECT 7", OK.into()),
        ("RANDOMKEY", NIL.into()),
        ("KEYS *", arr(&[])),
        ("SCAN 0", "*2\r\n$1\r\n0\r\n*0\r\n".into()),
        ("DBSIZE", int(0)),
        ("SET only v", OK.into()),
        ("RANDOMKEY", bulk("only")),
        ("SCAN 0", "*2\r\n$1\r\n0\r\n*1\r\n$4\r\nonly\r\n".into()),
        ("SCAN 0 TYPE list", "*2\r\n$1\r\n0\r\n*0\r\n".into()),
        (
            "SCAN 0 type STRING COUNT 3",
            "*2\r\n$1\r\n0\r\n*1\r\n$4\r\nonly\r\n".into(),
        ),
        (
            "SCAN 0 MATCH o*",
            "*2\r\n$1\r\n0\r\n*1\r\n$4\r\nonly\r\n".into(),
        ),
        ("SCAN 0 MATCH O*", "*2\r\n$1\r\n0\r\n*0\r\n".into()),
        ("SCAN x", err("ERR invalid cursor")),
        ("SCAN 0 COUNT 0", err("ERR syntax error")),
        ("SCAN 0 COUNT x", err(not_int)),
        ("SCAN 0 MATCH", err("ERR syntax error")),
        ("SCAN 0 foo bar", err("ERR syntax error")),
        ("DBSIZE", int(1)),
        ("SELECT 0", OK.into()),
    ]
}

/// Every key of `db` present for the whole of a SCAN (COUNT 7), while a
/// key is deleted and another added between its calls, is returned once.
fn scan_under_churn(c: &mut Raw, db: &str) {
    c.expect(&cmd(&["SELECT", db]), OK);
    let mut mset = vec!["MSET".to_string()];
    for i in 0..300 {
        mset.extend([format!("k{i}"), "v".into()]);
    }
    let words: Vec<&str> = mset.iter().map(|s| &s[..]).collect();
    c.expect(&cmd(&words), OK);
    let (mut cursor, mut seen, mut calls) = ("0".to_string(), Vec::new(), 0);
    loop {
        let (next, keys) = scan_call(c, &["SCAN", &cursor, "COUNT", "7"]);
        seen.extend(keys);
        c.expect(&cmd(&["DEL", &format!("k{calls}")]), &int(1));
        c.expect(&cmd(&["SET", &format!("new{calls}"), "v"]), OK);
        calls += 1;
        if next == "0" {
            break;
        }
        cursor = next;
        assert!(calls < 1000, "the scan ends");
    }
    assert!(calls >= 300 / 7 / 2, "{calls} calls for 300 keys, COUNT 7");
    for i in calls..300 {
        let k = format!("k{i}");
        assert_eq!(seen.iter().filter(|s| **s == k).count(), 1, "{k}");
    }
    let distinct: HashSet<&String> = seen.iter().collect();
    assert_eq!(distinct.len(), seen.len(), "no key twice");
    c.expect(&cmd(&["FLUSHDB"]), OK);
    c.expect(&cmd(&["SELECT", "0"]), OK);
}

/// One SCAN call: the next cursor and the keys.
fn scan_call(c: &mut Raw, args: &[&str]) -> (String, Vec<String>) {
    c.send(&cmd(args));
    let head = c.read_n(4);
    assert_eq!(text(&head), "*2\r\n");
    let next = read_bulk(c);
    let n: usize = read_line(c)[1..].parse().unwrap();
    let keys = (0..n).map(|_| read_bulk(c)).collect();
    (next, keys)
}

fn read_line(c: &mut Raw) -> String {
    let mut line = Vec::new();
    while !line.ends_with(b"\r\n") {
        let b = c.read_n(1);
        assert!(!b.is_empty(), "closed");
        line.extend(b);
    }
    text(&line[..line.len() - 2])
}

fn read_bulk(c: &mut Raw) -> String {
    let len: usize = read_line(c)[1..].parse().unwrap();
    let body = c.read_n(len + 2);
    text(&body[..len])
}

/// A write that MOVE makes to a watched key of another database aborts
/// the watcher's transaction.
fn watch_across_databases(server: &ServerProc) {
    let (mut a, mut b) = (Raw::connect(server.addr), Raw::connect(server.addr));
    b.expect(&cmd(&["SELECT", "3"]), OK);
    b.expect(&cmd(&["WATCH", "w"]), OK);
    a.expect(&cmd(&["SET", "w", "v"]), OK);
    a.expect(&cmd(&["MOVE", "w", "3"]), &int(1));
    b.expect(&cmd(&["MULTI"]), OK);
    b.expect(&cmd(&["SET", "z", "1"]), "+QUEUED\r\n");
    b.expect(&cmd(&["EXEC"]), "*-1\r\n");
    b.expect(&cmd(&["FLUSHDB"]), OK);
}

fn keyspace_byte_exact(strategy: &str) {
    let server = ServerProc::start(
        "resp",
        &with_threads(strategy, "2", &["--strategy", strategy]),
    );
    let mut c = Raw::connect(server.addr);
    script(&mut c, &keyspace_steps());
    script(&mut c, &expire_steps());
    script(&mut c, &database_steps());
    scan_under_churn(&mut c, "9");
    watch_across_databases(&server);
    // Pipelined in one write: the same replies, in order.
    c.expect(&cmd(&["FLUSHALL"]), OK);
    let steps: Vec<_> = [keyspace_steps(), expire_steps(), database_steps()].concat();
    let wire: Vec<u8> = steps
        .iter()
        .flat_map(|(line, _)| cmd(&line.split(' ').collect::<Vec<_>>()))
        .collect();
    let replies: String = steps.iter().map(|(_, r)| r.as_str()).collect();
    c.expect(&wire, &replies);
}

per_strategy!(resp_keyspace_byte_exact, keyspace_byte_exact);

/// COPY and MOVE of every type: the copy independent, the deadline along.
#[test]
fn copy_and_move_every_type() {
    let server = ServerProc::start("resp", &[]);
    let mut c = Raw::connect(server.addr);
    script(
        &mut c,
        &[
            ("SADD s a b", int(2)),
            ("HSET h f v", int(1)),
            ("ZADD z 1 m", int(1)),
            ("EXPIRE z 100", int(1)),
            ("COPY s s2", int(1)),
            ("SADD s2 c", int(1)),
            ("SCARD s", int(2)),
            ("TYPE s2", "+set\r\n".into()),
            ("COPY h h2 DB 4", int(1)),
            ("HSET h f w", int(0)),
            ("COPY z z2", int(1)),
            ("ZSCORE z2 m", bulk("1")),
            ("TTL z2", int(100)),
            ("TYPE z2", "+zset\r\n".into()),
            ("MOVE z 4", int(1)),
            ("SELECT 4", OK.into()),
            ("HGET h2 f", bulk("v")),
            ("TYPE h2", "+hash\r\n".into()),
            ("TTL z", int(100)),
            ("KEYS *", arr(&["h2", "z"])),
        ],
    );
}

/// Until `f` holds (polled), at most `limit`.
fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    f()
}

/// Keys past their deadline, under one store: GET, TTL, KEYS and DBSIZE
/// never see them, and the active expirer deletes those nobody touches
/// (INFO keyspace's counts fall); then every command's replies.
fn expiry_under(store: &str) {
    let server = ServerProc::start("resp", &["--store", store]);
    let mut c0 = Raw::connect(server.addr);
    let mut c1 = Raw::connect(server.addr);
    let mut c2 = Raw::connect(server.addr);
    c1.expect(&cmd(&["SELECT", "1"]), OK);
    c2.expect(&cmd(&["SELECT", "2"]), OK);
    let set_at = Instant::now();
    let ms = "700";
    for (c, keys) in [
        (&mut c0, ["lazy", "llist"]),
        (&mut c1, ["act1", "act2"]),
        (&mut c2, ["dz", "dz2"]),
    ] {
        c.expect(&cmd(&["SET", keys[0], "v"]), OK);
        c.expect(&cmd(&["RPUSH", keys[1], "a", "b"]), &int(2));
        c.expect(&cmd(&["PEXPIRE", keys[0], ms]), &int(1));
        c.expect(&cmd(&["PEXPIRE", keys[1], ms]), &int(1));
        c.expect(&cmd(&["SET", "stay", "v"]), OK);
    }
    c0.expect(&cmd(&["TTL", "lazy"]), &int(1));
    c0.expect(&cmd(&["KEYS", "*"]), &arr(&["lazy", "llist", "stay"]));
    let info = c0.bulk(&cmd(&["INFO", "keyspace"]));
    assert!(info.contains("db1:keys=3,expires=2,"), "{store}: {info}");
    std::thread::sleep(Duration::from_millis(1000).saturating_sub(set_at.elapsed()));
    // Fast-path reads of the expired keys, and DBSIZE.
    c2.expect(&cmd(&["DBSIZE"]), &int(1));
    c0.expect(&cmd(&["GET", "lazy"]), NIL);
    // Database 1 untouched: the active expirer alone empties it of them.
    let mut info = String::new();
    let gone = eventually(Duration::from_secs(3), || {
        info = c0.bulk(&cmd(&["INFO", "keyspace"]));
        info.contains("db1:keys=1,expires=0,")
    });
    assert!(gone, "{store}: {info}");
    c0.expect(&cmd(&["TTL", "llist"]), &int(-2));
    c0.expect(&cmd(&["KEYS", "*"]), &arr(&["stay"]));
    c0.expect(&cmd(&["DBSIZE"]), &int(1));
    c1.expect(&cmd(&["GET", "act1"]), NIL);
    c1.expect(&cmd(&["RANDOMKEY"]), &bulk("stay"));
    c1.expect(
        &cmd(&["SCAN", "0"]),
        "*2\r\n$1\r\n0\r\n*1\r\n$4\r\nstay\r\n",
    );
    // And every command's replies, under this store too.
    c0.expect(&cmd(&["FLUSHALL"]), OK);
    script(&mut c0, &keyspace_steps());
    script(&mut c0, &expire_steps());
    script(&mut c0, &database_steps());
}

#[test]
fn expired_keys_are_gone_under_every_store() {
    for store in resp_stores() {
        expiry_under(store);
    }
}

/// A durable server restarted after EXPIRE, RENAME, COPY, MOVE and
/// PERSIST comes back with the same keys and deadlines; a key whose
/// deadline passed while it was down is gone, one saved by PERSIST
/// before its deadline is not.
#[test]
fn deadlines_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let args = logged_always(dir.path());
    let server = ServerProc::start("resp", &args);
    let mut c = Raw::connect(server.addr);
    let at = (now_ms() + 1_000_000).to_string();
    let short = Instant::now();
    script(
        &mut c,
        &[
            ("SET saved v", OK.into()),
            ("PEXPIRE saved 300", int(1)),
            ("PERSIST saved", int(1)),
            ("SET gone v", OK.into()),
            ("PEXPIRE gone 300", int(1)),
            ("SET neg v", OK.into()),
            ("EXPIRE neg -1", int(1)),
            ("SET long v", OK.into()),
            ("EXPIRE long 1000", int(1)),
            ("RENAME long long2", OK.into()),
            ("RPUSH l a b", int(2)),
            ("COPY l l2 DB 3", int(1)),
            ("MOVE long2 5", int(1)),
        ],
    );
    c.expect(&cmd(&["PEXPIREAT", "l", &at]), &int(1));
    c.expect(&cmd(&["COPY", "l", "l3"]), &int(1));
    c.expect(&cmd(&["SELECT", "5"]), OK);
    c.send(&cmd(&["PEXPIRETIME", "long2"]));
    let long2 = read_line(&mut c);
    server.signal(nix::sys::signal::Signal::SIGKILL);
    drop(server);
    std::thread::sleep(Duration::from_millis(400).saturating_sub(short.elapsed()));
    let server = ServerProc::start("resp", &args);
    let mut c = Raw::connect(server.addr);
    let at = format!(":{at}\r\n");
    script(
        &mut c,
        &[
            ("KEYS *", arr(&["l", "l3", "saved"])),
            ("TTL saved", int(-1)),
            ("TTL gone", int(-2)),
            ("TTL neg", int(-2)),
            ("PEXPIRETIME l", at.clone()),
            ("PEXPIRETIME l3", at),
            ("SELECT 3", OK.into()),
            ("LRANGE l2 0 -1", arr(&["a", "b"])),
            ("TTL l2", int(-1)),
            ("SELECT 5", OK.into()),
            ("PEXPIRETIME long2", format!("{long2}\r\n")),
            ("GET long2", bulk("v")),
        ],
    );
}

/// A key that expired and was written again before a crash comes back
/// as written: the expiry is in the log (as the `DEL` it came to), so the
/// replay does not find the old value in the new one's way. Under every
/// store; one database key, touched lazily by a push on the fast path,
/// one deleted by a command alone.
#[test]
fn a_key_rewritten_after_its_deadline_replays_as_written() {
    for store in crate::resp::resp_stores() {
        let dir = tempfile::tempdir().unwrap();
        let args = [&logged_always(dir.path())[..], &["--store", store]].concat();
        let server = ServerProc::start("resp", &args);
        let mut c = Raw::connect(server.addr);
        c.expect(&cmd(&["SET", "k", "string"]), OK);
        c.expect(&cmd(&["PEXPIRE", "k", "100"]), &int(1));
        c.expect(&cmd(&["SET", "h", "string"]), OK);
        c.expect(&cmd(&["PEXPIRE", "h", "100"]), &int(1));
        std::thread::sleep(Duration::from_millis(250));
        // On the fast path: the string expired, the push makes a list.
        c.expect(&cmd(&["RPUSH", "k", "x"]), &int(1));
        // Alone: the string expired, SADD makes a set.
        c.expect(&cmd(&["SADD", "h", "m"]), &int(1));
        server.signal(nix::sys::signal::Signal::SIGKILL);
        drop(server);
        let server = ServerProc::start("resp", &args);
        let mut c = Raw::connect(server.addr);
        c.expect(&cmd(&["LRANGE", "k", "0", "-1"]), &arr(&["x"]));
        c.expect(&cmd(&["SMEMBERS", "h"]), &arr(&["m"]));
        c.expect(&cmd(&["TTL", "k"]), &int(-1));
    }
}

/// Keys with deadlines while the log compacts under a stream of writes:
/// the copy holds every deadline stripe, the writers hold theirs; the
/// server must neither hang nor lose a key.
#[test]
fn compaction_with_deadlines_does_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--durability",
        "os",
        "--compaction-floor",
        "4096",
        "--threads",
        "2",
        "--data-dir",
        dir.path().to_str().unwrap(),
    ];
    let server = ServerProc::start("resp", &args);
    std::thread::scope(|s| {
        for w in 0..2 {
            let addr = server.addr;
            s.spawn(move || {
                let mut c = Raw::connect(addr);
                for i in 0..1500 {
                    let k = format!("w{w}-{}", i % 50);
                    c.expect(&cmd(&["SET", &k, "v", "EX", "1000"]), OK);
                    c.expect(&cmd(&["SET", &k, "v2", "NX"]), "$-1\r\n");
                    c.expect(&cmd(&["GET", &k]), &bulk("v"));
                }
            });
        }
    });
    let mut c = Raw::connect(server.addr);
    c.expect(&cmd(&["DBSIZE"]), &int(100));
    drop(c);
    let (status, out) = server.stop();
    assert!(status.success(), "{out}");
    assert!(out.contains("compactions"), "{out}");
}

/// A deadline moved later, and acknowledged, survives kill -9 with its
/// key under every store: the first deadline, past by the restart, is in
/// the log's `SET … PXAT`, and the replay must not delete the key the
/// later `PEXPIREAT` keeps (it did: the key was gone).
#[test]
fn an_extended_deadline_survives_a_crash() {
    for store in resp_stores() {
        let dir = tempfile::tempdir().unwrap();
        let args = [&logged_always(dir.path())[..], &["--store", store]].concat();
        let server = ServerProc::start("resp", &args);
        let mut c = Raw::connect(server.addr);
        let set_at = Instant::now();
        // In one transaction: under `always` each reply waits for an
        // fsync, which a busy disk can stretch past 300 ms (the key would
        // expire before its PEXPIRE). Replayed, it is one record of the
        // same four commands.
        script(
            &mut c,
            &[
                ("MULTI", OK.into()),
                ("SET k v PX 300", "+QUEUED\r\n".into()),
                ("PEXPIRE k 20000", "+QUEUED\r\n".into()),
                ("PSETEX p 300 v", "+QUEUED\r\n".into()),
                ("PEXPIRE p 20000", "+QUEUED\r\n".into()),
                ("EXEC", "*4\r\n+OK\r\n:1\r\n+OK\r\n:1\r\n".into()),
            ],
        );
        std::thread::sleep(Duration::from_millis(600).saturating_sub(set_at.elapsed()));
        c.expect(&cmd(&["EXISTS", "k", "p"]), &int(2));
        server.signal(nix::sys::signal::Signal::SIGKILL);
        drop(server);
        let server = ServerProc::start("resp", &args);
        let mut c = Raw::connect(server.addr);
        c.expect(&cmd(&["EXISTS", "k", "p"]), &int(2));
        c.send(&cmd(&["PTTL", "k"]));
        let ttl: i64 = read_line(&mut c)[1..].parse().unwrap();
        assert!(ttl > 10_000, "{store}: PTTL {ttl}");
    }
}

/// Under a log, keys past their deadline that nobody touches are deleted
/// in the background (INFO's counts fall; they never did under a log),
/// each logged as a DEL: the restarted server's replay never has them.
#[test]
fn the_active_expirer_deletes_and_logs_under_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let args = logged_always(dir.path());
    let server = ServerProc::start("resp", &args);
    let mut c = Raw::connect(server.addr);
    script(
        &mut c,
        &[
            ("SET stay v", OK.into()),
            ("SET a v PX 200", OK.into()),
            ("SELECT 3", OK.into()),
            ("SET stay3 v", OK.into()),
            ("RPUSH b x", int(1)),
            ("PEXPIRE b 200", int(1)),
            ("SET c v PX 200", OK.into()),
        ],
    );
    let mut info = String::new();
    let gone = eventually(Duration::from_secs(10), || {
        info = c.bulk(&cmd(&["INFO", "keyspace"]));
        info.contains("db0:keys=1,expires=0,") && info.contains("db3:keys=1,expires=0,")
    });
    assert!(gone, "{info}");
    server.signal(nix::sys::signal::Signal::SIGKILL);
    drop(server);
    let server = ServerProc::start("resp", &args);
    let mut c = Raw::connect(server.addr);
    let info = c.bulk(&cmd(&["INFO", "keyspace"]));
    assert!(
        info.contains("db0:keys=1,expires=0,") && info.contains("db3:keys=1,expires=0,"),
        "replayed: {info}"
    );
    c.expect(&cmd(&["GET", "stay"]), &bulk("v"));
}

/// More keys fall due at once than one pass of the expirer deletes (it
/// takes at most 10,000 a pass, so its record and its hold on the
/// keyspace stay bounded): the later passes delete the rest.
#[test]
fn keys_due_at_once_beyond_a_pass_are_all_expired_under_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let args = logged_always(dir.path());
    let server = ServerProc::start("resp", &args);
    let mut c = Raw::connect(server.addr);
    c.expect(&cmd(&["SET", "stay", "v"]), OK);
    // Five transactions of 5,000 SETs with a deadline: 25,000 keys due
    // within a moment of each other, five records and five fsyncs.
    for t in 0..5 {
        let mut batch = cmd(&["MULTI"]);
        for k in 0..5000 {
            batch.extend(cmd(&["SET", &format!("k{t}:{k}"), "v", "PX", "300"]));
        }
        batch.extend(cmd(&["EXEC"]));
        c.send(&batch);
        let replies = OK.len() + 5000 * "+QUEUED\r\n".len() + "*5000\r\n".len() + 5000 * OK.len();
        let got = c.read_n(replies);
        assert!(
            got.ends_with(OK.as_bytes()),
            "{}",
            text(&got[got.len() - 64..])
        );
    }
    let mut info = String::new();
    let gone = eventually(Duration::from_secs(60), || {
        info = c.bulk(&cmd(&["INFO", "keyspace"]));
        info.contains("db0:keys=1,expires=0,")
    });
    assert!(gone, "{info}");
}

/// SCAN costs about COUNT per call, not the keyspace: 100 calls of COUNT
/// 10 over a million keys end well within a generous guard (each hashed
/// every key before: a minute in all), and another client's GETs are
/// served meanwhile.
#[test]
fn scan_calls_over_a_million_keys_do_not_walk_them_all() {
    let server = ServerProc::start("resp", &[]);
    let mut c = Raw::connect(server.addr);
    for batch in 0..1000 {
        let mut mset = vec!["MSET".to_string()];
        for i in 0..1000 {
            mset.extend([format!("key:{batch}:{i}"), "v".into()]);
        }
        let words: Vec<&str> = mset.iter().map(|s| &s[..]).collect();
        c.send(&cmd(&words));
    }
    for _ in 0..1000 {
        assert_eq!(text(&c.read_n(5)), OK);
    }
    c.expect(&cmd(&["DBSIZE"]), &int(1_000_000));
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let addr = server.addr;
        let done = &done;
        let other = s.spawn(move || {
            let mut o = Raw::connect(addr);
            // At least one GET, however late this thread is scheduled.
            let mut served = 0;
            loop {
                o.expect(&cmd(&["GET", "key:7:7"]), &bulk("v"));
                served += 1;
                if done.load(std::sync::atomic::Ordering::Acquire) {
                    return served;
                }
            }
        });
        let start = Instant::now();
        let (mut cursor, mut seen) = ("0".to_string(), HashSet::new());
        for _ in 0..100 {
            let (next, keys) = scan_call(&mut c, &["SCAN", &cursor, "COUNT", "10"]);
            assert!(keys.len() >= 10, "{keys:?}");
            seen.extend(keys);
            cursor = next;
        }
        let took = start.elapsed();
        done.store(true, std::sync::atomic::Ordering::Release);
        assert!(other.join().unwrap() > 0);
        assert!(seen.len() >= 1000, "{} keys", seen.len());
        assert!(
            took < Duration::from_secs(30),
            "100 SCAN calls took {took:?}"
        );
    });
}
