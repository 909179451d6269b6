//! The string commands beyond the fast path over real sockets, under
//! every strategy: each command's replies byte for byte as redis-server
//! 7.0.15 gives them (SET's options and their errors, GETEX, GETDEL,
//! GETSET, SETNX, SETEX, PSETEX, MSETNX, SETRANGE, GETRANGE, SUBSTR,
//! STRLEN, APPEND, INCRBYFLOAT's long-double sums, SETBIT, GETBIT, LCS);
//! the deadlines they set, keep and drop (seen in INFO's keyspace line,
//! and by keys expiring); and a server on its log restarted with the
//! same values and deadlines.

use crate::resp::{cmd, now_ms, Raw};
use crate::support::*;
use std::time::{Duration, Instant};

/// Requests and redis-server 7.0.15's replies to them, in order (from a
/// FLUSHALL'd database).
const SCRIPT: &[(&[&str], &str)] = &[
        // SET's options
        (&["SET", "k", "v", "EX", "0"], "-ERR invalid expire time in 'set' command\r\n"),
        (&["SET", "k", "v", "PX", "-1"], "-ERR invalid expire time in 'set' command\r\n"),
        (&["SET", "k", "v", "EX", "abc"], "-ERR value is not an integer or out of range\r\n"),
        (&["SET", "k", "v", "NX", "XX"], "-ERR syntax error\r\n"),
        (&["SET", "k", "v", "XX", "NX"], "-ERR syntax error\r\n"),
        (&["SET", "k", "v", "EX", "10", "PX", "10"], "-ERR syntax error\r\n"),
        (&["SET", "k", "v", "EX"], "-ERR syntax error\r\n"),
        (&["SET", "k", "v", "KEEPTTL", "EX", "10"], "-ERR syntax error\r\n"),
        (&["SET", "k", "v", "EX", "10", "KEEPTTL"], "-ERR syntax error\r\n"),
        (&["SET", "k", "v", "PERSIST"], "-ERR syntax error\r\n"),
        (&["SET", "k", "v", "foo"], "-ERR syntax error\r\n"),
        (&["SET", "k", "v", "EX", "9223372036854775"], "-ERR invalid expire time in 'set' command\r\n"),
        (&["SET", "k", "v", "PX", "9223372036854775807"], "-ERR invalid expire time in 'set' command\r\n"),
        (&["SET", "k", "v", "EXAT", "9223372036854776"], "-ERR invalid expire time in 'set' command\r\n"),
        (&["SET", "k", "v", "GET", "GET", "nx"], "$-1\r\n"),
        (&["SET", "k", "v2", "GET"], "$1\r\nv\r\n"),
        (&["SET", "k", "v3", "xx", "get"], "$2\r\nv2\r\n"),
        (&["SET", "k", "v4", "nx", "get"], "$2\r\nv3\r\n"),
        (&["SET", "k", "v4", "nx"], "$-1\r\n"),
        (&["SET", "nk", "v4", "xx", "get"], "$-1\r\n"),
        (&["SET", "nk", "v4", "xx"], "$-1\r\n"),
        (&["GET", "nk"], "$-1\r\n"),
        (&["SET", "k", "v5", "EX", "10", "EX", "20", "xx"], "+OK\r\n"),
        (&["SET", "k", "v6", "keepttl", "xx", "GET"], "$2\r\nv5\r\n"),
        (&["SET", "k", "v", "PXAT", "1"], "+OK\r\n"),
        (&["EXISTS", "k"], ":0\r\n"),
        (&["RPUSH", "l", "a"], ":1\r\n"),
        (&["SET", "l", "v", "GET"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["SET", "l", "v", "GET", "EX", "0"], "-ERR invalid expire time in 'set' command\r\n"),
        (&["SET", "l", "x", "EX", "100"], "+OK\r\n"),
        (&["GET", "l"], "$1\r\nx\r\n"),
        // SETNX, SETEX, PSETEX
        (&["SETNX", "l", "y"], ":0\r\n"),
        (&["SETNX", "new", "y"], ":1\r\n"),
        (&["GET", "new"], "$1\r\ny\r\n"),
        (&["SETEX", "se", "0", "v"], "-ERR invalid expire time in 'setex' command\r\n"),
        (&["SETEX", "se", "-5", "v"], "-ERR invalid expire time in 'setex' command\r\n"),
        (&["SETEX", "se", "x", "v"], "-ERR value is not an integer or out of range\r\n"),
        (&["SETEX", "se", "100", "v"], "+OK\r\n"),
        (&["PSETEX", "pse", "0", "v"], "-ERR invalid expire time in 'psetex' command\r\n"),
        (&["PSETEX", "pse", "100000", "v"], "+OK\r\n"),
        (&["GET", "pse"], "$1\r\nv\r\n"),
        // GETEX
        (&["GETEX", "nokey", "EX", "0"], "$-1\r\n"),
        (&["GETEX", "se", "EX", "0"], "-ERR invalid expire time in 'getex' command\r\n"),
        (&["GETEX", "se", "EX", "x"], "-ERR value is not an integer or out of range\r\n"),
        (&["GETEX", "se", "foo"], "-ERR syntax error\r\n"),
        (&["GETEX", "se", "PERSIST", "EX", "1"], "-ERR syntax error\r\n"),
        (&["GETEX", "se", "EX", "1", "PERSIST"], "-ERR syntax error\r\n"),
        (&["GETEX", "se", "KEEPTTL"], "-ERR syntax error\r\n"),
        (&["GETEX", "se", "GET"], "-ERR syntax error\r\n"),
        (&["GETEX", "se", "EX"], "-ERR syntax error\r\n"),
        (&["GETEX", "se", "PERSIST"], "$1\r\nv\r\n"),
        (&["GETEX", "se", "EX", "100"], "$1\r\nv\r\n"),
        (&["GETEX", "se"], "$1\r\nv\r\n"),
        (&["GETEX", "se", "PXAT", "1"], "$1\r\nv\r\n"),
        (&["EXISTS", "se"], ":0\r\n"),
        (&["RPUSH", "l2", "a"], ":1\r\n"),
        (&["GETEX", "l2"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["GETEX", "l2", "EX", "0"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["GETEX"], "-ERR wrong number of arguments for 'getex' command\r\n"),
        // GETDEL, GETSET
        (&["SET", "gd", "v"], "+OK\r\n"),
        (&["GETDEL", "gd"], "$1\r\nv\r\n"),
        (&["GETDEL", "gd"], "$-1\r\n"),
        (&["GETDEL", "l2"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["GETSET", "gs", "a"], "$-1\r\n"),
        (&["GETSET", "gs", "b"], "$1\r\na\r\n"),
        (&["GETSET", "l2", "b"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        // MSETNX
        (&["MSETNX", "a", "1", "b"], "-ERR wrong number of arguments for 'msetnx' command\r\n"),
        (&["MSETNX", "a"], "-ERR wrong number of arguments for 'msetnx' command\r\n"),
        (&["MSETNX", "a", "1", "b", "2"], ":1\r\n"),
        (&["MSETNX", "a", "1", "c", "2"], ":0\r\n"),
        (&["EXISTS", "c"], ":0\r\n"),
        (&["MSETNX", "x", "1", "x", "2"], ":1\r\n"),
        (&["GET", "x"], "$1\r\n2\r\n"),
        (&["MSETNX", "l2", "1", "z", "2"], ":0\r\n"),
        // SETRANGE
        (&["SETRANGE", "sr", "0", ""], ":0\r\n"),
        (&["EXISTS", "sr"], ":0\r\n"),
        (&["SETRANGE", "sr", "-1", "a"], "-ERR offset is out of range\r\n"),
        (&["SETRANGE", "sr", "x", "a"], "-ERR value is not an integer or out of range\r\n"),
        (&["SETRANGE", "sr", "3", "abc"], ":6\r\n"),
        (&["GET", "sr"], "$6\r\n\u{0}\u{0}\u{0}abc\r\n"),
        (&["SETRANGE", "sr", "1", "ZZZZZZZ"], ":8\r\n"),
        (&["GET", "sr"], "$8\r\n\u{0}ZZZZZZZ\r\n"),
        (&["SETRANGE", "sr", "100", ""], ":8\r\n"),
        (&["SETRANGE", "sr", "9223372036854775807", "A"], "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"),
        (&["SETRANGE", "sr", "536870908", "world"], "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"),
        (&["SETRANGE", "l2", "0", "a"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["SETRANGE", "l2", "-1", ""], "-ERR offset is out of range\r\n"),
        (&["SET", "n", "1234"], "+OK\r\n"),
        (&["SETRANGE", "n", "1", "3"], ":4\r\n"),
        (&["GET", "n"], "$4\r\n1334\r\n"),
        // GETRANGE, SUBSTR, STRLEN
        (&["SET", "hw", "Hello World"], "+OK\r\n"),
        (&["GETRANGE", "hw", "0", "3"], "$4\r\nHell\r\n"),
        (&["GETRANGE", "hw", "0", "-1"], "$11\r\nHello World\r\n"),
        (&["GETRANGE", "hw", "-4", "-1"], "$4\r\norld\r\n"),
        (&["GETRANGE", "hw", "5", "3"], "$0\r\n\r\n"),
        (&["GETRANGE", "hw", "5", "5000"], "$6\r\n World\r\n"),
        (&["GETRANGE", "hw", "-5000", "10000"], "$11\r\nHello World\r\n"),
        (&["GETRANGE", "hw", "-1", "-5"], "$0\r\n\r\n"),
        (&["GETRANGE", "hw", "0", "4294967297"], "$11\r\nHello World\r\n"),
        (&["GETRANGE", "nokey", "0", "-1"], "$0\r\n\r\n"),
        (&["GETRANGE", "hw", "a", "-1"], "-ERR value is not an integer or out of range\r\n"),
        (&["GETRANGE", "hw", "0", "1.5"], "-ERR value is not an integer or out of range\r\n"),
        (&["GETRANGE", "l2", "0", "1"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["SUBSTR", "hw", "1", "2"], "$2\r\nel\r\n"),
        (&["SUBSTR", "l2", "1", "2"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["STRLEN", "hw"], ":11\r\n"),
        (&["STRLEN", "n"], ":4\r\n"),
        (&["STRLEN", "nokey"], ":0\r\n"),
        (&["STRLEN", "l2"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        // APPEND
        (&["APPEND", "ap", "abc"], ":3\r\n"),
        (&["APPEND", "ap", "def"], ":6\r\n"),
        (&["APPEND", "ap", ""], ":6\r\n"),
        (&["GET", "ap"], "$6\r\nabcdef\r\n"),
        (&["APPEND", "l2", "x"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        // INCRBYFLOAT
        (&["INCRBYFLOAT", "fl", "1"], "$1\r\n1\r\n"),
        (&["INCRBYFLOAT", "fl", "0.25"], "$4\r\n1.25\r\n"),
        (&["INCRBYFLOAT", "fl", "-1.1"], "$4\r\n0.15\r\n"),
        (&["GET", "fl"], "$4\r\n0.15\r\n"),
        (&["SET", "fl", "0.1"], "+OK\r\n"),
        (&["INCRBYFLOAT", "fl", "0.2"], "$3\r\n0.3\r\n"),
        (&["SET", "fl", "17179869184"], "+OK\r\n"),
        (&["INCRBYFLOAT", "fl", "1.5"], "$13\r\n17179869185.5\r\n"),
        (&["INCRBYFLOAT", "fl", "1e30"], "$31\r\n1000000000000000000024696061952\r\n"),
        (&["SET", "fl", "3"], "+OK\r\n"),
        (&["INCRBYFLOAT", "fl", "0.3333333333333333333333"], "$19\r\n3.33333333333333333\r\n"),
        (&["SET", "fl", "5.0e3"], "+OK\r\n"),
        (&["INCRBYFLOAT", "fl", "2e2"], "$4\r\n5200\r\n"),
        (&["INCRBYFLOAT", "fl", "-0x10"], "$4\r\n5184\r\n"),
        (&["INCRBYFLOAT", "fl", "-5184"], "$1\r\n0\r\n"),
        (&["INCRBYFLOAT", "fl", "abc"], "-ERR value is not a valid float\r\n"),
        (&["INCRBYFLOAT", "fl", "+inf"], "-ERR increment would produce NaN or Infinity\r\n"),
        (&["INCRBYFLOAT", "fl", "nan"], "-ERR value is not a valid float\r\n"),
        (&["INCRBYFLOAT", "fl", " 1"], "-ERR value is not a valid float\r\n"),
        (&["INCRBYFLOAT", "fl", "1e5000"], "-ERR value is not a valid float\r\n"),
        (&["INCRBYFLOAT", "ap", "1"], "-ERR value is not a valid float\r\n"),
        (&["SET", "fs", "1"], "+OK\r\n"),
        (&["SETRANGE", "fs", "2", "2"], ":3\r\n"),
        (&["INCRBYFLOAT", "fs", "1"], "-ERR value is not a valid float\r\n"),
        (&["SET", "fs", "   11"], "+OK\r\n"),
        (&["INCRBYFLOAT", "fs", "1"], "-ERR value is not a valid float\r\n"),
        (&["INCRBYFLOAT", "l2", "1"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        // SETBIT, GETBIT
        (&["SETBIT", "b", "1", "1"], ":0\r\n"),
        (&["GET", "b"], "$1\r\nr\r\n"),
        (&["SETBIT", "b", "2", "1"], ":1\r\n"),
        (&["SETBIT", "b", "1", "0"], ":1\r\n"),
        (&["SETBIT", "b", "1", "0"], ":0\r\n"),
        (&["GET", "b"], "$1\r\n2\r\n"),
        (&["SETBIT", "b", "-1", "1"], "-ERR bit offset is not an integer or out of range\r\n"),
        (&["SETBIT", "b", "x", "1"], "-ERR bit offset is not an integer or out of range\r\n"),
        (&["SETBIT", "b", "4294967296", "1"], "-ERR bit offset is not an integer or out of range\r\n"),
        (&["SETBIT", "b", "0", "2"], "-ERR bit is not an integer or out of range\r\n"),
        (&["SETBIT", "b", "0", "-1"], "-ERR bit is not an integer or out of range\r\n"),
        (&["SETBIT", "b", "0", "x"], "-ERR bit is not an integer or out of range\r\n"),
        (&["SETBIT", "b", "17", "1"], ":0\r\n"),
        (&["GET", "b"], "$3\r\n2\u{0}@\r\n"),
        (&["STRLEN", "b"], ":3\r\n"),
        (&["SETBIT", "l2", "0", "1"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["SETBIT", "l2", "-1", "1"], "-ERR bit offset is not an integer or out of range\r\n"),
        (&["GETBIT", "b", "17"], ":1\r\n"),
        (&["GETBIT", "b", "16"], ":0\r\n"),
        (&["GETBIT", "b", "100000"], ":0\r\n"),
        (&["GETBIT", "b", "-1"], "-ERR bit offset is not an integer or out of range\r\n"),
        (&["GETBIT", "b", "x"], "-ERR bit offset is not an integer or out of range\r\n"),
        (&["GETBIT", "nokey", "5"], ":0\r\n"),
        (&["GETBIT", "l2", "5"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["GETBIT", "l2", "-5"], "-ERR bit offset is not an integer or out of range\r\n"),
        (&["SET", "i", "1"], "+OK\r\n"),
        (&["GETBIT", "i", "2"], ":1\r\n"),
        (&["GETBIT", "i", "3"], ":1\r\n"),
        (&["GETBIT", "i", "4"], ":0\r\n"),
        // LCS
        (&["SET", "m1", "ohmytext"], "+OK\r\n"),
        (&["SET", "m2", "mynewtext"], "+OK\r\n"),
        (&["LCS", "m1", "m2"], "$6\r\nmytext\r\n"),
        (&["LCS", "m1", "m2", "LEN"], ":6\r\n"),
        (&["LCS", "m1", "m2", "IDX"], "*4\r\n$7\r\nmatches\r\n*2\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n*2\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n$3\r\nlen\r\n:6\r\n"),
        (&["LCS", "m1", "m2", "IDX", "WITHMATCHLEN"], "*4\r\n$7\r\nmatches\r\n*2\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n*3\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n:2\r\n$3\r\nlen\r\n:6\r\n"),
        (&["LCS", "m1", "m2", "IDX", "MINMATCHLEN", "4"], "*4\r\n$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n$3\r\nlen\r\n:6\r\n"),
        (&["LCS", "m1", "m2", "IDX", "MINMATCHLEN", "-4", "WITHMATCHLEN"], "*4\r\n$7\r\nmatches\r\n*2\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n*3\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n:2\r\n$3\r\nlen\r\n:6\r\n"),
        (&["LCS", "m1", "m2", "IDX", "LEN"], "-ERR If you want both the length and indexes, please just use IDX.\r\n"),
        (&["LCS", "m1", "m2", "MINMATCHLEN"], "-ERR syntax error\r\n"),
        (&["LCS", "m1", "m2", "MINMATCHLEN", "x"], "-ERR value is not an integer or out of range\r\n"),
        (&["LCS", "m1", "m2", "foo"], "-ERR syntax error\r\n"),
        (&["LCS", "m1", "nokey"], "$0\r\n\r\n"),
        (&["LCS", "nokey", "nokey2", "IDX", "WITHMATCHLEN"], "*4\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n"),
        (&["LCS", "m1", "l2"], "-ERR The specified keys must contain string values\r\n"),
        (&["LCS", "l2", "m1", "foo"], "-ERR The specified keys must contain string values\r\n"),
        (&["SET", "q1", "aaaa"], "+OK\r\n"),
        (&["SET", "q2", "aa"], "+OK\r\n"),
        (&["LCS", "q1", "q2", "IDX", "WITHMATCHLEN"], "*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n:2\r\n$3\r\nlen\r\n:2\r\n"),
];

/// Database 0's `keys`, `expires` and `avg_ttl` from INFO keyspace
/// (zeros when it holds nothing).
fn keyspace(c: &mut Raw) -> (u64, u64, i64) {
    let info = c.bulk(&cmd(&["INFO", "keyspace"]));
    let Some(line) = info.lines().find_map(|l| l.strip_prefix("db0:")) else {
        return (0, 0, 0);
    };
    let field = |name: &str| -> i64 {
        line.split(',')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {line:?}"))
    };
    (
        field("keys") as u64,
        field("expires") as u64,
        field("avg_ttl"),
    )
}

/// How many keys of database 0 have a deadline.
fn expiring(c: &mut Raw) -> u64 {
    keyspace(c).1
}

/// Which commands set a deadline, keep it, drop it; one already past
/// deletes the key; a key past its deadline is gone.
fn deadlines(c: &mut Raw) {
    c.expect(&cmd(&["FLUSHALL"]), "+OK\r\n");
    c.expect(&cmd(&["SET", "a", "v", "EX", "100"]), "+OK\r\n");
    assert_eq!(expiring(c), 1, "SET EX sets one");
    let (_, _, ttl) = keyspace(c);
    assert!((90_000..=100_000).contains(&ttl), "EX 100: {ttl} ms left");
    // A SET that NX or XX holds back writes nothing: the deadline stays
    // (the fast path's SET, alone or in a transaction).
    c.expect(&cmd(&["SET", "a", "x", "NX"]), "$-1\r\n");
    c.expect(&cmd(&["SET", "absent", "x", "XX"]), "$-1\r\n");
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["SET", "a", "x", "NX"]), "+QUEUED\r\n");
    c.expect(&cmd(&["EXEC"]), "*1\r\n$-1\r\n");
    assert_eq!(
        expiring(c),
        1,
        "a SET NX that did not write keeps the deadline"
    );
    c.expect(&cmd(&["SET", "a", "w", "KEEPTTL"]), "+OK\r\n");
    assert_eq!(expiring(c), 1, "KEEPTTL keeps it");
    c.expect(&cmd(&["SET", "a", "v", "NX", "EX", "5"]), "$-1\r\n");
    assert!(
        keyspace(c).2 > 50_000,
        "a SET that did not set keeps the old one"
    );
    c.expect(&cmd(&["SET", "a", "v", "GET"]), "$1\r\nw\r\n");
    assert_eq!(expiring(c), 0, "SET without KEEPTTL drops it");
    c.expect(&cmd(&["SET", "a", "v", "PX", "100000"]), "+OK\r\n");
    c.expect(&cmd(&["GETSET", "a", "x"]), "$1\r\nv\r\n");
    assert_eq!(expiring(c), 0, "GETSET drops it");
    c.expect(&cmd(&["SETEX", "a", "100", "v"]), "+OK\r\n");
    c.expect(&cmd(&["GETEX", "a", "PERSIST"]), "$1\r\nv\r\n");
    assert_eq!(expiring(c), 0, "GETEX PERSIST removes it");
    let at = (now_ms() + 200_000).to_string();
    c.expect(&cmd(&["PSETEX", "f", "100000", "1"]), "+OK\r\n");
    c.expect(&cmd(&["INCRBYFLOAT", "f", "1.5"]), "$3\r\n2.5\r\n");
    c.expect(&cmd(&["APPEND", "f", "0"]), ":4\r\n");
    c.expect(&cmd(&["SETRANGE", "f", "0", "3"]), ":4\r\n");
    c.expect(&cmd(&["SETBIT", "f", "7", "0"]), ":1\r\n");
    c.expect(&cmd(&["GET", "f"]), "$4\r\n2.50\r\n");
    assert_eq!(expiring(c), 1, "the string's changes keep it");
    c.expect(&cmd(&["GETEX", "f", "PXAT", &at]), "$4\r\n2.50\r\n");
    let (_, _, ttl) = keyspace(c);
    assert!(
        (190_000..=200_000).contains(&ttl),
        "GETEX PXAT: {ttl} ms left"
    );
    c.expect(&cmd(&["GETDEL", "f"]), "$4\r\n2.50\r\n");
    assert_eq!(keyspace(c), (1, 0, 0), "GETDEL deletes key and deadline");
    // A deadline already past deletes the key.
    c.expect(&cmd(&["SET", "p", "v", "PXAT", "1"]), "+OK\r\n");
    c.expect(&cmd(&["SET", "a", "v", "EXAT", "1", "GET"]), "$1\r\nv\r\n");
    c.expect(&cmd(&["EXISTS", "p", "a"]), ":0\r\n");
    c.expect(&cmd(&["SET", "g", "v"]), "+OK\r\n");
    c.expect(&cmd(&["GETEX", "g", "EXAT", "1"]), "$1\r\nv\r\n");
    c.expect(&cmd(&["EXISTS", "g"]), ":0\r\n");
    assert_eq!(keyspace(c), (0, 0, 0));
    // A key past its deadline is gone.
    c.expect(&cmd(&["SET", "s", "v", "PX", "150"]), "+OK\r\n");
    c.expect(&cmd(&["GETEX", "s", "PX", "150"]), "$1\r\nv\r\n");
    c.expect(&cmd(&["GET", "s"]), "$1\r\nv\r\n");
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
        if keyspace(c).0 == 0 {
            break;
        }
    }
    c.expect(&cmd(&["GET", "s"]), "$-1\r\n");
}

/// The script byte for byte, then the deadlines, on one server.
fn strings(strategy: &str) {
    let server = ServerProc::start("resp", &["--strategy", strategy]);
    let mut c = Raw::connect(server.addr);
    for (args, reply) in SCRIPT {
        c.expect(&cmd(args), reply);
    }
    deadlines(&mut c);
}

per_strategy!(strings_as_redis_serves_them, strings);

/// Writes with every kind of string command, whose records replay to
/// the same values and the same absolute deadlines.
fn write_strings(c: &mut Raw) {
    let writes: &[(&[&str], &str)] = &[
        (&["SET", "ex", "v", "EX", "100"], "+OK\r\n"),
        (&["SET", "px", "v", "PX", "100000", "GET"], "$-1\r\n"),
        (&["SETEX", "setex", "100", "v"], "+OK\r\n"),
        (&["PSETEX", "psetex", "100000", "v"], "+OK\r\n"),
        (&["SET", "short", "v", "PX", "1500"], "+OK\r\n"),
        (&["SET", "f", "1", "EX", "100"], "+OK\r\n"),
        (&["INCRBYFLOAT", "f", "0.1"], "$3\r\n1.1\r\n"),
        (&["INCRBYFLOAT", "f", "0.2"], "$3\r\n1.3\r\n"),
        (&["SET", "r", "Hello World"], "+OK\r\n"),
        (&["SETRANGE", "r", "6", "Redis"], ":11\r\n"),
        (&["SETRANGE", "r", "13", "!"], ":14\r\n"),
        (&["APPEND", "r", "?"], ":15\r\n"),
        (&["APPEND", "new", "abc"], ":3\r\n"),
        (&["SETBIT", "b", "1", "1"], ":0\r\n"),
        (&["SETBIT", "b", "2", "1"], ":0\r\n"),
        (&["SETBIT", "b", "1", "1"], ":1\r\n"),
        (&["MSETNX", "m1", "a", "m2", "b"], ":1\r\n"),
        (&["MSETNX", "m1", "x", "m3", "c"], ":0\r\n"),
        (&["SETNX", "nx", "1"], ":1\r\n"),
        (&["SET", "gs", "old", "EX", "100"], "+OK\r\n"),
        (&["GETSET", "gs", "new"], "$3\r\nold\r\n"),
        (&["SET", "kt", "a", "EX", "100"], "+OK\r\n"),
        (&["SET", "kt", "b", "KEEPTTL"], "+OK\r\n"),
        (&["SET", "gd", "v"], "+OK\r\n"),
        (&["GETDEL", "gd"], "$1\r\nv\r\n"),
        (&["SET", "past", "v", "PXAT", "1"], "+OK\r\n"),
        (&["SET", "gx", "v"], "+OK\r\n"),
        (&["GETEX", "gx", "EX", "100"], "$1\r\nv\r\n"),
        (&["SET", "gp", "v", "EX", "100"], "+OK\r\n"),
        (&["GETEX", "gp", "PERSIST"], "$1\r\nv\r\n"),
        (&["SET", "gd2", "v"], "+OK\r\n"),
        (&["GETEX", "gd2", "PXAT", "1"], "$1\r\nv\r\n"),
    ];
    for (args, reply) in writes {
        c.expect(&cmd(args), reply);
    }
}

/// What `write_strings` left, as GETs see it.
fn read_strings(c: &mut Raw) {
    let values: &[(&str, &str)] = &[
        ("ex", "$1\r\nv\r\n"),
        ("px", "$1\r\nv\r\n"),
        ("setex", "$1\r\nv\r\n"),
        ("psetex", "$1\r\nv\r\n"),
        ("f", "$3\r\n1.3\r\n"),
        ("r", "$15\r\nHello Redis\u{0}\u{0}!?\r\n"),
        ("new", "$3\r\nabc\r\n"),
        ("b", "$1\r\n`\r\n"),
        ("m1", "$1\r\na\r\n"),
        ("m2", "$1\r\nb\r\n"),
        ("m3", "$-1\r\n"),
        ("nx", "$1\r\n1\r\n"),
        ("gs", "$3\r\nnew\r\n"),
        ("kt", "$1\r\nb\r\n"),
        ("gd", "$-1\r\n"),
        ("past", "$-1\r\n"),
        ("gx", "$1\r\nv\r\n"),
        ("gp", "$1\r\nv\r\n"),
        ("gd2", "$-1\r\n"),
    ];
    for (key, reply) in values {
        c.expect(&cmd(&["GET", key]), reply);
    }
}

/// The keys `write_strings` gave a deadline of 100 s.
const EXPIRING: [&str; 7] = ["ex", "px", "setex", "psetex", "f", "kt", "gx"];

/// A key's PTTL.
fn pttl(c: &mut Raw, key: &str) -> i64 {
    c.send(&cmd(&["PTTL", key]));
    let mut line = Vec::new();
    while !line.ends_with(b"\r\n") {
        line.extend(c.read_n(1));
    }
    let line = text(&line);
    line.trim_end()
        .strip_prefix(':')
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("PTTL {key}: {line:?}"))
}

/// Written with the string commands on `--durability always`, stopped,
/// and restarted on its log: the same values, and the same deadlines.
/// They are absolute: `short` (1.5 s) is gone after the pause, and the
/// others (100 s) have as much less left as time went by (relative ones
/// replayed would have started again).
#[test]
fn strings_and_their_deadlines_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let args = logged_always(dir.path());
    let (keys, written) = {
        let server = ServerProc::start("resp", &args);
        let mut c = Raw::connect(server.addr);
        let started = Instant::now();
        write_strings(&mut c);
        read_strings(&mut c);
        let (keys, deadlines, _) = keyspace(&mut c);
        assert_eq!(deadlines, EXPIRING.len() as u64 + 1, "and short's");
        for k in ["nx", "gs", "gp", "r"] {
            assert_eq!(pttl(&mut c, k), -1, "{k} has no deadline");
        }
        let (status, _) = server.stop();
        assert!(status.success());
        (keys, started)
    };
    std::thread::sleep(Duration::from_millis(1600));
    let server = ServerProc::start("resp", &args);
    let mut c = Raw::connect(server.addr);
    read_strings(&mut c);
    c.expect(&cmd(&["GET", "short"]), "$-1\r\n");
    let (after, deadlines, _) = keyspace(&mut c);
    assert_eq!((after, deadlines), (keys - 1, EXPIRING.len() as u64));
    // Set in the moments after `written` (the writes take well under a
    // second): at least what is left of 100 s from then, and not much more.
    for k in EXPIRING {
        let least = 100_000 - written.elapsed().as_millis() as i64;
        let left = pttl(&mut c, k);
        assert!(
            (least - 100..least + 1000).contains(&left),
            "{k}: {left} ms left, at least about {least} wanted"
        );
    }
    for k in ["nx", "gs", "gp", "r"] {
        assert_eq!(pttl(&mut c, k), -1, "{k} has no deadline");
    }
    drop(server);
}
