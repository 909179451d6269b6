use super::*;
use crate::resp::client;
use crate::resp::frame::Framed;
use crate::resp::name::Family;
use crate::resp::Limits;

fn parsed(args: &[&str]) -> (Cmd, Vec<u8>, Framer) {
    let mut wire = Vec::new();
    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    client::command(&mut wire, &refs);
    let mut f = Framer::new();
    assert!(matches!(
        f.frame(&wire, &Limits::default()),
        Framed::Request { .. }
    ));
    (parse(&f, &wire), wire, f)
}

fn cmd(args: &[&str]) -> Cmd {
    parsed(args).0
}

#[test]
fn names_are_case_insensitive_and_arity_is_redis() {
    assert!(matches!(cmd(&["get", "k"]), Cmd::Str(StrCmd::Get(_))));
    assert!(matches!(cmd(&["GeT", "k"]), Cmd::Str(StrCmd::Get(_))));
    assert_eq!(cmd(&["GET"]), Cmd::Reject(Rejection::WrongArity("get")));
    assert_eq!(
        cmd(&["GET", "a", "b"]),
        Cmd::Reject(Rejection::WrongArity("get"))
    );
    assert_eq!(
        cmd(&["nosuch", "x"]),
        Cmd::Reject(Rejection::UnknownCommand)
    );
    assert_eq!(
        cmd(&["averyveryverylongname"]),
        Cmd::Reject(Rejection::UnknownCommand)
    );
    assert_eq!(
        cmd(&["PING", "a", "b"]),
        Cmd::Reject(Rejection::WrongArity("ping"))
    );
    assert_eq!(
        cmd(&["MSET", "a", "1", "b"]),
        Cmd::Reject(Rejection::WrongArity("mset"))
    );
    assert_eq!(cmd(&["MSET", "a", "1"]), Cmd::Str(StrCmd::MSet));
    assert_eq!(
        cmd(&["LPOP", "k", "1", "2"]),
        Cmd::Reject(Rejection::WrongArity("lpop"))
    );
}

#[test]
fn arguments_are_checked() {
    let (c, wire, f) = parsed(&["SET", "k", "v", "nx"]);
    let Cmd::Str(StrCmd::Set { key, value, cond }) = c else {
        panic!("{c:?}")
    };
    assert_eq!(
        (f.get(&wire, key), f.get(&wire, value), cond),
        (&b"k"[..], &b"v"[..], SetCond::Absent)
    );
    assert_eq!(
        cmd(&["SET", "k", "v", "NX", "XX"]),
        Cmd::Reject(Rejection::Syntax)
    );
    assert!(matches!(
        cmd(&["SET", "k", "v", "XX", "XX"]),
        Cmd::Str(StrCmd::Set {
            cond: SetCond::Present,
            ..
        })
    ));
    assert_eq!(
        cmd(&["SET", "k", "v", "bogus"]),
        Cmd::Ext(Name::Set),
        "judged where SET's options are served"
    );
    assert_eq!(cmd(&["SET", "k", "v", "EX", "10"]), Cmd::Ext(Name::Set));
    assert!(matches!(
        cmd(&["INCRBY", "k", "-5"]),
        Cmd::Str(StrCmd::IncrBy { by: -5, .. })
    ));
    assert!(matches!(
        cmd(&["DECR", "k"]),
        Cmd::Str(StrCmd::IncrBy { by: -1, .. })
    ));
    assert_eq!(
        cmd(&["INCRBY", "k", "1.5"]),
        Cmd::Reject(Rejection::NotInteger)
    );
    assert_eq!(
        cmd(&["DECRBY", "k", "-9223372036854775808"]),
        Cmd::Reject(Rejection::DecrementOverflow)
    );
    assert!(matches!(
        cmd(&["LRANGE", "k", "0", "-1"]),
        Cmd::List(ListCmd::LRange {
            start: 0,
            stop: -1,
            ..
        })
    ));
    // Redis looks LINDEX's key up before it reads the index: the
    // word is kept for the server to judge.
    assert!(matches!(
        cmd(&["LINDEX", "k", "x"]),
        Cmd::List(ListCmd::LIndex { index: None, .. })
    ));
    assert_eq!(
        cmd(&["LPOP", "k", "-1"]),
        Cmd::Reject(Rejection::NotPositive)
    );
    // A count that is not a number is "out of range" too, as in Redis.
    assert_eq!(
        cmd(&["LPOP", "k", "abc"]),
        Cmd::Reject(Rejection::NotPositive)
    );
    assert!(matches!(
        cmd(&["RPOP", "k", "3"]),
        Cmd::List(ListCmd::Pop {
            end: End::Right,
            count: Some(3),
            ..
        })
    ));
    assert_eq!(cmd(&["SELECT", "0"]), Cmd::Conn(ConnCmd::Select(0)));
    assert_eq!(cmd(&["SELECT", "15"]), Cmd::Conn(ConnCmd::Select(15)));
    assert_eq!(cmd(&["SELECT", "16"]), Cmd::Reject(Rejection::DbIndex));
    assert_eq!(cmd(&["SELECT", "-1"]), Cmd::Reject(Rejection::DbIndex));
    assert_eq!(cmd(&["SELECT", "x"]), Cmd::Reject(Rejection::NotInteger));
    assert_eq!(cmd(&["FLUSHALL", "ASYNC"]), Cmd::Ext(Name::FlushAll));
    assert_eq!(cmd(&["FLUSHDB", "later"]), Cmd::Reject(Rejection::Syntax));
}

#[test]
fn subcommands() {
    assert_eq!(
        cmd(&["COMMAND"]),
        Cmd::Server(ServerCmd::Command(CommandQuery::All))
    );
    assert_eq!(
        cmd(&["command", "count"]),
        Cmd::Server(ServerCmd::Command(CommandQuery::Count))
    );
    assert_eq!(
        cmd(&["COMMAND", "DOCS"]),
        Cmd::Server(ServerCmd::Command(CommandQuery::Docs))
    );
    assert_eq!(
        cmd(&["COMMAND", "COUNT", "x"]),
        Cmd::Reject(Rejection::WrongArity("command|count"))
    );
    assert_eq!(
        cmd(&["COMMAND", "nope"]),
        Cmd::Reject(Rejection::UnknownSubcommand("COMMAND"))
    );
    assert_eq!(
        cmd(&["CONFIG", "GET", "save"]),
        Cmd::Server(ServerCmd::ConfigGet)
    );
    assert_eq!(
        cmd(&["CONFIG", "GET"]),
        Cmd::Reject(Rejection::WrongArity("config|get"))
    );
    assert_eq!(
        cmd(&["CONFIG"]),
        Cmd::Reject(Rejection::WrongArity("config"))
    );
    assert_eq!(cmd(&["CONFIG", "SET", "a", "b"]), Cmd::Ext(Name::Config));
    assert!(matches!(
        cmd(&["CLIENT", "SETNAME", "me"]),
        Cmd::Conn(ConnCmd::ClientSetName(_))
    ));
    assert_eq!(
        cmd(&["CLIENT", "SETNAME", "a b"]),
        Cmd::Reject(Rejection::BadClientName)
    );
    assert_eq!(
        cmd(&["CLIENT", "GETNAME"]),
        Cmd::Conn(ConnCmd::ClientGetName)
    );
    assert_eq!(
        cmd(&["CLIENT", "SETINFO", "LIB-NAME", "x"]),
        Cmd::Conn(ConnCmd::ClientSetInfo)
    );
    assert_eq!(
        cmd(&["CLIENT", "SETINFO", "color", "x"]),
        Cmd::Reject(Rejection::UnknownSetInfo)
    );
    assert_eq!(cmd(&["QUIT"]), Cmd::Conn(ConnCmd::Quit));
    assert_eq!(cmd(&["HELLO"]), Cmd::Conn(ConnCmd::Hello(None)));
    assert!(matches!(
        cmd(&["HELLO", "2", "SETNAME", "n"]),
        Cmd::Conn(ConnCmd::Hello(Some(_)))
    ));
    assert_eq!(cmd(&["HELLO", "3"]), Cmd::Reject(Rejection::NoProto));
    assert_eq!(cmd(&["HELLO", "x"]), Cmd::Reject(Rejection::HelloVersion));
    assert_eq!(
        cmd(&["HELLO", "2", "AUTH", "a", "b"]),
        Cmd::Reject(Rejection::HelloOption { at: 2 })
    );
}

/// The parser's arities are the table COMMAND lists.
#[test]
fn arities_match_the_table() {
    for n in Name::ALL {
        let (name, arity) = (n.facts().name, n.facts().arity);
        let too_few: Vec<&str> =
            std::iter::repeat_n("x", arity.unsigned_abs() as usize - 1).collect();
        let mut args = vec![name];
        args.extend(&too_few[1.min(too_few.len())..]);
        if arity.unsigned_abs() > 1 {
            assert_eq!(
                cmd(&args),
                Cmd::Reject(Rejection::WrongArity(name)),
                "{name}"
            );
        }
    }
}

/// Every name parses, with valid arguments, into a command of its
/// family: the statistics count each command under the name it was
/// parsed as. A command the table runs on the fast path always parses
/// into a typed command; every other into [`Cmd::Ext`], its arity
/// checked, its arguments read where it is served (but the plain forms
/// of SET, CONFIG GET and CLIENT's own subcommands, on the fast path).
#[test]
fn every_name_parses_into_its_family() {
    let valid: [&[&str]; 30] = [
        &["PING"],
        &["ECHO", "x"],
        &["GET", "k"],
        &["SET", "k", "v"],
        &["DEL", "k"],
        &["EXISTS", "k"],
        &["INCR", "k"],
        &["DECR", "k"],
        &["INCRBY", "k", "2"],
        &["DECRBY", "k", "2"],
        &["MGET", "k"],
        &["MSET", "k", "v"],
        &["LPUSH", "k", "v"],
        &["RPUSH", "k", "v"],
        &["LPOP", "k"],
        &["RPOP", "k"],
        &["LLEN", "k"],
        &["LINDEX", "k", "0"],
        &["LRANGE", "k", "0", "1"],
        &["DBSIZE"],
        &["FLUSHALL"],
        &["FLUSHDB"],
        &["SELECT", "0"],
        &["INFO"],
        &["COMMAND"],
        &["CONFIG", "GET", "x"],
        &["CLIENT", "ID"],
        &["HELLO"],
        &["QUIT"],
        &["PUBSUB", "NUMPAT"],
    ];
    for args in valid {
        let n = Name::find(args[0].as_bytes()).unwrap();
        assert_eq!(cmd(args).name(), Some(n.parsed_as()), "{args:?}");
    }
    for n in Name::ALL {
        let f = n.facts();
        let mut args = vec![f.wire];
        args.extend(std::iter::repeat_n(
            "1",
            f.arity.unsigned_abs() as usize - 1,
        ));
        let parsed = cmd(&args);
        if f.family == Family::Fast {
            assert!(!matches!(parsed, Cmd::Ext(_)), "{args:?}");
        } else if !valid.iter().any(|v| v[0] == f.wire) {
            assert_eq!(parsed, Cmd::Ext(n), "{args:?}");
        }
    }
    assert_eq!(cmd(&["nosuch"]).name(), None);
}
