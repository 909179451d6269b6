//! The kv store's conformance cases: the wire contract's section 3,
//! docs/protocols/kv.md, one case each.

use super::http::{request, request_with, tag_of};
use super::talk::{answer, get, host, put, raw, rejected, send, status, C};
use super::Kv;
use crate::case::{pause, Case, Fail, Scope};
use crate::wire::Conn;
use serverlab_proto::kv::Method::{self, Delete, Get, Head, Post, Put};
use std::time::{Duration, Instant};

use Scope::{Assignment as A, Serverlab as S};

#[allow(
    clippy::too_many_lines,
    reason = "a table of cases, one per line: splitting it would hide the list"
)]
pub fn all() -> Vec<Case<Kv>> {
    let case = Case::<Kv>::new;
    vec![
        case("put-creates-201", A, "PUT to a new key stores the body and answers 201 with an ETag",
            "201 tells the client it created the key", put_creates_201),
        case("put-replaces-200", A, "PUT to an existing key replaces the value and answers 200",
            "200 tells the client it replaced a value", put_replaces_200),
        case("post-stores", A, "POST stores the body like PUT: 201 created, 200 replaced",
            "the labs' clients write with either method", post_stores),
        case("get-value", A, "GET answers 200 with exactly the stored value and its Content-Length",
            "the value is the point of the store", get_value),
        case("get-missing-404", A, "GET of a key never written answers 404",
            "a client must tell absent from empty", get_missing_404),
        case("head", A, "HEAD answers as GET without the body: Content-Length and ETag of the value",
            "clients check for a value without fetching it", head),
        case("head-missing-404", A, "HEAD of an absent key answers 404",
            "HEAD agrees with GET", head_missing_404),
        case("delete", A, "DELETE answers 200 and removes the key; then GET and DELETE answer 404",
            "a deleted value must not come back", delete),
        case("etag-md5", A, "every ETag is \"<md5 hex of the value>\": on PUT, GET and HEAD",
            "the MD5 is the labs' per-request CPU work, and clients compare tags", etag_md5),
        case("if-none-match", A, "GET with If-None-Match of the current ETag answers 304 without a body; another tag 200",
            "conditional GETs save sending a value the client has", if_none_match),
        case("empty-value", A, "a 0-byte body (Content-Length: 0) is a value: GET answers 200 with an empty body",
            "empty is not absent", empty_value),
        case("keep-alive", A, "HTTP/1.1 connections stay open: many requests, one connection",
            "httperf sessions send many requests on one connection", keep_alive),
        case("connection-close", A, "Connection: close is answered, then the server closes",
            "the client asked to end the connection", connection_close),
        case("http10-closes", A, "HTTP/1.0 without keep-alive: answered, then closed",
            "HTTP/1.0 clients read until the server closes", http10_closes),
        case("pipelined-in-order", A, "requests sent in one write are answered in order",
            "a client matches responses to requests by order alone", pipelined_in_order),
        case("split-request", A, "a request sent one byte per write is one request",
            "TCP is a byte stream: a request can arrive in pieces", split_request),
        case("read-your-write", A, "once PUT or DELETE is answered, a GET on another connection sees it",
            "the store is linearizable: an acknowledged write is visible at once", read_your_write),
        case("method-not-allowed-405", A, "another method (PATCH) answers 405 with Allow",
            "Allow tells the client what it can do", method_not_allowed_405),
        case("malformed-400", A, "a malformed request answers 400 and closes",
            "the server cannot know where the next request starts", malformed_400),
        case("length-required-411", A, "PUT without Content-Length answers 411 and closes",
            "without a length the body has no end", length_required_411),
        case("value-too-large-413", S, "a Content-Length over --max-value answers 413 before the body is sent",
            "a client must not make the server buffer without bound", value_too_large_413),
        case("uri-too-long-414", S, "a target over --max-uri answers 414",
            "a client must not make the server buffer without bound", uri_too_long_414),
        case("headers-too-large-431", S, "headers over --max-headers answer 431",
            "a client must not make the server buffer without bound", headers_too_large_431),
        case("header-timeout-408", S, "nothing complete within --header-timeout: 408, then close",
            "a slow or idle client must not hold a connection forever", header_timeout_408),
        case("reserved-health", S, "GET /_/health answers 200 ok",
            "a load balancer's health check", reserved_health),
        case("reserved-stats", S, "GET /_/stats answers 200 with a JSON object of counts and times",
            "the labs report per-request service times", reserved_stats),
        case("reserved-paths", S, "paths under /_/ are never keys: writes to them are refused",
            "no key can shadow the server's own paths", reserved_paths),
        case("percent-encoded-key", S, "keys are percent-decoded: /a%20b is the key \"a b\", /a%2Fb is /a/b",
            "one key has one name however it is spelled", percent_encoded_key),
        case("empty-key-400", S, "GET / (no key) answers 400 and the connection goes on",
            "a well-formed request that names no key is the client's error, not a broken stream", empty_key_400),
        case("bad-percent-400", S, "a bad percent-escape (/%zz) answers 400 and closes",
            "an undecodable target is malformed", bad_percent_400),
    ]
}

fn put_creates_201(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    let wire = request(Put, k.as_bytes(), Some(b"hello"), &host(ctx));
    send(ctx, &mut c, &wire, Put, "201 with an ETag", |r| {
        r.status == 201 && r.etag_raw.is_some()
    })
    .map(drop)
}

fn put_replaces_200(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    put(ctx, &mut c, Put, &k, b"one", 201)?;
    put(ctx, &mut c, Put, &k, b"two", 200)?;
    get(ctx, &mut c, &k, b"two").map(drop)
}

fn post_stores(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    put(ctx, &mut c, Post, &k, b"posted", 201)?;
    get(ctx, &mut c, &k, b"posted")?;
    put(ctx, &mut c, Post, &k, b"again", 200)?;
    get(ctx, &mut c, &k, b"again").map(drop)
}

fn get_value(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    let value = b"a value\r\nwith \x00 any bytes\xff";
    put(ctx, &mut c, Put, &k, value, 201)?;
    let wire = request(Get, k.as_bytes(), None, &host(ctx));
    send(
        ctx,
        &mut c,
        &wire,
        Get,
        "200, the value, Content-Length 25",
        |r| r.status == 200 && r.body == value && r.content_length == Some(value.len() as u64),
    )
    .map(drop)
}

fn get_missing_404(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("never"), ctx.conn()?);
    status(ctx, &mut c, Get, &k, 404).map(drop)
}

fn head(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    put(ctx, &mut c, Put, &k, b"twelve bytes", 201)?;
    let g = get(ctx, &mut c, &k, b"twelve bytes")?;
    let wire = request(Head, k.as_bytes(), None, &host(ctx));
    send(
        ctx,
        &mut c,
        &wire,
        Head,
        "200, Content-Length 12, GET's ETag, no body",
        |r| {
            r.status == 200
                && r.content_length == Some(12)
                && r.etag_raw == g.etag_raw
                && r.body.is_empty()
        },
    )?;
    // The connection is still in step: no stray body arrived.
    get(ctx, &mut c, &k, b"twelve bytes").map(drop)
}

fn head_missing_404(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("never"), ctx.conn()?);
    status(ctx, &mut c, Head, &k, 404).map(drop)
}

fn delete(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    put(ctx, &mut c, Put, &k, b"doomed", 201)?;
    status(ctx, &mut c, Delete, &k, 200)?;
    status(ctx, &mut c, Get, &k, 404)?;
    status(ctx, &mut c, Delete, &k, 404)?;
    put(ctx, &mut c, Put, &k, b"back", 201).map(drop)
}

fn etag_md5(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    let value = b"The quick brown fox";
    let want = format!("ETag {}", tag_of(value));
    let h = host(ctx);
    for (method, body) in [(Put, Some(&value[..])), (Get, None), (Head, None)] {
        let wire = request(method, k.as_bytes(), body, &h);
        send(ctx, &mut c, &wire, method, &want, |r| {
            r.etag_is_md5_of(value)
        })?;
    }
    Ok(())
}

fn if_none_match(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    let h = host(ctx);
    let tag = put(ctx, &mut c, Put, &k, b"cached", 201)?
        .etag_raw
        .unwrap_or_default();
    let tag = String::from_utf8_lossy(&tag).into_owned();
    let wire = request_with(Get, k.as_bytes(), &h, &[format!("If-None-Match: {tag}")]);
    send(ctx, &mut c, &wire, Get, "304, no body", |r| {
        r.status == 304 && r.body.is_empty()
    })?;
    let other = request_with(
        Get,
        k.as_bytes(),
        &h,
        &[format!("If-None-Match: {}", tag_of(b"other"))],
    );
    send(ctx, &mut c, &other, Get, "200 with the value", |r| {
        r.status == 200 && r.body == b"cached"
    })?;
    put(ctx, &mut c, Put, &k, b"changed", 200)?;
    send(ctx, &mut c, &wire, Get, "200 with the new value", |r| {
        r.status == 200 && r.body == b"changed"
    })
    .map(drop)
}

fn empty_value(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    put(ctx, &mut c, Put, &k, b"", 201)?;
    let wire = request(Get, k.as_bytes(), None, &host(ctx));
    send(ctx, &mut c, &wire, Get, "200, Content-Length 0", |r| {
        r.status == 200 && r.content_length == Some(0) && r.body.is_empty()
    })
    .map(drop)
}

fn keep_alive(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    for i in 0..10 {
        let v = format!("v{i}");
        put(
            ctx,
            &mut c,
            Put,
            &k,
            v.as_bytes(),
            if i == 0 { 201 } else { 200 },
        )?;
        get(ctx, &mut c, &k, v.as_bytes())?;
    }
    Ok(())
}

fn connection_close(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    let wire = request_with(Get, k.as_bytes(), &host(ctx), &["Connection: close".into()]);
    send(ctx, &mut c, &wire, Get, "404, Connection: close", |r| {
        r.status == 404
    })?;
    ctx.expect_close(&mut c, "Connection: close")
}

fn http10_closes(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    let wire = format!("GET /{k} HTTP/1.0\r\n\r\n").into_bytes();
    send(ctx, &mut c, &wire, Get, "404", |r| r.status == 404)?;
    ctx.expect_close(&mut c, "an HTTP/1.0 request without keep-alive")
}

fn pipelined_in_order(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    let h = host(ctx);
    let steps: [(Method, Option<&[u8]>, u16); 5] = [
        (Put, Some(b"piped"), 201),
        (Get, None, 200),
        (Delete, None, 200),
        (Get, None, 404),
        (Head, None, 404),
    ];
    let wire: Vec<u8> = steps
        .iter()
        .flat_map(|(m, body, _)| request(*m, k.as_bytes(), *body, &h))
        .collect();
    c.send(&wire);
    for (i, (method, _, want)) in steps.iter().enumerate() {
        let shown: &[u8] = if i == 0 {
            &wire
        } else {
            b"(the next response)"
        };
        let expected = format!("response {} of 5: {want}", i + 1);
        answer(
            ctx,
            &mut c,
            shown,
            *method,
            &expected,
            Duration::ZERO,
            |r| r.status == *want,
        )?;
    }
    Ok(())
}

fn split_request(ctx: &mut C) -> Result<(), Fail> {
    let k = ctx.name("k");
    let wire = request(Put, k.as_bytes(), Some(b"in pieces"), &host(ctx));
    let mut c = ctx.conn()?;
    send_in_pieces(&mut c, &wire, ctx.proto.header_timeout / 4);
    // The server's --header-timeout runs while the pieces arrive: a
    // starved machine can make them arrive after it, and then a 408 is
    // the right answer. So a 408 earns one more try, on a new connection;
    // a server that cannot join pieces fails that one too.
    let first = answer(
        ctx,
        &mut c,
        &wire,
        Put,
        "201 (or 408 if the pieces outlasted --header-timeout: then once more)",
        Duration::ZERO,
        |r| r.status == 201 || r.status == 408,
    )?;
    if first.status == 408 {
        c = ctx.conn()?;
        send_in_pieces(&mut c, &wire, ctx.proto.header_timeout / 4);
        answer(ctx, &mut c, &wire, Put, "201", Duration::ZERO, |r| {
            r.status == 201
        })?;
    }
    get(ctx, &mut c, &k, b"in pieces").map(drop)
}

/// Send `wire` one byte per write, pausing between, while `budget` lasts
/// (a 90-byte request takes a few ms on an idle machine, and on a starved
/// one far longer); then the rest in one write. The first byte always goes
/// alone, so the request always arrives in pieces.
fn send_in_pieces(c: &mut Conn, wire: &[u8], budget: Duration) {
    let start = Instant::now();
    let mut at = 0;
    while at + 1 < wire.len() && (at == 0 || start.elapsed() < budget) {
        c.send(&wire[at..=at]);
        pause();
        at += 1;
    }
    c.send(&wire[at..]);
}

fn read_your_write(ctx: &mut C) -> Result<(), Fail> {
    let k = ctx.name("k");
    let (mut writer, mut reader) = (ctx.conn()?, ctx.conn()?);
    for i in 0..20 {
        let v = format!("v{i}");
        put(
            ctx,
            &mut writer,
            Put,
            &k,
            v.as_bytes(),
            if i == 0 { 201 } else { 200 },
        )?;
        get(ctx, &mut reader, &k, v.as_bytes())?;
    }
    status(ctx, &mut writer, Delete, &k, 200)?;
    status(ctx, &mut reader, Get, &k, 404).map(drop)
}

fn method_not_allowed_405(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    let wire = raw(ctx, "PATCH", &format!("/{k}"), &[], None);
    send(
        ctx,
        &mut c,
        &wire,
        Get,
        "405 with Allow: GET, HEAD, PUT, POST, DELETE",
        |r| {
            let allow = r.allow.clone().unwrap_or_default();
            r.status == 405
                && ["GET", "HEAD", "PUT", "POST", "DELETE"]
                    .iter()
                    .all(|m| allow.contains(m))
        },
    )
    .map(drop)
}

fn malformed_400(ctx: &mut C) -> Result<(), Fail> {
    rejected(
        ctx,
        b"GET /k HTTP/1.1 trailing\r\nHost: x\r\n\r\n",
        Get,
        400,
    )?;
    rejected(
        ctx,
        b"GET /k HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
        Get,
        400,
    )
}

fn length_required_411(ctx: &mut C) -> Result<(), Fail> {
    let k = ctx.name("k");
    let wire = raw(ctx, "PUT", &format!("/{k}"), &[], None);
    rejected(ctx, &wire, Put, 411)
}

fn value_too_large_413(ctx: &mut C) -> Result<(), Fail> {
    let k = ctx.name("k");
    let n = ctx.proto.max_value + 1;
    // The head alone: the server must refuse before the body is sent.
    let wire = format!(
        "PUT /{k} HTTP/1.1\r\nHost: {}\r\nContent-Length: {n}\r\n\r\n",
        host(ctx)
    )
    .into_bytes();
    rejected(ctx, &wire, Put, 413)
}

fn uri_too_long_414(ctx: &mut C) -> Result<(), Fail> {
    let long = "u".repeat(ctx.proto.max_uri + 1);
    let wire = raw(ctx, "GET", &format!("/{long}"), &[], None);
    rejected(ctx, &wire, Get, 414)
}

fn headers_too_large_431(ctx: &mut C) -> Result<(), Fail> {
    let k = ctx.name("k");
    let big = "h".repeat(ctx.proto.max_headers + 1);
    let wire = format!(
        "GET /{k} HTTP/1.1\r\nHost: {}\r\nX-Big: {big}\r\n\r\n",
        host(ctx)
    )
    .into_bytes();
    rejected(ctx, &wire, Get, 431)
}

fn header_timeout_408(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    let wire = format!("GET /{k} HTTP/1.1\r\n").into_bytes();
    let wait = ctx.proto.header_timeout;
    c.send(&wire);
    answer(
        ctx,
        &mut c,
        &wire,
        Get,
        "408 after --header-timeout",
        wait,
        |r| r.status == 408,
    )?;
    ctx.expect_close(&mut c, "a 408")
}

fn reserved_health(ctx: &mut C) -> Result<(), Fail> {
    let mut c = ctx.conn()?;
    let wire = raw(ctx, "GET", "/_/health", &[], None);
    send(ctx, &mut c, &wire, Get, "200 ok", |r| {
        r.status == 200 && r.body.trim_ascii() == b"ok"
    })
    .map(drop)
}

fn reserved_stats(ctx: &mut C) -> Result<(), Fail> {
    let mut c = ctx.conn()?;
    let wire = raw(ctx, "GET", "/_/stats", &[], None);
    send(
        ctx,
        &mut c,
        &wire,
        Get,
        "200, a JSON object with requests and service_time_us",
        |r| {
            let json: Option<serde_json::Value> = serde_json::from_slice(&r.body).ok();
            r.status == 200
                && json.is_some_and(|j| {
                    j.get("requests").is_some() && j.get("service_time_us").is_some()
                })
        },
    )
    .map(drop)
}

fn reserved_paths(ctx: &mut C) -> Result<(), Fail> {
    let mut c = ctx.conn()?;
    let other = format!("/_/{}", ctx.name("k"));
    let steps = [
        ("PUT", "/_/health", Some(&b"x"[..]), Put, 405),
        ("PUT", &other, Some(b"x"), Put, 404),
        ("GET", &other, None, Get, 404),
    ];
    for (token, target, body, method, want) in steps {
        let wire = raw(ctx, token, target, &[], body);
        send(ctx, &mut c, &wire, method, &want.to_string(), |r| {
            r.status == want
        })?;
    }
    Ok(())
}

fn percent_encoded_key(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    // Written one way, read another: the same key.
    for (written, read, value) in [("%20x", "%20x", "spaced"), ("%2Fy", "/y", "slashed")] {
        let put = raw(
            ctx,
            "PUT",
            &format!("/{k}{written}"),
            &[],
            Some(value.as_bytes()),
        );
        send(ctx, &mut c, &put, Put, "201", |r| r.status == 201)?;
        let get = raw(ctx, "GET", &format!("/{k}{read}"), &[], None);
        let expected = format!("200 \"{value}\" (the same key)");
        send(ctx, &mut c, &get, Get, &expected, |r| {
            r.status == 200 && r.body == value.as_bytes()
        })?;
    }
    Ok(())
}

fn empty_key_400(ctx: &mut C) -> Result<(), Fail> {
    let (k, mut c) = (ctx.name("k"), ctx.conn()?);
    let wire = raw(ctx, "GET", "/", &[], None);
    send(ctx, &mut c, &wire, Get, "400", |r| r.status == 400)?;
    status(ctx, &mut c, Get, &k, 404).map(drop)
}

fn bad_percent_400(ctx: &mut C) -> Result<(), Fail> {
    let wire = raw(ctx, "GET", "/%zz", &[], None);
    rejected(ctx, &wire, Get, 400)
}
