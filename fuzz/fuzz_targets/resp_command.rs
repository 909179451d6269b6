#![no_main]
//! RESP command parsing (`proto::resp::command::parse`, after the
//! client's encoder `client::command` and the framer): the arguments
//! survive encoding and framing unchanged, and the command parsed agrees
//! with Redis 7's argument checks written a second time
//! (`model::resp::refuse`, on proto's table of names and arities), with
//! the right keys, values and numbers, and is counted under the name it
//! is parsed as.
//! Input: [separator, arguments joined by it…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::Input;
use serverlab_fuzz::model::resp::refuse;
use serverlab_fuzz::model::resp_wire::int;
use serverlab_proto::resp::command::{parse, Cmd, ListCmd, ServerCmd, StrCmd};
use serverlab_proto::resp::{client, End, Framed, Framer, Limits, Name, SetCond, Span};

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
    let (name, cmd) = match (refuse(&owned), cmd) {
        (Err(want), Cmd::Reject(r)) => {
            assert_eq!(r.name(), want.kind, "{:?}", show());
            return;
        }
        (Err(want), cmd) => panic!("{:?} parsed {cmd:?}, not refused {want:?}", show()),
        (Ok(name), Cmd::Reject(_)) if SERVER.contains(&name) => return,
        (Ok(name), cmd) => (name, cmd),
    };
    assert!(args[0].eq_ignore_ascii_case(name.as_bytes()));
    assert_eq!(cmd.name(), Name::find(args[0]).map(Name::parsed_as));
    let get = |s: Span| framer.get(&wire, s);
    match cmd {
        Cmd::Str(c) => strings(name, c, &args, get),
        Cmd::List(c) => lists(name, c, &args, get),
        Cmd::Server(ServerCmd::Echo(k) | ServerCmd::Ping(Some(k))) => assert_eq!(get(k), args[1]),
        _ => {}
    }
});

/// A string command's keys, values and numbers are its arguments'
/// (which framed unchanged).
fn strings<'w>(name: &str, cmd: StrCmd, args: &[&[u8]], get: impl Fn(Span) -> &'w [u8]) {
    match cmd {
        StrCmd::Get(k) => assert_eq!(get(k), args[1]),
        StrCmd::Set { key, value, cond } => {
            assert_eq!((get(key), get(value)), (args[1], args[2]));
            let last = args[3..].last().map(|a| a.to_ascii_lowercase());
            let want = match last.as_deref() {
                None => SetCond::Always,
                Some(b"nx") => SetCond::Absent,
                _ => SetCond::Present,
            };
            assert_eq!(cond, want);
        }
        StrCmd::IncrBy { key, by } => {
            assert_eq!(get(key), args[1]);
            let want = match name {
                "incr" => 1,
                "decr" => -1,
                "incrby" => int(args[2]).unwrap(),
                _ => -int(args[2]).unwrap(),
            };
            assert_eq!(by, want);
        }
        StrCmd::Del | StrCmd::Exists | StrCmd::MGet | StrCmd::MSet => {}
    }
}

/// A list command's key, end and numbers are its arguments'.
fn lists<'w>(name: &str, cmd: ListCmd, args: &[&[u8]], get: impl Fn(Span) -> &'w [u8]) {
    match cmd {
        ListCmd::Push { end, key } | ListCmd::Pop { end, key, .. } => {
            assert_eq!(get(key), args[1]);
            assert_eq!(end == End::Left, name.starts_with('l'));
            if let ListCmd::Pop { count, .. } = cmd {
                assert_eq!(count, args.get(2).map(|c| int(c).unwrap() as usize));
            }
        }
        ListCmd::LLen(k) => assert_eq!(get(k), args[1]),
        ListCmd::LIndex { key, index } => {
            assert_eq!((get(key), index), (args[1], int(args[2])))
        }
        ListCmd::LRange { key, start, stop } => {
            let want = (args[1], int(args[2]).unwrap(), int(args[3]).unwrap());
            assert_eq!((get(key), start, stop), want)
        }
    }
}
