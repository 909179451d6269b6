//! RESP's list commands beyond the fast path over real sockets, under
//! every strategy: LPUSHX, RPUSHX, LINSERT, LSET, LREM, LPOS, LTRIM,
//! LMOVE, RPOPLPUSH, LMPOP and the blocking pops byte for byte (replies
//! taken from Redis 7.0.15), with Redis's errors in Redis's order; the
//! blocking pops waiting for a push from another connection (the server
//! on two threads where the strategy has them), timing out, ended by
//! CLIENT UNBLOCK, counted in INFO's blocked_clients, and not blocking
//! inside MULTI; and a durable server restarted after moves, inserts,
//! removals and served blocking pops coming back identical.

use crate::resp::{cmd, Raw};
use crate::support::*;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

const WRONGTYPE: &str = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";

/// Every command of the family, its replies byte for byte.
#[rustfmt::skip]
fn script(c: &mut Raw) {
    c.expect(&cmd(&["FLUSHALL"]), "+OK\r\n");
    // LPUSHX / RPUSHX: only onto a list that exists.
    c.expect(&cmd(&["RPUSH", "l", "a", "b", "c", "a", "d", "a"]), ":6\r\n");
    c.expect(&cmd(&["LPUSHX", "nol", "x"]), ":0\r\n");
    c.expect(&cmd(&["RPUSHX", "nol", "x"]), ":0\r\n");
    c.expect(&cmd(&["EXISTS", "nol"]), ":0\r\n");
    c.expect(&cmd(&["LPUSHX", "l", "x", "y"]), ":8\r\n");
    c.expect(&cmd(&["RPUSHX", "l", "z"]), ":9\r\n");
    c.expect(&cmd(&["SET", "s", "str"]), "+OK\r\n");
    c.expect(&cmd(&["LPUSHX", "s", "a"]), WRONGTYPE);
    c.expect(&cmd(&["RPUSHX", "s", "a"]), WRONGTYPE);
    c.expect(&cmd(&["LRANGE", "l", "0", "-1"]), "*9\r\n$1\r\ny\r\n$1\r\nx\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nz\r\n");
    // LINSERT: the new length, -1 without the pivot, 0 without the key.
    c.expect(&cmd(&["LINSERT", "l", "BEFORE", "a", "NEW"]), ":10\r\n");
    c.expect(&cmd(&["linsert", "l", "after", "a", "NEW2"]), ":11\r\n");
    c.expect(&cmd(&["LINSERT", "l", "middle", "a", "x"]), "-ERR syntax error\r\n");
    c.expect(&cmd(&["LINSERT", "l", "BEFORE", "nope", "x"]), ":-1\r\n");
    c.expect(&cmd(&["LINSERT", "nol", "BEFORE", "a", "x"]), ":0\r\n");
    c.expect(&cmd(&["LINSERT", "s", "BEFORE", "a", "x"]), WRONGTYPE);
    c.expect(&cmd(&["LRANGE", "l", "0", "-1"]), "*11\r\n$1\r\ny\r\n$1\r\nx\r\n$3\r\nNEW\r\n$1\r\na\r\n$4\r\nNEW2\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nz\r\n");
    // LSET: the key first, then the index.
    c.expect(&cmd(&["LSET", "l", "0", "first"]), "+OK\r\n");
    c.expect(&cmd(&["LSET", "l", "-1", "last"]), "+OK\r\n");
    c.expect(&cmd(&["LSET", "l", "100", "x"]), "-ERR index out of range\r\n");
    c.expect(&cmd(&["LSET", "l", "-100", "x"]), "-ERR index out of range\r\n");
    c.expect(&cmd(&["LSET", "l", "abc", "x"]), "-ERR value is not an integer or out of range\r\n");
    c.expect(&cmd(&["LSET", "nol", "0", "x"]), "-ERR no such key\r\n");
    c.expect(&cmd(&["LSET", "nol", "abc", "x"]), "-ERR no such key\r\n");
    c.expect(&cmd(&["LSET", "s", "abc", "x"]), WRONGTYPE);
    c.expect(&cmd(&["LRANGE", "l", "0", "-1"]), "*11\r\n$5\r\nfirst\r\n$1\r\nx\r\n$3\r\nNEW\r\n$1\r\na\r\n$4\r\nNEW2\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nd\r\n$1\r\na\r\n$4\r\nlast\r\n");
    // LREM from the head, from the tail, all.
    c.expect(&cmd(&["LREM", "l", "1", "a"]), ":1\r\n");
    c.expect(&cmd(&["LREM", "l", "-1", "a"]), ":1\r\n");
    c.expect(&cmd(&["LREM", "l", "0", "a"]), ":1\r\n");
    c.expect(&cmd(&["LREM", "l", "abc", "a"]), "-ERR value is not an integer or out of range\r\n");
    c.expect(&cmd(&["LREM", "nol", "0", "a"]), ":0\r\n");
    c.expect(&cmd(&["LREM", "s", "0", "a"]), WRONGTYPE);
    c.expect(&cmd(&["LRANGE", "l", "0", "-1"]), "*8\r\n$5\r\nfirst\r\n$1\r\nx\r\n$3\r\nNEW\r\n$4\r\nNEW2\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$4\r\nlast\r\n");
    c.expect(&cmd(&["RPUSH", "gone", "a", "a"]), ":2\r\n");
    c.expect(&cmd(&["LREM", "gone", "0", "a"]), ":2\r\n");
    c.expect(&cmd(&["EXISTS", "gone"]), ":0\r\n");
    // LPOS: RANK, COUNT, MAXLEN and their errors.
    c.expect(&cmd(&["RPUSH", "p", "a", "b", "c", "1", "2", "3", "c", "c"]), ":8\r\n");
    c.expect(&cmd(&["LPOS", "p", "c"]), ":2\r\n");
    c.expect(&cmd(&["LPOS", "p", "c", "RANK", "2"]), ":6\r\n");
    c.expect(&cmd(&["LPOS", "p", "c", "RANK", "-1"]), ":7\r\n");
    c.expect(&cmd(&["LPOS", "p", "c", "COUNT", "0"]), "*3\r\n:2\r\n:6\r\n:7\r\n");
    c.expect(&cmd(&["LPOS", "p", "c", "COUNT", "2", "RANK", "-1"]), "*2\r\n:7\r\n:6\r\n");
    c.expect(&cmd(&["LPOS", "p", "c", "MAXLEN", "3", "COUNT", "0"]), "*1\r\n:2\r\n");
    c.expect(&cmd(&["LPOS", "p", "c", "rank", "0"]), "-ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list\r\n");
    c.expect(&cmd(&["LPOS", "p", "c", "RANK", "abc"]), "-ERR value is not an integer or out of range\r\n");
    c.expect(&cmd(&["LPOS", "p", "c", "COUNT", "-1"]), "-ERR COUNT can't be negative\r\n");
    c.expect(&cmd(&["LPOS", "p", "c", "COUNT", "abc"]), "-ERR COUNT can't be negative\r\n");
    c.expect(&cmd(&["LPOS", "p", "c", "MAXLEN", "-1"]), "-ERR MAXLEN can't be negative\r\n");
    c.expect(&cmd(&["LPOS", "p", "c", "FOO"]), "-ERR syntax error\r\n");
    c.expect(&cmd(&["LPOS", "p", "c", "RANK"]), "-ERR syntax error\r\n");
    c.expect(&cmd(&["LPOS", "nol", "c"]), "$-1\r\n");
    c.expect(&cmd(&["LPOS", "nol", "c", "COUNT", "0"]), "*0\r\n");
    c.expect(&cmd(&["LPOS", "s", "c"]), WRONGTYPE);
    c.expect(&cmd(&["LPOS", "s", "c", "RANK", "0"]), "-ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list\r\n");
    c.expect(&cmd(&["LPOS", "p", "x"]), "$-1\r\n");
    c.expect(&cmd(&["LPOS", "p", "x", "COUNT", "0"]), "*0\r\n");
    // LTRIM: the indexes first; a range left empty deletes the key.
    c.expect(&cmd(&["LTRIM", "p", "1", "-2"]), "+OK\r\n");
    c.expect(&cmd(&["LRANGE", "p", "0", "-1"]), "*6\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\nc\r\n");
    c.expect(&cmd(&["LTRIM", "p", "abc", "1"]), "-ERR value is not an integer or out of range\r\n");
    c.expect(&cmd(&["LTRIM", "nol", "0", "1"]), "+OK\r\n");
    c.expect(&cmd(&["LTRIM", "s", "0", "1"]), WRONGTYPE);
    c.expect(&cmd(&["LTRIM", "p", "5", "1"]), "+OK\r\n");
    c.expect(&cmd(&["EXISTS", "p"]), ":0\r\n");
    // LMOVE and RPOPLPUSH: keys made and deleted, the same key rotates.
    c.expect(&cmd(&["RPUSH", "src", "1", "2", "3"]), ":3\r\n");
    c.expect(&cmd(&["LMOVE", "src", "dst", "LEFT", "RIGHT"]), "$1\r\n1\r\n");
    c.expect(&cmd(&["LMOVE", "src", "dst", "right", "left"]), "$1\r\n3\r\n");
    c.expect(&cmd(&["LMOVE", "src", "dst", "UP", "LEFT"]), "-ERR syntax error\r\n");
    c.expect(&cmd(&["LMOVE", "nol", "dst", "LEFT", "RIGHT"]), "$-1\r\n");
    c.expect(&cmd(&["LMOVE", "src", "s", "LEFT", "RIGHT"]), WRONGTYPE);
    c.expect(&cmd(&["LMOVE", "s", "dst", "LEFT", "RIGHT"]), WRONGTYPE);
    c.expect(&cmd(&["LRANGE", "dst", "0", "-1"]), "*2\r\n$1\r\n3\r\n$1\r\n1\r\n");
    c.expect(&cmd(&["LMOVE", "src", "dst", "LEFT", "LEFT"]), "$1\r\n2\r\n");
    c.expect(&cmd(&["EXISTS", "src"]), ":0\r\n");
    c.expect(&cmd(&["LRANGE", "dst", "0", "-1"]), "*3\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n1\r\n");
    c.expect(&cmd(&["RPUSH", "r", "a", "b", "c"]), ":3\r\n");
    c.expect(&cmd(&["LMOVE", "r", "r", "LEFT", "RIGHT"]), "$1\r\na\r\n");
    c.expect(&cmd(&["LRANGE", "r", "0", "-1"]), "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n");
    c.expect(&cmd(&["RPOPLPUSH", "r", "r"]), "$1\r\na\r\n");
    c.expect(&cmd(&["LRANGE", "r", "0", "-1"]), "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n");
    c.expect(&cmd(&["RPOPLPUSH", "r", "r2"]), "$1\r\nc\r\n");
    c.expect(&cmd(&["RPOPLPUSH", "nol", "r2"]), "$-1\r\n");
    c.expect(&cmd(&["RPOPLPUSH", "s", "r2"]), WRONGTYPE);
    c.expect(&cmd(&["RPOPLPUSH", "r", "s"]), WRONGTYPE);
    // LMPOP: numkeys, LEFT|RIGHT, COUNT.
    c.expect(&cmd(&["LMPOP", "2", "nol", "r", "LEFT"]), "*2\r\n$1\r\nr\r\n*1\r\n$1\r\na\r\n");
    c.expect(&cmd(&["LMPOP", "2", "nol", "r", "RIGHT", "COUNT", "5"]), "*2\r\n$1\r\nr\r\n*1\r\n$1\r\nb\r\n");
    c.expect(&cmd(&["EXISTS", "r"]), ":0\r\n");
    c.expect(&cmd(&["LMPOP", "1", "nol", "LEFT"]), "*-1\r\n");
    c.expect(&cmd(&["LMPOP", "0", "r", "LEFT"]), "-ERR numkeys should be greater than 0\r\n");
    c.expect(&cmd(&["LMPOP", "abc", "r", "LEFT"]), "-ERR numkeys should be greater than 0\r\n");
    c.expect(&cmd(&["LMPOP", "5", "r", "LEFT"]), "-ERR syntax error\r\n");
    c.expect(&cmd(&["LMPOP", "1", "r", "UP"]), "-ERR syntax error\r\n");
    c.expect(&cmd(&["LMPOP", "1", "r", "LEFT", "COUNT", "0"]), "-ERR count should be greater than 0\r\n");
    c.expect(&cmd(&["LMPOP", "1", "r", "LEFT", "COUNT", "1", "COUNT", "2"]), "-ERR syntax error\r\n");
    c.expect(&cmd(&["LMPOP", "1", "r", "LEFT", "COUNT"]), "-ERR syntax error\r\n");
    c.expect(&cmd(&["LMPOP", "2", "s", "r", "LEFT"]), WRONGTYPE);
    c.expect(&cmd(&["RPUSH", "m", "a", "b", "c", "d", "e"]), ":5\r\n");
    c.expect(&cmd(&["LMPOP", "2", "nol", "m", "RIGHT", "COUNT", "2"]), "*2\r\n$1\r\nm\r\n*2\r\n$1\r\ne\r\n$1\r\nd\r\n");
    c.expect(&cmd(&["LMPOP", "2", "nol", "m", "left", "count", "10"]), "*2\r\n$1\r\nm\r\n*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n");
    // The blocking pops with something to pop, and their errors.
    c.expect(&cmd(&["RPUSH", "b", "a", "b"]), ":2\r\n");
    c.expect(&cmd(&["BLPOP", "nol", "b", "0"]), "*2\r\n$1\r\nb\r\n$1\r\na\r\n");
    c.expect(&cmd(&["BRPOP", "b", "0"]), "*2\r\n$1\r\nb\r\n$1\r\nb\r\n");
    c.expect(&cmd(&["EXISTS", "b"]), ":0\r\n");
    c.expect(&cmd(&["BLPOP", "b", "abc"]), "-ERR timeout is not a float or out of range\r\n");
    c.expect(&cmd(&["BLPOP", "b", "-1"]), "-ERR timeout is negative\r\n");
    c.expect(&cmd(&["BLPOP", "b", "inf"]), "-ERR timeout is negative\r\n");
    c.expect(&cmd(&["BLPOP", "s", "0"]), WRONGTYPE);
    c.expect(&cmd(&["RPUSH", "b2", "a", "b", "c"]), ":3\r\n");
    c.expect(&cmd(&["BLMOVE", "b2", "b3", "LEFT", "RIGHT", "0"]), "$1\r\na\r\n");
    c.expect(&cmd(&["BLMOVE", "b2", "b3", "LEFT", "SIDEWAYS", "0"]), "-ERR syntax error\r\n");
    c.expect(&cmd(&["BLMOVE", "b2", "b3", "LEFT", "RIGHT", "x"]), "-ERR timeout is not a float or out of range\r\n");
    c.expect(&cmd(&["BRPOPLPUSH", "b2", "b3", "0"]), "$1\r\nc\r\n");
    c.expect(&cmd(&["BRPOPLPUSH", "b2", "b3", "-1"]), "-ERR timeout is negative\r\n");
    c.expect(&cmd(&["BRPOPLPUSH", "s", "b3", "0"]), WRONGTYPE);
    c.expect(&cmd(&["LRANGE", "b3", "0", "-1"]), "*2\r\n$1\r\nc\r\n$1\r\na\r\n");
    c.expect(&cmd(&["BLMPOP", "0", "2", "nol", "b3", "LEFT", "COUNT", "5"]), "*2\r\n$2\r\nb3\r\n*2\r\n$1\r\nc\r\n$1\r\na\r\n");
    c.expect(&cmd(&["BLMPOP", "x", "2", "nol", "b3", "LEFT"]), "-ERR timeout is not a float or out of range\r\n");
    c.expect(&cmd(&["BLMPOP", "x", "0", "nol", "LEFT"]), "-ERR numkeys should be greater than 0\r\n");
    c.expect(&cmd(&["BLMPOP", "-1", "1", "nol", "LEFT"]), "-ERR timeout is negative\r\n");
    c.expect(&cmd(&["BLMPOP", "0", "1", "nol", "UP"]), "-ERR syntax error\r\n");
    c.expect(&cmd(&["BLMPOP", "0", "1", "s", "LEFT"]), WRONGTYPE);
    // Inside MULTI nothing blocks: nothing to pop is a timeout's reply.
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["BLPOP", "nol", "0"]), "+QUEUED\r\n");
    c.expect(&cmd(&["BRPOP", "nol", "0"]), "+QUEUED\r\n");
    c.expect(&cmd(&["BLMOVE", "nol", "x", "LEFT", "RIGHT", "0"]), "+QUEUED\r\n");
    c.expect(&cmd(&["BRPOPLPUSH", "nol", "x", "0"]), "+QUEUED\r\n");
    c.expect(&cmd(&["BLMPOP", "0", "1", "nol", "LEFT"]), "+QUEUED\r\n");
    c.expect(&cmd(&["EXEC"]), "*5\r\n*-1\r\n*-1\r\n$-1\r\n$-1\r\n*-1\r\n");
}

/// INFO's blocked_clients.
fn blocked(c: &mut Raw) -> u64 {
    let info = c.bulk(&cmd(&["INFO", "clients"]));
    stat_line(&info, "blocked_clients")
}

fn stat_line(info: &str, name: &str) -> u64 {
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no {name} in {info:?}"))
        .trim()
        .parse()
        .expect("a count")
}

/// Waits until INFO says `n` clients are blocked.
fn wait_blocked(c: &mut Raw, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = blocked(c);
        if now == n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "blocked_clients stayed {now}, not {n}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends `wire` and checks that no reply comes yet (it blocks).
fn blocks(c: &mut Raw, other: &mut Raw, wire: &[u8], waiting: u64) {
    c.send(wire);
    wait_blocked(other, waiting);
}

fn client_id(c: &mut Raw) -> String {
    let r = text(&c.reply());
    r[1..r.len() - 2].to_string()
}

/// The blocking pops wait for another connection's write, time out,
/// and end on CLIENT UNBLOCK.
fn blocking(addr: SocketAddr) {
    let mut c = Raw::connect(addr);
    let mut o = Raw::connect(addr);
    o.expect(&cmd(&["FLUSHALL"]), "+OK\r\n");
    c.send(&cmd(&["CLIENT", "ID"]));
    let id = client_id(&mut c);
    assert_eq!(blocked(&mut o), 0);

    // A timeout: a null array (a null bulk for the moves), no sooner.
    let t = Instant::now();
    c.expect(&cmd(&["BLPOP", "none", "0.1"]), "*-1\r\n");
    assert!(
        t.elapsed() >= Duration::from_millis(100),
        "{:?}",
        t.elapsed()
    );
    let t = Instant::now();
    c.expect(
        &cmd(&["BLMOVE", "none", "d", "LEFT", "RIGHT", "0.05"]),
        "$-1\r\n",
    );
    c.expect(&cmd(&["BRPOPLPUSH", "none", "d", "0.05"]), "$-1\r\n");
    c.expect(&cmd(&["BLMPOP", "0.05", "1", "none", "LEFT"]), "*-1\r\n");
    assert!(
        t.elapsed() >= Duration::from_millis(150),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(blocked(&mut o), 0);

    // Woken by a push onto the second key: it pops from there.
    blocks(&mut c, &mut o, &cmd(&["BLPOP", "k1", "k2", "0"]), 1);
    o.expect(&cmd(&["RPUSH", "k2", "x", "y"]), ":2\r\n");
    c.expect(&[], "*2\r\n$2\r\nk2\r\n$1\r\nx\r\n");
    o.expect(&cmd(&["LRANGE", "k2", "0", "-1"]), "*1\r\n$1\r\ny\r\n");
    wait_blocked(&mut o, 0);
    blocks(&mut c, &mut o, &cmd(&["BRPOP", "k1", "0"]), 1);
    o.expect(&cmd(&["LPUSH", "k1", "a", "b"]), ":2\r\n");
    c.expect(&[], "*2\r\n$2\r\nk1\r\n$1\r\na\r\n");
    // Woken by a move (a command beyond the fast path) into the key.
    blocks(
        &mut c,
        &mut o,
        &cmd(&["BLMOVE", "src", "dst", "RIGHT", "LEFT", "0"]),
        1,
    );
    o.expect(&cmd(&["LMOVE", "k1", "src", "LEFT", "LEFT"]), "$1\r\nb\r\n");
    c.expect(&[], "$1\r\nb\r\n");
    o.expect(&cmd(&["EXISTS", "k1", "src"]), ":0\r\n");
    o.expect(&cmd(&["LRANGE", "dst", "0", "-1"]), "*1\r\n$1\r\nb\r\n");
    blocks(&mut c, &mut o, &cmd(&["BRPOPLPUSH", "src", "dst", "0"]), 1);
    o.expect(&cmd(&["RPUSH", "src", "c"]), ":1\r\n");
    c.expect(&[], "$1\r\nc\r\n");
    o.expect(
        &cmd(&["LRANGE", "dst", "0", "-1"]),
        "*2\r\n$1\r\nc\r\n$1\r\nb\r\n",
    );
    blocks(
        &mut c,
        &mut o,
        &cmd(&["BLMPOP", "0", "2", "q", "r", "RIGHT", "COUNT", "3"]),
        1,
    );
    o.expect(&cmd(&["RPUSH", "r", "1", "2"]), ":2\r\n");
    c.expect(&[], "*2\r\n$1\r\nr\r\n*2\r\n$1\r\n2\r\n$1\r\n1\r\n");
    o.expect(&cmd(&["EXISTS", "r"]), ":0\r\n");
    // A destination of another type, once the source has an element.
    o.expect(&cmd(&["SET", "str", "v"]), "+OK\r\n");
    blocks(
        &mut c,
        &mut o,
        &cmd(&["BLMOVE", "src", "str", "LEFT", "LEFT", "0"]),
        1,
    );
    o.expect(&cmd(&["RPUSH", "src", "kept"]), ":1\r\n");
    c.expect(&[], WRONGTYPE);
    o.expect(&cmd(&["LRANGE", "src", "0", "-1"]), "*1\r\n$4\r\nkept\r\n");
    wait_blocked(&mut o, 0);

    // The sorted-set pops wait as the list pops do: woken by a ZADD onto
    // their second key, by a ZUNIONSTORE into it; they time out alike.
    blocks(&mut c, &mut o, &cmd(&["BZPOPMIN", "z1", "z2", "0"]), 1);
    o.expect(&cmd(&["ZADD", "z2", "2", "b", "1", "a"]), ":2\r\n");
    c.expect(&[], "*3\r\n$2\r\nz2\r\n$1\r\na\r\n$1\r\n1\r\n");
    o.expect(&cmd(&["ZRANGE", "z2", "0", "-1"]), "*1\r\n$1\r\nb\r\n");
    wait_blocked(&mut o, 0);
    let bzmpop = ["BZMPOP", "0", "2", "z3", "z4", "MAX", "COUNT", "2"];
    blocks(&mut c, &mut o, &cmd(&bzmpop), 1);
    o.expect(&cmd(&["ZUNIONSTORE", "z4", "1", "z2"]), ":1\r\n");
    c.expect(&[], "*2\r\n$2\r\nz4\r\n*1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n");
    o.expect(&cmd(&["EXISTS", "z4"]), ":0\r\n");
    blocks(&mut c, &mut o, &cmd(&["BZPOPMAX", "z5", "0"]), 1);
    o.expect(&cmd(&["ZINCRBY", "z5", "3", "b"]), "$1\r\n3\r\n");
    c.expect(&[], "*3\r\n$2\r\nz5\r\n$1\r\nb\r\n$1\r\n3\r\n");
    wait_blocked(&mut o, 0);
    c.expect(&cmd(&["BZPOPMAX", "none", "0.05"]), "*-1\r\n");
    c.expect(&cmd(&["BZMPOP", "0.05", "1", "none", "MIN"]), "*-1\r\n");

    // CLIENT UNBLOCK: as a timeout, or with an error; 0 for a client
    // not blocked.
    blocks(&mut c, &mut o, &cmd(&["BLPOP", "none", "0"]), 1);
    o.expect(&cmd(&["CLIENT", "UNBLOCK", &id, "TIMEOUT"]), ":1\r\n");
    c.expect(&[], "*-1\r\n");
    blocks(&mut c, &mut o, &cmd(&["BRPOPLPUSH", "none", "d", "0"]), 1);
    o.expect(&cmd(&["CLIENT", "UNBLOCK", &id]), ":1\r\n");
    c.expect(&[], "$-1\r\n");
    blocks(
        &mut c,
        &mut o,
        &cmd(&["BLMPOP", "0", "1", "none", "LEFT"]),
        1,
    );
    o.expect(&cmd(&["CLIENT", "UNBLOCK", &id, "ERROR"]), ":1\r\n");
    c.expect(&[], "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n");
    wait_blocked(&mut o, 0);
    o.expect(&cmd(&["CLIENT", "UNBLOCK", &id]), ":0\r\n");
    // The connection goes on as before.
    c.expect(&cmd(&["PING"]), "+PONG\r\n");
    // Inside MULTI it does not block, even with a timeout of 0.
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["BLPOP", "none", "0"]), "+QUEUED\r\n");
    c.expect(&cmd(&["EXEC"]), "*1\r\n*-1\r\n");
    assert_eq!(blocked(&mut o), 0);
}

#[test]
fn list_commands_and_blocking_pops_under_every_strategy() {
    std::thread::scope(|s| {
        for strategy in strategies() {
            s.spawn(move || {
                let args = with_threads(strategy, "2", &["--strategy", strategy]);
                let server = ServerProc::start("resp", &args);
                script(&mut Raw::connect(server.addr));
                blocking(server.addr);
            });
        }
    });
}

/// A blocked pop is served exactly once, by the write that serves it.
/// Of four clients blocked on one list, one that leaves while blocked is
/// out of the line (nothing is popped for it); a push of one element
/// serves exactly the oldest left, and no other; a push of two the next
/// two, in the order they blocked; none gets a second reply. A pop with
/// a deadline, while pushes serve others, still times out. The pops wait
/// without a deadline, so nothing but the push ends them (no timer looks
/// for them); the reads are bounded only as hang guards. Stopped with a
/// pop still blocked, the server exits.
fn served_once(server: ServerProc) {
    let addr = server.addr;
    let mut o = Raw::connect(addr);
    o.expect(&cmd(&["FLUSHALL"]), "+OK\r\n");
    let mut cs: Vec<Raw> = (0..4).map(|_| Raw::connect(addr)).collect();
    for (i, c) in cs.iter_mut().enumerate() {
        blocks(c, &mut o, &cmd(&["BLPOP", "q", "0"]), i as u64 + 1);
    }
    // The oldest leaves: the server sees it go.
    drop(cs.remove(0));
    wait_blocked(&mut o, 3);
    o.expect(&cmd(&["RPUSH", "q", "e1"]), ":1\r\n");
    cs[0].expect(&[], "*2\r\n$1\r\nq\r\n$2\r\ne1\r\n");
    wait_blocked(&mut o, 2);
    o.expect(&cmd(&["LLEN", "q"]), ":0\r\n");
    // A timed pop on another list meanwhile: the push serves the others.
    let mut t = Raw::connect(addr);
    let started = Instant::now();
    t.send(&cmd(&["BLPOP", "other", "1"]));
    o.expect(&cmd(&["RPUSH", "q", "e2", "e3"]), ":2\r\n");
    cs[1].expect(&[], "*2\r\n$1\r\nq\r\n$2\r\ne2\r\n");
    cs[2].expect(&[], "*2\r\n$1\r\nq\r\n$2\r\ne3\r\n");
    t.expect(&[], "*-1\r\n");
    assert!(started.elapsed() >= Duration::from_secs(1));
    wait_blocked(&mut o, 0);
    o.expect(&cmd(&["LLEN", "q"]), ":0\r\n");
    // Nothing more came to any of them: their next reply is a PONG.
    for c in cs.iter_mut().chain([&mut t]) {
        c.expect(&cmd(&["PING"]), "+PONG\r\n");
    }
    blocks(&mut cs[0], &mut o, &cmd(&["BLPOP", "never", "0"]), 1);
    let (status, out) = server.stop();
    assert!(status.success(), "{status:?}: {out}");
    assert!(cs[0].closed(), "the blocked client is closed");
}

#[test]
fn a_blocked_pop_is_served_exactly_once_under_every_strategy() {
    std::thread::scope(|s| {
        for strategy in strategies() {
            s.spawn(move || {
                let args = with_threads(strategy, "2", &["--strategy", strategy]);
                served_once(ServerProc::start("resp", &args));
            });
        }
    });
}

/// Every list's contents and the number of keys, as replies.
fn state(c: &mut Raw, keys: &[&str]) -> Vec<String> {
    let mut all = Vec::new();
    for db in ["0", "2"] {
        c.expect(&cmd(&["SELECT", db]), "+OK\r\n");
        c.send(&cmd(&["DBSIZE"]));
        all.push(text(&c.reply()));
        for k in keys {
            c.send(&cmd(&["LRANGE", k, "0", "-1"]));
            all.push(format!("{db} {k} {}", text(&c.reply())));
        }
    }
    c.expect(&cmd(&["SELECT", "0"]), "+OK\r\n");
    all
}

/// Under `--durability always`, what the list commands and the served
/// blocking pops did is there after a restart, exactly.
#[test]
fn lists_moved_and_popped_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let args = [&logged_always(dir.path())[..], &["--threads", "2"]].concat();
    let keys = ["a", "b", "c", "q1", "q2", "m", "d", "gone"];
    let before = {
        let server = ServerProc::start("resp", &args);
        let mut c = Raw::connect(server.addr);
        let mut o = Raw::connect(server.addr);
        c.expect(
            &cmd(&["RPUSH", "a", "1", "2", "3", "4", "5", "x", "x"]),
            ":7\r\n",
        );
        c.expect(&cmd(&["LMOVE", "a", "b", "LEFT", "RIGHT"]), "$1\r\n1\r\n");
        c.expect(&cmd(&["RPOPLPUSH", "a", "a"]), "$1\r\nx\r\n");
        c.expect(&cmd(&["LMOVE", "b", "gone", "LEFT", "LEFT"]), "$1\r\n1\r\n");
        c.expect(&cmd(&["LINSERT", "a", "BEFORE", "3", "new"]), ":7\r\n");
        c.expect(&cmd(&["LREM", "a", "-1", "x"]), ":1\r\n");
        c.expect(&cmd(&["LSET", "a", "0", "first"]), "+OK\r\n");
        c.expect(&cmd(&["LTRIM", "a", "0", "4"]), "+OK\r\n");
        c.expect(&cmd(&["LPUSHX", "a", "px"]), ":6\r\n");
        c.expect(&cmd(&["LREM", "gone", "0", "1"]), ":1\r\n");
        // Served blocking pops, logged as the pops they came to.
        blocks(&mut c, &mut o, &cmd(&["BLPOP", "q1", "q2", "0"]), 1);
        o.expect(&cmd(&["RPUSH", "q2", "v1", "v2"]), ":2\r\n");
        c.expect(&[], "*2\r\n$2\r\nq2\r\n$2\r\nv1\r\n");
        c.expect(&cmd(&["SELECT", "2"]), "+OK\r\n");
        blocks(
            &mut c,
            &mut o,
            &cmd(&["BLMOVE", "m", "d", "LEFT", "RIGHT", "0"]),
            1,
        );
        o.expect(&cmd(&["SELECT", "2"]), "+OK\r\n");
        o.expect(&cmd(&["RPUSH", "m", "m1", "m2", "m3"]), ":3\r\n");
        c.expect(&[], "$2\r\nm1\r\n");
        c.expect(
            &cmd(&["BLMPOP", "0", "1", "m", "RIGHT", "COUNT", "5"]),
            "*2\r\n$1\r\nm\r\n*2\r\n$2\r\nm3\r\n$2\r\nm2\r\n",
        );
        c.expect(&cmd(&["BRPOPLPUSH", "d", "c", "0"]), "$2\r\nm1\r\n");
        c.expect(&cmd(&["SELECT", "0"]), "+OK\r\n");
        blocks(
            &mut c,
            &mut o,
            &cmd(&["BLMPOP", "0", "2", "none", "c", "LEFT", "COUNT", "2"]),
            1,
        );
        o.expect(&cmd(&["SELECT", "0"]), "+OK\r\n");
        o.expect(&cmd(&["RPUSH", "c", "c1", "c2", "c3"]), ":3\r\n");
        c.expect(&[], "*2\r\n$1\r\nc\r\n*2\r\n$2\r\nc1\r\n$2\r\nc2\r\n");
        let before = state(&mut c, &keys);
        server.stop();
        before
    };
    assert!(
        before.contains(
            &"0 a *6\r\n$2\r\npx\r\n$5\r\nfirst\r\n$1\r\n2\r\n$3\r\nnew\r\n$1\r\n3\r\n$1\r\n4\r\n"
                .to_string()
        ),
        "{before:?}"
    );
    assert!(
        before.contains(&"2 c *1\r\n$2\r\nm1\r\n".to_string()),
        "{before:?}"
    );
    let server = ServerProc::start("resp", &args);
    let after = state(&mut Raw::connect(server.addr), &keys);
    assert_eq!(after, before);
}

/// Under `--durability always`, the sorted-set pops served while blocked
/// (by a ZADD, by a ZUNIONSTORE, in another database) are logged as the
/// ZPOPMIN/ZPOPMAX they came to: after a restart the sets are as they
/// were, the members popped gone.
#[test]
fn sorted_set_pops_served_while_blocked_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let args = [&logged_always(dir.path())[..], &["--threads", "2"]].concat();
    let zstate = |c: &mut Raw| {
        let mut all = Vec::new();
        for db in ["0", "2"] {
            c.expect(&cmd(&["SELECT", db]), "+OK\r\n");
            for k in ["z1", "z2", "u"] {
                c.send(&cmd(&["ZRANGE", k, "0", "-1", "WITHSCORES"]));
                all.push(format!("{db} {k} {}", text(&c.reply())));
            }
        }
        c.expect(&cmd(&["SELECT", "0"]), "+OK\r\n");
        all
    };
    let before = {
        let server = ServerProc::start("resp", &args);
        let mut c = Raw::connect(server.addr);
        let mut o = Raw::connect(server.addr);
        blocks(&mut c, &mut o, &cmd(&["BZPOPMAX", "z1", "z2", "0"]), 1);
        o.expect(
            &cmd(&["ZADD", "z2", "1", "a", "2", "b", "3", "c"]),
            ":3\r\n",
        );
        c.expect(&[], "*3\r\n$2\r\nz2\r\n$1\r\nc\r\n$1\r\n3\r\n");
        c.expect(&cmd(&["SELECT", "2"]), "+OK\r\n");
        o.expect(&cmd(&["SELECT", "2"]), "+OK\r\n");
        let bzmpop = ["BZMPOP", "0", "1", "u", "MIN", "COUNT", "2"];
        blocks(&mut c, &mut o, &cmd(&bzmpop), 1);
        o.expect(
            &cmd(&["ZADD", "z1", "5", "x", "6", "y", "7", "w"]),
            ":3\r\n",
        );
        o.expect(&cmd(&["ZUNIONSTORE", "u", "1", "z1"]), ":3\r\n");
        c.expect(
            &[],
            "*2\r\n$1\r\nu\r\n*2\r\n*2\r\n$1\r\nx\r\n$1\r\n5\r\n*2\r\n$1\r\ny\r\n$1\r\n6\r\n",
        );
        let before = zstate(&mut c);
        server.stop();
        before
    };
    assert!(
        before.contains(&"0 z2 *4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n".to_string()),
        "{before:?}"
    );
    assert!(
        before.contains(&"2 u *2\r\n$1\r\nw\r\n$1\r\n7\r\n".to_string()),
        "{before:?}"
    );
    let server = ServerProc::start("resp", &args);
    assert_eq!(zstate(&mut Raw::connect(server.addr)), before);
}
