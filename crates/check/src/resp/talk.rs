//! RESP exchanges for the cases: a command out, one whole reply back,
//! compared byte for byte.

use super::Resp;
use crate::case::{Ctx, Fail};
use crate::wire::{show, Conn, Got};
use std::time::Duration;

pub type C<'a> = Ctx<'a, Resp>;

/// The length of the first whole reply in `buf`.
pub fn reply_end(buf: &[u8]) -> Option<usize> {
    serverlab_proto::resp::client::skip(buf).ok().flatten()
}

/// A command as an array of bulk strings.
pub fn cmd(args: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    serverlab_proto::resp::client::command(&mut out, args);
    out
}

/// A command of text words.
pub fn words(args: &[&str]) -> Vec<u8> {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    cmd(&args)
}

/// Read one reply.
pub fn read(conn: &mut Conn) -> Got {
    conn.read(Duration::ZERO, reply_end)
}

/// Send `wire`; the reply must be exactly `want`.
pub fn ask(ctx: &mut C, conn: &mut Conn, wire: &[u8], want: &[u8]) -> Result<(), Fail> {
    conn.send(wire);
    let got = read(conn);
    let ok = got.reply() == Some(want);
    ctx.expect(wire, &show(want), &got, ok)
}

/// Send `wire`; `ok` must accept the reply, which `expected` describes.
pub fn ask_that(
    ctx: &mut C,
    conn: &mut Conn,
    wire: &[u8],
    expected: &str,
    ok: impl Fn(&[u8]) -> bool,
) -> Result<Vec<u8>, Fail> {
    conn.send(wire);
    let got = read(conn);
    let good = got.reply().is_some_and(&ok);
    ctx.expect(wire, expected, &got, good)?;
    Ok(got.reply().unwrap_or_default().to_vec())
}

/// `wire` on a fresh connection: the reply is `-ERR Protocol error: `
/// then `what`, and the connection closes.
pub fn protocol_error(ctx: &mut C, wire: &[u8], what: &str) -> Result<(), Fail> {
    let mut c = ctx.conn()?;
    let want = format!("-ERR Protocol error: {what}\r\n");
    ask(ctx, &mut c, wire, want.as_bytes())?;
    ctx.expect_close(&mut c, "a protocol error")
}

/// A bulk string reply.
pub fn bulk(v: &[u8]) -> Vec<u8> {
    let mut out = format!("${}\r\n", v.len()).into_bytes();
    out.extend_from_slice(v);
    out.extend_from_slice(b"\r\n");
    out
}
