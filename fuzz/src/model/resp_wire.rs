//! RESP2 request framing written a second time, from the wire contract (docs/protocols/)
//! section 5 and redis-server 7's `processMultibulkBuffer`,
//! `processInlineBuffer` and `sdssplitargs`: the whole request at once
//! (no resumption), arguments copied, integers by `str::parse` plus a
//! check that the text is the number's canonical form.

use serverlab_proto::resp::{Limits, ProtocolError};

/// What the front of a request stream holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wire {
    /// A whole request of `len` bytes; no arguments: a request of
    /// nothing (`*0`, `*-3`, a blank line), consumed and not answered.
    Request {
        len: usize,
        args: Vec<Vec<u8>>,
    },
    Wait,
    Error(ProtocolError),
}

/// The longest `*`/`$` line Redis buffers looking for its CR.
const HEADER_MAX: usize = 64 * 1024;

/// Redis's `string2ll`: a 64-bit integer written exactly as Rust prints it.
pub fn int(text: &[u8]) -> Option<i64> {
    let n: i64 = std::str::from_utf8(text).ok()?.parse().ok()?;
    (n.to_string().as_bytes() == text).then_some(n)
}

/// A `*`/`$` line at `at`: its text (after the type byte) and where the
/// next line starts; `Ok(None)` while incomplete.
fn header(
    rest: &[u8],
    at: usize,
    too_big: ProtocolError,
) -> Result<Option<(&[u8], usize)>, ProtocolError> {
    let line = &rest[at..];
    match line.iter().position(|&b| b == b'\r') {
        Some(cr) if cr <= HEADER_MAX => match line.get(cr + 1) {
            None => Ok(None),
            Some(b'\n') => Ok(Some((&line[1..cr], at + cr + 2))),
            Some(_) => Err(ProtocolError::ExpectedCrlf),
        },
        _ if line.len() > HEADER_MAX => Err(too_big),
        _ => Ok(None),
    }
}

/// An array of bulk strings (`Wire::Wait` while incomplete).
fn multibulk(rest: &[u8], limits: &Limits) -> Result<Wire, ProtocolError> {
    let Some((text, mut at)) = header(rest, 0, ProtocolError::TooBigMbulkCount)? else {
        return Ok(Wire::Wait);
    };
    let count = match int(text) {
        Some(n) if n <= 0 => {
            return Ok(Wire::Request {
                len: at,
                args: Vec::new(),
            })
        }
        Some(n) if (n as u128) <= limits.max_args as u128 => n as usize,
        _ => return Err(ProtocolError::InvalidMultibulkLength),
    };
    let mut args = Vec::new();
    while args.len() < count {
        match rest.get(at) {
            None => return Ok(Wire::Wait),
            Some(b'$') => {}
            Some(&c) => return Err(ProtocolError::ExpectedDollar(c)),
        }
        let Some((text, start)) = header(rest, at, ProtocolError::TooBigBulkCount)? else {
            return Ok(Wire::Wait);
        };
        let len = match int(text) {
            Some(n) if n >= 0 && (n as u128) <= limits.max_bulk as u128 => n as usize,
            _ => return Err(ProtocolError::InvalidBulkLength),
        };
        let Some(bulk) = rest.get(start..start + len + 2) else {
            return Ok(Wire::Wait);
        };
        if !bulk.ends_with(b"\r\n") {
            return Err(ProtocolError::ExpectedCrlf);
        }
        args.push(bulk[..len].to_vec());
        at = start + len + 2;
    }
    Ok(Wire::Request { len: at, args })
}

/// An inline line: LF-terminated, a CR before it dropped, at most
/// `max_inline` bytes without them. With no LF yet it waits while the
/// bytes could still be the line and its CR (at most `max_inline + 1`).
fn inline(rest: &[u8], limits: &Limits) -> Wire {
    let Some(lf) = rest.iter().position(|&b| b == b'\n') else {
        return if rest.len() > limits.max_inline.saturating_add(1) {
            Wire::Error(ProtocolError::TooBigInline)
        } else {
            Wire::Wait
        };
    };
    let line = &rest[..lf];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() > limits.max_inline {
        return Wire::Error(ProtocolError::TooBigInline);
    }
    match split_args(line) {
        Some(args) => Wire::Request { len: lf + 1, args },
        None => Wire::Error(ProtocolError::UnbalancedQuotes),
    }
}

/// Frame the request at the front of `rest`.
pub fn frame(rest: &[u8], limits: &Limits) -> Wire {
    match rest.first() {
        None => Wire::Wait,
        Some(b'*') => multibulk(rest, limits).unwrap_or_else(Wire::Error),
        Some(_) => inline(rest, limits),
    }
}

/// C's `isspace`.
fn space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// `sdssplitargs` as redis-server 7 runs it, over a C string (a NUL ends
/// it): `None` for unbalanced quotes. Blanks between words, and after a
/// closing quote, are C's `isspace`; an unquoted word ends only at a
/// space, tab, CR or LF (Redis's `switch`), so VT and FF inside it are
/// part of it.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let line = line.split(|&c| c == 0).next().unwrap_or(&[]);
    let at = |i: usize| line.get(i).copied().unwrap_or(0);
    let mut args = Vec::new();
    let mut p = 0;
    loop {
        while at(p) != 0 && space(at(p)) {
            p += 1;
        }
        if at(p) == 0 {
            return Some(args);
        }
        let (mut inq, mut insq, mut done) = (false, false, false);
        let mut cur = Vec::new();
        while !done {
            let c = at(p);
            if inq {
                if c == b'\\'
                    && at(p + 1) == b'x'
                    && hex(at(p + 2)).is_some()
                    && hex(at(p + 3)).is_some()
                {
                    cur.push(hex(at(p + 2))? * 16 + hex(at(p + 3))?);
                    p += 3;
                } else if c == b'\\' && at(p + 1) != 0 {
                    p += 1;
                    cur.push(match at(p) {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 8,
                        b'a' => 7,
                        o => o,
                    });
                } else if c == b'"' {
                    if at(p + 1) != 0 && !space(at(p + 1)) {
                        return None;
                    }
                    done = true;
                } else if c == 0 {
                    return None;
                } else {
                    cur.push(c);
                }
            } else if insq {
                if c == b'\\' && at(p + 1) == b'\'' {
                    p += 1;
                    cur.push(b'\'');
                } else if c == b'\'' {
                    if at(p + 1) != 0 && !space(at(p + 1)) {
                        return None;
                    }
                    done = true;
                } else if c == 0 {
                    return None;
                } else {
                    cur.push(c);
                }
            } else {
                match c {
                    // Not `isspace`: a VT or FF inside a word is part of it.
                    0 | b' ' | b'\n' | b'\r' | b'\t' => done = true,
                    b'"' => inq = true,
                    b'\'' => insq = true,
                    c => cur.push(c),
                }
            }
            if at(p) != 0 {
                p += 1;
            }
        }
        args.push(cur);
    }
}
