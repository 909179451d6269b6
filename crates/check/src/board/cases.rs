//! The board's conformance cases: every rule of the wire contract's
//! section 1, docs/protocols/board.md, one case each.

use super::talk::{ask, frame, list, number, read, LF, NUL};
use super::Board;
use crate::case::{pause, Case, Ctx, Fail, Scope};
use crate::wire::{show, Conn};
use std::time::{Duration, Instant};

type C<'a> = Ctx<'a, Board>;

use Scope::{Assignment as A, Serverlab as S};

#[allow(
    clippy::too_many_lines,
    reason = "a table of cases, one per line: splitting it would hide the list"
)]
pub fn all() -> Vec<Case<Board>> {
    let case = Case::<Board>::new;
    vec![
        case(
            "post-first-id",
            A,
            "POST to a new topic answers 0",
            "ids count from 0 in each topic; clients use them to READ",
            post_first_id,
        ),
        case(
            "post-next-id",
            A,
            "each POST answers the next id of its topic: 0, 1, 2, …",
            "an id is a message's address; a gap or a repeat loses or overwrites messages",
            post_next_id,
        ),
        case(
            "message-with-at-and-hash",
            A,
            "the topic ends at the first #; the message may hold @ and #",
            "messages are free text: a server that cuts one at @ or #, or ends the topic at a later #, \
             stores it where READ and COUNT of its topic do not find it",
            message_with_at_and_hash,
        ),
        case(
            "empty-topic",
            A,
            "the empty topic (POST@#x) is a topic like any other",
            "the protocol allows a topic of 0 bytes; LIST shows it as @",
            empty_topic,
        ),
        case(
            "read-message",
            A,
            "READ@topic#id answers exactly the message posted with that id",
            "a board that answers POST but loses the message looks correct until someone reads",
            read_message,
        ),
        case(
            "read-leading-zeros",
            A,
            "READ ids may have leading zeros: READ@t#0001 is id 1",
            "ids are decimal numbers, not strings",
            read_leading_zeros,
        ),
        case(
            "read-missing",
            A,
            "READ of an id not yet posted, or of an unknown topic, answers empty",
            "a client polls for new messages this way; an error or a hang breaks it",
            read_missing,
        ),
        case(
            "count",
            A,
            "COUNT answers how many messages a topic holds; 0 for an unknown topic",
            "clients use COUNT to learn which ids exist",
            count,
        ),
        case(
            "list-format",
            A,
            "LIST answers every topic with a leading @, joined by #",
            "the reference client splits the reply on # and strips the @",
            list_format,
        ),
        case(
            "list-creation-order",
            A,
            "LIST holds topics in the order they were created",
            "the protocol fixes the order; a hash map's order is not it",
            list_creation_order,
        ),
        case(
            "invalid-keyword-case",
            A,
            "keywords are upper case: post@t#m is invalid (empty reply) and posts nothing",
            "the whole frame must match; a lenient parser accepts what the protocol refuses",
            invalid_keyword_case,
        ),
        case(
            "invalid-trailing-bytes",
            A,
            "a request with trailing bytes is invalid: LIST␠, READ@a#1#2, COUNT@a#b",
            "a prefix match answers requests the protocol calls invalid",
            invalid_trailing_bytes,
        ),
        case(
            "invalid-topic",
            A,
            "a topic holding @ is invalid: POST@a@b#c answers empty and posts nothing",
            "@ and # delimit topics; allowing them makes LIST ambiguous",
            invalid_topic,
        ),
        case(
            "invalid-empty-message",
            A,
            "POST@t# (no message) is invalid and posts nothing",
            "a message is one or more bytes",
            invalid_empty_message,
        ),
        case(
            "invalid-unknown-request",
            A,
            "an unknown request, or an empty frame, answers an empty reply",
            "invalid requests are answered and counted, never fatal",
            invalid_unknown_request,
        ),
        case(
            "invalid-keeps-connection",
            A,
            "after an invalid request the connection goes on",
            "one bad request must not cost a client its connection",
            invalid_keeps_connection,
        ),
        case(
            "nul-terminator",
            A,
            "a NUL-terminated request's reply ends with NUL; an empty reply is the NUL alone",
            "the reference client reads up to NUL; a missing one hangs it",
            nul_terminator,
        ),
        case(
            "split-request",
            A,
            "a request sent one byte per write is one request",
            "TCP is a byte stream: a request can arrive in pieces",
            split_request,
        ),
        case(
            "pipelined-requests",
            A,
            "many requests in one write are each answered",
            "TCP is a byte stream: one read can hold many requests",
            pipelined_requests,
        ),
        case(
            "replies-in-order",
            A,
            "replies come in request order on each connection, a slow request first",
            "a client matches replies to requests by order alone",
            replies_in_order,
        ),
        case(
            "persistent-connection",
            A,
            "one connection serves many requests, one after another",
            "the reference client keeps one connection for its whole run",
            persistent_connection,
        ),
        case(
            "read-your-write",
            A,
            "once POST answered k, READ@t#k and COUNT on another connection see it at once",
            "the board is linearizable, not eventually consistent: an acknowledged POST is there",
            read_your_write,
        ),
        case(
            "lf-framing",
            S,
            "an LF-terminated request is answered with LF",
            "LF framing lets a person use nc or telnet",
            lf_framing,
        ),
        case(
            "crlf-framing",
            S,
            "a CR before the LF is dropped; the reply ends with LF",
            "telnet sends CRLF",
            crlf_framing,
        ),
        case(
            "cr-before-nul",
            S,
            "a CR before a NUL is part of the request: POST@t#m\\r\\0 is invalid",
            "messages never hold CR; only LF framing drops it",
            cr_before_nul,
        ),
        case(
            "non-utf8-bytes",
            S,
            "topics and messages are bytes, stored and returned exactly",
            "the protocol says bytes, not text",
            non_utf8_bytes,
        ),
        case(
            "long-message",
            S,
            "a message just under --max-request round-trips intact",
            "the reference buffer is 65535 bytes; messages up to it are valid",
            long_message,
        ),
        case(
            "huge-id-not-found",
            S,
            "an id too large for 64 bits is simply not found",
            "a number from a client must never overflow the server",
            huge_id_not_found,
        ),
        case(
            "oversize-frame-closes",
            S,
            "more than --max-request bytes without a terminator closes that connection only",
            "a client must not make the server buffer without bound",
            oversize_frame_closes,
        ),
        case(
            "exit",
            A,
            "EXIT answers TERMINATING, then the server stops accepting connections",
            "the reference client ends its run with EXIT",
            exit,
        )
        .opt_in("--include-exit"),
    ]
}

fn conn(ctx: &mut C) -> Result<Conn, Fail> {
    ctx.conn()
}

fn post(ctx: &mut C, c: &mut Conn, topic: &str, msg: &str, id: u64) -> Result<(), Fail> {
    ask(
        ctx,
        c,
        format!("POST@{topic}#{msg}").as_bytes(),
        NUL,
        id.to_string().as_bytes(),
    )
}

/// `READ@topic#id`, the id as sent (leading zeros and all), answers `want`.
fn read_at(ctx: &mut C, c: &mut Conn, topic: &str, id: &str, want: &[u8]) -> Result<(), Fail> {
    ask(ctx, c, format!("READ@{topic}#{id}").as_bytes(), NUL, want)
}

fn post_first_id(ctx: &mut C) -> Result<(), Fail> {
    let (t, mut c) = (ctx.name("t"), conn(ctx)?);
    post(ctx, &mut c, &t, "first", 0)
}

fn post_next_id(ctx: &mut C) -> Result<(), Fail> {
    let (t, u, mut c) = (ctx.name("t"), ctx.name("u"), conn(ctx)?);
    for (i, m) in ["a", "b", "c"].into_iter().enumerate() {
        post(ctx, &mut c, &t, m, i as u64)?;
    }
    post(ctx, &mut c, &u, "x", 0)?;
    post(ctx, &mut c, &t, "d", 3)
}

fn message_with_at_and_hash(ctx: &mut C) -> Result<(), Fail> {
    let (t, mut c) = (ctx.name("t"), conn(ctx)?);
    let msg = "The dark side of the @moon is #dark.";
    post(ctx, &mut c, &t, msg, 0)?;
    read_at(ctx, &mut c, &t, "0", msg.as_bytes())?;
    let count = format!("COUNT@{t}");
    let n = number(ctx, &mut c, count.as_bytes())?;
    ctx.ensure(n == 1, &count, || {
        format!(
            "{count} answered {n}, not 1: the POST was not counted in topic {t}; the topic is \
             everything up to the first #, the rest (@ and # included) the message"
        )
    })
}

fn empty_topic(ctx: &mut C) -> Result<(), Fail> {
    let mut c = conn(ctx)?;
    // The empty topic is shared with whatever else used this server.
    let n = number(ctx, &mut c, b"COUNT@")?;
    let msg = ctx.name("x");
    post(ctx, &mut c, "", &msg, n)?;
    ask(
        ctx,
        &mut c,
        format!("READ@#{n}").as_bytes(),
        NUL,
        msg.as_bytes(),
    )?;
    let topics = list(ctx, &mut c)?;
    ctx.ensure(topics.iter().any(|t| t.is_empty()), "LIST", || {
        "LIST does not show the empty topic as @".into()
    })
}

fn read_message(ctx: &mut C) -> Result<(), Fail> {
    let (t, mut c) = (ctx.name("t"), conn(ctx)?);
    post(ctx, &mut c, &t, "first message", 0)?;
    post(ctx, &mut c, &t, "second message", 1)?;
    read_at(ctx, &mut c, &t, "0", b"first message")?;
    read_at(ctx, &mut c, &t, "1", b"second message")
}

fn read_leading_zeros(ctx: &mut C) -> Result<(), Fail> {
    let (t, mut c) = (ctx.name("t"), conn(ctx)?);
    post(ctx, &mut c, &t, "zero", 0)?;
    post(ctx, &mut c, &t, "one", 1)?;
    read_at(ctx, &mut c, &t, "0001", b"one")?;
    read_at(ctx, &mut c, &t, "00", b"zero")
}

fn read_missing(ctx: &mut C) -> Result<(), Fail> {
    let (t, u, mut c) = (ctx.name("t"), ctx.name("unknown"), conn(ctx)?);
    post(ctx, &mut c, &t, "only", 0)?;
    read_at(ctx, &mut c, &t, "1", b"")?;
    read_at(ctx, &mut c, &t, "5", b"")?;
    read_at(ctx, &mut c, &u, "0", b"")
}

fn count(ctx: &mut C) -> Result<(), Fail> {
    let (t, u, mut c) = (ctx.name("t"), ctx.name("unknown"), conn(ctx)?);
    for i in 0..3 {
        post(ctx, &mut c, &t, "m", i)?;
    }
    ask(ctx, &mut c, format!("COUNT@{t}").as_bytes(), NUL, b"3")?;
    ask(ctx, &mut c, format!("COUNT@{u}").as_bytes(), NUL, b"0")
}

fn list_format(ctx: &mut C) -> Result<(), Fail> {
    let (t, mut c) = (ctx.name("t"), conn(ctx)?);
    post(ctx, &mut c, &t, "m", 0)?;
    let topics = list(ctx, &mut c)?;
    let n = topics.iter().filter(|x| x[..] == *t.as_bytes()).count();
    ctx.ensure(n == 1, "LIST", || {
        format!("LIST holds topic {t} {n} times, not once")
    })
}

fn list_creation_order(ctx: &mut C) -> Result<(), Fail> {
    // Created in an order that is neither sorted nor reversed sorted.
    let names = [ctx.name("b"), ctx.name("c"), ctx.name("a")];
    let mut c = conn(ctx)?;
    for t in &names {
        post(ctx, &mut c, t, "m", 0)?;
    }
    let topics = list(ctx, &mut c)?;
    let at: Vec<Option<usize>> = names
        .iter()
        .map(|n| topics.iter().position(|t| t[..] == *n.as_bytes()))
        .collect();
    let in_order = at.iter().all(Option::is_some) && at.windows(2).all(|w| w[0] < w[1]);
    let shown: Vec<String> = at
        .iter()
        .map(|p| p.map_or("missing".into(), |p| (p + 1).to_string()))
        .collect();
    ctx.ensure(in_order, "LIST", || {
        format!(
            "created {}, {}, {} in that order; LIST has them at positions {}",
            names[0],
            names[1],
            names[2],
            shown.join(", ")
        )
    })
}

/// Each request, `{t}` in it standing for a fresh topic, is invalid: it
/// answers empty, and the topic stays empty.
fn all_invalid(ctx: &mut C, requests: &[&str]) -> Result<(), Fail> {
    let t = ctx.name("t");
    let mut c = conn(ctx)?;
    for r in requests {
        ask(ctx, &mut c, r.replace("{t}", &t).as_bytes(), NUL, b"")?;
    }
    ask(ctx, &mut c, format!("COUNT@{t}").as_bytes(), NUL, b"0")
}

fn invalid_keyword_case(ctx: &mut C) -> Result<(), Fail> {
    all_invalid(ctx, &["post@{t}#m", "Post@{t}#m", "count@{t}"])
}

fn invalid_trailing_bytes(ctx: &mut C) -> Result<(), Fail> {
    let reqs = [
        "LIST ",
        "READ@{t}#1#2",
        "COUNT@{t}#b",
        "READ@{t}#1x",
        "READ@{t}#",
    ];
    all_invalid(ctx, &reqs)
}

fn invalid_topic(ctx: &mut C) -> Result<(), Fail> {
    all_invalid(ctx, &["POST@{t}@b#c", "COUNT@{t}@b", "READ@{t}@b#0"])
}

fn invalid_empty_message(ctx: &mut C) -> Result<(), Fail> {
    all_invalid(ctx, &["POST@{t}#"])
}

fn invalid_unknown_request(ctx: &mut C) -> Result<(), Fail> {
    all_invalid(ctx, &["AAA", "", "POST", "READ@", "@"])
}

fn invalid_keeps_connection(ctx: &mut C) -> Result<(), Fail> {
    let (t, mut c) = (ctx.name("t"), conn(ctx)?);
    ask(ctx, &mut c, b"AAA", NUL, b"")?;
    post(ctx, &mut c, &t, "after", 0)?;
    ask(ctx, &mut c, format!("POST@{t}#").as_bytes(), NUL, b"")?;
    read_at(ctx, &mut c, &t, "0", b"after")
}

fn nul_terminator(ctx: &mut C) -> Result<(), Fail> {
    let (t, mut c) = (ctx.name("t"), conn(ctx)?);
    for (req, want) in [
        (format!("POST@{t}#m"), &b"0\0"[..]),
        ("AAA".to_string(), b"\0"),
        (format!("READ@{t}#9"), b"\0"),
        (format!("COUNT@{t}"), b"1\0"),
    ] {
        let wire = frame(req.as_bytes(), NUL);
        c.send(&wire);
        // Exactly these bytes, and nothing else before the next reply.
        let got = c.read(Duration::ZERO, |b| {
            (b.len() >= want.len()).then_some(want.len())
        });
        let ok = got.reply() == Some(want);
        ctx.expect(&wire, &show(want), &got, ok)?;
    }
    Ok(())
}

fn split_request(ctx: &mut C) -> Result<(), Fail> {
    let (t, mut c) = (ctx.name("t"), conn(ctx)?);
    for (req, want) in [
        (format!("POST@{t}#one byte at a time"), &b"0\0"[..]),
        (format!("READ@{t}#0"), b"one byte at a time\0"),
    ] {
        let wire = frame(req.as_bytes(), NUL);
        for b in &wire {
            c.send(std::slice::from_ref(b));
            pause();
        }
        let got = read(&mut c);
        let ok = got.reply() == Some(want);
        ctx.expect(&wire, &show(want), &got, ok)?;
    }
    Ok(())
}

fn pipelined_requests(ctx: &mut C) -> Result<(), Fail> {
    let (t, mut c) = (ctx.name("t"), conn(ctx)?);
    let mut wire = Vec::new();
    for i in 0..20 {
        wire.extend(frame(format!("POST@{t}#m{i}").as_bytes(), NUL));
    }
    wire.extend(frame(format!("COUNT@{t}").as_bytes(), NUL));
    c.send(&wire);
    let want: Vec<String> = (0..=20).map(|i| i.to_string()).collect();
    expect_replies(ctx, &mut c, &wire, &want)
}

/// Read `want.len()` NUL-terminated replies; they must be `want`, in order.
fn expect_replies(ctx: &mut C, c: &mut Conn, wire: &[u8], want: &[String]) -> Result<(), Fail> {
    let mut got = Vec::new();
    for _ in want {
        match read(c).reply() {
            Some([body @ .., 0]) => got.push(String::from_utf8_lossy(body).into_owned()),
            other => {
                got.push(format!("{:?}", other.map(show)));
                break;
            }
        }
    }
    let ok = got == want;
    let shown = |v: &[String]| {
        v.iter()
            .map(|s| show(s.as_bytes()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    ctx.note(&show(wire), &shown(want), &shown(&got), ok);
    if ok {
        Ok(())
    } else {
        Err(Fail::new(
            "the replies differ from the requests' answers in order",
        ))
    }
}

fn replies_in_order(ctx: &mut C) -> Result<(), Fail> {
    let (t, u, mut c) = (ctx.name("t"), ctx.name("u"), conn(ctx)?);
    let big = "m".repeat(20_000);
    let mut wire = frame(format!("POST@{t}#{big}").as_bytes(), NUL);
    for r in [
        format!("COUNT@{t}"),
        format!("READ@{t}#0"),
        format!("COUNT@{u}"),
        format!("POST@{u}#x"),
    ] {
        wire.extend(frame(r.as_bytes(), NUL));
    }
    c.send(&wire);
    let want = ["0".to_string(), "1".into(), big, "0".into(), "0".into()];
    expect_replies(ctx, &mut c, &wire, &want)
}

fn persistent_connection(ctx: &mut C) -> Result<(), Fail> {
    let (t, mut c) = (ctx.name("t"), conn(ctx)?);
    for i in 0..100 {
        post(ctx, &mut c, &t, &format!("m{i}"), i).map_err(|f| {
            Fail::new(format!(
                "request {} of 100 on one connection: {}",
                i + 1,
                f.why
            ))
        })?;
    }
    ask(ctx, &mut c, format!("COUNT@{t}").as_bytes(), NUL, b"100")
}

fn read_your_write(ctx: &mut C) -> Result<(), Fail> {
    let t = ctx.name("t");
    let (mut writer, mut reader) = (conn(ctx)?, conn(ctx)?);
    for i in 0..20u64 {
        let msg = format!("m{i}");
        post(ctx, &mut writer, &t, &msg, i)?;
        ask(
            ctx,
            &mut reader,
            format!("READ@{t}#{i}").as_bytes(),
            NUL,
            msg.as_bytes(),
        )?;
        ask(
            ctx,
            &mut reader,
            format!("COUNT@{t}").as_bytes(),
            NUL,
            (i + 1).to_string().as_bytes(),
        )?;
    }
    Ok(())
}

fn lf_framing(ctx: &mut C) -> Result<(), Fail> {
    let (t, mut c) = (ctx.name("t"), conn(ctx)?);
    ask(ctx, &mut c, format!("POST@{t}#typed").as_bytes(), LF, b"0")?;
    ask(ctx, &mut c, format!("READ@{t}#0").as_bytes(), LF, b"typed")?;
    ask(ctx, &mut c, format!("READ@{t}#1").as_bytes(), LF, b"")?;
    // Mixed on one connection: each reply takes its own request's terminator.
    ask(ctx, &mut c, format!("COUNT@{t}").as_bytes(), NUL, b"1")?;
    ask(ctx, &mut c, format!("COUNT@{t}").as_bytes(), LF, b"1")
}

fn crlf_framing(ctx: &mut C) -> Result<(), Fail> {
    let (t, mut c) = (ctx.name("t"), conn(ctx)?);
    let crlf = |r: String| format!("{r}\r").into_bytes();
    ask(ctx, &mut c, &crlf(format!("POST@{t}#telnet")), LF, b"0")?;
    ask(ctx, &mut c, &crlf(format!("READ@{t}#0")), LF, b"telnet")?;
    ask(ctx, &mut c, &crlf(format!("COUNT@{t}")), LF, b"1")
}

fn cr_before_nul(ctx: &mut C) -> Result<(), Fail> {
    let (t, mut c) = (ctx.name("t"), conn(ctx)?);
    ask(ctx, &mut c, format!("POST@{t}#m\r").as_bytes(), NUL, b"")?;
    ask(ctx, &mut c, format!("COUNT@{t}").as_bytes(), NUL, b"0")
}

fn non_utf8_bytes(ctx: &mut C) -> Result<(), Fail> {
    let mut t = ctx.name("t").into_bytes();
    t.extend_from_slice(b"\xff\xfe");
    let mut c = conn(ctx)?;
    let post = [&b"POST@"[..], &t, b"#\x80\x81 \xc3\x28"].concat();
    ask(ctx, &mut c, &post, NUL, b"0")?;
    ask(
        ctx,
        &mut c,
        &[&b"READ@"[..], &t, b"#0"].concat(),
        NUL,
        b"\x80\x81 \xc3\x28",
    )
}

fn long_message(ctx: &mut C) -> Result<(), Fail> {
    let t = ctx.name("t");
    let room = ctx
        .proto
        .max_request
        .saturating_sub(t.len() + 8)
        .min(65_000);
    let msg = "x".repeat(room);
    let mut c = conn(ctx)?;
    post(ctx, &mut c, &t, &msg, 0)?;
    read_at(ctx, &mut c, &t, "0", msg.as_bytes())
}

fn huge_id_not_found(ctx: &mut C) -> Result<(), Fail> {
    let (t, mut c) = (ctx.name("t"), conn(ctx)?);
    post(ctx, &mut c, &t, "m", 0)?;
    for id in [
        "18446744073709551616",
        "99999999999999999999999999999",
        "18446744073709551615",
    ] {
        ask(ctx, &mut c, format!("READ@{t}#{id}").as_bytes(), NUL, b"")?;
    }
    Ok(())
}

fn oversize_frame_closes(ctx: &mut C) -> Result<(), Fail> {
    let t = ctx.name("t");
    let mut c = conn(ctx)?;
    let mut wire = format!("POST@{t}#").into_bytes();
    wire.resize(ctx.proto.max_request + 2, b'x');
    c.send(&wire);
    let sent = format!("{} bytes with no terminator", wire.len());
    ctx.note(&sent, "no reply; the server closes", "(sent)", true);
    ctx.expect_close(&mut c, "more than --max-request bytes")?;
    let mut other = conn(ctx)?;
    ask(ctx, &mut other, format!("COUNT@{t}").as_bytes(), NUL, b"0")
}

fn exit(ctx: &mut C) -> Result<(), Fail> {
    let mut c = conn(ctx)?;
    ask(
        ctx,
        &mut c,
        b"EXIT",
        NUL,
        serverlab_proto::board::TERMINATING,
    )?;
    let deadline = Instant::now() + Duration::from_secs(10).max(ctx.timeout);
    while Instant::now() < deadline {
        if Conn::open(ctx.addr, ctx.timeout).is_err() {
            ctx.note("connect", "refused: the server stopped", "refused", true);
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    ctx.note(
        "connect",
        "refused: the server stopped",
        "accepted, 10 s after EXIT",
        false,
    );
    Err(Fail::new(
        "the server still accepts connections 10 s after EXIT",
    ))
}
