//! Bucket exchanges for the cases: one line out, one line back.

use super::Bucket;
use crate::case::{Ctx, Fail};
use crate::wire::{show, Conn, Got};
use serverlab_proto::bucket::Reply;

/// The length of the first line in `buf`, LF included.
pub fn line_end(buf: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', buf).map(|i| i + 1)
}

/// `d,b\n`.
pub fn request(delay: u64, bucket: u64) -> Vec<u8> {
    format!("{delay},{bucket}\n").into_bytes()
}

/// Read one reply line, allowing for `delay` units of work first.
pub fn read(ctx: &Ctx<Bucket>, conn: &mut Conn, delay: u64) -> Got {
    conn.read(ctx.proto.delay_unit.duration(delay), line_end)
}

/// The value a reply line holds, if it is one.
pub fn value(got: &Got) -> Option<u64> {
    match Reply::parse(got.reply()?.strip_suffix(b"\n")?)? {
        Reply::Value(v) => Some(v),
        Reply::Err(_) => None,
    }
}

/// Send `wire` (which asks for `delay` units) and expect a value reply
/// that `ok` accepts; return it.
pub fn ask(
    ctx: &mut Ctx<Bucket>,
    conn: &mut Conn,
    wire: &[u8],
    delay: u64,
    expected: &str,
    ok: impl Fn(u64) -> bool,
) -> Result<u64, Fail> {
    conn.send(wire);
    let got = read(ctx, conn, delay);
    let v = value(&got);
    ctx.expect(wire, expected, &got, v.is_some_and(ok))?;
    Ok(v.expect("checked"))
}

/// Add `delay` to `bucket` on `conn`: the reply must be `before + delay`.
pub fn add(
    ctx: &mut Ctx<Bucket>,
    conn: &mut Conn,
    delay: u64,
    bucket: u64,
    before: u64,
) -> Result<(), Fail> {
    let want = before.wrapping_add(delay);
    ask(
        ctx,
        conn,
        &request(delay, bucket),
        delay,
        &format!("\"{want}\\n\""),
        |v| v == want,
    )
    .map(drop)
}

/// Bucket `b`'s value, read (`0,b`) on a fresh connection.
pub fn current(ctx: &mut Ctx<Bucket>, bucket: u64) -> Result<u64, Fail> {
    let mut c = ctx.conn()?;
    ask(
        ctx,
        &mut c,
        &request(0, bucket),
        0,
        "the bucket's value",
        |_| true,
    )
}

/// On a fresh connection, `wire` must get one `ERR <reason>` line, and
/// then the connection must close.
pub fn refused(ctx: &mut Ctx<Bucket>, wire: &[u8]) -> Result<(), Fail> {
    let mut c = ctx.conn()?;
    c.send(wire);
    let got = read(ctx, &mut c, 0);
    let ok = got
        .reply()
        .is_some_and(|r| r.starts_with(b"ERR ") && r.ends_with(b"\n"));
    ctx.expect(wire, "\"ERR <reason>\\n\"", &got, ok)?;
    ctx.expect_close(&mut c, &format!("ERR for {}", show(wire)))
}
