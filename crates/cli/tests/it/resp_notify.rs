//! RESP's keyspace notifications over real sockets: a script of writes
//! with `notify-keyspace-events` set, each write's reply and the
//! messages a `PSUBSCRIBE *` subscriber gets for it, byte for byte
//! (against serverlab under every strategy and with a log; the same
//! script against redis-server 7.0.15, ignored here); the flags as
//! CONFIG GET shows them and a bad one refused; CLIENT REPLY; keys that
//! expire.

use crate::resp::{cmd, Raw};
use crate::resp_interop::RedisServer;
use crate::support::*;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

fn pmessage(ch: &str, m: &str) -> String {
    format!(
        "*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n${}\r\n{ch}\r\n${}\r\n{m}\r\n",
        ch.len(),
        m.len()
    )
}

/// The messages `KE` flags publish for `event` on `key` of database 0.
fn both(key: &str, event: &str) -> String {
    pmessage(&format!("__keyspace@0__:{key}"), event)
        + &pmessage(&format!("__keyevent@0__:{event}"), key)
}

/// The subscriber gets exactly `want` next.
fn got(s: &mut Raw, want: &str) {
    assert_eq!(text(&s.read_n(want.len())), want);
}

/// Each write, its reply, and its events (`key event`, in order).
const STEPS: &[(&[&str], &str, &[&str])] = &[
    (&["SET", "foo", "bar"], "+OK\r\n", &["foo new", "foo set"]),
    (
        &["SET", "foo", "baz", "EX", "100"],
        "+OK\r\n",
        &["foo set", "foo expire"],
    ),
    (&["SET", "foo", "x", "NX"], "$-1\r\n", &[]),
    (
        &["SETEX", "se", "100", "v"],
        "+OK\r\n",
        &["se new", "se set", "se expire"],
    ),
    (
        &["MSET", "a", "1", "b", "2"],
        "+OK\r\n",
        &["a new", "a set", "b new", "b set"],
    ),
    (&["INCR", "n"], ":1\r\n", &["n new", "n incrby"]),
    (
        &["INCRBYFLOAT", "n", "1.5"],
        "$3\r\n2.5\r\n",
        &["n incrbyfloat"],
    ),
    (&["APPEND", "a", "x"], ":2\r\n", &["a append"]),
    (&["SETRANGE", "a", "0", "y"], ":2\r\n", &["a setrange"]),
    (&["GETDEL", "b"], "$1\r\n2\r\n", &["b del"]),
    (&["DEL", "a", "nosuch", "a"], ":1\r\n", &["a del"]),
    (&["EXPIRE", "n", "100"], ":1\r\n", &["n expire"]),
    (&["PERSIST", "n"], ":1\r\n", &["n persist"]),
    (&["EXPIRE", "n", "-1"], ":1\r\n", &["n del"]),
    (
        &["RENAME", "foo", "foo2"],
        "+OK\r\n",
        &["foo2 new", "foo rename_from", "foo2 rename_to"],
    ),
    (
        &["COPY", "foo2", "foo3"],
        ":1\r\n",
        &["foo3 new", "foo3 copy_to"],
    ),
    (
        &["LPUSH", "l", "a", "b", "c"],
        ":3\r\n",
        &["l new", "l lpush"],
    ),
    (&["RPUSH", "l", "d"], ":4\r\n", &["l rpush"]),
    (
        &["LINSERT", "l", "BEFORE", "a", "q"],
        ":5\r\n",
        &["l linsert"],
    ),
    (&["LSET", "l", "0", "w"], "+OK\r\n", &["l lset"]),
    (&["LREM", "l", "0", "q"], ":1\r\n", &["l lrem"]),
    (&["LTRIM", "l", "0", "2"], "+OK\r\n", &["l ltrim"]),
    (
        &["LMOVE", "l", "l2", "LEFT", "RIGHT"],
        "$1\r\nw\r\n",
        &["l2 new", "l2 rpush", "l lpop"],
    ),
    (
        &["RPOP", "l", "5"],
        "*2\r\n$1\r\na\r\n$1\r\nb\r\n",
        &["l rpop", "l del"],
    ),
    (&["LPOP", "l"], "$-1\r\n", &[]),
    (&["SADD", "s", "a", "b"], ":2\r\n", &["s new", "s sadd"]),
    (&["SADD", "s", "a"], ":0\r\n", &[]),
    (&["SREM", "s", "x"], ":0\r\n", &[]),
    (&["SREM", "s", "a"], ":1\r\n", &["s srem"]),
    (
        &["SMOVE", "s", "s2", "b"],
        ":1\r\n",
        &["s srem", "s del", "s2 new", "s2 sadd"],
    ),
    (
        &["SINTERSTORE", "s3", "s2", "s2"],
        ":1\r\n",
        &["s3 new", "s3 sinterstore"],
    ),
    (&["SDIFFSTORE", "s3", "s2", "s2"], ":0\r\n", &["s3 del"]),
    (
        &["HSET", "h", "a", "1", "b", "2"],
        ":2\r\n",
        &["h new", "h hset"],
    ),
    (&["HINCRBY", "h", "a", "10"], ":11\r\n", &["h hincrby"]),
    (&["HDEL", "h", "a", "b"], ":2\r\n", &["h hdel", "h del"]),
    (
        &["ZADD", "z", "1", "a", "2", "b"],
        ":2\r\n",
        &["z new", "z zadd"],
    ),
    (
        &["ZADD", "z", "INCR", "5", "a"],
        "$1\r\n6\r\n",
        &["z zincr"],
    ),
    (&["ZINCRBY", "z", "1", "b"], "$1\r\n3\r\n", &["z zincr"]),
    (&["ZREM", "z", "x"], ":0\r\n", &[]),
    (
        &["ZREMRANGEBYSCORE", "z", "3", "3"],
        ":1\r\n",
        &["z zremrangebyscore"],
    ),
    (
        &["ZPOPMIN", "z"],
        "*2\r\n$1\r\na\r\n$1\r\n6\r\n",
        &["z zpopmin", "z del"],
    ),
    (
        &["SORT", "l2", "ALPHA", "STORE", "st"],
        ":1\r\n",
        &["st new", "st sortstore"],
    ),
];

fn script(addr: SocketAddr) {
    let mut w = Raw::connect(addr);
    let mut s = Raw::connect(addr);
    w.expect(
        &cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEq"]),
        "-ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - \
         Invalid event class character. Use 'Ag$lshzxeKEtmdn'.\r\n",
    );
    w.expect(
        &cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEAn"]),
        "+OK\r\n",
    );
    w.expect(
        &cmd(&["CONFIG", "GET", "notify-keyspace-events"]),
        "*2\r\n$22\r\nnotify-keyspace-events\r\n$3\r\nAKE\r\n",
    );
    s.expect(
        &cmd(&["PSUBSCRIBE", "*"]),
        "*3\r\n$10\r\npsubscribe\r\n$1\r\n*\r\n:1\r\n",
    );
    for (args, reply, events) in STEPS {
        w.expect(&cmd(args), reply);
        for e in *events {
            let (key, event) = e.split_once(' ').unwrap();
            got(&mut s, &both(key, event));
        }
    }
    // A transaction's events, each once, in order.
    w.expect(&cmd(&["MULTI"]), "+OK\r\n");
    w.expect(&cmd(&["SET", "t", "1"]), "+QUEUED\r\n");
    w.expect(&cmd(&["INCR", "t"]), "+QUEUED\r\n");
    w.expect(&cmd(&["DEL", "t"]), "+QUEUED\r\n");
    w.expect(&cmd(&["EXEC"]), "*3\r\n+OK\r\n:2\r\n:1\r\n");
    for e in ["t new", "t set", "t incrby", "t del"] {
        let (key, event) = e.split_once(' ').unwrap();
        got(&mut s, &both(key, event));
    }
    // Masked: only the list class, keyevent channels.
    w.expect(
        &cmd(&["CONFIG", "SET", "notify-keyspace-events", "El"]),
        "+OK\r\n",
    );
    w.expect(
        &cmd(&["CONFIG", "GET", "notify-keyspace-events"]),
        "*2\r\n$22\r\nnotify-keyspace-events\r\n$2\r\nlE\r\n",
    );
    w.expect(&cmd(&["SET", "m", "1"]), "+OK\r\n");
    w.expect(&cmd(&["RPUSH", "ml", "1"]), ":1\r\n");
    got(&mut s, &pmessage("__keyevent@0__:rpush", "ml"));
    // Off: nothing more (the next message is PUBLISH's own).
    w.expect(
        &cmd(&["CONFIG", "SET", "notify-keyspace-events", ""]),
        "+OK\r\n",
    );
    w.expect(&cmd(&["RPUSH", "ml", "2"]), ":2\r\n");
    w.expect(&cmd(&["PUBLISH", "done", "x"]), ":1\r\n");
    got(&mut s, &pmessage("done", "x"));
}

#[test]
fn notifications_byte_for_byte_under_every_strategy() {
    every_strategy_at_once("resp", script);
}

#[test]
fn notifications_byte_for_byte_with_a_log() {
    for durability in ["everysec", "always"] {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().to_str().unwrap();
        let args = ["--durability", durability, "--data-dir", dir];
        let server = ServerProc::start("resp", &args);
        script(server.addr);
    }
}

#[test]
#[ignore = "needs redis-server 7.0.15"]
fn notifications_script_is_redis_server_s() {
    let redis = RedisServer::start();
    script(redis.addr().parse().unwrap());
}

/// A key past its deadline is `expired` once, whether a command meets it
/// or the active expirer deletes it, and only with `x` set.
fn expired(addr: SocketAddr) {
    let mut w = Raw::connect(addr);
    let mut s = Raw::connect(addr);
    w.expect(
        &cmd(&["CONFIG", "SET", "notify-keyspace-events", "Ex"]),
        "+OK\r\n",
    );
    s.expect(
        &cmd(&["PSUBSCRIBE", "*"]),
        "*3\r\n$10\r\npsubscribe\r\n$1\r\n*\r\n:1\r\n",
    );
    for key in ["lazy", "active"] {
        w.expect(&cmd(&["PSETEX", key, "1", "v"]), "+OK\r\n");
        if key == "lazy" {
            // Met by a command (or by the expirer first: either way once).
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                w.send(&cmd(&["EXISTS", key]));
                if text(&w.reply()) == ":0\r\n" {
                    break;
                }
                assert!(Instant::now() < deadline, "{key} never expired");
            }
        }
        got(&mut s, &pmessage("__keyevent@0__:expired", key));
    }
}

#[test]
fn expired_keys_are_notified_under_every_strategy() {
    std::thread::scope(|s| {
        for strategy in strategies() {
            s.spawn(move || {
                let server = ServerProc::start("resp", &["--strategy", strategy]);
                expired(server.addr);
            });
        }
    });
}

#[test]
#[ignore = "needs redis-server 7.0.15"]
fn expired_script_is_redis_server_s() {
    let redis = RedisServer::start();
    expired(redis.addr().parse().unwrap());
}

/// `--notify-keyspace-events` sets the flags from the start; a bad one
/// names itself.
#[test]
fn notifications_from_the_start() {
    let server = ServerProc::start("resp", &["--notify-keyspace-events", "KA"]);
    let mut w = Raw::connect(server.addr);
    w.expect(
        &cmd(&["CONFIG", "GET", "notify-keyspace-events"]),
        "*2\r\n$22\r\nnotify-keyspace-events\r\n$2\r\nAK\r\n",
    );
    let mut s = Raw::connect(server.addr);
    s.expect(
        &cmd(&["SUBSCRIBE", "__keyspace@0__:k"]),
        "*3\r\n$9\r\nsubscribe\r\n$16\r\n__keyspace@0__:k\r\n:1\r\n",
    );
    w.expect(&cmd(&["SET", "k", "v"]), "+OK\r\n");
    got(
        &mut s,
        "*3\r\n$7\r\nmessage\r\n$16\r\n__keyspace@0__:k\r\n$3\r\nset\r\n",
    );
    usage_error(
        &["serve", "resp", "--notify-keyspace-events", "KEq"],
        "--notify-keyspace-events",
    );
}

/// CLIENT REPLY OFF, SKIP and ON; a subscription's confirmations and
/// messages still arrive while replies are off.
fn client_reply(addr: SocketAddr) {
    let mut c = Raw::connect(addr);
    c.send(&cmd(&["CLIENT", "REPLY", "OFF"]));
    c.send(&cmd(&["SET", "r", "1"]));
    c.send(&cmd(&["CLIENT", "REPLY", "SKIP"]));
    c.expect(&cmd(&["CLIENT", "REPLY", "ON"]), "+OK\r\n");
    c.send(&cmd(&["CLIENT", "REPLY", "SKIP"]));
    c.send(&cmd(&["GET", "r"]));
    c.expect(&cmd(&["GET", "r"]), "$1\r\n1\r\n");
    c.expect(&cmd(&["CLIENT", "REPLY", "MAYBE"]), "-ERR syntax error\r\n");
    c.send(&cmd(&["CLIENT", "REPLY", "OFF"]));
    c.expect(
        &cmd(&["SUBSCRIBE", "ch"]),
        "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n",
    );
    let mut p = Raw::connect(addr);
    p.expect(&cmd(&["PUBLISH", "ch", "hi"]), ":1\r\n");
    c.expect(
        &cmd(&["PING"]),
        "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n",
    );
}

#[test]
fn client_reply_under_every_strategy() {
    std::thread::scope(|s| {
        for strategy in strategies() {
            s.spawn(move || {
                let server = ServerProc::start("resp", &["--strategy", strategy]);
                client_reply(server.addr);
            });
        }
    });
}

#[test]
#[ignore = "needs redis-server 7.0.15"]
fn client_reply_script_is_redis_server_s() {
    let redis = RedisServer::start();
    client_reply(redis.addr().parse().unwrap());
}
