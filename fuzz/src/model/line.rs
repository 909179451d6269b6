//! Board and echo framing as the wire contract (docs/protocols/) words it: a request is the
//! bytes up to the first NUL or LF, a CR right before an LF is dropped,
//! and more than `max` bytes without a terminator close the connection.

use super::Next;
use crate::session::Event;

/// Frame the front of `rest`: the terminator must come within `max` bytes
/// (a CR before an LF counts toward them, as the limit is on bytes read).
pub fn next(rest: &[u8], max: usize) -> Next {
    match rest.iter().position(|&b| b == 0 || b == b'\n') {
        Some(i) if i <= max => Next::Request(i + 1),
        Some(_) => Next::Refuse,
        None if rest.len() > max => Next::Refuse,
        None => Next::Wait,
    }
}

/// A framed request's payload and terminator byte.
pub fn split(request: &[u8]) -> (&[u8], u8) {
    let (&term, raw) = request.split_last().expect("a request has a terminator");
    let payload = match term {
        b'\n' => raw.strip_suffix(b"\r").unwrap_or(raw),
        _ => raw,
    };
    (payload, term)
}

/// An oversize frame closes the connection without a reply.
pub fn refused(refusal: Option<&Event>) {
    let out = super::framing_refusal(refusal);
    assert!(out.is_empty(), "an oversize frame answered {out:?}");
}
