//! RESP's transactions and databases over real sockets: MULTI, EXEC,
//! DISCARD and WATCH byte for byte under every strategy; WATCH aborting
//! EXEC after another connection's write, and EXEC isolated from
//! concurrent writers, under every store; SELECT, SWAPDB and FLUSHDB per
//! database; a transaction and other databases kept by the log across a
//! restart.

use crate::resp::{cmd, resp_stores, Raw};
use crate::support::*;
use std::time::{Duration, Instant};

/// Transactions and databases, byte for byte.
fn script(c: &mut Raw) {
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["SET", "a", "1"]), "+QUEUED\r\n");
    c.expect(&cmd(&["INCR", "a"]), "+QUEUED\r\n");
    c.expect(&cmd(&["LPUSH", "l", "x", "y"]), "+QUEUED\r\n");
    c.expect(&cmd(&["GET", "a"]), "+QUEUED\r\n");
    c.expect(&cmd(&["MULTI"]), "-ERR MULTI calls can not be nested\r\n");
    c.expect(
        &cmd(&["WATCH", "a"]),
        "-ERR WATCH inside MULTI is not allowed\r\n",
    );
    c.expect(&cmd(&["EXEC"]), "*4\r\n+OK\r\n:2\r\n:2\r\n$1\r\n2\r\n");
    c.expect(&cmd(&["EXEC"]), "-ERR EXEC without MULTI\r\n");
    c.expect(&cmd(&["DISCARD"]), "-ERR DISCARD without MULTI\r\n");
    // DISCARD drops the queue.
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["INCR", "a"]), "+QUEUED\r\n");
    c.expect(&cmd(&["DISCARD"]), "+OK\r\n");
    c.expect(&cmd(&["GET", "a"]), "$1\r\n2\r\n");
    // A command refused while queued refuses the whole transaction.
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["INCR", "a"]), "+QUEUED\r\n");
    c.expect(
        &cmd(&["NOSUCH", "x"]),
        "-ERR unknown command 'NOSUCH', with args beginning with: 'x' \r\n",
    );
    c.expect(
        &cmd(&["GET"]),
        "-ERR wrong number of arguments for 'get' command\r\n",
    );
    c.expect(
        &cmd(&["EXEC"]),
        "-EXECABORT Transaction discarded because of previous errors.\r\n",
    );
    c.expect(&cmd(&["GET", "a"]), "$1\r\n2\r\n");
    // An error while running is that command's reply; the rest run.
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["INCR", "l"]), "+QUEUED\r\n");
    c.expect(&cmd(&["INCR", "a"]), "+QUEUED\r\n");
    c.expect(
        &cmd(&["EXEC"]),
        "*2\r\n-WRONGTYPE Operation against a key holding the wrong kind of value\r\n:3\r\n",
    );
    // Databases: SELECT inside a transaction changes the connection's.
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["SELECT", "5"]), "+QUEUED\r\n");
    c.expect(&cmd(&["SET", "a", "five"]), "+QUEUED\r\n");
    c.expect(&cmd(&["EXEC"]), "*2\r\n+OK\r\n+OK\r\n");
    c.expect(&cmd(&["GET", "a"]), "$4\r\nfive\r\n");
    c.expect(&cmd(&["DBSIZE"]), ":1\r\n");
    c.expect(&cmd(&["SELECT", "0"]), "+OK\r\n");
    c.expect(&cmd(&["GET", "a"]), "$1\r\n3\r\n");
    c.expect(&cmd(&["DBSIZE"]), ":2\r\n");
    c.expect(&cmd(&["SELECT", "16"]), "-ERR DB index is out of range\r\n");
    c.expect(&cmd(&["SWAPDB", "0", "5"]), "+OK\r\n");
    c.expect(&cmd(&["GET", "a"]), "$4\r\nfive\r\n");
    c.expect(
        &cmd(&["SWAPDB", "0", "16"]),
        "-ERR DB index is out of range\r\n",
    );
    c.expect(
        &cmd(&["SWAPDB", "x", "1"]),
        "-ERR invalid first DB index\r\n",
    );
    c.expect(&cmd(&["FLUSHDB"]), "+OK\r\n");
    c.expect(&cmd(&["DBSIZE"]), ":0\r\n");
    c.expect(&cmd(&["SELECT", "5"]), "+OK\r\n");
    c.expect(&cmd(&["DBSIZE"]), ":2\r\n");
    c.expect(&cmd(&["FLUSHALL"]), "+OK\r\n");
    c.expect(&cmd(&["DBSIZE"]), ":0\r\n");
    c.expect(&cmd(&["SELECT", "0"]), "+OK\r\n");
}

#[test]
fn transactions_and_databases_under_every_strategy() {
    std::thread::scope(|s| {
        for strategy in strategies() {
            s.spawn(move || {
                let server = ServerProc::start("resp", &["--strategy", strategy]);
                script(&mut Raw::connect(server.addr));
            });
        }
    });
}

/// WATCH: another connection's write to a watched key makes EXEC run
/// nothing (a null array); a write to another key, or none, does not.
fn watch(addr: std::net::SocketAddr, store: &str) {
    let mut c = Raw::connect(addr);
    let mut other = Raw::connect(addr);
    c.expect(&cmd(&["SET", "k", "0"]), "+OK\r\n");
    c.expect(&cmd(&["WATCH", "k"]), "+OK\r\n");
    other.expect(&cmd(&["SET", "k", "theirs"]), "+OK\r\n");
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["SET", "k", "mine"]), "+QUEUED\r\n");
    c.expect(&cmd(&["EXEC"]), "*-1\r\n");
    c.expect(&cmd(&["GET", "k"]), "$6\r\ntheirs\r\n");
    // Watches end with EXEC: the next one commits.
    c.expect(&cmd(&["WATCH", "k"]), "+OK\r\n");
    other.expect(&cmd(&["SET", "unrelated", "1"]), "+OK\r\n");
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["SET", "k", "mine"]), "+QUEUED\r\n");
    c.expect(&cmd(&["EXEC"]), "*1\r\n+OK\r\n");
    // A list pushed by another connection, and a key it deletes, count.
    c.expect(&cmd(&["WATCH", "l", "k"]), "+OK\r\n");
    other.expect(&cmd(&["DEL", "k"]), ":1\r\n");
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["EXEC"]), "*-1\r\n");
    c.expect(&cmd(&["WATCH", "l"]), "+OK\r\n");
    other.expect(&cmd(&["RPUSH", "l", "x"]), ":1\r\n");
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["EXEC"]), "*-1\r\n");
    // UNWATCH forgets; FLUSHALL touches every watched key.
    c.expect(&cmd(&["WATCH", "l"]), "+OK\r\n");
    c.expect(&cmd(&["UNWATCH"]), "+OK\r\n");
    other.expect(&cmd(&["RPUSH", "l", "y"]), ":2\r\n");
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["EXEC"]), "*0\r\n");
    c.expect(&cmd(&["WATCH", "l"]), "+OK\r\n");
    other.expect(&cmd(&["FLUSHALL"]), "+OK\r\n");
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["EXEC"]), "*-1\r\n");
    // SMOVE touches its destination only when it adds the member there
    // (as Redis signals it): a destination that had it still commits.
    other.expect(&cmd(&["SADD", "src", "a", "b"]), ":2\r\n");
    other.expect(&cmd(&["SADD", "dst", "a"]), ":1\r\n");
    c.expect(&cmd(&["WATCH", "dst"]), "+OK\r\n");
    other.expect(&cmd(&["SMOVE", "src", "dst", "a"]), ":1\r\n");
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["SADD", "dst", "c"]), "+QUEUED\r\n");
    c.expect(&cmd(&["EXEC"]), "*1\r\n:1\r\n");
    c.expect(&cmd(&["WATCH", "dst"]), "+OK\r\n");
    other.expect(&cmd(&["SMOVE", "src", "dst", "b"]), ":1\r\n");
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["EXEC"]), "*-1\r\n");
    let _ = store;
}

/// Writers each add 1 to two counters in one transaction, many times,
/// while a reader reads both in a transaction: it must never see one
/// incremented without the other, whatever the store.
fn isolated(addr: std::net::SocketAddr, store: &str) {
    const WRITERS: usize = 3;
    const EACH: usize = 200;
    std::thread::scope(|s| {
        for _ in 0..WRITERS {
            s.spawn(move || {
                let mut w = Raw::connect(addr);
                let txn = [
                    cmd(&["MULTI"]),
                    cmd(&["INCR", "a"]),
                    cmd(&["INCR", "b"]),
                    cmd(&["EXEC"]),
                ]
                .concat();
                for _ in 0..EACH {
                    w.send(&txn);
                    let head = w.read_n("+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n".len());
                    assert_eq!(
                        text(&head),
                        "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n",
                        "{store}"
                    );
                    let mut line = Vec::new();
                    for _ in 0..2 {
                        line.clear();
                        while !line.ends_with(b"\r\n") {
                            line.extend(w.read_n(1));
                        }
                    }
                }
            });
        }
        let mut r = Raw::connect(addr);
        let read = [
            cmd(&["MULTI"]),
            cmd(&["GET", "a"]),
            cmd(&["GET", "b"]),
            cmd(&["EXEC"]),
        ]
        .concat();
        for _ in 0..300 {
            r.send(&read);
            let head = r.read_n("+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n".len());
            assert!(text(&head).ends_with("*2\r\n"), "{store}: {}", text(&head));
            let (a, b) = (bulk_or_nil(&mut r), bulk_or_nil(&mut r));
            assert_eq!(a, b, "{store}: a transaction saw half of another");
        }
    });
    let mut c = Raw::connect(addr);
    let n = (WRITERS * EACH).to_string();
    c.expect(&cmd(&["GET", "a"]), &format!("${}\r\n{n}\r\n", n.len()));
    c.expect(&cmd(&["GET", "b"]), &format!("${}\r\n{n}\r\n", n.len()));
}

/// A bulk string's text, or "nil".
fn bulk_or_nil(r: &mut Raw) -> String {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n") {
        head.extend(r.read_n(1));
    }
    let len: i64 = text(&head[1..head.len() - 2])
        .parse()
        .expect("a bulk length");
    if len < 0 {
        return "nil".into();
    }
    let body = r.read_n(len as usize + 2);
    text(&body[..len as usize])
}

#[test]
fn watch_aborts_and_exec_is_isolated_under_every_store() {
    std::thread::scope(|s| {
        for store in resp_stores() {
            s.spawn(move || {
                let server = ServerProc::start("resp", &["--store", store, "--threads", "4"]);
                watch(server.addr, store);
                isolated(server.addr, store);
            });
        }
    });
}

/// UNWATCH inside a transaction is queued, as Redis queues it, and
/// answers OK at EXEC (which forgot every watch as it began); the
/// connection, and the server, go on. (It panicked: the alone-runner had
/// no family for it.)
#[test]
fn unwatch_queued_in_a_transaction_answers_ok() {
    let server = ServerProc::start("resp", &[]);
    let mut c = Raw::connect(server.addr);
    let mut other = Raw::connect(server.addr);
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["UNWATCH"]), "+QUEUED\r\n");
    c.expect(&cmd(&["SET", "k", "1"]), "+QUEUED\r\n");
    c.expect(&cmd(&["EXEC"]), "*2\r\n+OK\r\n+OK\r\n");
    // A watch is still honoured up to EXEC: the queued UNWATCH runs after.
    c.expect(&cmd(&["WATCH", "k"]), "+OK\r\n");
    other.expect(&cmd(&["SET", "k", "theirs"]), "+OK\r\n");
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["UNWATCH"]), "+QUEUED\r\n");
    c.expect(&cmd(&["EXEC"]), "*-1\r\n");
    other.expect(&cmd(&["GET", "k"]), "$6\r\ntheirs\r\n");
}

/// A transaction is one record: after a restart on the log, its writes
/// and other databases' keys are there (and deadlines, as absolute ones).
#[test]
fn a_transaction_and_other_databases_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let args = logged_always(dir.path());
    {
        let server = ServerProc::start("resp", &args);
        let mut c = Raw::connect(server.addr);
        c.expect(&cmd(&["MULTI"]), "+OK\r\n");
        c.expect(&cmd(&["SET", "a", "1"]), "+QUEUED\r\n");
        c.expect(&cmd(&["INCR", "a"]), "+QUEUED\r\n");
        c.expect(&cmd(&["SELECT", "3"]), "+QUEUED\r\n");
        c.expect(&cmd(&["RPUSH", "l", "x", "y"]), "+QUEUED\r\n");
        c.expect(&cmd(&["EXEC"]), "*4\r\n+OK\r\n:2\r\n+OK\r\n:2\r\n");
        c.expect(&cmd(&["SET", "three", "3"]), "+OK\r\n");
        c.expect(&cmd(&["SWAPDB", "3", "4"]), "+OK\r\n");
        c.expect(&cmd(&["SELECT", "0"]), "+OK\r\n");
        c.expect(&cmd(&["FLUSHDB"]), "+OK\r\n");
        c.expect(&cmd(&["SET", "z", "0"]), "+OK\r\n");
        server.stop();
    }
    let server = ServerProc::start("resp", &args);
    let mut c = Raw::connect(server.addr);
    c.expect(&cmd(&["GET", "a"]), "$-1\r\n");
    c.expect(&cmd(&["GET", "z"]), "$1\r\n0\r\n");
    c.expect(&cmd(&["SELECT", "4"]), "+OK\r\n");
    c.expect(
        &cmd(&["LRANGE", "l", "0", "-1"]),
        "*2\r\n$1\r\nx\r\n$1\r\ny\r\n",
    );
    c.expect(&cmd(&["GET", "three"]), "$1\r\n3\r\n");
    c.expect(&cmd(&["SELECT", "3"]), "+OK\r\n");
    c.expect(&cmd(&["DBSIZE"]), ":0\r\n");
}

/// A transaction's queue is bounded by --max-query: past it the commands
/// are refused, the queue dropped, and EXEC refuses the lot; the
/// connection and the server carry on.
#[test]
fn a_transaction_queue_is_bounded() {
    let server = ServerProc::start("resp", &["--max-query", "64KiB", "--max-bulk", "16KiB"]);
    let mut c = Raw::connect(server.addr);
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    let value = "v".repeat(10_000);
    for _ in 0..6 {
        c.expect(&cmd(&["SET", "k", &value]), "+QUEUED\r\n");
    }
    c.expect(
        &cmd(&["SET", "k", &value]),
        "-ERR the queued commands pass --max-query: the transaction will be discarded\r\n",
    );
    c.expect(
        &cmd(&["EXEC"]),
        "-EXECABORT Transaction discarded because of previous errors.\r\n",
    );
    c.expect(&cmd(&["GET", "k"]), "$-1\r\n");
    c.expect(&cmd(&["PING"]), "+PONG\r\n");
}

/// A transaction's replies are bounded by --max-query too: a client that
/// queues 120 GETs of a 7 MiB value and never reads does not make the
/// server hold 120 copies (it held them all, and aborted at 600, before):
/// the replies past the bound are errors, every command still runs
/// (the INCR at the end is done), and other clients are served.
#[test]
fn a_transactions_replies_are_bounded() {
    const GETS: usize = 120;
    let server = ServerProc::start("resp", &[]);
    let mut c = Raw::connect(server.addr);
    let value = "v".repeat(7 << 20);
    c.expect(&cmd(&["SET", "big", &value]), "+OK\r\n");
    std::thread::sleep(std::time::Duration::from_millis(200));
    let start_kib = rss_kib(server.pid());
    let mut wire = cmd(&["MULTI"]);
    for _ in 0..GETS {
        wire.extend(cmd(&["GET", "big"]));
    }
    wire.extend(cmd(&["INCR", "done"]));
    wire.extend(cmd(&["EXEC"]));
    let mut quiet = Raw::connect(server.addr);
    quiet.send(&wire);
    // Another client is served, and sees the transaction done.
    let mut other = Raw::connect(server.addr);
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        other.send(&cmd(&["GET", "done"]));
        if text(&other.reply()) == "$1\r\n1\r\n" {
            break;
        }
        assert!(std::time::Instant::now() < end, "the transaction never ran");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let bound_kib = start_kib + 256 * 1024;
    for _ in 0..5 {
        let kib = rss_kib(server.pid());
        assert!(kib < bound_kib, "{kib} KiB resident, over {bound_kib} KiB");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    other.expect(&cmd(&["PING"]), "+PONG\r\n");
    // The quiet client's replies: two values fit in 16 MiB, the other
    // GETs' are errors, and the INCR's (small) fits.
    let head = quiet.read_n(5);
    assert_eq!(text(&head), "+OK\r\n");
    for _ in 0..=GETS {
        assert_eq!(text(&quiet.reply()), "+QUEUED\r\n");
    }
    assert_eq!(text(&quiet.read_n(6)), format!("*{}\r\n", GETS + 1));
    let dropped = "-ERR reply dropped: past --max-query\r\n";
    for i in 0..=GETS {
        let r = quiet.reply();
        if i < 2 {
            assert_eq!(r.len(), value.len() + 12, "reply {i}");
        } else if i == GETS {
            assert_eq!(text(&r), ":1\r\n");
        } else {
            assert_eq!(text(&r), dropped, "reply {i}");
        }
    }
}

/// What touches a watched key, as Redis 7.0 has it (replies checked
/// against redis-server 7.0.15): FLUSHALL and FLUSHDB touch only the
/// watched keys that exist, SWAPDB those that exist in either database,
/// and a watched key that expires before EXEC aborts it, under every
/// store. (A flush aborted every watcher; an expiry none.)
#[test]
fn flushes_swaps_and_expiry_touch_watched_keys_as_redis_does() {
    for store in resp_stores() {
        let server = ServerProc::start("resp", &["--store", store, "--threads", "2"]);
        let mut c = Raw::connect(server.addr);
        let mut other = Raw::connect(server.addr);
        let commits = |c: &mut Raw, want: &str| {
            c.expect(&cmd(&["MULTI"]), "+OK\r\n");
            c.expect(&cmd(&["PING"]), "+QUEUED\r\n");
            c.expect(&cmd(&["EXEC"]), want);
        };
        for flush in ["FLUSHALL", "FLUSHDB"] {
            c.expect(&cmd(&["WATCH", "absent"]), "+OK\r\n");
            other.expect(&cmd(&[flush]), "+OK\r\n");
            commits(&mut c, "*1\r\n+PONG\r\n");
            other.expect(&cmd(&["SET", "present", "1"]), "+OK\r\n");
            c.expect(&cmd(&["WATCH", "present"]), "+OK\r\n");
            other.expect(&cmd(&[flush]), "+OK\r\n");
            commits(&mut c, "*-1\r\n");
        }
        other.expect(&cmd(&["SELECT", "1"]), "+OK\r\n");
        other.expect(&cmd(&["SET", "y", "1"]), "+OK\r\n");
        other.expect(&cmd(&["SELECT", "0"]), "+OK\r\n");
        c.expect(&cmd(&["WATCH", "y"]), "+OK\r\n");
        other.expect(&cmd(&["SWAPDB", "0", "1"]), "+OK\r\n");
        commits(&mut c, "*-1\r\n");
        c.expect(&cmd(&["WATCH", "nothere"]), "+OK\r\n");
        other.expect(&cmd(&["SWAPDB", "0", "1"]), "+OK\r\n");
        commits(&mut c, "*1\r\n+PONG\r\n");
        // Expiry: the key is gone (or past its deadline) by EXEC.
        c.expect(&cmd(&["SET", "x", "foo"]), "+OK\r\n");
        c.expect(&cmd(&["PEXPIRE", "x", "100"]), ":1\r\n");
        c.expect(&cmd(&["WATCH", "x"]), "+OK\r\n");
        let since = Instant::now();
        loop {
            other.send(&cmd(&["EXISTS", "x"]));
            if text(&other.reply()) == ":0\r\n" {
                break;
            }
            assert!(
                since.elapsed() < Duration::from_secs(30),
                "{store}: x never expired"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        commits(&mut c, "*-1\r\n");
        // A watched key whose deadline is still ahead does not abort.
        c.expect(&cmd(&["SET", "x", "foo"]), "+OK\r\n");
        c.expect(&cmd(&["EXPIRE", "x", "1000"]), ":1\r\n");
        c.expect(&cmd(&["WATCH", "x"]), "+OK\r\n");
        commits(&mut c, "*1\r\n+PONG\r\n");
    }
}
