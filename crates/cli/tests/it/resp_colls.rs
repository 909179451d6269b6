//! Sets, hashes and sorted sets (docs/protocols/resp.md) over real
//! sockets: every command's replies byte for byte as redis-server 7.0.15
//! gives them (the script below was answered by it), one at a time and
//! pipelined, under every strategy and every store; WRONGTYPE both ways
//! (a fast-path command on a collection, a collection command on a string
//! or a list); SPOP and SRANDMEMBER's picks; a durable server killed and
//! restarted (its log replayed, and compacted) coming back with the same
//! collections; and redis-benchmark's default run with no error.

use crate::resp::{cmd, resp_stores, Raw};
use crate::support::*;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const WRONGTYPE: &str = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";

/// Requests and redis-server's exact replies, in order, from an empty
/// database: what can be told without chance (SPOP and SRANDMEMBER of a
/// one-member set, or of a whole set: ascending for integers, as Redis's
/// intset answers).
#[rustfmt::skip]
pub(crate) const SCRIPT: &[(&[&str], &str)] = &[
        (&["SADD", "s", "a", "b", "c"], ":3\r\n"),
        (&["SADD", "s", "a", "d"], ":1\r\n"),
        (&["SREM", "s", "a", "x"], ":1\r\n"),
        (&["SREM", "nos", "a"], ":0\r\n"),
        (&["SISMEMBER", "s", "b"], ":1\r\n"),
        (&["SISMEMBER", "s", "z"], ":0\r\n"),
        (&["SISMEMBER", "nos", "z"], ":0\r\n"),
        (&["SCARD", "s"], ":3\r\n"),
        (&["SCARD", "nos"], ":0\r\n"),
        (&["SADD", "ints", "3", "1", "2", "-5", "10"], ":5\r\n"),
        (&["SMEMBERS", "ints"], "*5\r\n$2\r\n-5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n"),
        (&["SMEMBERS", "nos"], "*0\r\n"),
        (&["SPOP", "nos"], "$-1\r\n"),
        (&["SPOP", "nos", "2"], "*0\r\n"),
        (&["SPOP", "s", "-1"], "-ERR value is out of range, must be positive\r\n"),
        (&["SPOP", "s", "abc"], "-ERR value is out of range, must be positive\r\n"),
        (&["SPOP", "s", "1", "2"], "-ERR syntax error\r\n"),
        (&["SPOP", "s", "0"], "*0\r\n"),
        (&["SADD", "one", "x"], ":1\r\n"),
        (&["SMEMBERS", "one"], "*1\r\n$1\r\nx\r\n"),
        (&["SPOP", "one"], "$1\r\nx\r\n"),
        (&["SPOP", "one"], "$-1\r\n"),
        (&["EXISTS", "one"], ":0\r\n"),
        (&["SADD", "ints2", "5", "4", "3"], ":3\r\n"),
        (&["SPOP", "ints2", "10"], "*3\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n"),
        (&["EXISTS", "ints2"], ":0\r\n"),
        (&["SADD", "ints2", "7"], ":1\r\n"),
        (&["SRANDMEMBER", "ints2", "-3"], "*3\r\n$1\r\n7\r\n$1\r\n7\r\n$1\r\n7\r\n"),
        (&["SRANDMEMBER", "ints2", "1"], "*1\r\n$1\r\n7\r\n"),
        (&["SRANDMEMBER", "ints2"], "$1\r\n7\r\n"),
        (&["SRANDMEMBER", "nos"], "$-1\r\n"),
        (&["SRANDMEMBER", "nos", "5"], "*0\r\n"),
        (&["SRANDMEMBER", "nos", "-5"], "*0\r\n"),
        (&["SRANDMEMBER", "ints", "0"], "*0\r\n"),
        (&["SRANDMEMBER", "ints", "100"], "*5\r\n$2\r\n-5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n"),
        (&["SRANDMEMBER", "ints", "-9223372036854775808"], "-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"),
        (&["SRANDMEMBER", "ints", "abc"], "-ERR value is not an integer or out of range\r\n"),
        (&["SRANDMEMBER", "ints", "1", "2"], "-ERR syntax error\r\n"),
        (&["HSET", "h", "f1", "v1"], ":1\r\n"),
        (&["HSET", "h", "f1", "v2", "f2", "v3"], ":1\r\n"),
        (&["HSET", "h", "f3"], "-ERR wrong number of arguments for 'hset' command\r\n"),
        (&["HMSET", "h", "f3"], "-ERR wrong number of arguments for 'hmset' command\r\n"),
        (&["HMSET", "h", "f4", "v4"], "+OK\r\n"),
        (&["HGET", "h", "f1"], "$2\r\nv2\r\n"),
        (&["HGET", "h", "nof"], "$-1\r\n"),
        (&["HGET", "noh", "f"], "$-1\r\n"),
        (&["HMGET", "h", "f1", "nof", "f4"], "*3\r\n$2\r\nv2\r\n$-1\r\n$2\r\nv4\r\n"),
        (&["HMGET", "noh", "a", "b"], "*2\r\n$-1\r\n$-1\r\n"),
        (&["HDEL", "h", "f4", "nof"], ":1\r\n"),
        (&["HDEL", "noh", "a"], ":0\r\n"),
        (&["HLEN", "h"], ":2\r\n"),
        (&["HLEN", "noh"], ":0\r\n"),
        (&["HEXISTS", "h", "f1"], ":1\r\n"),
        (&["HEXISTS", "h", "zz"], ":0\r\n"),
        (&["HEXISTS", "noh", "zz"], ":0\r\n"),
        (&["HSET", "one1", "f", "v"], ":1\r\n"),
        (&["HGETALL", "one1"], "*2\r\n$1\r\nf\r\n$1\r\nv\r\n"),
        (&["HGETALL", "noh"], "*0\r\n"),
        (&["HINCRBY", "h", "n", "5"], ":5\r\n"),
        (&["HINCRBY", "h", "n", "-15"], ":-10\r\n"),
        (&["HINCRBY", "h", "f1", "1"], "-ERR hash value is not an integer\r\n"),
        (&["HINCRBY", "h", "n", "abc"], "-ERR value is not an integer or out of range\r\n"),
        (&["HINCRBY", "h", "n", "9223372036854775807"], ":9223372036854775797\r\n"),
        (&["HINCRBY", "h", "n", "9223372036854775806"], "-ERR increment or decrement would overflow\r\n"),
        (&["HINCRBY", "h", "n", "1"], ":9223372036854775798\r\n"),
        (&["HINCRBY", "h", "n", "1"], ":9223372036854775799\r\n"),
        (&["HINCRBY", "h", "m", "-9223372036854775808"], ":-9223372036854775808\r\n"),
        (&["HINCRBY", "h", "m", "-1"], "-ERR increment or decrement would overflow\r\n"),
        (&["HSET", "h", "sp", " 1"], ":1\r\n"),
        (&["HINCRBY", "h", "sp", "1"], "-ERR hash value is not an integer\r\n"),
        (&["HDEL", "h", "f1", "f2", "f3", "n", "m", "sp"], ":5\r\n"),
        (&["EXISTS", "h"], ":0\r\n"),
        (&["ZADD", "z", "1.5", "a"], ":1\r\n"),
        (&["ZSCORE", "z", "a"], "$3\r\n1.5\r\n"),
        (&["ZADD", "z", "1e20", "b", "inf", "c", "-inf", "d", "0.1", "e", "0", "f", "123456789", "g", "1e-5", "h", "1e17", "i"], ":8\r\n"),
        (&["ZSCORE", "z", "b"], "$5\r\n1e+20\r\n"),
        (&["ZSCORE", "z", "c"], "$3\r\ninf\r\n"),
        (&["ZSCORE", "z", "d"], "$4\r\n-inf\r\n"),
        (&["ZSCORE", "z", "e"], "$19\r\n0.10000000000000001\r\n"),
        (&["ZSCORE", "z", "h"], "$22\r\n1.0000000000000001e-05\r\n"),
        (&["ZSCORE", "z", "i"], "$5\r\n1e+17\r\n"),
        (&["ZSCORE", "z", "nom"], "$-1\r\n"),
        (&["ZSCORE", "noz", "a"], "$-1\r\n"),
        (&["ZRANGE", "z", "0", "-1", "WITHSCORES"], "*18\r\n$1\r\nd\r\n$4\r\n-inf\r\n$1\r\nf\r\n$1\r\n0\r\n$1\r\nh\r\n$22\r\n1.0000000000000001e-05\r\n$1\r\ne\r\n$19\r\n0.10000000000000001\r\n$1\r\na\r\n$3\r\n1.5\r\n$1\r\ng\r\n$9\r\n123456789\r\n$1\r\ni\r\n$5\r\n1e+17\r\n$1\r\nb\r\n$5\r\n1e+20\r\n$1\r\nc\r\n$3\r\ninf\r\n"),
        (&["ZRANGE", "z", "0", "-1"], "*9\r\n$1\r\nd\r\n$1\r\nf\r\n$1\r\nh\r\n$1\r\ne\r\n$1\r\na\r\n$1\r\ng\r\n$1\r\ni\r\n$1\r\nb\r\n$1\r\nc\r\n"),
        (&["ZRANGE", "z", "0", "2", "REV", "WITHSCORES"], "*6\r\n$1\r\nc\r\n$3\r\ninf\r\n$1\r\nb\r\n$5\r\n1e+20\r\n$1\r\ni\r\n$5\r\n1e+17\r\n"),
        (&["ZRANGE", "z", "-3", "-1", "withscores"], "*6\r\n$1\r\ni\r\n$5\r\n1e+17\r\n$1\r\nb\r\n$5\r\n1e+20\r\n$1\r\nc\r\n$3\r\ninf\r\n"),
        (&["ZRANGE", "z", "5", "1"], "*0\r\n"),
        (&["ZRANGE", "z", "100", "200"], "*0\r\n"),
        (&["ZRANGE", "z", "a", "1"], "-ERR value is not an integer or out of range\r\n"),
        (&["ZRANGE", "noz", "0", "-1"], "*0\r\n"),
        (&["ZRANGE", "z", "0", "-1", "LIMIT", "0", "2"], "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX\r\n"),
        (&["ZRANGE", "z", "0", "-1", "BYLEX", "WITHSCORES"], "-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n"),
        (&["ZRANGE", "z", "0", "-1", "foo"], "-ERR syntax error\r\n"),
        (&["ZRANGE", "z", "0", "-1", "REV", "REV"], "-ERR syntax error\r\n"),
        (&["ZRANGE", "z", "0", "-1", "BYSCORE", "BYLEX"], "-ERR syntax error\r\n"),
        (&["ZRANGE", "z", "(0", "(1e20", "BYSCORE", "WITHSCORES"], "*10\r\n$1\r\nh\r\n$22\r\n1.0000000000000001e-05\r\n$1\r\ne\r\n$19\r\n0.10000000000000001\r\n$1\r\na\r\n$3\r\n1.5\r\n$1\r\ng\r\n$9\r\n123456789\r\n$1\r\ni\r\n$5\r\n1e+17\r\n"),
        (&["ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "1", "2", "WITHSCORES"], "*4\r\n$1\r\nb\r\n$5\r\n1e+20\r\n$1\r\ni\r\n$5\r\n1e+17\r\n"),
        (&["ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "2", "3"], "*3\r\n$1\r\nh\r\n$1\r\ne\r\n$1\r\na\r\n"),
        (&["ZRANGE", "z", "x", "1", "BYSCORE"], "-ERR min or max is not a float\r\n"),
        (&["ZADD", "lex", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e"], ":5\r\n"),
        (&["ZRANGE", "lex", "[b", "(d", "BYLEX"], "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"),
        (&["ZRANGE", "lex", "+", "-", "BYLEX", "REV", "LIMIT", "1", "2"], "*2\r\n$1\r\nd\r\n$1\r\nc\r\n"),
        (&["ZRANGE", "lex", "a", "+", "BYLEX"], "-ERR min or max not valid string range item\r\n"),
        (&["ZADD", "z2", "nan", "a"], "-ERR value is not a valid float\r\n"),
        (&["ZADD", "z2", "abc", "a"], "-ERR value is not a valid float\r\n"),
        (&["ZADD", "z2", "1e400", "a"], "-ERR value is not a valid float\r\n"),
        (&["ZADD", "z2", "1"], "-ERR wrong number of arguments for 'zadd' command\r\n"),
        (&["ZADD", "z2", "1", "a", "2"], "-ERR syntax error\r\n"),
        (&["ZADD", "z2", "NX", "XX", "1", "a"], "-ERR XX and NX options at the same time are not compatible\r\n"),
        (&["ZADD", "z2", "GT", "LT", "1", "a"], "-ERR GT, LT, and/or NX options at the same time are not compatible\r\n"),
        (&["ZADD", "z2", "INCR", "1", "a", "2", "b"], "-ERR INCR option supports a single increment-element pair\r\n"),
        (&["ZADD", "z2", "NX", "5", "a", "1", "b"], ":2\r\n"),
        (&["ZADD", "z2", "XX", "6", "a", "1", "c"], ":0\r\n"),
        (&["ZADD", "z2", "CH", "7", "a", "1", "b", "9", "d"], ":2\r\n"),
        (&["ZADD", "z2", "GT", "CH", "1", "a", "10", "b"], ":1\r\n"),
        (&["ZADD", "z2", "LT", "CH", "100", "a", "0", "b"], ":1\r\n"),
        (&["ZRANGE", "z2", "0", "-1", "WITHSCORES"], "*6\r\n$1\r\nb\r\n$1\r\n0\r\n$1\r\na\r\n$1\r\n7\r\n$1\r\nd\r\n$1\r\n9\r\n"),
        (&["ZADD", "z2", "INCR", "2.5", "a"], "$3\r\n9.5\r\n"),
        (&["ZADD", "z2", "INCR", "NX", "2.5", "a"], "$-1\r\n"),
        (&["ZADD", "z2", "INCR", "inf", "a"], "$3\r\ninf\r\n"),
        (&["ZADD", "z2", "INCR", "-inf", "a"], "-ERR resulting score is not a number (NaN)\r\n"),
        (&["ZADD", "z2", "XX", "1", "nosuch"], ":0\r\n"),
        (&["ZADD", "noz3", "XX", "1", "a"], ":0\r\n"),
        (&["EXISTS", "noz3"], ":0\r\n"),
        (&["ZADD", "mz", "-0", "a"], ":1\r\n"),
        (&["ZSCORE", "mz", "a"], "$1\r\n0\r\n"),
        (&["ZADD", "mz", "INCR", "-0", "b"], "$2\r\n-0\r\n"),
        (&["ZREM", "z2", "a", "nosuch"], ":1\r\n"),
        (&["ZREM", "noz", "a"], ":0\r\n"),
        (&["ZCARD", "z2"], ":2\r\n"),
        (&["ZCARD", "noz"], ":0\r\n"),
        (&["ZPOPMIN", "z2"], "*2\r\n$1\r\nb\r\n$1\r\n0\r\n"),
        (&["ZPOPMIN", "z2", "2"], "*2\r\n$1\r\nd\r\n$1\r\n9\r\n"),
        (&["ZPOPMIN", "z2", "0"], "*0\r\n"),
        (&["ZPOPMIN", "z2", "-1"], "-ERR value is out of range, must be positive\r\n"),
        (&["ZPOPMIN", "z2", "1", "2"], "-ERR syntax error\r\n"),
        (&["ZPOPMIN", "noz"], "*0\r\n"),
        (&["ZPOPMIN", "z2", "100"], "*0\r\n"),
        (&["EXISTS", "z2"], ":0\r\n"),
        (&["SET", "str", "v"], "+OK\r\n"),
        (&["SADD", "str", "a"], WRONGTYPE),
        (&["SREM", "str", "a"], WRONGTYPE),
        (&["SISMEMBER", "str", "a"], WRONGTYPE),
        (&["SMEMBERS", "str"], WRONGTYPE),
        (&["SCARD", "str"], WRONGTYPE),
        (&["SPOP", "str"], WRONGTYPE),
        (&["SRANDMEMBER", "str"], WRONGTYPE),
        (&["HSET", "str", "f", "v"], WRONGTYPE),
        (&["HGET", "str", "f"], WRONGTYPE),
        (&["HGETALL", "str"], WRONGTYPE),
        (&["HINCRBY", "str", "f", "1"], WRONGTYPE),
        (&["ZADD", "str", "1", "a"], WRONGTYPE),
        (&["ZSCORE", "str", "a"], WRONGTYPE),
        (&["ZRANGE", "str", "0", "1"], WRONGTYPE),
        (&["ZPOPMIN", "str"], WRONGTYPE),
        (&["GET", "str"], "$1\r\nv\r\n"),
        (&["GET", "s"], WRONGTYPE),
        (&["GET", "one1"], WRONGTYPE),
        (&["GET", "z"], WRONGTYPE),
        (&["LPUSH", "s", "x"], WRONGTYPE),
        (&["LPUSH", "one1", "x"], WRONGTYPE),
        (&["LPUSH", "z", "x"], WRONGTYPE),
        (&["LLEN", "one1"], WRONGTYPE),
        (&["INCR", "s"], WRONGTYPE),
        (&["HSET", "s", "f", "v"], WRONGTYPE),
        (&["ZADD", "one1", "1", "m"], WRONGTYPE),
        (&["SADD", "z", "m"], WRONGTYPE),
        (&["SCARD", "s"], ":3\r\n"),
        // SMOVE, SMISMEMBER and the set algebra.
        (&["SADD", "m1", "a", "b", "c"], ":3\r\n"),
        (&["SADD", "m2", "c", "d"], ":2\r\n"),
        (&["SMOVE", "m1", "m2", "a"], ":1\r\n"),
        (&["SMOVE", "m1", "m2", "c"], ":1\r\n"),
        (&["SMOVE", "m1", "m2", "zz"], ":0\r\n"),
        (&["SMOVE", "nos", "m2", "a"], ":0\r\n"),
        (&["SMOVE", "m1", "m1", "b"], ":1\r\n"),
        (&["SMOVE", "m1", "m1", "zz"], ":0\r\n"),
        (&["SMOVE", "m1", "fresh", "b"], ":1\r\n"),
        (&["EXISTS", "m1"], ":0\r\n"),
        (&["SMEMBERS", "fresh"], "*1\r\n$1\r\nb\r\n"),
        (&["SET", "str2", "v"], "+OK\r\n"),
        (&["SMOVE", "str2", "m2", "a"], WRONGTYPE),
        (&["SMOVE", "m2", "str2", "a"], WRONGTYPE),
        (&["SMOVE", "nos", "str2", "a"], ":0\r\n"),
        (&["SMOVE", "m2", "str2", "zz"], WRONGTYPE),
        (&["SMOVE", "m2", "m2"], "-ERR wrong number of arguments for 'smove' command\r\n"),
        (&["SMISMEMBER", "m2", "a", "zz", "d"], "*3\r\n:1\r\n:0\r\n:1\r\n"),
        (&["SMISMEMBER", "nos", "a", "b"], "*2\r\n:0\r\n:0\r\n"),
        (&["SMISMEMBER", "str2", "a"], WRONGTYPE),
        (&["SMISMEMBER", "m2"], "-ERR wrong number of arguments for 'smismember' command\r\n"),
        (&["SADD", "i1", "1", "2", "3", "4"], ":4\r\n"),
        (&["SADD", "i2", "3", "4", "5"], ":3\r\n"),
        (&["SINTER", "i1", "i2"], "*2\r\n$1\r\n3\r\n$1\r\n4\r\n"),
        (&["SINTER", "i1", "nos"], "*0\r\n"),
        (&["SINTER", "i1", "nos", "str2"], WRONGTYPE),
        (&["SINTER", "i1"], "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n"),
        (&["SUNION", "i1", "i2", "nos"], "*5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n"),
        (&["SUNION", "nos"], "*0\r\n"),
        (&["SUNION", "i1", "str2"], WRONGTYPE),
        (&["SDIFF", "i1", "i2"], "*2\r\n$1\r\n1\r\n$1\r\n2\r\n"),
        (&["SDIFF", "i1", "nos"], "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n"),
        (&["SDIFF", "nos", "i1"], "*0\r\n"),
        (&["SDIFF", "i1", "i1"], "*0\r\n"),
        (&["SDIFF", "i2", "str2"], WRONGTYPE),
        (&["SINTERCARD", "2", "i1", "i2"], ":2\r\n"),
        (&["SINTERCARD", "2", "i1", "i2", "LIMIT", "1"], ":1\r\n"),
        (&["SINTERCARD", "2", "i1", "i2", "LIMIT", "0"], ":2\r\n"),
        (&["SINTERCARD", "1", "i1", "i2"], "-ERR syntax error\r\n"),
        (&["SINTERCARD", "2", "i1", "nos"], ":0\r\n"),
        (&["SINTERCARD", "0", "i1"], "-ERR numkeys should be greater than 0\r\n"),
        (&["SINTERCARD", "-1", "i1"], "-ERR numkeys should be greater than 0\r\n"),
        (&["SINTERCARD", "abc", "i1"], "-ERR numkeys should be greater than 0\r\n"),
        (&["SINTERCARD", "3", "i1", "i2"], "-ERR Number of keys can't be greater than number of args\r\n"),
        (&["SINTERCARD", "1", "i1", "LIMIT"], "-ERR syntax error\r\n"),
        (&["SINTERCARD", "1", "i1", "LIMIT", "-1"], "-ERR LIMIT can't be negative\r\n"),
        (&["SINTERCARD", "1", "i1", "LIMIT", "x"], "-ERR LIMIT can't be negative\r\n"),
        (&["SINTERCARD", "1", "i1", "FOO", "1"], "-ERR syntax error\r\n"),
        (&["SINTERCARD", "2", "i1", "str2"], WRONGTYPE),
        (&["SINTERCARD", "2", "nos", "str2"], WRONGTYPE),
        (&["SINTERSTORE", "dst", "i1", "i2"], ":2\r\n"),
        (&["SMEMBERS", "dst"], "*2\r\n$1\r\n3\r\n$1\r\n4\r\n"),
        (&["SUNIONSTORE", "dst", "i1", "i2"], ":5\r\n"),
        (&["SMEMBERS", "dst"], "*5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n"),
        (&["SDIFFSTORE", "dst", "i1", "i2"], ":2\r\n"),
        (&["SMEMBERS", "dst"], "*2\r\n$1\r\n1\r\n$1\r\n2\r\n"),
        (&["SINTERSTORE", "dst", "i1", "nos"], ":0\r\n"),
        (&["EXISTS", "dst"], ":0\r\n"),
        (&["SINTERSTORE", "dst", "i1", "nos"], ":0\r\n"),
        (&["SET", "dst", "x"], "+OK\r\n"),
        (&["EXPIRE", "dst", "100"], ":1\r\n"),
        (&["SUNIONSTORE", "dst", "i2"], ":3\r\n"),
        (&["TTL", "dst"], ":-1\r\n"),
        (&["TYPE", "dst"], "+set\r\n"),
        (&["SUNIONSTORE", "dst", "str2"], WRONGTYPE),
        (&["SDIFFSTORE", "dst", "dst", "i1"], ":1\r\n"),
        (&["SMEMBERS", "dst"], "*1\r\n$1\r\n5\r\n"),
        (&["SDIFFSTORE", "i1", "i1", "i2"], ":2\r\n"),
        (&["SMEMBERS", "i1"], "*2\r\n$1\r\n1\r\n$1\r\n2\r\n"),
        (&["SINTERSTORE", "i1"], "-ERR wrong number of arguments for 'sinterstore' command\r\n"),
        (&["SINTER"], "-ERR wrong number of arguments for 'sinter' command\r\n"),        // HSETNX, HSTRLEN, HINCRBYFLOAT, HKEYS, HVALS, HRANDFIELD (of a
        // one-field hash), MEMORY USAGE's errors.
        (&["HSET", "hh", "a", "1", "b", "hello"], ":2\r\n"),
        (&["HSETNX", "hh", "a", "9"], ":0\r\n"),
        (&["HSETNX", "hh", "c", "3"], ":1\r\n"),
        (&["HSETNX", "noh2", "f", "v"], ":1\r\n"),
        (&["HGET", "noh2", "f"], "$1\r\nv\r\n"),
        (&["HSTRLEN", "hh", "b"], ":5\r\n"),
        (&["HSTRLEN", "hh", "zz"], ":0\r\n"),
        (&["HSTRLEN", "noh", "zz"], ":0\r\n"),
        (&["HINCRBYFLOAT", "hh", "a", "1.5"], "$3\r\n2.5\r\n"),
        (&["HINCRBYFLOAT", "hh", "a", "0.1"], "$3\r\n2.6\r\n"),
        (&["HINCRBYFLOAT", "hh", "new", "1e3"], "$4\r\n1000\r\n"),
        (&["HINCRBYFLOAT", "hh", "b", "1"], "-ERR hash value is not a float\r\n"),
        (&["HINCRBYFLOAT", "hh", "a", "x"], "-ERR value is not a valid float\r\n"),
        (&["HINCRBYFLOAT", "hh", "a", "+inf"], "-ERR value is NaN or Infinity\r\n"),
        (&["HINCRBYFLOAT", "noh", "a", "inf"], "-ERR value is NaN or Infinity\r\n"),
        (&["HINCRBYFLOAT", "hh", "a", "nan"], "-ERR value is not a valid float\r\n"),
        (&["SET", "hstr", "v"], "+OK\r\n"),
        (&["HINCRBYFLOAT", "hstr", "a", "1"], WRONGTYPE),
        (&["HINCRBYFLOAT", "hstr", "a", "x"], "-ERR value is not a valid float\r\n"),
        (&["HSETNX", "hstr", "a", "1"], WRONGTYPE),
        (&["HSTRLEN", "hstr", "a"], WRONGTYPE),
        (&["HKEYS", "hstr"], WRONGTYPE),
        (&["HVALS", "hstr"], WRONGTYPE),
        (&["HRANDFIELD", "hstr"], WRONGTYPE),
        (&["HRANDFIELD", "hstr", "1"], WRONGTYPE),
        (&["HRANDFIELD", "hstr", "x"], "-ERR value is not an integer or out of range\r\n"),
        (&["HSET", "h1", "f", "v"], ":1\r\n"),
        (&["HKEYS", "h1"], "*1\r\n$1\r\nf\r\n"),
        (&["HVALS", "h1"], "*1\r\n$1\r\nv\r\n"),
        (&["HKEYS", "noh"], "*0\r\n"),
        (&["HVALS", "noh"], "*0\r\n"),
        (&["HRANDFIELD", "h1"], "$1\r\nf\r\n"),
        (&["HRANDFIELD", "noh"], "$-1\r\n"),
        (&["HRANDFIELD", "h1", "1"], "*1\r\n$1\r\nf\r\n"),
        (&["HRANDFIELD", "h1", "5", "WITHVALUES"], "*2\r\n$1\r\nf\r\n$1\r\nv\r\n"),
        (&["HRANDFIELD", "h1", "-3", "withvalues"], "*6\r\n$1\r\nf\r\n$1\r\nv\r\n$1\r\nf\r\n$1\r\nv\r\n$1\r\nf\r\n$1\r\nv\r\n"),
        (&["HRANDFIELD", "h1", "-3"], "*3\r\n$1\r\nf\r\n$1\r\nf\r\n$1\r\nf\r\n"),
        (&["HRANDFIELD", "h1", "0"], "*0\r\n"),
        (&["HRANDFIELD", "noh", "5"], "*0\r\n"),
        (&["HRANDFIELD", "noh", "-5", "WITHVALUES"], "*0\r\n"),
        (&["HRANDFIELD", "h1", "1", "FOO"], "-ERR syntax error\r\n"),
        (&["HRANDFIELD", "h1", "1", "WITHVALUES", "x"], "-ERR syntax error\r\n"),
        (&["HRANDFIELD", "h1", "x"], "-ERR value is not an integer or out of range\r\n"),
        (&["HRANDFIELD", "h1", "-9223372036854775808"], "-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"),
        (&["HRANDFIELD", "h1", "-9223372036854770000", "WITHVALUES"], "-ERR value is out of range\r\n"),
        (&["HRANDFIELD", "h1", "4611686018427387904", "WITHVALUES"], "-ERR value is out of range\r\n"),
        (&["HRANDFIELD", "h1", "4611686018427387903", "WITHVALUES"], "*2\r\n$1\r\nf\r\n$1\r\nv\r\n"),
        (&["HRANDFIELD", "noh", "-9223372036854775808"], "-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"),
        (&["MEMORY", "USAGE"], "-ERR wrong number of arguments for 'memory|usage' command\r\n"),
        (&["MEMORY", "USAGE", "nokey"], "$-1\r\n"),
        (&["MEMORY", "FOO"], "-ERR unknown subcommand 'FOO'. Try MEMORY HELP.\r\n"),
        (&["MEMORY", "USAGE", "nokey", "SAMPLES"], "-ERR syntax error\r\n"),
        (&["MEMORY", "USAGE", "nokey", "SAMPLES", "x"], "-ERR value is not an integer or out of range\r\n"),
        (&["MEMORY", "USAGE", "nokey", "SAMPLES", "-1"], "-ERR syntax error\r\n"),
        (&["MEMORY", "USAGE", "nokey", "FOO", "1"], "-ERR syntax error\r\n"),
        (&["MEMORY", "USAGE", "h1", "SAMPLES", "1", "x"], "-ERR syntax error\r\n"),
        (&["MEMORY"], "-ERR wrong number of arguments for 'memory' command\r\n"),
        // The rest of the sorted-set commands (ZRANDMEMBER of a
        // one-member set), the blocking pops where they find something or
        // fail (in MULTI, as a timeout), and the collections' scans of
        // one member (a bigger one's order is the table's).
        (&["ZADD", "qz", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"], ":5\r\n"),
        (&["ZADD", "qs", "0", "a", "0", "b", "0", "c", "0", "d"], ":4\r\n"),
        (&["SET", "qstr", "v"], "+OK\r\n"),
        (&["ZINCRBY", "qz", "1.5", "a"], "$3\r\n2.5\r\n"),
        (&["ZINCRBY", "qz", "-1.5", "a"], "$1\r\n1\r\n"),
        (&["ZINCRBY", "qnew", "inf", "m"], "$3\r\ninf\r\n"),
        (&["ZINCRBY", "qnew", "-inf", "m"], "-ERR resulting score is not a number (NaN)\r\n"),
        (&["ZINCRBY", "qz", "x", "a"], "-ERR value is not a valid float\r\n"),
        (&["ZINCRBY", "qz", "nan", "a"], "-ERR value is not a valid float\r\n"),
        (&["ZINCRBY", "qstr", "1", "a"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZINCRBY", "qz", "1"], "-ERR wrong number of arguments for 'zincrby' command\r\n"),
        (&["DEL", "qnew"], ":1\r\n"),
        (&["ZREVRANGE", "qz", "0", "1"], "*2\r\n$1\r\ne\r\n$1\r\nd\r\n"),
        (&["ZREVRANGE", "qz", "0", "-1", "WITHSCORES"], "*10\r\n$1\r\ne\r\n$1\r\n5\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n"),
        (&["ZREVRANGE", "qz", "0", "-1", "LIMIT", "0", "1"], "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX\r\n"),
        (&["ZREVRANGE", "qz", "0", "-1", "REV"], "-ERR syntax error\r\n"),
        (&["ZREVRANGE", "qz", "0", "-1", "BYSCORE"], "-ERR syntax error\r\n"),
        (&["ZREVRANGE", "qnone", "0", "-1"], "*0\r\n"),
        (&["ZREVRANGE", "qstr", "0", "-1"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZRANGEBYSCORE", "qz", "(1", "3", "WITHSCORES"], "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"),
        (&["ZRANGEBYSCORE", "qz", "-inf", "+inf", "LIMIT", "1", "2"], "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"),
        (&["ZRANGEBYSCORE", "qz", "-inf", "+inf", "LIMIT", "-1", "2"], "*0\r\n"),
        (&["ZRANGEBYSCORE", "qz", "-inf", "+inf", "LIMIT", "0", "-1"], "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"),
        (&["ZRANGEBYSCORE", "qz", "-inf", "+inf", "LIMIT", "0"], "-ERR syntax error\r\n"),
        (&["ZRANGEBYSCORE", "qz", "3", "1"], "*0\r\n"),
        (&["ZRANGEBYSCORE", "qz", "x", "1"], "-ERR min or max is not a float\r\n"),
        (&["ZRANGEBYSCORE", "qz", "1", "nan"], "-ERR min or max is not a float\r\n"),
        (&["ZRANGEBYSCORE", "qz", "1", "2", "REV"], "-ERR syntax error\r\n"),
        (&["ZRANGEBYSCORE", "qz", "1", "2", "BYSCORE"], "-ERR syntax error\r\n"),
        (&["ZRANGEBYSCORE", "qnone", "1", "2"], "*0\r\n"),
        (&["ZRANGEBYSCORE", "qstr", "1", "2"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZREVRANGEBYSCORE", "qz", "+inf", "(2", "WITHSCORES"], "*6\r\n$1\r\ne\r\n$1\r\n5\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\nc\r\n$1\r\n3\r\n"),
        (&["ZREVRANGEBYSCORE", "qz", "5", "1", "LIMIT", "1", "2"], "*2\r\n$1\r\nd\r\n$1\r\nc\r\n"),
        (&["ZREVRANGEBYSCORE", "qz", "1", "5"], "*0\r\n"),
        (&["ZRANGEBYLEX", "qs", "-", "+"], "*4\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n"),
        (&["ZRANGEBYLEX", "qs", "(a", "[c", "LIMIT", "1", "5"], "*1\r\n$1\r\nc\r\n"),
        (&["ZRANGEBYLEX", "qs", "a", "[c"], "-ERR min or max not valid string range item\r\n"),
        (&["ZRANGEBYLEX", "qs", "-", "+", "WITHSCORES"], "-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n"),
        (&["ZRANGEBYLEX", "qnone", "-", "+"], "*0\r\n"),
        (&["ZREVRANGEBYLEX", "qs", "+", "-"], "*4\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"),
        (&["ZREVRANGEBYLEX", "qs", "[c", "(a"], "*2\r\n$1\r\nc\r\n$1\r\nb\r\n"),
        (&["ZREVRANGEBYLEX", "qs", "-", "+"], "*0\r\n"),
        (&["ZREVRANGEBYLEX", "qstr", "+", "-"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZRANGESTORE", "qd", "qz", "0", "1"], ":2\r\n"),
        (&["ZRANGE", "qd", "0", "-1", "WITHSCORES"], "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"),
        (&["ZRANGESTORE", "qd", "qz", "(2", "+inf", "BYSCORE", "LIMIT", "1", "1"], ":1\r\n"),
        (&["ZRANGE", "qd", "0", "-1", "WITHSCORES"], "*2\r\n$1\r\nd\r\n$1\r\n4\r\n"),
        (&["ZRANGESTORE", "qd", "qs", "[b", "+", "BYLEX", "REV"], ":0\r\n"),
        (&["ZRANGESTORE", "qd", "qz", "0", "-1", "WITHSCORES"], "-ERR syntax error\r\n"),
        (&["ZRANGESTORE", "qd", "qnone", "0", "-1"], ":0\r\n"),
        (&["EXISTS", "qd"], ":0\r\n"),
        (&["ZRANGESTORE", "qd", "qstr", "0", "-1"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZRANGESTORE", "qstr", "qz", "0", "0"], ":1\r\n"),
        (&["TYPE", "qstr"], "+zset\r\n"),
        (&["SET", "qstr", "v"], "+OK\r\n"),
        (&["ZRANGESTORE", "qd", "qz", "5", "1"], ":0\r\n"),
        (&["ZRANGESTORE", "qd", "qz"], "-ERR wrong number of arguments for 'zrangestore' command\r\n"),
        (&["ZCOUNT", "qz", "(1", "3"], ":2\r\n"),
        (&["ZCOUNT", "qz", "-inf", "+inf"], ":5\r\n"),
        (&["ZCOUNT", "qz", "3", "1"], ":0\r\n"),
        (&["ZCOUNT", "qz", "x", "1"], "-ERR min or max is not a float\r\n"),
        (&["ZCOUNT", "qnone", "0", "1"], ":0\r\n"),
        (&["ZCOUNT", "qstr", "0", "1"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZLEXCOUNT", "qs", "-", "+"], ":4\r\n"),
        (&["ZLEXCOUNT", "qs", "(a", "[c"], ":2\r\n"),
        (&["ZLEXCOUNT", "qs", "a", "c"], "-ERR min or max not valid string range item\r\n"),
        (&["ZLEXCOUNT", "qnone", "-", "+"], ":0\r\n"),
        (&["ZLEXCOUNT", "qstr", "-", "+"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZRANK", "qz", "c"], ":2\r\n"),
        (&["ZRANK", "qz", "nope"], "$-1\r\n"),
        (&["ZRANK", "qnone", "a"], "$-1\r\n"),
        (&["ZREVRANK", "qz", "a"], ":4\r\n"),
        (&["ZREVRANK", "qz", "e"], ":0\r\n"),
        (&["ZRANK", "qstr", "a"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZRANK", "qz", "a", "WITHSCORE"], "-ERR wrong number of arguments for 'zrank' command\r\n"),
        (&["ZMSCORE", "qz", "a", "nope", "e"], "*3\r\n$1\r\n1\r\n$-1\r\n$1\r\n5\r\n"),
        (&["ZMSCORE", "qnone", "a", "b"], "*2\r\n$-1\r\n$-1\r\n"),
        (&["ZMSCORE", "qstr", "a"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZMSCORE", "qz"], "-ERR wrong number of arguments for 'zmscore' command\r\n"),
        (&["ZADD", "qone", "7", "m"], ":1\r\n"),
        (&["ZRANDMEMBER", "qone"], "$1\r\nm\r\n"),
        (&["ZRANDMEMBER", "qnone"], "$-1\r\n"),
        (&["ZRANDMEMBER", "qone", "1"], "*1\r\n$1\r\nm\r\n"),
        (&["ZRANDMEMBER", "qone", "3", "WITHSCORES"], "*2\r\n$1\r\nm\r\n$1\r\n7\r\n"),
        (&["ZRANDMEMBER", "qone", "-2", "WITHSCORES"], "*4\r\n$1\r\nm\r\n$1\r\n7\r\n$1\r\nm\r\n$1\r\n7\r\n"),
        (&["ZRANDMEMBER", "qone", "-2"], "*2\r\n$1\r\nm\r\n$1\r\nm\r\n"),
        (&["ZRANDMEMBER", "qone", "0"], "*0\r\n"),
        (&["ZRANDMEMBER", "qnone", "5"], "*0\r\n"),
        (&["ZRANDMEMBER", "qone", "1", "FOO"], "-ERR syntax error\r\n"),
        (&["ZRANDMEMBER", "qone", "x"], "-ERR value is not an integer or out of range\r\n"),
        (&["ZRANDMEMBER", "qone", "-9223372036854775808"], "-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"),
        (&["ZRANDMEMBER", "qone", "4611686018427387904", "WITHSCORES"], "-ERR value is out of range\r\n"),
        (&["ZRANDMEMBER", "qstr"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZRANDMEMBER", "qstr", "1"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZADD", "qp", "1", "a", "2", "b", "3", "c"], ":3\r\n"),
        (&["ZPOPMAX", "qp"], "*2\r\n$1\r\nc\r\n$1\r\n3\r\n"),
        (&["ZPOPMAX", "qp", "5"], "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n"),
        (&["ZPOPMAX", "qp"], "*0\r\n"),
        (&["ZPOPMAX", "qp", "0"], "*0\r\n"),
        (&["ZPOPMAX", "qp", "-1"], "-ERR value is out of range, must be positive\r\n"),
        (&["ZPOPMAX", "qp", "1", "2"], "-ERR syntax error\r\n"),
        (&["ZPOPMAX", "qstr"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZADD", "qr", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"], ":5\r\n"),
        (&["ZREMRANGEBYRANK", "qr", "0", "0"], ":1\r\n"),
        (&["ZREMRANGEBYRANK", "qr", "-1", "-1"], ":1\r\n"),
        (&["ZREMRANGEBYRANK", "qr", "5", "10"], ":0\r\n"),
        (&["ZREMRANGEBYRANK", "qr", "x", "1"], "-ERR value is not an integer or out of range\r\n"),
        (&["ZREMRANGEBYSCORE", "qr", "(2", "3"], ":1\r\n"),
        (&["ZREMRANGEBYSCORE", "qr", "x", "3"], "-ERR min or max is not a float\r\n"),
        (&["ZRANGE", "qr", "0", "-1", "WITHSCORES"], "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nd\r\n$1\r\n4\r\n"),
        (&["ZADD", "qr", "0", "x", "0", "y"], ":2\r\n"),
        (&["ZREMRANGEBYLEX", "qr", "[x", "+"], ":0\r\n"),
        (&["ZREMRANGEBYLEX", "qr", "x", "+"], "-ERR min or max not valid string range item\r\n"),
        (&["ZREMRANGEBYRANK", "qr", "0", "-1"], ":4\r\n"),
        (&["EXISTS", "qr"], ":0\r\n"),
        (&["ZREMRANGEBYRANK", "qnone", "0", "-1"], ":0\r\n"),
        (&["ZREMRANGEBYSCORE", "qstr", "0", "1"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZADD", "qm", "1", "a", "2", "b", "3", "c"], ":3\r\n"),
        (&["ZMPOP", "2", "qnone", "qm", "MIN"], "*2\r\n$2\r\nqm\r\n*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
        (&["ZMPOP", "1", "qm", "MAX", "COUNT", "10"], "*2\r\n$2\r\nqm\r\n*2\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n"),
        (&["ZMPOP", "1", "qm", "MIN"], "*-1\r\n"),
        (&["ZMPOP", "0", "qm", "MIN"], "-ERR numkeys should be greater than 0\r\n"),
        (&["ZMPOP", "x", "qm", "MIN"], "-ERR numkeys should be greater than 0\r\n"),
        (&["ZMPOP", "1", "qm", "FOO"], "-ERR syntax error\r\n"),
        (&["ZMPOP", "2", "qm", "MIN"], "-ERR syntax error\r\n"),
        (&["ZMPOP", "1", "qm", "MIN", "COUNT", "0"], "-ERR count should be greater than 0\r\n"),
        (&["ZMPOP", "1", "qm", "MIN", "COUNT"], "-ERR syntax error\r\n"),
        (&["ZMPOP", "1", "qm", "MIN", "COUNT", "1", "COUNT", "1"], "-ERR syntax error\r\n"),
        (&["ZMPOP", "2", "qstr", "qm", "MIN"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZMPOP", "1", "qm"], "-ERR wrong number of arguments for 'zmpop' command\r\n"),
        (&["ZADD", "qa", "1", "a", "2", "b", "3", "c"], ":3\r\n"),
        (&["ZADD", "qb", "10", "b", "20", "c", "30", "d"], ":3\r\n"),
        (&["SADD", "qset", "a", "d"], ":2\r\n"),
        (&["ZUNION", "2", "qa", "qb", "WITHSCORES"], "*8\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$2\r\n12\r\n$1\r\nc\r\n$2\r\n23\r\n$1\r\nd\r\n$2\r\n30\r\n"),
        (&["ZUNION", "2", "qa", "qb", "WEIGHTS", "2", "0.5", "AGGREGATE", "MAX", "WITHSCORES"], "*8\r\n$1\r\na\r\n$1\r\n2\r\n$1\r\nb\r\n$1\r\n5\r\n$1\r\nc\r\n$2\r\n10\r\n$1\r\nd\r\n$2\r\n15\r\n"),
        (&["ZUNION", "3", "qa", "qb", "qset", "AGGREGATE", "MIN", "WITHSCORES"], "*8\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nd\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"),
        (&["ZINTER", "2", "qa", "qb", "WITHSCORES"], "*4\r\n$1\r\nb\r\n$2\r\n12\r\n$1\r\nc\r\n$2\r\n23\r\n"),
        (&["ZINTER", "2", "qa", "qb", "AGGREGATE", "min"], "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"),
        (&["ZINTER", "2", "qa", "qnone"], "*0\r\n"),
        (&["ZDIFF", "2", "qa", "qb", "WITHSCORES"], "*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
        (&["ZDIFF", "2", "qb", "qset", "WITHSCORES"], "*4\r\n$1\r\nb\r\n$2\r\n10\r\n$1\r\nc\r\n$2\r\n20\r\n"),
        (&["ZDIFF", "1", "qa", "WEIGHTS", "1"], "-ERR syntax error\r\n"),
        (&["ZDIFF", "1", "qa", "AGGREGATE", "SUM"], "-ERR syntax error\r\n"),
        (&["ZUNION", "2", "qa", "qb", "WEIGHTS", "1"], "-ERR syntax error\r\n"),
        (&["ZUNION", "2", "qa", "qb", "WEIGHTS", "1", "x"], "-ERR weight value is not a float\r\n"),
        (&["ZUNION", "2", "qa", "qb", "AGGREGATE", "AVG"], "-ERR syntax error\r\n"),
        (&["ZUNION", "0", "qa"], "-ERR at least 1 input key is needed for 'zunion' command\r\n"),
        (&["ZUNION", "3", "qa", "qb"], "-ERR syntax error\r\n"),
        (&["ZUNION", "x", "qa"], "-ERR value is not an integer or out of range\r\n"),
        (&["ZUNION", "2", "qa", "qstr"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZUNION", "2", "qa", "qstr", "FOO"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZUNION", "1", "qa", "FOO"], "-ERR syntax error\r\n"),
        (&["ZUNION", "2", "qa", "qa", "WITHSCORES"], "*6\r\n$1\r\na\r\n$1\r\n2\r\n$1\r\nb\r\n$1\r\n4\r\n$1\r\nc\r\n$1\r\n6\r\n"),
        (&["ZUNION", "1", "qa", "WEIGHTS", "inf", "WITHSCORES"], "*6\r\n$1\r\na\r\n$3\r\ninf\r\n$1\r\nb\r\n$3\r\ninf\r\n$1\r\nc\r\n$3\r\ninf\r\n"),
        (&["ZUNION", "2", "qa", "qb", "WEIGHTS", "inf", "-inf", "WITHSCORES"], "*8\r\n$1\r\nd\r\n$4\r\n-inf\r\n$1\r\nb\r\n$1\r\n0\r\n$1\r\nc\r\n$1\r\n0\r\n$1\r\na\r\n$3\r\ninf\r\n"),
        (&["ZUNIONSTORE", "qu", "2", "qa", "qb"], ":4\r\n"),
        (&["ZRANGE", "qu", "0", "-1", "WITHSCORES"], "*8\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$2\r\n12\r\n$1\r\nc\r\n$2\r\n23\r\n$1\r\nd\r\n$2\r\n30\r\n"),
        (&["ZUNIONSTORE", "qu", "2", "qa", "qb", "WITHSCORES"], "-ERR syntax error\r\n"),
        (&["ZINTERSTORE", "qu", "2", "qa", "qb", "WEIGHTS", "1", "2"], ":2\r\n"),
        (&["ZRANGE", "qu", "0", "-1", "WITHSCORES"], "*4\r\n$1\r\nb\r\n$2\r\n22\r\n$1\r\nc\r\n$2\r\n43\r\n"),
        (&["ZINTERSTORE", "qu", "2", "qa", "qnone"], ":0\r\n"),
        (&["EXISTS", "qu"], ":0\r\n"),
        (&["ZDIFFSTORE", "qu", "2", "qa", "qset"], ":2\r\n"),
        (&["ZRANGE", "qu", "0", "-1", "WITHSCORES"], "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"),
        (&["ZDIFFSTORE", "qu", "0", "qa"], "-ERR at least 1 input key is needed for 'zdiffstore' command\r\n"),
        (&["ZDIFFSTORE", "qstr", "1", "qa"], ":3\r\n"),
        (&["TYPE", "qstr"], "+zset\r\n"),
        (&["SET", "qstr", "v"], "+OK\r\n"),
        (&["ZINTERCARD", "2", "qa", "qb"], ":2\r\n"),
        (&["ZINTERCARD", "2", "qa", "qb", "LIMIT", "1"], ":1\r\n"),
        (&["ZINTERCARD", "2", "qa", "qb", "LIMIT", "0"], ":2\r\n"),
        (&["ZINTERCARD", "2", "qa", "qb", "LIMIT", "-1"], "-ERR LIMIT can't be negative\r\n"),
        (&["ZINTERCARD", "0", "qa"], "-ERR at least 1 input key is needed for 'zintercard' command\r\n"),
        (&["ZINTERCARD", "3", "qa"], "-ERR syntax error\r\n"),
        (&["ZINTERCARD", "1", "qa", "WITHSCORES"], "-ERR syntax error\r\n"),
        (&["ZINTERCARD", "2", "qa", "qstr"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZINTERCARD", "2", "qa", "qset"], ":1\r\n"),
        (&["ZADD", "qbz", "1", "a", "2", "b", "3", "c"], ":3\r\n"),
        (&["BZPOPMIN", "qnone", "qbz", "0"], "*3\r\n$3\r\nqbz\r\n$1\r\na\r\n$1\r\n1\r\n"),
        (&["BZPOPMAX", "qbz", "1"], "*3\r\n$3\r\nqbz\r\n$1\r\nc\r\n$1\r\n3\r\n"),
        (&["BZMPOP", "0", "2", "qnone", "qbz", "MAX", "COUNT", "5"], "*2\r\n$3\r\nqbz\r\n*1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n"),
        (&["BZPOPMIN", "qbz", "x"], "-ERR timeout is not a float or out of range\r\n"),
        (&["BZPOPMIN", "qbz", "-1"], "-ERR timeout is negative\r\n"),
        (&["BZPOPMIN", "qstr", "0"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["BZMPOP", "0", "0", "qbz", "MIN"], "-ERR numkeys should be greater than 0\r\n"),
        (&["BZMPOP", "x", "1", "qbz", "MIN"], "-ERR timeout is not a float or out of range\r\n"),
        (&["BZMPOP", "0", "1", "qbz", "FOO"], "-ERR syntax error\r\n"),
        (&["BZMPOP", "0", "1", "qstr", "MIN"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["BZMPOP", "0", "1", "qbz"], "-ERR wrong number of arguments for 'bzmpop' command\r\n"),
        (&["MULTI"], "+OK\r\n"),
        (&["BZPOPMIN", "qnone", "0"], "+QUEUED\r\n"),
        (&["BZMPOP", "0", "1", "qnone", "MIN"], "+QUEUED\r\n"),
        (&["EXEC"], "*2\r\n*-1\r\n*-1\r\n"),
        (&["SADD", "qs1", "m"], ":1\r\n"),
        (&["HSET", "qh1", "f", "v"], ":1\r\n"),
        (&["SSCAN", "qs1", "0"], "*2\r\n$1\r\n0\r\n*1\r\n$1\r\nm\r\n"),
        (&["HSCAN", "qh1", "0", "COUNT", "5"], "*2\r\n$1\r\n0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"),
        (&["ZSCAN", "qone", "0", "MATCH", "m*"], "*2\r\n$1\r\n0\r\n*2\r\n$1\r\nm\r\n$1\r\n7\r\n"),
        (&["ZSCAN", "qone", "0", "MATCH", "x*"], "*2\r\n$1\r\n0\r\n*0\r\n"),
        (&["SSCAN", "qnone", "0"], "*2\r\n$1\r\n0\r\n*0\r\n"),
        (&["SSCAN", "qnone", "x"], "-ERR invalid cursor\r\n"),
        (&["SSCAN", "qnone", "0", "COUNT", "0"], "*2\r\n$1\r\n0\r\n*0\r\n"),
        (&["SSCAN", "qs1", "0", "COUNT", "0"], "-ERR syntax error\r\n"),
        (&["SSCAN", "qs1", "0", "COUNT", "x"], "-ERR value is not an integer or out of range\r\n"),
        (&["SSCAN", "qs1", "0", "TYPE", "set"], "-ERR syntax error\r\n"),
        (&["SSCAN", "qs1", "0", "MATCH"], "-ERR syntax error\r\n"),
        (&["SSCAN", "qs1", "x"], "-ERR invalid cursor\r\n"),
        (&["SSCAN", "qstr", "0"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["HSCAN", "qstr", "0"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZSCAN", "qstr", "0"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["ZSCAN", "qone"], "-ERR wrong number of arguments for 'zscan' command\r\n"),
        // A -0 score stored is 0 (Redis's listpack), answered is -0.
        (&["ZADD", "qn0", "0", "a"], ":1\r\n"),
        (&["ZUNIONSTORE", "qn1", "1", "qn0", "WEIGHTS", "-1"], ":1\r\n"),
        (&["ZSCORE", "qn1", "a"], "$1\r\n0\r\n"),
        (&["ZUNION", "1", "qn0", "WEIGHTS", "-1", "WITHSCORES"], "*2\r\n$1\r\na\r\n$2\r\n-0\r\n"),        // An intersection's later products are not made 0 when NaN: a
        // NaN sum is 0, a NaN is no MIN or MAX; -0 against 0 keeps the
        // first.
        (&["ZADD", "qw1", "inf", "a", "1", "b"], ":2\r\n"),
        (&["SADD", "qw2", "a", "b"], ":2\r\n"),
        (&["ZINTER", "2", "qw2", "qw1", "WEIGHTS", "1", "0", "WITHSCORES"], "*4\r\n$1\r\na\r\n$1\r\n0\r\n$1\r\nb\r\n$1\r\n1\r\n"),
        (&["ZINTER", "2", "qw2", "qw1", "WEIGHTS", "1", "0", "AGGREGATE", "MIN", "WITHSCORES"], "*4\r\n$1\r\nb\r\n$1\r\n0\r\n$1\r\na\r\n$1\r\n1\r\n"),
        (&["ZINTER", "2", "qw2", "qw1", "WEIGHTS", "1", "0", "AGGREGATE", "MAX", "WITHSCORES"], "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n1\r\n"),
        (&["ZUNION", "2", "qw2", "qw1", "WEIGHTS", "1", "0", "WITHSCORES"], "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n1\r\n"),
        (&["ZADD", "qw3", "0", "a"], ":1\r\n"),
        (&["ZADD", "qw4", "0", "a"], ":1\r\n"),
        (&["ZINTER", "2", "qw3", "qw4", "WEIGHTS", "1", "-1", "AGGREGATE", "MIN", "WITHSCORES"], "*2\r\n$1\r\na\r\n$1\r\n0\r\n"),
        (&["ZINTER", "2", "qw3", "qw4", "WEIGHTS", "-1", "1", "AGGREGATE", "MAX", "WITHSCORES"], "*2\r\n$1\r\na\r\n$2\r\n-0\r\n"),
        // GEOADD: a sorted set of 52-bit geohashes, as Redis keeps it.
        (&["GEOADD", "geo", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"], ":2\r\n"),
        (&["ZRANGE", "geo", "0", "-1", "WITHSCORES"], "*4\r\n$7\r\nPalermo\r\n$16\r\n3479099956230698\r\n$7\r\nCatania\r\n$16\r\n3479447370796909\r\n"),
        (&["GEOADD", "geo", "13.361389", "38.115556", "Palermo"], ":0\r\n"),
        (&["GEOADD", "geo", "CH", "13.361389", "38.115557", "Palermo", "1", "2", "x"], ":1\r\n"),
        (&["GEOADD", "geo", "NX", "1", "1", "Palermo", "2", "2", "y"], ":1\r\n"),
        (&["GEOADD", "geo", "XX", "1", "1", "Palermo", "2", "2", "nope"], ":0\r\n"),
        (&["GEOADD", "geo", "XX", "CH", "1", "1", "Palermo"], ":0\r\n"),
        (&["ZSCORE", "geo", "Palermo"], "$16\r\n3377822707026402\r\n"),
        (&["GEOADD", "geo", "NX", "XX", "1", "1", "a"], "-ERR syntax error\r\n"),
        (&["GEOADD", "geo", "1", "1", "a", "2"], "-ERR syntax error\r\n"),
        (&["GEOADD", "geo", "181", "0", "a"], "-ERR invalid longitude,latitude pair 181.000000,0.000000\r\n"),
        (&["GEOADD", "geo", "0", "85.06", "a"], "-ERR invalid longitude,latitude pair 0.000000,85.060000\r\n"),
        (&["GEOADD", "geo", "-180", "-85.05112878", "a"], ":1\r\n"),
        (&["GEOADD", "geo", "-0", "0", "z"], ":1\r\n"),
        (&["GEOADD", "geo", "x", "0", "a"], "-ERR value is not a valid float\r\n"),
        (&["GEOADD", "geo", "0", "nan", "a"], "-ERR value is not a valid float\r\n"),
        (&["GEOADD", "geo", "inf", "0", "a"], "-ERR invalid longitude,latitude pair inf,0.000000\r\n"),
        (&["GEOADD", "geo", " 1", "0", "a"], "-ERR value is not a valid float\r\n"),
        (&["GEOADD", "geo", "1e400", "0", "a"], "-ERR value is not a valid float\r\n"),
        (&["GEOADD", "geo", "0", "0"], "-ERR wrong number of arguments for 'geoadd' command\r\n"),
        (&["GEOADD", "geo", "ch", "ch", "ch"], "-ERR syntax error\r\n"),
        (&["GEOADD", "geo", "ch", "0", "0", "m", "nx"], "-ERR syntax error\r\n"),
        (&["GEOADD", "geo", "gt", "0", "0", "m"], "-ERR syntax error\r\n"),
        (&["GEOADD", "geo", "0", "0", "m", "1", "1", "m"], ":1\r\n"),
        (&["ZRANGE", "geo", "0", "-1", "WITHSCORES"], "*14\r\n$1\r\na\r\n$1\r\n0\r\n$1\r\nz\r\n$16\r\n3377699720527872\r\n$7\r\nPalermo\r\n$16\r\n3377822707026402\r\n$1\r\nm\r\n$16\r\n3377822707026402\r\n$1\r\nx\r\n$16\r\n3378080408407459\r\n$1\r\ny\r\n$16\r\n3378191666521995\r\n$7\r\nCatania\r\n$16\r\n3479447370796909\r\n"),
        (&["SET", "geostr", "1"], "+OK\r\n"),
        (&["GEOADD", "geostr", "0", "0", "bar"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
        (&["GEOADD", "geostr", "0", "200", "bar"], "-ERR invalid longitude,latitude pair 0.000000,200.000000\r\n"),
        (&["GEOADD", "geostr", "0", "x", "bar"], "-ERR value is not a valid float\r\n"),
        (&["geoadd", "geo", "0x10", "1.5e1", "h"], ":1\r\n"),
        (&["ZSCORE", "geo", "h"], "$16\r\n3406177775433604\r\n"),
        (&["GEOADD", "geo", "179.99999999", "85.05112877", "edge"], ":1\r\n"),
        (&["ZSCORE", "geo", "edge"], "$16\r\n4503599627370495\r\n"),
        (&["GEOADD", "geo", "-179.99999999", "-85.05112877", "edge2"], ":1\r\n"),
        (&["ZSCORE", "geo", "edge2"], "$1\r\n0\r\n"),
        (&["GEOADD", "geo", "-0.000001", "-0.00001", "n"], ":1\r\n"),
        (&["ZSCORE", "geo", "n"], "$16\r\n1125899906842618\r\n"),
];

/// `args`' reply: an array of bulk strings, as texts.
fn strings(c: &mut Raw, args: &[&str]) -> Vec<String> {
    c.send(&cmd(args));
    let all = text(&c.reply());
    let mut lines = all.split("\r\n");
    let head = lines.next().unwrap();
    assert!(head.starts_with('*'), "{args:?}: {all:?}");
    // "$len", then the text, for each.
    lines
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .take(head[1..].parse().unwrap())
        .collect()
}

/// `args`' reply: one bulk string's text.
fn string(c: &mut Raw, args: &[&str]) -> String {
    c.send(&cmd(args));
    let all = text(&c.reply());
    let (head, rest) = all.split_once("\r\n").unwrap();
    assert!(head.starts_with('$') && head != "$-1", "{args:?}: {all:?}");
    rest.trim_end_matches("\r\n").to_string()
}

/// SPOP and SRANDMEMBER: members of the set, distinct where they must
/// be, gone from it where popped; the whole set when asked for more.
fn random_picks(c: &mut Raw) {
    let all: Vec<String> = (0..10).map(|i| format!("m{i}")).collect();
    let mut sadd = vec!["SADD", "r"];
    sadd.extend(all.iter().map(String::as_str));
    c.expect(&cmd(&sadd), ":10\r\n");
    let popped = strings(c, &["SPOP", "r", "3"]);
    let distinct: BTreeSet<&String> = popped.iter().collect();
    assert_eq!(distinct.len(), 3, "{popped:?}");
    let one = string(c, &["SPOP", "r"]);
    for m in popped.iter().chain([&one]) {
        assert!(all.contains(m), "{m} was never added");
        c.expect(&cmd(&["SISMEMBER", "r", m]), ":0\r\n");
    }
    assert!(!popped.contains(&one), "{one} popped twice");
    c.expect(&cmd(&["SCARD", "r"]), ":6\r\n");
    let left: BTreeSet<String> = all
        .iter()
        .filter(|m| !popped.contains(m) && **m != one)
        .cloned()
        .collect();
    let picks = strings(c, &["SRANDMEMBER", "r", "4"]);
    assert_eq!(picks.iter().collect::<BTreeSet<_>>().len(), 4, "{picks:?}");
    assert!(
        picks.iter().all(|m| left.contains(m)),
        "{picks:?} of {left:?}"
    );
    let repeats = strings(c, &["SRANDMEMBER", "r", "-20"]);
    assert_eq!(repeats.len(), 20);
    assert!(repeats.iter().all(|m| left.contains(m)), "{repeats:?}");
    let whole = strings(c, &["SRANDMEMBER", "r", "100"]);
    assert_eq!(whole.into_iter().collect::<BTreeSet<_>>(), left);
    assert!(left.contains(&string(c, &["SRANDMEMBER", "r"])));
    c.expect(&cmd(&["SCARD", "r"]), ":6\r\n");
    let rest = strings(c, &["SPOP", "r", "6"]);
    assert_eq!(rest.into_iter().collect::<BTreeSet<_>>(), left);
    c.expect(&cmd(&["EXISTS", "r"]), ":0\r\n");
    hash_picks(c, &all);
}

/// HRANDFIELD: fields of the hash, distinct where they must be, each
/// with its own value WITHVALUES; the whole hash when asked for more.
fn hash_picks(c: &mut Raw, all: &[String]) {
    let mut hset = vec!["HSET", "rh"];
    let values: Vec<String> = all.iter().map(|f| format!("v{f}")).collect();
    for (f, v) in all.iter().zip(&values) {
        hset.extend([f.as_str(), v.as_str()]);
    }
    c.expect(&cmd(&hset), ":10\r\n");
    let picks = strings(c, &["HRANDFIELD", "rh", "4"]);
    assert_eq!(picks.iter().collect::<BTreeSet<_>>().len(), 4, "{picks:?}");
    assert!(picks.iter().all(|f| all.contains(f)), "{picks:?}");
    let pairs = strings(c, &["HRANDFIELD", "rh", "3", "WITHVALUES"]);
    assert_eq!(pairs.len(), 6);
    for p in pairs.chunks(2) {
        assert_eq!(p[1], format!("v{}", p[0]), "{pairs:?}");
    }
    let whole = strings(c, &["HRANDFIELD", "rh", "100"]);
    assert_eq!(
        whole.iter().collect::<BTreeSet<_>>(),
        all.iter().collect::<BTreeSet<_>>()
    );
    let one = string(c, &["HRANDFIELD", "rh"]);
    assert!(all.contains(&one), "{one}");
    c.expect(&cmd(&["DEL", "rh"]), ":1\r\n");
}

/// The script one request at a time, then all of it in one write; the
/// random picks.
fn commands_on(strategy: &str, store: &str) {
    let server = ServerProc::start(
        "resp",
        &with_threads(strategy, "2", &["--strategy", strategy, "--store", store]),
    );
    let mut c = Raw::connect(server.addr);
    for (args, want) in SCRIPT {
        c.send(&cmd(args));
        let got = c.reply();
        assert_eq!(text(&got), *want, "{strategy}/{store}: {args:?}");
    }
    c.expect(&cmd(&["FLUSHDB"]), "+OK\r\n");
    let wire: Vec<u8> = SCRIPT.iter().flat_map(|(args, _)| cmd(args)).collect();
    let replies: String = SCRIPT.iter().map(|(_, r)| *r).collect();
    c.expect(&wire, &replies);
    random_picks(&mut c);
    let (status, out) = server.stop();
    assert!(status.success(), "{strategy}/{store}: {out}");
    let wrongtypes = SCRIPT.iter().filter(|(_, r)| *r == WRONGTYPE).count() * 2;
    assert!(
        out.contains(&format!("wrongtype {wrongtypes},")),
        "{strategy}/{store}: {out}"
    );
}

fn every_command(strategy: &str) {
    commands_on(strategy, resp_stores()[0]);
}

per_strategy!(resp_colls_commands, every_command);

/// Every store keeps the types apart (WRONGTYPE both ways) and serves
/// every command alike.
#[test]
fn every_store_serves_collections() {
    for store in resp_stores() {
        commands_on(strategies()[0], store);
    }
}

/// Writes of every kind that change collections, SPOP's random ones
/// among them (3000 members popped to 500: SREMs in several records; a
/// whole set popped: a DEL), in two databases.
fn collection_writes(c: &mut Raw) {
    let mut big = vec!["SADD".to_string(), "s".to_string()];
    big.extend((0..3000).map(|i| format!("member-{i}")));
    let big: Vec<&str> = big.iter().map(String::as_str).collect();
    c.expect(&cmd(&big), ":3000\r\n");
    assert_eq!(strings(c, &["SPOP", "s", "2500"]).len(), 2500);
    string(c, &["SPOP", "s"]);
    c.expect(&cmd(&["SADD", "ints", "3", "1", "2"]), ":3\r\n");
    c.expect(
        &cmd(&["SPOP", "ints", "5"]),
        "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
    );
    c.expect(&cmd(&["SADD", "ints", "7", "8"]), ":2\r\n");
    string(c, &["SPOP", "ints"]);
    c.expect(&cmd(&["HSET", "h", "a", "1", "b", "2", "c", "x"]), ":3\r\n");
    c.expect(&cmd(&["HINCRBY", "h", "a", "41"]), ":42\r\n");
    c.expect(&cmd(&["HINCRBY", "h", "n", "-7"]), ":-7\r\n");
    c.expect(&cmd(&["HMSET", "h", "c", "y", "d", "z"]), "+OK\r\n");
    c.expect(&cmd(&["HDEL", "h", "b"]), ":1\r\n");
    // Logged as the HSET of the sum.
    c.expect(&cmd(&["HINCRBYFLOAT", "h", "f", "0.1"]), "$3\r\n0.1\r\n");
    c.expect(&cmd(&["HINCRBYFLOAT", "h", "f", "0.2"]), "$3\r\n0.3\r\n");
    c.expect(&cmd(&["HSETNX", "h", "e", "new"]), ":1\r\n");
    c.expect(&cmd(&["SADD", "ints", "40", "50"]), ":2\r\n");
    c.expect(&cmd(&["SMOVE", "ints", "moved", "40"]), ":1\r\n");
    c.expect(&cmd(&["SUNIONSTORE", "moved", "moved", "ints"]), ":3\r\n");
    c.expect(&cmd(&["SDIFFSTORE", "moved", "moved", "nosuch"]), ":3\r\n");
    c.expect(&cmd(&["SINTERSTORE", "ints2", "moved", "ints"]), ":2\r\n");
    let zadd = [
        "ZADD", "z", "1.5", "a", "1e20", "b", "inf", "c", "-inf", "d", "0.1", "e", "-0", "f",
        "0x10", "g", "1e-310", "h",
    ];
    c.expect(&cmd(&zadd), ":8\r\n");
    c.expect(&cmd(&["ZADD", "z", "INCR", "2", "a"]), "$3\r\n3.5\r\n");
    c.expect(
        &cmd(&["ZADD", "z", "GT", "CH", "1e21", "b", "0", "c"]),
        ":1\r\n",
    );
    c.expect(&cmd(&["ZPOPMIN", "z"]), "*2\r\n$1\r\nd\r\n$4\r\n-inf\r\n");
    c.expect(&cmd(&["ZREM", "z", "e"]), ":1\r\n");
    let mut zbig = vec!["ZADD".to_string(), "zb".to_string()];
    zbig.extend((0..300).flat_map(|i| [format!("{}", i as f64 / 7.0), format!("z{i}")]));
    let zbig: Vec<&str> = zbig.iter().map(String::as_str).collect();
    c.expect(&cmd(&zbig), ":300\r\n");
    assert_eq!(strings(c, &["ZPOPMIN", "zb", "50"]).len(), 100);
    c.expect(&cmd(&["ZINCRBY", "z", "2", "a"]), "$3\r\n5.5\r\n");
    assert_eq!(strings(c, &["ZPOPMAX", "zb"])[0], "z299");
    c.send(&cmd(&["ZMPOP", "2", "nosuch", "zb", "MAX", "COUNT", "3"]));
    assert!(text(&c.reply()).starts_with("*2\r\n$2\r\nzb\r\n*3\r\n*2\r\n$4\r\nz298\r\n"));
    c.expect(&cmd(&["ZREMRANGEBYRANK", "zb", "0", "9"]), ":10\r\n");
    c.expect(&cmd(&["ZREMRANGEBYSCORE", "zb", "-inf", "(10"]), ":10\r\n");
    c.expect(&cmd(&["ZRANGESTORE", "zs", "zb", "0", "4"]), ":5\r\n");
    c.expect(
        &cmd(&["ZUNIONSTORE", "zu", "2", "zs", "z", "WEIGHTS", "2", "1"]),
        ":11\r\n",
    );
    c.expect(&cmd(&["ZINTERSTORE", "zi", "2", "zs", "zu"]), ":5\r\n");
    c.expect(&cmd(&["ZDIFFSTORE", "zi", "2", "zi", "zs"]), ":0\r\n");
    c.expect(
        &cmd(&["BZPOPMIN", "nosuch", "zs", "0"]),
        "*3\r\n$2\r\nzs\r\n$3\r\nz70\r\n$2\r\n10\r\n",
    );
    c.expect(
        &cmd(&["ZADD", "zl", "0", "a", "0", "b", "0", "c"]),
        ":3\r\n",
    );
    c.expect(&cmd(&["ZREMRANGEBYLEX", "zl", "(a", "+"]), ":2\r\n");
    // Logged as the ZADD of the geohashes.
    c.expect(
        &cmd(&[
            "GEOADD",
            "zg",
            "CH",
            "13.361389",
            "38.115556",
            "P",
            "-0",
            "1",
            "z",
        ]),
        ":2\r\n",
    );
    c.expect(&cmd(&["GEOADD", "zg", "XX", "15", "37", "P"]), ":0\r\n");
    c.expect(&cmd(&["SELECT", "2"]), "+OK\r\n");
    c.expect(&cmd(&["SADD", "other", "x", "y"]), ":2\r\n");
    string(c, &["SPOP", "other"]);
    c.expect(&cmd(&["SELECT", "0"]), "+OK\r\n");
}

/// What the collections hold, to compare: members and fields sorted,
/// sorted sets with their scores as answered.
fn state(addr: std::net::SocketAddr) -> Vec<String> {
    let mut c = Raw::connect(addr);
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v.join(" ")
    };
    let mut seen = Vec::new();
    for (db, key) in [
        ("0", "s"),
        ("0", "ints"),
        ("0", "moved"),
        ("0", "ints2"),
        ("0", "h"),
        ("0", "z"),
        ("0", "zb"),
        ("0", "zs"),
        ("0", "zu"),
        ("0", "zi"),
        ("0", "zl"),
        ("2", "other"),
    ] {
        c.expect(&cmd(&["SELECT", db]), "+OK\r\n");
        let held = match key {
            "h" => {
                let flat = strings(&mut c, &["HGETALL", key]);
                sorted(flat.chunks(2).map(|p| p.join("=")).collect())
            }
            "z" | "zb" | "zs" | "zu" | "zi" | "zl" => {
                strings(&mut c, &["ZRANGE", key, "0", "-1", "WITHSCORES"]).join(" ")
            }
            _ => sorted(strings(&mut c, &["SMEMBERS", key])),
        };
        seen.push(format!("{db}/{key}: {held}"));
    }
    c.send(&cmd(&["DBSIZE"]));
    seen.push(text(&c.reply()));
    seen
}

/// Snapshots in a data directory.
fn snapshots(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("snap-")
        })
        .count()
}

/// A durable server killed after collection writes comes back with the
/// same collections: replayed from its log alone, and (a small
/// compaction floor) from a snapshot of them and the log after it.
fn durable_round(store: &str, compact: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut args = [&logged_always(dir.path())[..], &["--store", store]].concat();
    if compact {
        args.extend(["--compaction-floor", "4096"]);
    }
    let server = ServerProc::start("resp", &args);
    let mut c = Raw::connect(server.addr);
    collection_writes(&mut c);
    let written = state(server.addr);
    assert!(written[0].contains("member-"), "{written:?}");
    if compact {
        let since = Instant::now();
        while snapshots(dir.path()) == 0 {
            assert!(
                since.elapsed() < Duration::from_secs(20),
                "{store}: no compaction ran"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // And writes after the snapshot, for the log to replay.
        string(&mut c, &["SPOP", "s"]);
        c.expect(&cmd(&["ZPOPMIN", "zb"]), "*2\r\n$3\r\nz70\r\n$2\r\n10\r\n");
    }
    let before = state(server.addr);
    drop(server); // SIGKILL
    let again = ServerProc::start("resp", &args);
    assert_eq!(state(again.addr), before, "{store}, compacted: {compact}");
}

#[test]
fn durable_collections_come_back_identical() {
    for store in resp_stores() {
        durable_round(store, false);
        durable_round(store, true);
    }
}

/// redis-benchmark's default run, and its tests of the collections, with
/// no error: none printed (it prints the server's error and exits 1),
/// and none counted by the server.
fn redis_benchmark(strategy: &str) {
    let server = ServerProc::start(
        "resp",
        &with_threads(strategy, "2", &["--strategy", strategy]),
    );
    let port = server.addr.port().to_string();
    let base = [
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        "-n",
        "2000",
        "-c",
        "4",
        "-q",
    ];
    let tests = "ping,set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange,mset";
    for extra in [&[][..], &["-t", tests][..]] {
        let out = Command::new("redis-benchmark")
            .args(base)
            .args(extra)
            .output()
            .unwrap_or_else(|e| panic!("`redis-benchmark` cannot run ({e}): {NEEDS}"));
        let said = text(&out.stdout) + &text(&out.stderr);
        assert!(out.status.success(), "{strategy} {extra:?}: {said}");
        let errors: Vec<&str> = said
            .split(['\n', '\r'])
            .filter(|l| l.contains("ERR") || l.to_lowercase().contains("error"))
            .collect();
        assert!(errors.is_empty(), "{strategy} {extra:?}: {errors:?}");
        for test in ["SADD:", "HSET:", "SPOP:", "ZADD:", "ZPOPMIN:"] {
            assert!(
                said.contains(test),
                "{strategy} {extra:?}: no {test} in {said}"
            );
        }
    }
    let (status, out) = server.stop();
    assert!(status.success());
    for zero in [
        "unknown_command 0",
        "wrong_arity 0",
        "syntax 0",
        "not_an_integer 0",
        "wrongtype 0",
    ] {
        assert!(out.contains(zero), "{strategy}: {out}");
    }
}

const NEEDS: &str = "needs redis-benchmark (apt-get install redis-tools); \
     run: cargo test --workspace -- --ignored";

#[test]
#[ignore = "needs redis-benchmark (redis-tools)"]
fn redis_benchmark_runs_without_errors() {
    for strategy in strategies() {
        redis_benchmark(strategy);
    }
}

/// SRANDMEMBER's (and HRANDFIELD's) negative count sizes its reply, not
/// the set: a count
/// whose reply would pass --max-query is refused with an error (before
/// anything is made, or as soon as the reply passes it), under every
/// store and strategy; the server carries on, and a count that fits, or
/// a missing key, answers as before.
#[test]
fn a_huge_negative_srandmember_count_is_refused_not_fatal() {
    let too_large = "-ERR the reply would pass --max-query (65536 bytes)\r\n";
    for strategy in strategies() {
        for store in resp_stores() {
            let args = [
                "--strategy",
                strategy,
                "--store",
                store,
                "--max-query",
                "64KiB",
                "--max-bulk",
                "16KiB",
            ];
            let server = ServerProc::start("resp", &with_threads(strategy, "2", &args));
            let mut c = Raw::connect(server.addr);
            c.expect(&cmd(&["SADD", "s", "a", "bb", "ccc"]), ":3\r\n");
            let ctx = format!("{strategy}/{store}");
            for count in ["-2000000000", "-9223372036854775807", "-9000"] {
                c.send(&cmd(&["SRANDMEMBER", "s", count]));
                assert_eq!(text(&c.reply()), too_large, "{ctx}: {count}");
            }
            c.expect(&cmd(&["SRANDMEMBER", "nokey", "-2000000000"]), "*0\r\n");
            let picks = strings(&mut c, &["SRANDMEMBER", "s", "-5000"]);
            assert_eq!(picks.len(), 5000, "{ctx}");
            // HRANDFIELD's picks alike, with and without their values.
            c.expect(&cmd(&["HSET", "h", "f", "v", "g", "w"]), ":2\r\n");
            for count in ["-9223372036854775807", "-10000"] {
                c.send(&cmd(&["HRANDFIELD", "h", count]));
                assert_eq!(text(&c.reply()), too_large, "{ctx}: {count}");
            }
            c.send(&cmd(&[
                "HRANDFIELD",
                "h",
                "-4611686018427387903",
                "WITHVALUES",
            ]));
            assert_eq!(text(&c.reply()), too_large, "{ctx}");
            c.send(&cmd(&["HRANDFIELD", "h", "-5000", "WITHVALUES"]));
            assert_eq!(text(&c.reply()), too_large, "{ctx}");
            let picks = strings(&mut c, &["HRANDFIELD", "h", "-2500", "WITHVALUES"]);
            assert_eq!(picks.len(), 5000, "{ctx}");
            assert!(
                picks.chunks(2).all(|p| p == ["f", "v"] || p == ["g", "w"]),
                "{ctx}"
            );
            c.expect(&cmd(&["PING"]), "+PONG\r\n");
        }
    }
}

/// MEMORY USAGE: serverlab's own estimate (docs/protocols/resp.md), an
/// integer that grows with what the key holds, `$-1` for no key, the same
/// under every store (it describes the locked stores' layout): a short
/// string is its table slot (16 bytes and a control byte), its place in
/// SCAN's order (14) and one 32-byte allocation.
#[test]
fn memory_usage_estimates_a_key_s_bytes() {
    let usage = |c: &mut Raw, args: &[&str]| -> i64 {
        c.send(&cmd(args));
        let r = text(&c.reply());
        r.strip_prefix(':')
            .and_then(|n| n.trim_end().parse().ok())
            .unwrap_or_else(|| panic!("{args:?}: {r:?}"))
    };
    for store in resp_stores() {
        let server = ServerProc::start("resp", &["--store", store]);
        let mut c = Raw::connect(server.addr);
        c.expect(&cmd(&["SET", "k", "v"]), "+OK\r\n");
        assert_eq!(usage(&mut c, &["MEMORY", "USAGE", "k"]), 63, "{store}");
        c.expect(&cmd(&["MEMORY", "USAGE", "nokey"]), "$-1\r\n");
        let mut small = vec!["SADD", "small"];
        let members: Vec<String> = (0..1000).map(|i| format!("member-{i}")).collect();
        small.extend(members.iter().take(10).map(String::as_str));
        c.send(&cmd(&small));
        c.reply();
        let mut big = vec!["SADD", "big"];
        big.extend(members.iter().map(String::as_str));
        c.send(&cmd(&big));
        c.reply();
        let (s, b) = (
            usage(&mut c, &["MEMORY", "USAGE", "small"]),
            usage(&mut c, &["MEMORY", "USAGE", "big"]),
        );
        assert!(b > 50 * s / 2 && s > 10 * 32, "{store}: {s} {b}");
        // Every member is alike: the default sample extrapolates to what
        // visiting all of them counts.
        assert_eq!(
            usage(&mut c, &["MEMORY", "USAGE", "big", "SAMPLES", "0"]),
            b,
            "{store}"
        );
        for kind in [
            &["RPUSH", "l", "a", "b"][..],
            &["HSET", "h", "f", "v"],
            &["ZADD", "z", "1", "m"],
        ] {
            c.send(&cmd(kind));
            c.reply();
            assert!(
                usage(&mut c, &["MEMORY", "USAGE", kind[1]]) > 63,
                "{store}: {kind:?}"
            );
        }
    }
}

/// A set operation naming many keys costs about what it names: 300,000
/// keys (most missing, one named many times) are answered well within
/// the connection's 20 s read timeout, a hang guard (looking each key up
/// among those already taken, one by one, was some 10^10 comparisons);
/// SDIFF of a large set less many small ones likewise.
#[test]
fn set_operations_over_many_keys_answer() {
    let server = ServerProc::start("resp", &[]);
    let mut c = Raw::connect(server.addr);
    c.expect(&cmd(&["SADD", "a", "x", "y"]), ":2\r\n");
    c.expect(&cmd(&["SADD", "b", "y", "z"]), ":2\r\n");
    let many: Vec<String> = (0..300_000)
        .map(|i| match i % 3 {
            0 => "a".to_string(),
            1 => format!("missing-{i}"),
            _ => "b".to_string(),
        })
        .collect();
    let mut union = vec!["SUNION"];
    union.extend(many.iter().map(String::as_str));
    assert_eq!(strings(&mut c, &union).len(), 3);
    let mut diff = vec!["SDIFFSTORE", "d", "a"];
    diff.extend(many.iter().skip(1).map(String::as_str));
    c.expect(&cmd(&diff), ":0\r\n");
    let mut card = vec!["SINTERCARD", "2", "a", "b"];
    card.extend(["LIMIT", "0"]);
    c.expect(&cmd(&card), ":1\r\n");
    c.expect(&cmd(&["PING"]), "+PONG\r\n");
}

/// One SSCAN/HSCAN/ZSCAN call: the next cursor and what it returned.
fn scan_step(c: &mut Raw, args: &[&str]) -> (String, Vec<String>) {
    c.send(&cmd(args));
    let all = text(&c.reply());
    let lines: Vec<&str> = all.split("\r\n").collect();
    assert_eq!(lines[0], "*2", "{args:?}: {all:?}");
    let n: usize = lines[3][1..].parse().unwrap();
    let items = lines[4..].iter().skip(1).step_by(2).take(n);
    (lines[2].to_string(), items.map(|s| s.to_string()).collect())
}

/// Every call of a scan, from cursor 0 to 0: all it returned, in order.
fn scan_all(c: &mut Raw, name: &str, key: &str, opts: &[&str]) -> Vec<String> {
    let (mut cursor, mut all, mut calls) = ("0".to_string(), Vec::new(), 0);
    loop {
        let args = [&[name, key, cursor.as_str()][..], opts].concat();
        let (next, items) = scan_step(c, &args);
        all.extend(items);
        calls += 1;
        assert!(calls < 10_000, "{name} does not end");
        if next == "0" {
            return all;
        }
        cursor = next;
    }
}

/// SSCAN, HSCAN and ZSCAN over 1,000 members, 7 places a call: every
/// member exactly once, with its value or score; MATCH keeps only the
/// members it matches, the values beside them.
#[test]
fn collection_scans_return_every_member_once() {
    let server = ServerProc::start("resp", &[]);
    let mut c = Raw::connect(server.addr);
    let names: Vec<String> = (0..1000).map(|i| format!("m{i}")).collect();
    let (mut sadd, mut hset, mut zadd) = (vec!["SADD", "s"], vec!["HSET", "h"], vec!["ZADD", "z"]);
    let values: Vec<String> = (0..1000).map(|i| format!("{}", i * 2)).collect();
    for (m, v) in names.iter().zip(&values) {
        sadd.push(m);
        hset.extend([m.as_str(), v.as_str()]);
        zadd.extend([v.as_str(), m.as_str()]);
    }
    c.expect(&cmd(&sadd), ":1000\r\n");
    c.expect(&cmd(&hset), ":1000\r\n");
    c.expect(&cmd(&zadd), ":1000\r\n");
    let mut want: Vec<String> = names.clone();
    want.sort();
    let mut got = scan_all(&mut c, "SSCAN", "s", &["COUNT", "7"]);
    got.sort();
    assert_eq!(got, want);
    for name in ["HSCAN", "ZSCAN"] {
        let key = if name == "HSCAN" { "h" } else { "z" };
        let pairs = scan_all(&mut c, name, key, &["COUNT", "7"]);
        let mut members: Vec<String> = pairs.chunks(2).map(|p| p[0].clone()).collect();
        for p in pairs.chunks(2) {
            let i: usize = p[0][1..].parse().unwrap();
            assert_eq!(p[1], values[i], "{name}: {p:?}");
        }
        members.sort();
        assert_eq!(members, want, "{name}");
    }
    let mut matched = scan_all(&mut c, "ZSCAN", "z", &["MATCH", "m1?", "COUNT", "50"]);
    assert_eq!(matched.len(), 20, "{matched:?}");
    let scores: Vec<String> = matched.iter().skip(1).step_by(2).cloned().collect();
    matched = matched.into_iter().step_by(2).collect();
    matched.sort();
    let want: Vec<String> = (10..20).map(|i| format!("m{i}")).collect();
    assert_eq!(matched, want);
    assert!(scores.iter().all(|s| s.parse::<u32>().unwrap() < 40));
}
