//! What the server says about itself and a connection's reset, over real
//! sockets under every strategy (docs/protocols/resp.md): COMMAND GETKEYS
//! and COMMAND LIST byte for byte as redis-server 7.0.15 answers them
//! (the script below was answered by it; `resp_interop` checks it
//! still is), COMMAND INFO's `movablekeys`, every subcommand COMMAND LIST
//! names served, RESET, and CONFIG RESETSTAT starting INFO's command and
//! error counts again.

use crate::resp::{cmd, Raw};
use crate::support::*;

/// Requests and redis-server 7.0.15's exact replies, in order, from an
/// empty database.
#[rustfmt::skip]
pub const SCRIPT: &[(&[&str], &str)] = &[
    (&["COMMAND", "GETKEYS"], "-ERR wrong number of arguments for 'command|getkeys' command\r\n"),
    (&["COMMAND", "GETKEYS", "get"], "-ERR wrong number of arguments for 'command|getkeys' command\r\n"),
    (&["COMMAND", "GETKEYS", "get", "k"], "*1\r\n$1\r\nk\r\n"),
    (&["COMMAND", "GETKEYS", "GET", "k", "x"], "-ERR Invalid number of arguments specified for command\r\n"),
    (&["COMMAND", "GETKEYS", "nosuch", "k"], "-ERR Invalid command specified\r\n"),
    (&["COMMAND", "GETKEYS", "ping", "x"], "-ERR The command has no key arguments\r\n"),
    (&["COMMAND", "GETKEYS", "keys", "*"], "-ERR The command has no key arguments\r\n"),
    (&["COMMAND", "GETKEYS", "mset", "a", "1", "b", "2"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["COMMAND", "GETKEYS", "mset", "a", "1", "b"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["COMMAND", "GETKEYS", "zunionstore", "t", "2", "a", "b"], "*3\r\n$1\r\nt\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["COMMAND", "GETKEYS", "zunionstore", "t", "5", "a", "b"], "-ERR Invalid arguments specified for command\r\n"),
    (&["COMMAND", "GETKEYS", "zunionstore", "t", "x", "a", "b"], "-ERR Invalid arguments specified for command\r\n"),
    (&["COMMAND", "GETKEYS", "zunionstore", "t", "0", "a"], "-ERR Invalid arguments specified for command\r\n"),
    (&["COMMAND", "GETKEYS", "zunionstore", "t", "-1", "a"], "-ERR Invalid arguments specified for command\r\n"),
    (&["COMMAND", "GETKEYS", "lmpop", "2", "a", "b", "left"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["COMMAND", "GETKEYS", "lmpop", "3", "a", "b", "left"], "*3\r\n$1\r\na\r\n$1\r\nb\r\n$4\r\nleft\r\n"),
    (&["COMMAND", "GETKEYS", "lmpop", "9", "a", "b", "left"], "-ERR Invalid arguments specified for command\r\n"),
    (&["COMMAND", "GETKEYS", "sort", "abc", "store", "def"], "*2\r\n$3\r\nabc\r\n$3\r\ndef\r\n"),
    (&["COMMAND", "GETKEYS", "sort", "abc", "by", "w_*", "get", "#", "store", "d"], "*2\r\n$3\r\nabc\r\n$1\r\nd\r\n"),
    (&["COMMAND", "GETKEYS", "sort", "abc", "store"], "*1\r\n$3\r\nabc\r\n"),
    (&["COMMAND", "GETKEYS", "sort", "abc", "bogus", "store", "d"], "*2\r\n$3\r\nabc\r\n$1\r\nd\r\n"),
    (&["COMMAND", "GETKEYS", "sort", "abc", "store", "d", "limit", "0"], "*2\r\n$3\r\nabc\r\n$1\r\nd\r\n"),
    (&["COMMAND", "GETKEYS", "sort", "abc", "limit", "store", "d"], "*1\r\n$3\r\nabc\r\n"),
    (&["COMMAND", "GETKEYS", "sort", "abc", "store", "invalid", "store", "stillbad", "store", "def"], "*2\r\n$3\r\nabc\r\n$3\r\ndef\r\n"),
    (&["COMMAND", "GETKEYS", "sort_ro", "abc", "store", "d"], "*1\r\n$3\r\nabc\r\n"),
    (&["COMMAND", "GETKEYS", "memory", "usage", "key"], "*1\r\n$3\r\nkey\r\n"),
    (&["COMMAND", "GETKEYS", "memory", "usage"], "-ERR Invalid number of arguments specified for command\r\n"),
    (&["COMMAND", "GETKEYS", "memory"], "-ERR wrong number of arguments for 'command|getkeys' command\r\n"),
    (&["COMMAND", "GETKEYS", "object", "encoding", "k"], "*1\r\n$1\r\nk\r\n"),
    (&["COMMAND", "GETKEYS", "object", "freq", "k", "x"], "-ERR Invalid number of arguments specified for command\r\n"),
    (&["COMMAND", "GETKEYS", "config", "get", "x"], "-ERR The command has no key arguments\r\n"),
    (&["COMMAND", "GETKEYS", "config", "get"], "-ERR The command has no key arguments\r\n"),
    (&["COMMAND", "GETKEYS", "config", "nosuch", "x"], "-ERR Invalid command specified\r\n"),
    (&["COMMAND", "GETKEYS", "lcs", "key1", "key2"], "*2\r\n$4\r\nkey1\r\n$4\r\nkey2\r\n"),
    (&["COMMAND", "GETKEYS", "blpop", "a", "b", "0"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["COMMAND", "GETKEYS", "copy", "a", "b", "db", "1"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["COMMAND", "GETKEYS", "exists", "a", "b", "a"], "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\na\r\n"),
    (&["COMMAND", "GETKEYS", "sintercard", "2", "a", "b", "limit", "3"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["COMMAND", "GETKEYS", "watch", "a", "b"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["COMMAND", "GETKEYS", "client", "setname", "x"], "-ERR The command has no key arguments\r\n"),
    (&["COMMAND", "GETKEYS", "swapdb", "0", "1"], "-ERR The command has no key arguments\r\n"),
    (&["COMMAND", "GETKEYS", "blmpop", "0", "2", "a", "b", "left"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["COMMAND", "GETKEYS", "zrangestore", "d", "s", "0", "1"], "*2\r\n$1\r\nd\r\n$1\r\ns\r\n"),
    (&["COMMAND", "GETKEYS", "select", "1"], "-ERR The command has no key arguments\r\n"),
    (&["COMMAND", "GETKEYS", "command", "getkeys", "get", "k"], "-ERR The command has no key arguments\r\n"),
    (&["COMMAND", "GETKEYS", "touch", "a"], "*1\r\n$1\r\na\r\n"),
    (&["COMMAND", "GETKEYS", "rename", "a", "b"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["COMMAND", "GETKEYS", "restore", "a", "0", "p"], "*1\r\n$1\r\na\r\n"),
    (&["COMMAND", "GETKEYS", "zinter", "2", "a", "b"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["COMMAND", "GETKEYS", "zdiffstore", "d", "1", "a"], "*2\r\n$1\r\nd\r\n$1\r\na\r\n"),
    (&["COMMAND", "GETKEYS", "sinterstore", "d", "a", "b"], "*3\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["COMMAND", "GETKEYS", "bzmpop", "0", "1", "a", "min"], "*1\r\n$1\r\na\r\n"),
    (&["COMMAND", "GETKEYS", "zintercard", "2", "a", "b"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["COMMAND", "GETKEYS", "smove", "a", "b", "m"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["command", "getkeys", "Get", "k"], "*1\r\n$1\r\nk\r\n"),
    (&["COMMAND", "LIST", "bad_arg"], "-ERR syntax error\r\n"),
    (&["COMMAND", "LIST", "filterby", "bad_arg"], "-ERR syntax error\r\n"),
    (&["COMMAND", "LIST", "filterby", "bad_arg", "bad_arg2"], "-ERR syntax error\r\n"),
    (&["COMMAND", "LIST", "filterby", "aclcat", "non_existing_category"], "*0\r\n"),
    (&["COMMAND", "LIST", "filterby", "module", "x"], "*0\r\n"),
    (&["COMMAND", "LIST", "filterby", "pattern", "set"], "*1\r\n$3\r\nset\r\n"),
    (&["COMMAND", "LIST", "filterby", "pattern", "GET"], "*1\r\n$3\r\nget\r\n"),
    (&["COMMAND", "LIST", "filterby", "pattern", "non_exists*"], "*0\r\n"),
    (&["COMMAND", "LIST", "FILTERBY", "PATTERN", "lmov?"], "*1\r\n$5\r\nlmove\r\n"),
    (&["COMMAND", "LIST", "filterby", "pattern", "set", "x"], "-ERR syntax error\r\n"),
    (&["COMMAND", "LIST", "x", "pattern", "set"], "-ERR syntax error\r\n"),
    (&["COMMAND", "INFO", "get|key"], "*1\r\n$-1\r\n"),
    (&["COMMAND", "INFO", "config|get|key"], "*1\r\n$-1\r\n"),
    (&["COMMAND", "LIST", "FILTERBY", "PATTERN", "*[z]unionstore"], "*1\r\n$11\r\nzunionstore\r\n"),
    (&["COMMAND", "LIST", "FILTERBY", "ACLCAT"], "-ERR syntax error\r\n"),
    (&["MULTI"], "+OK\r\n"),
    (&["SET", "rk", "v"], "+QUEUED\r\n"),
    (&["RESET"], "+RESET\r\n"),
    (&["EXEC"], "-ERR EXEC without MULTI\r\n"),
    (&["EXISTS", "rk"], ":0\r\n"),
    (&["SELECT", "3"], "+OK\r\n"),
    (&["SET", "rk", "1"], "+OK\r\n"),
    (&["RESET"], "+RESET\r\n"),
    (&["EXISTS", "rk"], ":0\r\n"),
    (&["SELECT", "3"], "+OK\r\n"),
    (&["DEL", "rk"], ":1\r\n"),
    (&["SELECT", "0"], "+OK\r\n"),
    (&["CLIENT", "SETNAME", "me"], "+OK\r\n"),
    (&["RESET"], "+RESET\r\n"),
    (&["CLIENT", "GETNAME"], "$-1\r\n"),
    (&["WATCH", "rw"], "+OK\r\n"),
    (&["SET", "rw", "1"], "+OK\r\n"),
    (&["RESET"], "+RESET\r\n"),
    (&["MULTI"], "+OK\r\n"),
    (&["EXEC"], "*0\r\n"),
    (&["reset"], "+RESET\r\n"),
    (&["RESET", "x"], "-ERR wrong number of arguments for 'reset' command\r\n"),
    (&["DISCARD"], "-ERR DISCARD without MULTI\r\n"),
];

/// COMMAND INFO's reply for `name` (its flags are simple strings, the
/// only ones in it).
fn flags(c: &mut Raw, name: &str) -> String {
    c.send(&cmd(&["COMMAND", "INFO", name]));
    text(&c.reply())
}

/// The names COMMAND LIST gives.
fn listed(c: &mut Raw) -> Vec<String> {
    c.send(&cmd(&["COMMAND", "LIST"]));
    let all = text(&c.reply());
    all.split("\r\n")
        .skip(1)
        .filter(|l| !l.starts_with('$') && !l.is_empty())
        .map(str::to_string)
        .collect()
}

fn introspection(strategy: &str) {
    let server = ServerProc::start(
        "resp",
        &with_threads(strategy, "2", &["--strategy", strategy]),
    );
    let mut c = Raw::connect(server.addr);
    for (args, want) in SCRIPT {
        c.send(&cmd(args));
        assert_eq!(text(&c.reply()), *want, "{strategy}: {args:?}");
    }
    // Keys beyond the legacy range (counted, an option's, computed) are
    // movable, as Redis flags them; a range is not.
    for name in ["ZUNIONSTORE", "SORT", "SORT_RO", "LMPOP", "SINTERCARD"] {
        assert!(
            flags(&mut c, name).contains("+movablekeys\r\n"),
            "{strategy}: {name}"
        );
    }
    for name in ["GET", "MSET", "LMOVE", "BLPOP", "RENAME", "PING"] {
        assert!(
            !flags(&mut c, name).contains("+movablekeys\r\n"),
            "{strategy}: {name}"
        );
    }
    // Every subcommand COMMAND LIST names is served: none is unknown.
    let names = listed(&mut c);
    assert!(names.contains(&"config|get".to_string()), "{names:?}");
    for full in names.iter().filter(|n| n.contains('|')) {
        let (command, sub) = full.split_once('|').unwrap();
        c.send(&cmd(&[command, sub]));
        let reply = text(&c.reply());
        assert!(!reply.contains("unknown subcommand"), "{full}: {reply}");
    }
    resetstat(&mut c, strategy);
    let (status, out) = server.stop();
    assert!(status.success(), "{strategy}: {out}");
}

/// CONFIG RESETSTAT: INFO's commandstats, errorstats and
/// `total_error_replies` count again from 0.
fn resetstat(c: &mut Raw, strategy: &str) {
    c.expect(&cmd(&["GET", "k"]), "$-1\r\n");
    c.expect(&cmd(&["SET", "s", "1"]), "+OK\r\n");
    c.send(&cmd(&["LPUSH", "s", "x"]));
    c.reply();
    let before = c.bulk(&cmd(&["INFO", "commandstats", "errorstats", "stats"]));
    assert!(
        before.contains("cmdstat_get:calls="),
        "{strategy}: {before}"
    );
    assert!(
        before.contains("errorstat_WRONGTYPE:count="),
        "{strategy}: {before}"
    );
    c.expect(&cmd(&["CONFIG", "RESETSTAT"]), "+OK\r\n");
    let after = c.bulk(&cmd(&["INFO", "commandstats", "errorstats", "stats"]));
    for gone in ["cmdstat_get", "cmdstat_lpush", "errorstat_"] {
        assert!(!after.contains(gone), "{strategy}: {gone} in {after}");
    }
    assert!(
        after.contains("total_error_replies:0\r\n"),
        "{strategy}: {after}"
    );
    c.send(&cmd(&["LPUSH", "s", "x"]));
    c.reply();
    let again = c.bulk(&cmd(&["INFO", "commandstats", "errorstats"]));
    assert!(
        again.contains(
            "cmdstat_lpush:calls=1,usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=1"
        ),
        "{strategy}: {again}"
    );
    assert!(
        again.contains("errorstat_WRONGTYPE:count=1\r\n"),
        "{strategy}: {again}"
    );
}

per_strategy!(resp_introspection, introspection);
