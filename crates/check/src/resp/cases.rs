//! RESP's conformance cases: the wire contract's section 5,
//! docs/protocols/resp.md, one rule each. The assignment's cases are
//! Redis 7's own behaviour; serverlab's are its limits.

use super::talk::{ask, ask_that, bulk, cmd, protocol_error, read, words, C};
use super::Resp;
use crate::case::{pause, Case, Fail, Scope};
use crate::wire::{show, Conn, Got};
use std::time::Duration;

use Scope::{Assignment as A, Serverlab as S};

const WRONGTYPE: &[u8] = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";

pub fn all() -> Vec<Case<Resp>> {
    let case = Case::<Resp>::new;
    vec![
        case("ping", A, "PING answers +PONG; PING msg answers msg as a bulk string",
            "clients check a connection with PING", ping),
        case("echo", A, "ECHO msg answers msg as a bulk string",
            "the simplest round trip of a bulk string", echo),
        case("set-get", A, "SET stores a binary-safe value (CR, LF, NUL) that GET answers exactly",
            "values are bytes, not text", set_get),
        case("get-missing", A, "GET of an absent key answers the null bulk string $-1",
            "a client must tell absent from empty", get_missing),
        case("set-nx-xx", A, "SET NX writes only an absent key, XX only a present one; refused, they answer $-1",
            "NX and XX are how clients make a lock or update in place", set_nx_xx),
        case("del-exists", A, "DEL and EXISTS answer how many keys (EXISTS counts a key named twice twice)",
            "clients rely on the count", del_exists),
        case("counters", A, "INCR, DECR, INCRBY and DECRBY answer the new value; an absent key counts as 0",
            "counters are the commonest use of a key-value store", counters),
        case("incr-not-integer", A, "INCR of a value that is not an integer answers -ERR value is not an integer or out of range",
            "an INCR that silently reset a value would lose data", incr_not_integer),
        case("mset-mget", A, "MSET sets every pair; MGET answers an array with $-1 for absent keys",
            "batching commands saves round trips", mset_mget),
        case("lists", A, "LPUSH and RPUSH answer the new length; LLEN, LINDEX and LRANGE read the list, negative indexes from the end",
            "lists are queues and logs", lists),
        case("pops", A, "LPOP and RPOP answer an element, $-1 on an absent key, an array with a count; a list popped empty is gone",
            "a queue's consumer pops until empty", pops),
        case("wrongtype", A, "a string command on a list, or a list command on a string, answers -WRONGTYPE",
            "kinds must not be silently converted", wrongtype),
        case("unknown-command", A, "an unknown command answers -ERR unknown command '<name>', with args beginning with: …, and the connection goes on",
            "a client learns what the server does not serve without losing its connection", unknown_command),
        case("wrong-arity", A, "a command with the wrong number of arguments answers -ERR wrong number of arguments for '<name>' command",
            "arity errors name the command, so a client can tell which failed", wrong_arity),
        case("case-insensitive", A, "command names are case-insensitive: get, GET and GeT are one command",
            "clients and people type commands either way", case_insensitive),
        case("inline-commands", A, "an inline command (GET k, words separated by spaces, quotes grouping) is a request",
            "people use telnet and nc", inline_commands),
        case("empty-requests", A, "*0, *-1 and a blank line ask for nothing and are not answered",
            "a stray CR LF must not desynchronise replies", empty_requests),
        case("pipelined-in-order", A, "many commands in one write are answered in order",
            "redis-benchmark -P and every client library pipeline", pipelined_in_order),
        case("split-request", A, "a command sent one byte per write is one command",
            "TCP is a byte stream: a request can arrive in pieces", split_request),
        case("read-your-write", A, "once SET or RPUSH is answered, another connection sees it",
            "each key is linearizable: an acknowledged write is there", read_your_write),
        case("protocol-error-closes", A, "a malformed request (a bad * or $ length, a bulk not ended by CR LF) answers -ERR Protocol error: … and closes that connection",
            "after a framing error the server cannot know where the next request starts", protocol_error_closes),
        case("admin", A, "SELECT 0, DBSIZE, CONFIG GET, COMMAND COUNT, CLIENT SETNAME/GETNAME and INFO's four sections answer as Redis",
            "redis-cli, redis-benchmark and client libraries ask these when they connect", admin),
        case("quit", A, "QUIT answers +OK, then the server closes the connection",
            "the client asked to end the connection", quit),
        case("bulk-over-max", S, "a bulk string over --max-bulk is a protocol error: -ERR Protocol error: invalid bulk length, then close (skipped when the server's limit is larger and it stores the value)",
            "a client must not make the server buffer without bound", bulk_over_max),
        case("args-over-max", S, "an array of more than --max-args elements: -ERR Protocol error: invalid multibulk length, then close (skipped when the server's limit is larger and it answers)",
            "a client must not make the server allocate without bound", args_over_max),
        case("inline-over-max", S, "an inline command over --max-inline: -ERR Protocol error: too big inline request, then close",
            "a client must not make the server buffer without bound", inline_over_max),
    ]
}

fn ping(ctx: &mut C) -> Result<(), Fail> {
    let mut c = ctx.conn()?;
    ask(ctx, &mut c, &words(&["PING"]), b"+PONG\r\n")?;
    ask(ctx, &mut c, &words(&["PING", "hello"]), b"$5\r\nhello\r\n")
}

fn echo(ctx: &mut C) -> Result<(), Fail> {
    let mut c = ctx.conn()?;
    ask(ctx, &mut c, &cmd(&[b"ECHO", b"a b\r\n"]), &bulk(b"a b\r\n"))
}

fn set_get(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    let v = b"line\r\nwith \x00 and \xff";
    ask(ctx, &mut c, &cmd(&[b"SET", k.as_bytes(), v]), b"+OK\r\n")?;
    ask(ctx, &mut c, &cmd(&[b"GET", k.as_bytes()]), &bulk(v))
}

fn get_missing(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("never"), ctx.conn()?);
    ask(ctx, &mut c, &words(&["GET", &k]), b"$-1\r\n")
}

fn set_nx_xx(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    ask(ctx, &mut c, &words(&["SET", &k, "one", "XX"]), b"$-1\r\n")?;
    ask(ctx, &mut c, &words(&["SET", &k, "one", "NX"]), b"+OK\r\n")?;
    ask(ctx, &mut c, &words(&["SET", &k, "two", "NX"]), b"$-1\r\n")?;
    ask(ctx, &mut c, &words(&["SET", &k, "three", "xx"]), b"+OK\r\n")?;
    ask(ctx, &mut c, &words(&["GET", &k]), &bulk(b"three"))
}

fn del_exists(ctx: &mut C) -> Result<(), Fail> {
    let (a, b, none, mut c) = (ctx.name("a"), ctx.name("b"), ctx.name("none"), ctx.conn()?);
    ask(ctx, &mut c, &words(&["MSET", &a, "1", &b, "2"]), b"+OK\r\n")?;
    ask(ctx, &mut c, &words(&["EXISTS", &a, &a, &none]), b":2\r\n")?;
    ask(ctx, &mut c, &words(&["DEL", &a, &b, &none]), b":2\r\n")?;
    ask(ctx, &mut c, &words(&["EXISTS", &a, &b]), b":0\r\n")
}

fn counters(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("n"), ctx.conn()?);
    ask(ctx, &mut c, &words(&["INCR", &k]), b":1\r\n")?;
    ask(ctx, &mut c, &words(&["INCRBY", &k, "41"]), b":42\r\n")?;
    ask(ctx, &mut c, &words(&["DECR", &k]), b":41\r\n")?;
    ask(ctx, &mut c, &words(&["DECRBY", &k, "50"]), b":-9\r\n")?;
    ask(ctx, &mut c, &words(&["GET", &k]), &bulk(b"-9"))
}

fn incr_not_integer(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    ask(ctx, &mut c, &words(&["SET", &k, "12a"]), b"+OK\r\n")?;
    ask(
        ctx,
        &mut c,
        &words(&["INCR", &k]),
        b"-ERR value is not an integer or out of range\r\n",
    )?;
    ask(ctx, &mut c, &words(&["GET", &k]), &bulk(b"12a"))
}

fn mset_mget(ctx: &mut C) -> Result<(), Fail> {
    let (a, b, none, mut c) = (ctx.name("a"), ctx.name("b"), ctx.name("none"), ctx.conn()?);
    ask(
        ctx,
        &mut c,
        &words(&["MSET", &a, "x", &b, "yy"]),
        b"+OK\r\n",
    )?;
    ask(
        ctx,
        &mut c,
        &words(&["MGET", &a, &none, &b]),
        b"*3\r\n$1\r\nx\r\n$-1\r\n$2\r\nyy\r\n",
    )
}

fn lists(ctx: &mut C) -> Result<(), Fail> {
    let (l, mut c) = (ctx.name("l"), ctx.conn()?);
    ask(
        ctx,
        &mut c,
        &words(&["RPUSH", &l, "a", "b", "c"]),
        b":3\r\n",
    )?;
    ask(ctx, &mut c, &words(&["LPUSH", &l, "y", "z"]), b":5\r\n")?;
    ask(ctx, &mut c, &words(&["LLEN", &l]), b":5\r\n")?;
    ask(ctx, &mut c, &words(&["LINDEX", &l, "0"]), &bulk(b"z"))?;
    ask(ctx, &mut c, &words(&["LINDEX", &l, "-1"]), &bulk(b"c"))?;
    ask(ctx, &mut c, &words(&["LINDEX", &l, "5"]), b"$-1\r\n")?;
    ask(
        ctx,
        &mut c,
        &words(&["LRANGE", &l, "1", "-2"]),
        b"*3\r\n$1\r\ny\r\n$1\r\na\r\n$1\r\nb\r\n",
    )?;
    ask(
        ctx,
        &mut c,
        &words(&["LRANGE", &l, "-100", "100"]),
        b"*5\r\n$1\r\nz\r\n$1\r\ny\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n",
    )?;
    ask(ctx, &mut c, &words(&["LRANGE", &l, "3", "1"]), b"*0\r\n")?;
    let none = ctx.name("none");
    ask(ctx, &mut c, &words(&["LLEN", &none]), b":0\r\n")
}

fn pops(ctx: &mut C) -> Result<(), Fail> {
    let (l, mut c) = (ctx.name("l"), ctx.conn()?);
    ask(ctx, &mut c, &words(&["LPOP", &l]), b"$-1\r\n")?;
    ask(ctx, &mut c, &words(&["LPOP", &l, "2"]), b"*-1\r\n")?;
    ask(
        ctx,
        &mut c,
        &words(&["RPUSH", &l, "a", "b", "c", "d"]),
        b":4\r\n",
    )?;
    ask(ctx, &mut c, &words(&["LPOP", &l]), &bulk(b"a"))?;
    ask(ctx, &mut c, &words(&["RPOP", &l]), &bulk(b"d"))?;
    ask(
        ctx,
        &mut c,
        &words(&["LPOP", &l, "5"]),
        b"*2\r\n$1\r\nb\r\n$1\r\nc\r\n",
    )?;
    ask(ctx, &mut c, &words(&["EXISTS", &l]), b":0\r\n")
}

fn wrongtype(ctx: &mut C) -> Result<(), Fail> {
    let (s, l, mut c) = (ctx.name("s"), ctx.name("l"), ctx.conn()?);
    ask(ctx, &mut c, &words(&["SET", &s, "v"]), b"+OK\r\n")?;
    ask(ctx, &mut c, &words(&["RPUSH", &l, "x"]), b":1\r\n")?;
    ask(ctx, &mut c, &words(&["GET", &l]), WRONGTYPE)?;
    ask(ctx, &mut c, &words(&["INCR", &l]), WRONGTYPE)?;
    ask(ctx, &mut c, &words(&["LPUSH", &s, "x"]), WRONGTYPE)?;
    ask(ctx, &mut c, &words(&["LLEN", &s]), WRONGTYPE)?;
    ask(
        ctx,
        &mut c,
        &words(&["MGET", &l, &s]),
        b"*2\r\n$-1\r\n$1\r\nv\r\n",
    )
}

fn unknown_command(ctx: &mut C) -> Result<(), Fail> {
    let mut c = ctx.conn()?;
    ask(
        ctx,
        &mut c,
        &words(&["NOSUCHCMD", "a", "b c"]),
        b"-ERR unknown command 'NOSUCHCMD', with args beginning with: 'a' 'b c' \r\n",
    )?;
    ask(ctx, &mut c, &words(&["PING"]), b"+PONG\r\n")
}

fn wrong_arity(ctx: &mut C) -> Result<(), Fail> {
    let mut c = ctx.conn()?;
    ask(
        ctx,
        &mut c,
        &words(&["GET"]),
        b"-ERR wrong number of arguments for 'get' command\r\n",
    )?;
    ask(
        ctx,
        &mut c,
        &words(&["SET", "k"]),
        b"-ERR wrong number of arguments for 'set' command\r\n",
    )?;
    ask(
        ctx,
        &mut c,
        &words(&["MSET", "a", "1", "b"]),
        b"-ERR wrong number of arguments for 'mset' command\r\n",
    )?;
    ask(ctx, &mut c, &words(&["PING"]), b"+PONG\r\n")
}

fn case_insensitive(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    ask(ctx, &mut c, &words(&["set", &k, "v"]), b"+OK\r\n")?;
    ask(ctx, &mut c, &words(&["GeT", &k]), &bulk(b"v"))?;
    ask(ctx, &mut c, &words(&["GET", &k]), &bulk(b"v"))
}

fn inline_commands(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    ask(
        ctx,
        &mut c,
        format!("SET {k} \"a b\"\r\n").as_bytes(),
        b"+OK\r\n",
    )?;
    ask(
        ctx,
        &mut c,
        format!("GET {k}\r\n").as_bytes(),
        &bulk(b"a b"),
    )?;
    ask(ctx, &mut c, format!("get  {k}\n").as_bytes(), &bulk(b"a b"))
}

fn empty_requests(ctx: &mut C) -> Result<(), Fail> {
    let mut c = ctx.conn()?;
    ask(ctx, &mut c, b"*0\r\n*-1\r\n\r\nPING\r\n", b"+PONG\r\n")
}

fn pipelined_in_order(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    let mut wire = Vec::new();
    let mut want = Vec::new();
    for i in 0..50 {
        wire.extend(words(&["SET", &k, &i.to_string()]));
        wire.extend(words(&["GET", &k]));
        want.extend_from_slice(b"+OK\r\n");
        want.extend(bulk(i.to_string().as_bytes()));
    }
    c.send(&wire);
    let got = c.read(std::time::Duration::ZERO, |b| {
        (b.len() >= want.len()).then_some(want.len())
    });
    let ok = got.reply() == Some(&want[..]);
    ctx.expect(&wire, &show(&want), &got, ok)
}

fn split_request(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    let wire = words(&["SET", &k, "bytes"]);
    for b in &wire {
        c.send(&[*b]);
        pause();
    }
    let got = super::talk::read(&mut c);
    let ok = got.reply() == Some(&b"+OK\r\n"[..]);
    ctx.expect(&wire, "\"+OK\\r\\n\" (sent one byte per write)", &got, ok)?;
    ask(ctx, &mut c, &words(&["GET", &k]), &bulk(b"bytes"))
}

fn read_your_write(ctx: &mut C) -> Result<(), Fail> {
    let (k, l) = (ctx.name("k"), ctx.name("l"));
    let (mut a, mut b) = (ctx.conn()?, ctx.conn()?);
    for i in 0..20 {
        let v = format!("v{i}");
        ask(ctx, &mut a, &words(&["SET", &k, &v]), b"+OK\r\n")?;
        ask(ctx, &mut b, &words(&["GET", &k]), &bulk(v.as_bytes()))?;
        ask(
            ctx,
            &mut a,
            &words(&["RPUSH", &l, &v]),
            format!(":{}\r\n", i + 1).as_bytes(),
        )?;
        ask(
            ctx,
            &mut b,
            &words(&["LINDEX", &l, &i.to_string()]),
            &bulk(v.as_bytes()),
        )?;
    }
    Ok(())
}

fn protocol_error_closes(ctx: &mut C) -> Result<(), Fail> {
    protocol_error(ctx, b"*1\r\n$x\r\n", "invalid bulk length")?;
    protocol_error(ctx, b"*x\r\n", "invalid multibulk length")?;
    protocol_error(ctx, b"*1\r\n+PING\r\n", "expected '$', got '+'")
}

fn admin(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    ask(ctx, &mut c, &words(&["SELECT", "0"]), b"+OK\r\n")?;
    ask(ctx, &mut c, &words(&["SET", &k, "v"]), b"+OK\r\n")?;
    ask_that(
        ctx,
        &mut c,
        &words(&["DBSIZE"]),
        "a positive integer",
        |r| r.starts_with(b":") && r != b":0\r\n" && !r.starts_with(b":-"),
    )?;
    ask_that(
        ctx,
        &mut c,
        &words(&["CONFIG", "GET", "appendonly"]),
        "*2, appendonly and its value",
        |r| r.starts_with(b"*2\r\n$10\r\nappendonly\r\n$"),
    )?;
    ask(
        ctx,
        &mut c,
        &words(&["CONFIG", "GET", "no-such-parameter"]),
        b"*0\r\n",
    )?;
    ask_that(
        ctx,
        &mut c,
        &words(&["COMMAND", "COUNT"]),
        "an integer",
        |r| r.starts_with(b":"),
    )?;
    ask(
        ctx,
        &mut c,
        &words(&["CLIENT", "SETNAME", "checker"]),
        b"+OK\r\n",
    )?;
    ask(
        ctx,
        &mut c,
        &words(&["CLIENT", "GETNAME"]),
        &bulk(b"checker"),
    )?;
    let info = ask_that(ctx, &mut c, &words(&["INFO"]), "a bulk string", |r| {
        r.starts_with(b"$")
    })?;
    let text = String::from_utf8_lossy(&info);
    let missing: Vec<&str> = ["# Server", "# Clients", "# Stats", "# Keyspace"]
        .into_iter()
        .filter(|s| !text.contains(s))
        .collect();
    ctx.ensure(missing.is_empty(), "INFO", || {
        format!("INFO lacks {missing:?}")
    })
}

fn quit(ctx: &mut C) -> Result<(), Fail> {
    let mut c = ctx.conn()?;
    ask(ctx, &mut c, &words(&["QUIT"]), b"+OK\r\n")?;
    ctx.expect_close(&mut c, "QUIT")
}

/// How long a server may take to refuse a bulk length over its limit
/// before `bulk-over-max` takes it that the server accepted the length.
const REFUSE_WITHIN: Duration = Duration::from_secs(1);

/// A request over a limit the server chooses (Redis's bulk limit is
/// 512 MB): sent `head`, the server must refuse it at once with
/// `-ERR Protocol error: {what}` and close (`Ok(true)`), or, with a larger
/// limit, wait for the `rest` (made only then: up to --max-bulk bytes, or
/// 7 bytes an argument past --max-args) and answer it as any request, `answer`
/// (`Ok(false)`: the caller skips the case, saying so). Anything else, or
/// a close without a word, fails.
fn over_limit(
    ctx: &mut C,
    c: &mut Conn,
    head: &[u8],
    what: &str,
    rest: impl FnOnce() -> Vec<u8>,
    answer: &[u8],
) -> Result<bool, Fail> {
    let refusal = format!("-ERR Protocol error: {what}\r\n");
    c.send(head);
    let (first, closed) = c.gather(REFUSE_WITHIN.min(ctx.timeout));
    if !first.is_empty() || closed {
        let got = if closed {
            Got::Closed(first)
        } else {
            Got::Reply(first)
        };
        let ok = matches!(&got, Got::Reply(b) | Got::Closed(b) if b == refusal.as_bytes());
        ctx.expect(head, &show(refusal.as_bytes()), &got, ok)?;
        if !closed {
            ctx.expect_close(c, "a protocol error")?;
        }
        return Ok(true);
    }
    ctx.note(
        &show(head),
        &format!(
            "{} (or, with a larger limit, nothing yet)",
            show(refusal.as_bytes())
        ),
        "nothing yet: the server waits for the rest",
        true,
    );
    let rest = rest();
    c.send(&rest);
    let got = read(c);
    let answered = got.reply() == Some(answer);
    let sent = format!("the rest of the request ({} bytes)", rest.len());
    ctx.note(&sent, &show(answer), &got.show(), answered);
    if answered {
        Ok(false)
    } else {
        Err(Fail::new(format!(
            "the server neither refused the request over the limit nor answered it: {}",
            got.show()
        )))
    }
}

/// Why a limit's case is skipped against a server whose limit is larger.
fn larger_limit(what: &str, flag: &str, limit: usize) -> Fail {
    Fail::skip(format!(
        "the server takes {what} over {flag} ({limit}) and answers them: its limit is larger, \
         which is its choice (Redis's bulk limit is 512 MB); run check with {flag} set to the \
         server's limit to test it"
    ))
}

/// A bulk string one byte over --max-bulk, the value of a SET; taken, it
/// must be stored whole (STRLEN).
fn bulk_over_max(ctx: &mut C) -> Result<(), Fail> {
    let (n, k) = (ctx.proto.max_bulk + 1, ctx.name("k"));
    let head = format!("*3\r\n$3\r\nSET\r\n${}\r\n{k}\r\n${n}\r\n", k.len());
    let rest = || {
        let mut rest = vec![b'x'; n];
        rest.extend_from_slice(b"\r\n");
        rest
    };
    let mut c = ctx.conn()?;
    if over_limit(
        ctx,
        &mut c,
        head.as_bytes(),
        "invalid bulk length",
        rest,
        b"+OK\r\n",
    )? {
        return Ok(());
    }
    ask(
        ctx,
        &mut c,
        &words(&["STRLEN", &k]),
        format!(":{n}\r\n").as_bytes(),
    )?;
    ask(ctx, &mut c, &words(&["DEL", &k]), b":1\r\n")?;
    Err(larger_limit(
        "bulk strings",
        "--max-bulk",
        ctx.proto.max_bulk,
    ))
}

fn args_over_max(ctx: &mut C) -> Result<(), Fail> {
    // RPUSH of max_args - 1 one-byte values: 1 + max_args elements.
    let (n, k) = (ctx.proto.max_args + 1, ctx.name("l"));
    let head = format!("*{n}\r\n");
    let rest = || {
        let mut rest = format!("$5\r\nRPUSH\r\n${}\r\n{k}\r\n", k.len()).into_bytes();
        rest.extend(b"$1\r\nx\r\n".repeat(n - 2));
        rest
    };
    let pushed = format!(":{}\r\n", n - 2);
    let mut c = ctx.conn()?;
    let refused = over_limit(
        ctx,
        &mut c,
        head.as_bytes(),
        "invalid multibulk length",
        rest,
        pushed.as_bytes(),
    )?;
    if refused {
        return Ok(());
    }
    ask(ctx, &mut c, &words(&["DEL", &k]), b":1\r\n")?;
    Err(larger_limit("arrays", "--max-args", ctx.proto.max_args))
}

fn inline_over_max(ctx: &mut C) -> Result<(), Fail> {
    let mut wire = b"ECHO ".to_vec();
    wire.resize(ctx.proto.max_inline + 2, b'x');
    protocol_error(ctx, &wire, "too big inline request")
}
