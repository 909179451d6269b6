//! kv exchanges for the cases: send a request, read the whole response,
//! check it, record both.

use super::http::{read, request, Read, Resp};
use super::Kv;
use crate::case::{Ctx, Fail};
use crate::wire::{show, Conn};
use serverlab_proto::kv::Method;
use std::time::Duration;

pub type C<'a> = Ctx<'a, Kv>;

/// Send `wire` (a `method` request) and read its response, which `ok`
/// must accept; `expected` says what that is.
pub fn send(
    ctx: &mut C,
    conn: &mut Conn,
    wire: &[u8],
    method: Method,
    expected: &str,
    ok: impl Fn(&Resp) -> bool,
) -> Result<Resp, Fail> {
    conn.send(wire);
    answer(ctx, conn, wire, method, expected, Duration::ZERO, ok)
}

/// Read the response to `wire`, already sent, which `ok` must accept.
pub fn answer(
    ctx: &mut C,
    conn: &mut Conn,
    wire: &[u8],
    method: Method,
    expected: &str,
    extra: Duration,
    ok: impl Fn(&Resp) -> bool,
) -> Result<Resp, Fail> {
    let (got, resp) = match read(conn, method, extra) {
        Read::Resp(r) => (r.show(), Some(r)),
        Read::Bad(why) => (why, None),
    };
    let good = resp.as_ref().is_some_and(&ok);
    ctx.note(&show(wire), expected, &got, good);
    match resp {
        Some(r) if good => Ok(r),
        _ => Err(Fail::new(format!("expected {expected}, got {got}"))),
    }
}

pub fn host(ctx: &C) -> String {
    ctx.addr.to_string()
}

/// PUT (or POST) `value` to `key`, expecting `status`.
pub fn put(
    ctx: &mut C,
    conn: &mut Conn,
    method: Method,
    key: &str,
    value: &[u8],
    status: u16,
) -> Result<Resp, Fail> {
    let wire = request(method, key.as_bytes(), Some(value), &host(ctx));
    send(ctx, conn, &wire, method, &status.to_string(), |r| {
        r.status == status
    })
}

/// GET `key`, expecting 200 with `value` as the body.
pub fn get(ctx: &mut C, conn: &mut Conn, key: &str, value: &[u8]) -> Result<Resp, Fail> {
    let wire = request(Method::Get, key.as_bytes(), None, &host(ctx));
    let expected = format!("200, body {}", show(value));
    send(ctx, conn, &wire, Method::Get, &expected, |r| {
        r.status == 200 && r.body == value
    })
}

/// `method` on `key`, expecting just `status`.
pub fn status(
    ctx: &mut C,
    conn: &mut Conn,
    method: Method,
    key: &str,
    status: u16,
) -> Result<Resp, Fail> {
    let wire = request(method, key.as_bytes(), None, &host(ctx));
    send(ctx, conn, &wire, method, &status.to_string(), |r| {
        r.status == status
    })
}

/// A request written out: `METHOD target HTTP/1.1`, `Host`, `headers`,
/// and `body` with its `Content-Length` if there is one.
pub fn raw(ctx: &C, method: &str, target: &str, headers: &[&str], body: Option<&[u8]>) -> Vec<u8> {
    let mut out = format!("{method} {target} HTTP/1.1\r\nHost: {}\r\n", host(ctx)).into_bytes();
    for h in headers {
        out.extend_from_slice(h.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if let Some(b) = body {
        out.extend_from_slice(format!("Content-Length: {}\r\n", b.len()).as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body.unwrap_or_default());
    out
}

/// Raw `wire` on a fresh connection: the response must have `status`,
/// and then the connection must close.
pub fn rejected(ctx: &mut C, wire: &[u8], method: Method, status: u16) -> Result<(), Fail> {
    let mut c = ctx.conn()?;
    send(
        ctx,
        &mut c,
        wire,
        method,
        &format!("{status}, then close"),
        |r| r.status == status,
    )?;
    ctx.expect_close(&mut c, &format!("a {status}"))
}
