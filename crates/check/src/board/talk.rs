//! Board exchanges for the cases: send a request with a terminator, read
//! one reply, compare it byte for byte, terminator included.

use crate::case::{Ctx, Fail};
use crate::wire::{show, Conn, Got};
use std::time::Duration;

pub const NUL: u8 = 0;
pub const LF: u8 = b'\n';

/// The length of the first reply in `buf`, terminator included.
pub fn reply_end(buf: &[u8]) -> Option<usize> {
    memchr::memchr2(0, b'\n', buf).map(|i| i + 1)
}

/// `request` and `term` as sent.
pub fn frame(request: &[u8], term: u8) -> Vec<u8> {
    let mut wire = request.to_vec();
    wire.push(term);
    wire
}

/// Read one reply.
pub fn read(conn: &mut Conn) -> Got {
    conn.read(Duration::ZERO, reply_end)
}

/// Send `request` + `term`; the reply must be exactly `want` + `term`.
pub fn ask<P>(
    ctx: &mut Ctx<P>,
    conn: &mut Conn,
    request: &[u8],
    term: u8,
    want: &[u8],
) -> Result<(), Fail> {
    let wire = frame(request, term);
    conn.send(&wire);
    let got = read(conn);
    let expected = frame(want, term);
    let ok = got.reply() == Some(&expected[..]);
    ctx.expect(&wire, &show(&expected), &got, ok)
}

/// Send `request` NUL-terminated and return the reply without its NUL;
/// any reply that does not end in NUL fails.
pub fn fetch<P>(
    ctx: &mut Ctx<P>,
    conn: &mut Conn,
    request: &[u8],
    expected: &str,
) -> Result<Vec<u8>, Fail> {
    let wire = frame(request, NUL);
    conn.send(&wire);
    let got = read(conn);
    match got.reply() {
        Some([body @ .., 0]) => {
            let body = body.to_vec();
            ctx.expect(&wire, expected, &got, true)?;
            Ok(body)
        }
        _ => ctx
            .expect(&wire, expected, &got, false)
            .map(|()| Vec::new()),
    }
}

/// A decimal reply (a POST id or a COUNT).
pub fn number<P>(ctx: &mut Ctx<P>, conn: &mut Conn, request: &[u8]) -> Result<u64, Fail> {
    let body = fetch(ctx, conn, request, "a decimal number")?;
    std::str::from_utf8(&body)
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|_| !body.is_empty() && body.iter().all(u8::is_ascii_digit))
        .ok_or_else(|| Fail::new(format!("{} is not a decimal number", show(&body))))
}

/// The topics a LIST reply holds, in order.
pub fn list<P>(ctx: &mut Ctx<P>, conn: &mut Conn) -> Result<Vec<Vec<u8>>, Fail> {
    let body = fetch(
        ctx,
        conn,
        b"LIST",
        "topics, each with a leading @, joined by #",
    )?;
    serverlab_proto::board::parse_list(&body)
        .map(|t| t.into_iter().map(<[u8]>::to_vec).collect())
        .ok_or_else(|| {
            Fail::new(format!(
                "{} is not a LIST reply: every entry must start with @",
                show(&body)
            ))
        })
}
