#![no_main]
//! RESP command parsing (`proto::resp::command::parse`, after the
//! client's encoder `client::command` and the framer): the arguments
//! survive encoding and framing unchanged, and the command parsed agrees
//! with Redis 7's names, arity and argument checks written a second time
//! (`model::resp::refuse`), with the right keys, values and numbers.
//! Input: [separator, arguments joined by it…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::Input;
use serverlab_fuzz::model::resp::refuse;
use serverlab_fuzz::model::resp_wire::int;
use serverlab_proto::resp::command::{parse, Cmd, ListCmd, ServerCmd, StrCmd};
use serverlab_proto::resp::{client, End, Framed, Framer, Limits, Name, SetCond};

/// Commands whose subcommands and options are not modelled.
const SERVER: [&str; 5] = ["select", "command", "config", "client", "hello"];

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let sep = input.byte();
    let args: Vec<&[u8]> = input.rest().split(|&b| b == sep).collect();
    let mut wire = Vec::new();
    client::command(&mut wire, &args);
    let mut framer = Framer::new();
    let framed = framer.frame(&wire, &Limits::default());
    assert_eq!(framed, Framed::Request { len: wire.len() });
    let arg = |i: usize| framer.arg(&wire, i);
    assert!(
        (0..args.len()).all(|i| arg(i) == args[i]),
        "framed other arguments"
    );

    let owned: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
    let cmd = parse(&framer, &wire);
    let show = || {
        args.iter()
            .map(|a| String::from_utf8_lossy(a))
            .collect::<Vec<_>>()
    };
    let name = match (refuse(&owned), cmd) {
        (Err(want), Cmd::Reject(r)) => {
            assert_eq!(r.name(), want.kind, "{:?}", show());
            return;
        }
        (Err(want), cmd) => panic!("{:?} parsed {cmd:?}, not refused {want:?}", show()),
        (Ok(name), Cmd::Reject(_)) if SERVER.contains(&name) => return,
        (Ok(name), cmd) => (name, cmd),
    };
    let span = |i: usize| arg(i);
    let by_name = |n: &[u8]| n.eq_ignore_ascii_case(name.0.as_bytes());
    assert!(by_name(args[0]));
    assert_eq!(name.1.name(), Name::find(args[0]).map(Name::family));
    match name.1 {
        Cmd::Str(StrCmd::Get(k))
        | Cmd::List(ListCmd::LLen(k))
        | Cmd::Server(ServerCmd::Echo(k) | ServerCmd::Ping(Some(k))) => {
            assert_eq!(framer.get(&wire, k), span(1))
        }
        Cmd::Str(StrCmd::Set { key, value, cond }) => {
            assert_eq!(
                (framer.get(&wire, key), framer.get(&wire, value)),
                (span(1), span(2))
            );
            let last = args[3..].last().map(|a| a.to_ascii_lowercase());
            let want = match last.as_deref() {
                None => SetCond::Always,
                Some(b"nx") => SetCond::Absent,
                _ => SetCond::Present,
            };
            assert_eq!(cond, want);
        }
        Cmd::Str(StrCmd::IncrBy { key, by }) => {
            assert_eq!(framer.get(&wire, key), span(1));
            let want = match name.0 {
                "incr" => 1,
                "decr" => -1,
                "incrby" => int(span(2)).unwrap(),
                _ => -int(span(2)).unwrap(),
            };
            assert_eq!(by, want);
        }
        Cmd::List(ListCmd::Push { end, key } | ListCmd::Pop { end, key, .. }) => {
            assert_eq!(framer.get(&wire, key), span(1));
            assert_eq!(end == End::Left, name.0.starts_with('l'));
            if let Cmd::List(ListCmd::Pop { count, .. }) = name.1 {
                assert_eq!(count, args.get(2).map(|c| int(c).unwrap() as usize));
            }
        }
        Cmd::List(ListCmd::LIndex { key, index }) => {
            assert_eq!(
                (framer.get(&wire, key), index),
                (span(1), int(span(2)).unwrap())
            )
        }
        Cmd::List(ListCmd::LRange { key, start, stop }) => {
            let want = (span(1), int(span(2)).unwrap(), int(span(3)).unwrap());
            assert_eq!((framer.get(&wire, key), start, stop), want)
        }
        _ => {}
    }
});
