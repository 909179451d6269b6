//! SORT, DUMP and RESTORE (docs/protocols/resp.md) over real sockets,
//! under every strategy: SORT's forms byte for byte as redis-server
//! 7.0.15 answers them (the scripts below were answered by it), one at a
//! time and pipelined; DUMP then RESTORE of every type giving back what
//! Redis gives back after its own round trip, with the deadlines RESTORE
//! sets, keeps and drops; RESTORE's errors in Redis's order; SORT …
//! STORE waking a pop blocked on its destination; and a durable server
//! killed after SORT … STORE and RESTORE coming back with the same keys
//! and deadlines.

use crate::resp::{cmd, now_ms, Raw};
use crate::support::*;
use std::time::{Duration, Instant};

/// SORT's forms and redis-server 7.0.15's exact replies, in order, from
/// an empty database (a number out of range last: Redis leaves C's
/// `errno` set after one, and fails numeric sorts after it).
#[rustfmt::skip]
const SORTS: &[(&[&str], &str)] = &[
    (&["RPUSH", "l", "3", "1", "2", "10", "-5", "1.5"], ":6\r\n"),
    (&["SORT", "l"], "*6\r\n$2\r\n-5\r\n$1\r\n1\r\n$3\r\n1.5\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n"),
    (&["SORT", "l", "DESC"], "*6\r\n$2\r\n10\r\n$1\r\n3\r\n$1\r\n2\r\n$3\r\n1.5\r\n$1\r\n1\r\n$2\r\n-5\r\n"),
    (&["SORT", "l", "ALPHA"], "*6\r\n$2\r\n-5\r\n$1\r\n1\r\n$3\r\n1.5\r\n$2\r\n10\r\n$1\r\n2\r\n$1\r\n3\r\n"),
    (&["SORT", "l", "ALPHA", "DESC"], "*6\r\n$1\r\n3\r\n$1\r\n2\r\n$2\r\n10\r\n$3\r\n1.5\r\n$1\r\n1\r\n$2\r\n-5\r\n"),
    (&["SORT", "l", "LIMIT", "1", "3"], "*3\r\n$1\r\n1\r\n$3\r\n1.5\r\n$1\r\n2\r\n"),
    (&["SORT", "l", "LIMIT", "-2", "3"], "*3\r\n$2\r\n-5\r\n$1\r\n1\r\n$3\r\n1.5\r\n"),
    (&["SORT", "l", "LIMIT", "2", "-1"], "*4\r\n$3\r\n1.5\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n"),
    (&["SORT", "l", "LIMIT", "10", "2"], "*0\r\n"),
    (&["SORT", "l", "LIMIT", "0", "0"], "*0\r\n"),
    (&["SORT", "l", "LIMIT", "1"], "-ERR syntax error\r\n"),
    (&["SORT", "l", "LIMIT", "x", "1"], "-ERR value is not an integer or out of range\r\n"),
    (&["SORT", "l", "LIMIT", "1", "y"], "-ERR value is not an integer or out of range\r\n"),
    (&["SORT", "l", "FOO"], "-ERR syntax error\r\n"),
    (&["SORT", "l", "BY"], "-ERR syntax error\r\n"),
    (&["SORT", "l", "GET"], "-ERR syntax error\r\n"),
    (&["SORT", "l", "STORE"], "-ERR syntax error\r\n"),
    (&["SORT", "l", "limit", "1", "2", "desc", "alpha"], "*2\r\n$1\r\n2\r\n$2\r\n10\r\n"),
    (&["MSET", "w_3", "30", "w_1", "10", "w_2", "-1", "w_10", "5", "w_-5", "5"], "+OK\r\n"),
    (&["SORT", "l", "BY", "w_*"], "*6\r\n$1\r\n2\r\n$3\r\n1.5\r\n$2\r\n-5\r\n$2\r\n10\r\n$1\r\n1\r\n$1\r\n3\r\n"),
    (&["SORT", "l", "BY", "w_*", "DESC"], "*6\r\n$1\r\n3\r\n$1\r\n1\r\n$2\r\n10\r\n$2\r\n-5\r\n$3\r\n1.5\r\n$1\r\n2\r\n"),
    (&["SORT", "l", "BY", "w_*", "ALPHA"], "*6\r\n$3\r\n1.5\r\n$1\r\n2\r\n$1\r\n1\r\n$1\r\n3\r\n$2\r\n10\r\n$2\r\n-5\r\n"),
    (&["SORT", "l", "BY", "w_*", "GET", "#", "GET", "w_*"], "*12\r\n$1\r\n2\r\n$2\r\n-1\r\n$3\r\n1.5\r\n$-1\r\n$2\r\n-5\r\n$1\r\n5\r\n$2\r\n10\r\n$1\r\n5\r\n$1\r\n1\r\n$2\r\n10\r\n$1\r\n3\r\n$2\r\n30\r\n"),
    (&["SORT", "l", "BY", "w_*", "LIMIT", "1", "2", "GET", "w_*"], "*2\r\n$-1\r\n$1\r\n5\r\n"),
    (&["SORT", "l", "BY", "nosort"], "*6\r\n$1\r\n3\r\n$1\r\n1\r\n$1\r\n2\r\n$2\r\n10\r\n$2\r\n-5\r\n$3\r\n1.5\r\n"),
    (&["SORT", "l", "BY", "nosort", "DESC"], "*6\r\n$3\r\n1.5\r\n$2\r\n-5\r\n$2\r\n10\r\n$1\r\n2\r\n$1\r\n1\r\n$1\r\n3\r\n"),
    (&["SORT", "l", "BY", "nosort", "LIMIT", "1", "2"], "*2\r\n$1\r\n1\r\n$1\r\n2\r\n"),
    (&["SORT", "l", "BY", "nosort", "DESC", "LIMIT", "1", "2"], "*2\r\n$2\r\n-5\r\n$2\r\n10\r\n"),
    (&["SORT", "l", "BY", "nosort", "BY", "w_*"], "*6\r\n$1\r\n3\r\n$1\r\n1\r\n$1\r\n2\r\n$2\r\n10\r\n$2\r\n-5\r\n$3\r\n1.5\r\n"),
    (&["HSET", "h_3", "f", "c", "n", "3"], ":2\r\n"),
    (&["HSET", "h_1", "f", "a", "n", "9"], ":2\r\n"),
    (&["HSET", "h_10", "f", "b"], ":1\r\n"),
    (&["SORT", "l", "BY", "h_*->n"], "*6\r\n$2\r\n-5\r\n$3\r\n1.5\r\n$2\r\n10\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n1\r\n"),
    (&["SORT", "l", "BY", "h_*->f", "ALPHA"], "*6\r\n$1\r\n2\r\n$2\r\n-5\r\n$3\r\n1.5\r\n$1\r\n1\r\n$2\r\n10\r\n$1\r\n3\r\n"),
    (&["SORT", "l", "GET", "h_*->f", "GET", "#"], "*12\r\n$-1\r\n$2\r\n-5\r\n$1\r\na\r\n$1\r\n1\r\n$-1\r\n$3\r\n1.5\r\n$-1\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nb\r\n$2\r\n10\r\n"),
    (&["SORT", "l", "GET", "h_*->"], "*6\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n"),
    (&["SORT", "l", "GET", "h_*"], "*6\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n"),
    (&["SORT", "l", "GET", "nostar"], "*6\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n"),
    (&["SORT", "l", "GET", "w_*->f"], "*6\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n"),
    (&["SORT", "l", "BY", "h_*->f", "ALPHA", "DESC", "GET", "h_*->f"], "*6\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n$-1\r\n$-1\r\n$-1\r\n"),
    (&["SORT", "l", "STORE", "dst"], ":6\r\n"),
    (&["LRANGE", "dst", "0", "-1"], "*6\r\n$2\r\n-5\r\n$1\r\n1\r\n$3\r\n1.5\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n"),
    (&["TTL", "dst"], ":-1\r\n"),
    (&["EXPIRE", "dst", "100"], ":1\r\n"),
    (&["SORT", "l", "DESC", "STORE", "dst"], ":6\r\n"),
    (&["TTL", "dst"], ":-1\r\n"),
    (&["LRANGE", "dst", "0", "-1"], "*6\r\n$2\r\n10\r\n$1\r\n3\r\n$1\r\n2\r\n$3\r\n1.5\r\n$1\r\n1\r\n$2\r\n-5\r\n"),
    (&["SORT", "l", "GET", "h_*->f", "STORE", "dst"], ":6\r\n"),
    (&["LRANGE", "dst", "0", "-1"], "*6\r\n$0\r\n\r\n$1\r\na\r\n$0\r\n\r\n$0\r\n\r\n$1\r\nc\r\n$1\r\nb\r\n"),
    (&["SORT", "l", "LIMIT", "0", "0", "STORE", "dst"], ":0\r\n"),
    (&["EXISTS", "dst"], ":0\r\n"),
    (&["SORT", "nokey"], "*0\r\n"),
    (&["SORT", "nokey", "STORE", "dst2"], ":0\r\n"),
    (&["EXISTS", "dst2"], ":0\r\n"),
    (&["SET", "s1", "x"], "+OK\r\n"),
    (&["SORT", "s1"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["SORT", "s1", "FOO"], "-ERR syntax error\r\n"),
    (&["HSET", "hh", "a", "1"], ":1\r\n"),
    (&["SORT", "hh"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["RPUSH", "bad", "1", "x", "2"], ":3\r\n"),
    (&["SORT", "bad"], "-ERR One or more scores can't be converted into double\r\n"),
    (&["SORT", "bad", "ALPHA"], "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\nx\r\n"),
    (&["SORT", "bad", "STORE", "dst3"], "-ERR One or more scores can't be converted into double\r\n"),
    (&["EXISTS", "dst3"], ":0\r\n"),
    (&["SADD", "si", "5", "-2", "30", "7"], ":4\r\n"),
    (&["SORT", "si"], "*4\r\n$2\r\n-2\r\n$1\r\n5\r\n$1\r\n7\r\n$2\r\n30\r\n"),
    (&["SORT", "si", "BY", "nosort"], "*4\r\n$2\r\n-2\r\n$1\r\n5\r\n$1\r\n7\r\n$2\r\n30\r\n"),
    (&["SORT", "si", "BY", "nosort", "DESC"], "*4\r\n$2\r\n-2\r\n$1\r\n5\r\n$1\r\n7\r\n$2\r\n30\r\n"),
    (&["SORT", "si", "BY", "nosort", "LIMIT", "1", "2"], "*2\r\n$1\r\n5\r\n$1\r\n7\r\n"),
    (&["SORT", "si", "ALPHA"], "*4\r\n$2\r\n-2\r\n$2\r\n30\r\n$1\r\n5\r\n$1\r\n7\r\n"),
    (&["SORT", "si", "BY", "nosort", "STORE", "dst4"], ":4\r\n"),
    (&["LRANGE", "dst4", "0", "-1"], "*4\r\n$2\r\n-2\r\n$2\r\n30\r\n$1\r\n5\r\n$1\r\n7\r\n"),
    (&["SORT", "si", "BY", "nosort", "DESC", "STORE", "dst4"], ":4\r\n"),
    (&["LRANGE", "dst4", "0", "-1"], "*4\r\n$1\r\n7\r\n$1\r\n5\r\n$2\r\n30\r\n$2\r\n-2\r\n"),
    (&["SADD", "ss", "banana", "apple", "cherry", "Apple", "b"], ":5\r\n"),
    (&["SORT", "ss", "ALPHA"], "*5\r\n$5\r\nApple\r\n$5\r\napple\r\n$1\r\nb\r\n$6\r\nbanana\r\n$6\r\ncherry\r\n"),
    (&["SORT", "ss", "ALPHA", "DESC", "LIMIT", "1", "3"], "*3\r\n$6\r\nbanana\r\n$1\r\nb\r\n$5\r\napple\r\n"),
    (&["SORT", "ss"], "-ERR One or more scores can't be converted into double\r\n"),
    (&["SORT", "ss", "BY", "nosort", "STORE", "dst5"], ":5\r\n"),
    (&["LRANGE", "dst5", "0", "-1"], "*5\r\n$5\r\nApple\r\n$5\r\napple\r\n$1\r\nb\r\n$6\r\nbanana\r\n$6\r\ncherry\r\n"),
    (&["ZADD", "z", "3", "c", "1", "a", "2", "b", "2", "bb", "0", "zz"], ":5\r\n"),
    (&["SORT", "z", "BY", "nosort"], "*5\r\n$2\r\nzz\r\n$1\r\na\r\n$1\r\nb\r\n$2\r\nbb\r\n$1\r\nc\r\n"),
    (&["SORT", "z", "BY", "nosort", "DESC"], "*5\r\n$1\r\nc\r\n$2\r\nbb\r\n$1\r\nb\r\n$1\r\na\r\n$2\r\nzz\r\n"),
    (&["SORT", "z", "BY", "nosort", "LIMIT", "1", "2"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["SORT", "z", "BY", "nosort", "DESC", "LIMIT", "1", "3"], "*3\r\n$2\r\nbb\r\n$1\r\nb\r\n$1\r\na\r\n"),
    (&["SORT", "z", "ALPHA"], "*5\r\n$1\r\na\r\n$1\r\nb\r\n$2\r\nbb\r\n$1\r\nc\r\n$2\r\nzz\r\n"),
    (&["SORT", "z"], "-ERR One or more scores can't be converted into double\r\n"),
    (&["SORT", "z", "BY", "nosort", "LIMIT", "9", "2"], "*0\r\n"),
    (&["ZADD", "zn", "1", "30", "2", "4", "3", "-1"], ":3\r\n"),
    (&["SORT", "zn"], "*3\r\n$2\r\n-1\r\n$1\r\n4\r\n$2\r\n30\r\n"),
    (&["SORT", "zn", "DESC", "GET", "#"], "*3\r\n$2\r\n30\r\n$1\r\n4\r\n$2\r\n-1\r\n"),
    (&["RPUSH", "eq", "2", "10", "2.0", "1e1", "02"], ":5\r\n"),
    (&["SORT", "eq"], "*5\r\n$2\r\n02\r\n$1\r\n2\r\n$3\r\n2.0\r\n$2\r\n10\r\n$3\r\n1e1\r\n"),
    (&["SORT", "eq", "DESC"], "*5\r\n$3\r\n1e1\r\n$2\r\n10\r\n$3\r\n2.0\r\n$1\r\n2\r\n$2\r\n02\r\n"),
    (&["RPUSH", "al", "b\0z", "b\0a", "a", "b"], ":4\r\n"),
    (&["SORT", "al", "ALPHA", "STORE", "dst6"], ":4\r\n"),
    (&["LRANGE", "dst6", "0", "-1"], "*4\r\n$1\r\na\r\n$1\r\nb\r\n$3\r\nb\0a\r\n$3\r\nb\0z\r\n"),
    (&["RPUSH", "bw", "1", "2", "3"], ":3\r\n"),
    (&["SET", "k_1", "b"], "+OK\r\n"),
    (&["SET", "k_2", "a"], "+OK\r\n"),
    (&["SORT", "bw", "BY", "k_*", "ALPHA"], "*3\r\n$1\r\n3\r\n$1\r\n2\r\n$1\r\n1\r\n"),
    (&["SORT", "bw", "BY", "k_*", "ALPHA", "DESC"], "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"),
    (&["SORT", "bw", "BY", "k_*"], "-ERR One or more scores can't be converted into double\r\n"),
    (&["SET", "k_3", "7"], "+OK\r\n"),
    (&["SORT", "bw", "BY", "k_*", "ALPHA", "DESC"], "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"),
    (&["SORT", "bw", "BY", "k_*", "ALPHA", "STORE", "dst7"], ":3\r\n"),
    (&["LRANGE", "dst7", "0", "-1"], "*3\r\n$1\r\n3\r\n$1\r\n2\r\n$1\r\n1\r\n"),
    (&["SORT", "bw", "GET", "#\0x"], "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"),
    (&["SORT", "bw", "GET", "k_*\0x"], "*3\r\n$-1\r\n$-1\r\n$-1\r\n"),
    (&["SORT", "bw", "BY", "k\0*"], "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"),
    (&["SORT", "bw", "ASC", "DESC", "ASC"], "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"),
    (&["sort", "bw", "desc", "get", "#", "get", "k_*"], "*6\r\n$1\r\n3\r\n$1\r\n7\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n"),
    (&["SORT", "l", "BY", "w_*", "GET", "#", "STORE", "l"], ":6\r\n"),
    (&["LRANGE", "l", "0", "-1"], "*6\r\n$1\r\n2\r\n$3\r\n1.5\r\n$2\r\n-5\r\n$2\r\n10\r\n$1\r\n1\r\n$1\r\n3\r\n"),
    (&["MULTI"], "+OK\r\n"),
    (&["SORT", "bw", "STORE", "dst8"], "+QUEUED\r\n"),
    (&["SORT", "bw"], "+QUEUED\r\n"),
    (&["EXEC"], "*2\r\n:3\r\n*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"),
    (&["SORT", "al", "ALPHA"], "*4\r\n$1\r\na\r\n$3\r\nb\0z\r\n$3\r\nb\0a\r\n$1\r\nb\r\n"),
    (&["SORT", "al", "ALPHA", "DESC"], "*4\r\n$3\r\nb\0z\r\n$3\r\nb\0a\r\n$1\r\nb\r\n$1\r\na\r\n"),
    (&["SORT", "bw", "BY", "k_*", "ALPHA", "LIMIT", "0", "2"], "*2\r\n$1\r\n3\r\n$1\r\n2\r\n"),
    (&["SORT", "l", "BY", "w_*", "GET", "#", "GET", "nostar", "STORE", "dst9"], ":12\r\n"),
    (&["LRANGE", "dst9", "0", "-1"], "*12\r\n$1\r\n2\r\n$0\r\n\r\n$3\r\n1.5\r\n$0\r\n\r\n$2\r\n-5\r\n$0\r\n\r\n$2\r\n10\r\n$0\r\n\r\n$1\r\n1\r\n$0\r\n\r\n$1\r\n3\r\n$0\r\n\r\n"),
    (&["SET", "s2", "v"], "+OK\r\n"),
    (&["SORT", "l", "STORE", "s2"], ":6\r\n"),
    (&["TYPE", "s2"], "+list\r\n"),
    (&["LRANGE", "s2", "0", "-1"], "*6\r\n$2\r\n-5\r\n$1\r\n1\r\n$3\r\n1.5\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n"),
    (&["SORT", "l", "GET"], "-ERR syntax error\r\n"),
    (&["SORT", "l", "LIMIT", "1", "2", "3"], "-ERR syntax error\r\n"),
    (&["RPUSH", "sp", " "], ":1\r\n"),
    (&["SORT", "sp"], "-ERR One or more scores can't be converted into double\r\n"),
    (&["RPUSH", "nn", "nan"], ":1\r\n"),
    (&["SORT", "nn"], "-ERR One or more scores can't be converted into double\r\n"),
    (&["RPUSH", "x1", "1x"], ":1\r\n"),
    (&["SORT", "x1"], "-ERR One or more scores can't be converted into double\r\n"),
    (&["RPUSH", "odd", "", " 1", "0x10", "inf", "-inf", "3\0z", "-0", "1e2"], ":8\r\n"),
    (&["SORT", "odd"], "*8\r\n$4\r\n-inf\r\n$0\r\n\r\n$2\r\n-0\r\n$2\r\n 1\r\n$3\r\n3\0z\r\n$4\r\n0x10\r\n$3\r\n1e2\r\n$3\r\ninf\r\n"),
    (&["SORT", "odd", "DESC"], "*8\r\n$3\r\ninf\r\n$3\r\n1e2\r\n$4\r\n0x10\r\n$3\r\n3\0z\r\n$2\r\n 1\r\n$2\r\n-0\r\n$0\r\n\r\n$4\r\n-inf\r\n"),
    (&["SORT", "odd", "LIMIT", "2", "3"], "*3\r\n$2\r\n-0\r\n$2\r\n 1\r\n$3\r\n3\0z\r\n"),
    (&["SORT", "si"], "*4\r\n$2\r\n-2\r\n$1\r\n5\r\n$1\r\n7\r\n$2\r\n30\r\n"),
    (&["RPUSH", "big", "1", "1e400"], ":2\r\n"),
    (&["SORT", "big"], "-ERR One or more scores can't be converted into double\r\n"),
    (&["RPUSH", "tiny", "1e-310"], ":1\r\n"),
    (&["SORT", "tiny"], "-ERR One or more scores can't be converted into double\r\n"),
];

/// DUMP and RESTORE's errors, in Redis's order of checks, and redis-server
/// 7.0.15's exact replies (a payload that is no payload: any server's
/// checks refuse it alike).
#[rustfmt::skip]
const RESTORE_ERRORS: &[(&[&str], &str)] = &[
    (&["SET", "k", "v"], "+OK\r\n"),
    (&["DUMP", "nokey"], "$-1\r\n"),
    (&["RESTORE", "k", "0", "garbage"], "-BUSYKEY Target key name already exists.\r\n"),
    (&["RESTORE", "k", "0", "garbage", "REPLACE"], "-ERR DUMP payload version or checksum are wrong\r\n"),
    (&["RESTORE", "n", "0", "garbage"], "-ERR DUMP payload version or checksum are wrong\r\n"),
    (&["RESTORE", "n", "-1", "garbage"], "-ERR Invalid TTL value, must be >= 0\r\n"),
    (&["RESTORE", "n", "x", "garbage"], "-ERR value is not an integer or out of range\r\n"),
    (&["RESTORE", "k", "x", "garbage"], "-BUSYKEY Target key name already exists.\r\n"),
    (&["RESTORE", "k", "-1", "garbage"], "-BUSYKEY Target key name already exists.\r\n"),
    (&["RESTORE", "n", "0", ""], "-ERR DUMP payload version or checksum are wrong\r\n"),
    (&["RESTORE", "n", "0", "0123456789"], "-ERR DUMP payload version or checksum are wrong\r\n"),
    (&["RESTORE", "n", "0", "g", "FOO"], "-ERR syntax error\r\n"),
    (&["RESTORE", "k", "0", "g", "FOO"], "-ERR syntax error\r\n"),
    (&["RESTORE", "n", "0", "g", "IDLETIME"], "-ERR syntax error\r\n"),
    (&["RESTORE", "n", "0", "g", "IDLETIME", "x"], "-ERR value is not an integer or out of range\r\n"),
    (&["RESTORE", "n", "0", "g", "IDLETIME", "-1"], "-ERR Invalid IDLETIME value, must be >= 0\r\n"),
    (&["RESTORE", "n", "0", "g", "IDLETIME", "5"], "-ERR DUMP payload version or checksum are wrong\r\n"),
    (&["RESTORE", "n", "0", "g", "FREQ", "256"], "-ERR Invalid FREQ value, must be >= 0 and <= 255\r\n"),
    (&["RESTORE", "n", "0", "g", "FREQ", "-1"], "-ERR Invalid FREQ value, must be >= 0 and <= 255\r\n"),
    (&["RESTORE", "n", "0", "g", "FREQ", "x"], "-ERR value is not an integer or out of range\r\n"),
    (&["RESTORE", "n", "0", "g", "FREQ", "255"], "-ERR DUMP payload version or checksum are wrong\r\n"),
    (&["RESTORE", "n", "0", "g", "FREQ", "1", "IDLETIME", "1"], "-ERR syntax error\r\n"),
    (&["RESTORE", "n", "0", "g", "IDLETIME", "1", "FREQ", "1"], "-ERR syntax error\r\n"),
    (&["RESTORE", "n", "0", "g", "replace", "absttl", "freq", "0"], "-ERR DUMP payload version or checksum are wrong\r\n"),
    (&["RESTORE", "k", "0", "g", "absttl"], "-BUSYKEY Target key name already exists.\r\n"),
    (&["RESTORE", "n", "0"], "-ERR wrong number of arguments for 'restore' command\r\n"),
    (&["DUMP"], "-ERR wrong number of arguments for 'dump' command\r\n"),
    (&["DUMP", "a", "b"], "-ERR wrong number of arguments for 'dump' command\r\n"),
    (&["RESTORE", "k", "-1", "g", "IDLETIME", "-5"], "-ERR Invalid IDLETIME value, must be >= 0\r\n"),
];

const OK: &str = "+OK\r\n";
const BUSYKEY: &str = "-BUSYKEY Target key name already exists.\r\n";
const BAD_PAYLOAD: &str = "-ERR DUMP payload version or checksum are wrong\r\n";

/// Redis 7.0.15's DUMP of the string "hello": another format, refused.
const REDIS_HELLO: &[u8] = b"\x00\x05hello\n\x00cr\xdfve4 \n";

/// A command of any bytes.
fn wire(args: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    serverlab_proto::resp::client::command(&mut out, args);
    out
}

fn ask(c: &mut Raw, args: &[&[u8]]) -> String {
    c.send(&wire(args));
    text(&c.reply())
}

/// DUMP's payload of `key`.
fn dump(c: &mut Raw, key: &str) -> Vec<u8> {
    c.send(&cmd(&["DUMP", key]));
    let r = c.reply();
    assert!(
        r.starts_with(b"$") && !r.starts_with(b"$-1"),
        "DUMP {key}: {:?}",
        text(&r)
    );
    let body = &r[r.iter().position(|&b| b == b'\n').unwrap() + 1..r.len() - 2];
    body.to_vec()
}

/// An integer reply's number.
fn int_of(c: &mut Raw, args: &[&str]) -> i64 {
    c.send(&cmd(args));
    let r = text(&c.reply());
    r.trim_start_matches(':')
        .trim_end()
        .parse()
        .unwrap_or_else(|_| panic!("{args:?}: {r:?}"))
}

/// `rows` one request at a time, then (from an empty database again)
/// all of them in one write.
fn script(c: &mut Raw, rows: &[(&[&str], &str)], label: &str) {
    for (args, want) in rows {
        c.send(&cmd(args));
        assert_eq!(text(&c.reply()), *want, "{label}: {args:?}");
    }
    c.expect(&cmd(&["FLUSHDB"]), OK);
    let all: Vec<u8> = rows.iter().flat_map(|(args, _)| cmd(args)).collect();
    let replies: String = rows.iter().map(|(_, r)| *r).collect();
    c.expect(&all, &replies);
    c.expect(&cmd(&["FLUSHDB"]), OK);
}

/// The values DUMP and RESTORE carry over, one of each type, and what
/// redis-server 7.0.15 answers about their copies after its own DUMP and
/// RESTORE.
#[rustfmt::skip]
const VALUES: &[(&[&str], &str)] = &[
    (&["RPUSH", "l", "a", "", "b\0\r\n"], ":3\r\n"),
    (&["SADD", "s", "1", "2", "x"], ":3\r\n"),
    (&["ZADD", "z", "0", "m", "0.1", "n", "inf", "o", "5e-324", "p", "-inf", "r"], ":5\r\n"),
    (&["ZADD", "z", "INCR", "-0", "q"], "$2\r\n-0\r\n"),
    (&["HSET", "h", "f", "v", "g", ""], ":2\r\n"),
    (&["SET", "str", "hello"], "+OK\r\n"),
    (&["PEXPIRE", "str", "100000"], ":1\r\n"),
];

const KEYS: [&str; 5] = ["l", "s", "z", "h", "str"];

#[rustfmt::skip]
const COPIES: &[(&[&str], &str)] = &[
    (&["LRANGE", "l2", "0", "-1"], "*3\r\n$1\r\na\r\n$0\r\n\r\n$4\r\nb\0\r\n\r\n"),
    (&["SORT", "s2", "ALPHA"], "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\nx\r\n"),
    (&["SCARD", "s2"], ":3\r\n"),
    (&["ZRANGE", "z2", "0", "-1", "WITHSCORES"], "*12\r\n$1\r\nr\r\n$4\r\n-inf\r\n$1\r\nm\r\n$1\r\n0\r\n$1\r\nq\r\n$1\r\n0\r\n$1\r\np\r\n$23\r\n4.9406564584124654e-324\r\n$1\r\nn\r\n$19\r\n0.10000000000000001\r\n$1\r\no\r\n$3\r\ninf\r\n"),
    (&["ZSCORE", "z2", "q"], "$1\r\n0\r\n"),
    (&["HGET", "h2", "f"], "$1\r\nv\r\n"),
    (&["HGET", "h2", "g"], "$0\r\n\r\n"),
    (&["HLEN", "h2"], ":2\r\n"),
    (&["GET", "str2"], "$5\r\nhello\r\n"),
    (&["TTL", "str2"], ":-1\r\n"),
    (&["TYPE", "l2"], "+list\r\n"),
    (&["TYPE", "s2"], "+set\r\n"),
    (&["TYPE", "z2"], "+zset\r\n"),
    (&["TYPE", "h2"], "+hash\r\n"),
    (&["TYPE", "str2"], "+string\r\n"),
];

/// DUMP and RESTORE of every type: the copies as Redis's, the same
/// payload dumped again from a copy, BUSYKEY without REPLACE, deadlines
/// relative, absolute, past (no key, or the old one deleted) and dropped
/// by a REPLACE without one; payloads changed, cut, or Redis's, refused.
fn round_trips(c: &mut Raw, label: &str) {
    for (args, want) in VALUES {
        c.expect(&cmd(args), want);
    }
    c.expect(&cmd(&["DUMP", "nokey"]), "$-1\r\n");
    let payloads: Vec<Vec<u8>> = KEYS.iter().map(|k| dump(c, k)).collect();
    for (k, p) in KEYS.iter().zip(&payloads) {
        let copy = format!("{k}2");
        let copy = copy.as_bytes();
        assert_eq!(ask(c, &[b"RESTORE", copy, b"0", p]), OK, "{label}: {k}");
        assert_eq!(
            ask(c, &[b"RESTORE", copy, b"0", p]),
            BUSYKEY,
            "{label}: {k}"
        );
        assert_eq!(
            &dump(c, &format!("{k}2")),
            p,
            "{label}: {k}: one payload per value"
        );
    }
    for (args, want) in COPIES {
        c.send(&cmd(args));
        assert_eq!(text(&c.reply()), *want, "{label}: {args:?}");
    }
    let (list, string) = (&payloads[0][..], &payloads[4][..]);
    // Deadlines: relative, absolute, past.
    assert_eq!(ask(c, &[b"RESTORE", b"l2", b"5000", list, b"REPLACE"]), OK);
    let left = int_of(c, &["PTTL", "l2"]);
    assert!((4000..=5000).contains(&left), "{label}: PTTL {left}");
    let at = (now_ms() + 100_000).to_string();
    assert_eq!(
        ask(c, &[b"RESTORE", b"l3", at.as_bytes(), list, b"ABSTTL"]),
        OK
    );
    assert_eq!(int_of(c, &["PEXPIRETIME", "l3"]).to_string(), at, "{label}");
    assert_eq!(ask(c, &[b"RESTORE", b"l4", b"1", list, b"ABSTTL"]), OK);
    c.expect(&cmd(&["EXISTS", "l4"]), ":0\r\n");
    assert_eq!(
        ask(c, &[b"RESTORE", b"l3", b"1", list, b"ABSTTL", b"REPLACE"]),
        OK
    );
    c.expect(&cmd(&["EXISTS", "l3"]), ":0\r\n");
    // A TTL so large that Redis's sum wraps to a deadline long past.
    assert_eq!(
        ask(c, &[b"RESTORE", b"l4", b"9223372036854775807", list]),
        OK
    );
    c.expect(&cmd(&["EXISTS", "l4"]), ":0\r\n");
    // REPLACE without a TTL drops the old key's deadline, and its type.
    c.expect(&cmd(&["SET", "t", "v", "EX", "100"]), OK);
    assert_eq!(
        ask(
            c,
            &[b"RESTORE", b"t", b"0", list, b"REPLACE", b"IDLETIME", b"5"]
        ),
        OK
    );
    c.expect(&cmd(&["TTL", "t"]), ":-1\r\n");
    c.expect(&cmd(&["TYPE", "t"]), "+list\r\n");
    // Refused payloads.
    let mut flipped = string.to_vec();
    *flipped.last_mut().unwrap() ^= 1;
    let cut = &string[..string.len() - 1];
    let mut body = string.to_vec();
    body[2] ^= 0x20;
    for bad in [&flipped[..], cut, &body, REDIS_HELLO, b""] {
        assert_eq!(
            ask(c, &[b"RESTORE", b"n", b"0", bad]),
            BAD_PAYLOAD,
            "{label}: {bad:?}"
        );
    }
    c.expect(&cmd(&["EXISTS", "n"]), ":0\r\n");
    c.expect(&cmd(&["FLUSHDB"]), OK);
}

/// A pop blocked on SORT … STORE's destination gets the list's head.
fn store_wakes_a_blocked_pop(server: &ServerProc, c: &mut Raw) {
    let mut waiting = Raw::connect(server.addr);
    waiting.send(&cmd(&["BLPOP", "dst", "5"]));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let info = c.bulk(&cmd(&["INFO", "clients"]));
        if info.contains("blocked_clients:1") {
            break;
        }
        assert!(Instant::now() < deadline, "the BLPOP never blocked: {info}");
        std::thread::sleep(Duration::from_millis(5));
    }
    c.expect(
        &cmd(&["RPUSH", "src", "hello", "hola", "aguacate", "konichiwa"]),
        ":4\r\n",
    );
    c.expect(&cmd(&["SORT", "src", "ALPHA", "STORE", "dst"]), ":4\r\n");
    waiting.expect(&[], "*2\r\n$3\r\ndst\r\n$8\r\naguacate\r\n");
    c.expect(
        &cmd(&["LRANGE", "dst", "0", "-1"]),
        "*3\r\n$5\r\nhello\r\n$4\r\nhola\r\n$9\r\nkonichiwa\r\n",
    );
    c.expect(&cmd(&["FLUSHDB"]), OK);
}

fn every_form(strategy: &str) {
    let server = ServerProc::start(
        "resp",
        &with_threads(strategy, "2", &["--strategy", strategy]),
    );
    let mut c = Raw::connect(server.addr);
    script(&mut c, SORTS, strategy);
    script(&mut c, RESTORE_ERRORS, strategy);
    round_trips(&mut c, strategy);
    store_wakes_a_blocked_pop(&server, &mut c);
    let (status, out) = server.stop();
    assert!(status.success(), "{strategy}: {out}");
}

per_strategy!(resp_sort_dump_restore, every_form);

/// What the keys of databases 0 and 2 hold and their deadlines, to
/// compare.
fn state(addr: std::net::SocketAddr) -> Vec<String> {
    let mut c = Raw::connect(addr);
    let mut seen = Vec::new();
    for db in ["0", "2"] {
        c.expect(&cmd(&["SELECT", db]), OK);
        c.send(&cmd(&["KEYS", "*"]));
        let keys = text(&c.reply());
        let mut keys: Vec<String> = keys
            .split("\r\n")
            .skip(2)
            .step_by(2)
            .map(str::to_string)
            .filter(|k| !k.is_empty())
            .collect();
        keys.sort();
        for k in keys {
            let d = dump(&mut c, &k);
            let when = int_of(&mut c, &["PEXPIRETIME", &k]);
            seen.push(format!("{db}/{k} {d:?} {when}"));
        }
    }
    seen
}

/// A durable server killed after SORT … STORE (over a key with a
/// deadline, and one that deletes its destination) and RESTOREs (with a
/// relative deadline, logged as an absolute one; REPLACE over a key;
/// one in another database) comes back with the same keys, values and
/// deadlines.
#[test]
fn durable_sort_store_and_restore_come_back_identical() {
    let dir = tempfile::tempdir().unwrap();
    let args = logged_always(dir.path());
    let server = ServerProc::start("resp", &args);
    let mut c = Raw::connect(server.addr);
    for (args, want) in [
        (&["RPUSH", "l", "3", "1", "2"][..], ":3\r\n"),
        (&["MSET", "w_1", "c", "w_2", "b", "w_3", "a"], OK),
        (&["SET", "dst", "old", "EX", "1000"], OK),
        (
            &[
                "SORT", "l", "BY", "w_*", "ALPHA", "GET", "#", "GET", "w_*", "STORE", "dst",
            ],
            ":6\r\n",
        ),
        (&["SADD", "s", "b", "a", "c"], ":3\r\n"),
        (
            &["SORT", "s", "BY", "nosort", "DESC", "STORE", "fromset"],
            ":3\r\n",
        ),
        (&["RPUSH", "gone", "x"], ":1\r\n"),
        (&["SORT", "nokey", "STORE", "gone"], ":0\r\n"),
        (&["ZADD", "z", "1.5", "a", "-0.25", "b"], ":2\r\n"),
        (&["HSET", "h", "f", "v"], ":1\r\n"),
    ] {
        c.expect(&cmd(args), want);
    }
    let (z, h, l) = (dump(&mut c, "z"), dump(&mut c, "h"), dump(&mut c, "l"));
    assert_eq!(ask(&mut c, &[b"RESTORE", b"z2", b"100000", &z]), OK);
    assert_eq!(ask(&mut c, &[b"RESTORE", b"h", b"0", &l, b"REPLACE"]), OK);
    c.expect(&cmd(&["SET", "expiring", "v", "EX", "1000"]), OK);
    assert_eq!(
        ask(
            &mut c,
            &[b"RESTORE", b"expiring", b"1", &h, b"ABSTTL", b"REPLACE"]
        ),
        OK
    );
    c.expect(&cmd(&["SELECT", "2"]), OK);
    assert_eq!(ask(&mut c, &[b"RESTORE", b"h", b"0", &h]), OK);
    c.expect(&cmd(&["SELECT", "0"]), OK);
    c.expect(&cmd(&["TTL", "dst"]), ":-1\r\n");
    c.expect(
        &cmd(&["LRANGE", "dst", "0", "-1"]),
        "*6\r\n$1\r\n3\r\n$1\r\na\r\n$1\r\n2\r\n$1\r\nb\r\n$1\r\n1\r\n$1\r\nc\r\n",
    );
    c.expect(
        &cmd(&["LRANGE", "fromset", "0", "-1"]),
        "*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n",
    );
    let before = state(server.addr);
    assert_eq!(before.len(), 11, "{before:?}");
    drop(server); // SIGKILL
    let again = ServerProc::start("resp", &args);
    assert_eq!(state(again.addr), before);
}

/// SORT … STORE with GET patterns that name missing keys: each element
/// the request asks for counts against --max-query, found or not (an
/// empty string stored for nothing), so a STORE whose list the request
/// sizes past the bound is refused before it is made, and nothing is
/// stored; one that fits stores as before.
#[test]
fn sort_store_getting_missing_keys_is_bounded() {
    let args = ["--max-query", "64KiB", "--max-bulk", "16KiB"];
    let server = ServerProc::start("resp", &args);
    let mut c = Raw::connect(server.addr);
    let mut push = vec!["RPUSH".to_string(), "l".to_string()];
    push.extend((0..2000).map(|i| i.to_string()));
    let push: Vec<&str> = push.iter().map(|s| &s[..]).collect();
    c.expect(&cmd(&push), ":2000\r\n");
    // 2000 elements × 6 patterns: 12000 elements, past 65536 / 6.
    let mut sort = vec!["SORT", "l", "BY", "nosort"];
    for _ in 0..6 {
        sort.extend(["GET", "missing:*"]);
    }
    sort.extend(["STORE", "dst"]);
    c.send(&cmd(&sort));
    let too_large = "-ERR the reply would pass --max-query (65536 bytes)\r\n";
    assert_eq!(text(&c.reply()), too_large);
    c.expect(&cmd(&["EXISTS", "dst"]), ":0\r\n");
    let fits = [
        "SORT",
        "l",
        "BY",
        "nosort",
        "GET",
        "missing:*",
        "STORE",
        "dst",
    ];
    c.expect(&cmd(&fits), ":2000\r\n");
    c.expect(&cmd(&["LINDEX", "dst", "0"]), "$0\r\n\r\n");
    let (status, out) = server.stop();
    assert!(status.success(), "{out}");
}
