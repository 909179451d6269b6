//! The bucket protocol (Duke ERSS homework 4): a request is one line
//! `<delay>,<bucket>\n`; the reply is one line, the bucket's new value in
//! decimal or `ERR <reason>`.
//!
//! Only LF ends a line; a CR right before it is dropped. A NUL or a CR
//! anywhere else is just a byte that makes the line malformed.

mod delay;

pub use delay::{DelayMode, DelayUnit};

use crate::number::{parse_u64, push_u64};
use std::fmt;

/// The longest request line the protocol allows, in bytes, without its
/// CR/LF. A valid request needs at most 41 (two 20-digit numbers and a comma).
pub const MAX_LINE: usize = 64;

/// As every subcommand spells it.
pub const NAME: &str = "bucket";
/// One line for lists of protocols.
pub const DESCRIBE: &str = "delay, then add to a bucket (the ERSS scalability homework)";
/// Where a bucket server listens unless told otherwise.
pub const DEFAULT_PORT: u16 = 12345;

/// The bounds a bucket server enforces (`--max-line`, `--max-delay`) and
/// the unit its delays count in (`--delay-unit`), which a checker must
/// know too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest request line in bytes, without CR/LF; a longer one gets ERR.
    pub max_line: usize,
    /// Largest delay accepted, in `delay_unit`s; a larger one gets ERR.
    pub max_delay: u64,
    /// The unit a request's delay counts in.
    pub delay_unit: DelayUnit,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_line: MAX_LINE,
            max_delay: 60,
            delay_unit: DelayUnit::Seconds,
        }
    }
}

/// Where the next line lies in a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// No LF yet, and the line so far is within the limit.
    Incomplete,
    /// A whole line: its payload is `buf[..len]` (no CR, no LF), and `used`
    /// bytes (payload, any CR, the LF) are consumed.
    Ready { len: usize, used: usize },
    /// The line is longer than the limit, whatever comes next.
    TooLong,
}

/// Find the first line in `buf`, whose payload may be at most `max` bytes.
/// Only the first `max + 2` bytes (payload, CR, LF) are ever searched.
pub fn frame(buf: &[u8], max: usize) -> Line {
    let window = &buf[..buf.len().min(max.saturating_add(2))];
    if let Some(i) = memchr::memchr(b'\n', window) {
        let len = if i > 0 && buf[i - 1] == b'\r' {
            i - 1
        } else {
            i
        };
        return if len > max {
            Line::TooLong
        } else {
            Line::Ready { len, used: i + 1 }
        };
    }
    // No LF within reach: over the limit unless all that is missing is the
    // LF after a CR that ends a full-length payload.
    // (`len - 1 == max`, not `len == max + 1`: any `max` is allowed,
    // `usize::MAX` included.)
    let crlf_pending = buf.len().checked_sub(1) == Some(max) && buf[max] == b'\r';
    if buf.len() > max && !crlf_pending {
        Line::TooLong
    } else {
        Line::Incomplete
    }
}

/// A valid request: wait `delay` units, then add `delay` to `bucket`.
/// `0,b` adds nothing and so reads bucket `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub delay: u64,
    pub bucket: u64,
}

/// Why a line is not a request. (Whether the bucket exists and the delay
/// is allowed depends on the server's settings, not on the wire format.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    /// Not exactly two runs of ASCII digits joined by one comma.
    Malformed,
    /// Both numbers are digits, but one does not fit in 64 bits.
    TooLarge,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ParseError::Malformed => "expected <delay>,<bucket>",
            ParseError::TooLarge => "number too large for 64 bits",
        })
    }
}

impl std::error::Error for ParseError {}

impl Request {
    /// Parse one line's payload (without CR/LF). The whole line must match.
    pub fn parse(line: &[u8]) -> Result<Request, ParseError> {
        let comma = memchr::memchr(b',', line).ok_or(ParseError::Malformed)?;
        let delay = parse_u64(&line[..comma]).map_err(|()| ParseError::Malformed)?;
        let bucket = parse_u64(&line[comma + 1..]).map_err(|()| ParseError::Malformed)?;
        match (delay, bucket) {
            (Some(delay), Some(bucket)) => Ok(Request { delay, bucket }),
            _ => Err(ParseError::TooLarge),
        }
    }

    /// Append the request as a client sends it: `<delay>,<bucket>\n`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        push_u64(out, self.delay);
        out.push(b',');
        push_u64(out, self.bucket);
        out.push(b'\n');
    }
}

/// Append a success reply: the bucket's new value and LF.
pub fn reply_value(out: &mut Vec<u8>, value: u64) {
    push_u64(out, value);
    out.push(b'\n');
}

/// Append an error reply: `ERR <reason>` and LF.
pub fn reply_err(out: &mut Vec<u8>, reason: impl fmt::Display) {
    out.extend_from_slice(format!("ERR {reason}\n").as_bytes());
}

/// A reply as a client reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply<'a> {
    Value(u64),
    Err(&'a [u8]),
}

impl<'a> Reply<'a> {
    /// Parse one reply line without its LF (a CR before it is tolerated).
    /// `None` when it is neither a u64 nor `ERR <reason>`.
    pub fn parse(line: &'a [u8]) -> Option<Reply<'a>> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(reason) = line.strip_prefix(b"ERR ") {
            return Some(Reply::Err(reason));
        }
        parse_u64(line).ok().flatten().map(Reply::Value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_examples() {
        let cases: &[(&[u8], u64, u64)] = &[
            (b"5,10", 5, 10),
            (b"0,3", 0, 3),
            (b"007,0", 7, 0),
            (
                b"18446744073709551615,18446744073709551615",
                u64::MAX,
                u64::MAX,
            ),
        ];
        for &(line, delay, bucket) in cases {
            assert_eq!(
                Request::parse(line),
                Ok(Request { delay, bucket }),
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn bad_input() {
        use ParseError::*;
        let cases: &[(&[u8], ParseError)] = &[
            (b"", Malformed),
            (b"5", Malformed),
            (b",", Malformed),
            (b"5,", Malformed),
            (b",5", Malformed),
            (b"-1,5", Malformed),
            (b"+1,5", Malformed),
            (b"1,-5", Malformed),
            (b" 1,5", Malformed),
            (b"1 ,5", Malformed),
            (b"1, 5", Malformed),
            (b"1,5 ", Malformed),
            (b"1,5,", Malformed),
            (b"1,5,6", Malformed),
            (b"1;5", Malformed),
            (b"a,b", Malformed),
            (b"0x1,5", Malformed),
            (b"1,5\r", Malformed),
            (b"1\r,5", Malformed),
            (b"1,5\0", Malformed),
            (b"1.5,2", Malformed),
            (b"18446744073709551616,1", TooLarge),
            (b"1,18446744073709551616", TooLarge),
            (b"99999999999999999999999,x", Malformed),
        ];
        for &(line, want) in cases {
            assert_eq!(
                Request::parse(line),
                Err(want),
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn framing() {
        assert_eq!(frame(b"5,10\n", 64), Line::Ready { len: 4, used: 5 });
        assert_eq!(frame(b"5,10\r\n0,1\n", 64), Line::Ready { len: 4, used: 6 });
        assert_eq!(frame(b"\n", 64), Line::Ready { len: 0, used: 1 });
        assert_eq!(frame(b"5,10", 64), Line::Incomplete);
        assert_eq!(frame(b"", 64), Line::Incomplete);
        // NUL does not end a line.
        assert_eq!(frame(b"5,1\0", 64), Line::Incomplete);
    }

    #[test]
    fn line_limit_excludes_cr_and_lf() {
        let mut line = vec![b'1'; 4];
        line.extend_from_slice(b"\r\n");
        assert_eq!(frame(&line, 4), Line::Ready { len: 4, used: 6 });
        assert_eq!(frame(b"1234\r", 4), Line::Incomplete);
        assert_eq!(frame(b"1234\n", 4), Line::Ready { len: 4, used: 5 });
        assert_eq!(frame(b"1234", 4), Line::Incomplete);
        assert_eq!(frame(b"12345", 4), Line::TooLong);
        assert_eq!(frame(b"12345\n", 4), Line::TooLong);
        assert_eq!(frame(b"12345\r\n", 4), Line::TooLong);
        assert_eq!(frame(b"1234\rx", 4), Line::TooLong);
        // A long line is too long even when an LF comes later.
        assert_eq!(frame(&[b'9'; 100], 64), Line::TooLong);
    }

    #[test]
    fn no_limit_at_all_is_a_limit_too() {
        // Fuzz finding (bucket_frame): `max + 1` overflowed for usize::MAX.
        assert_eq!(frame(b"1,2", usize::MAX), Line::Incomplete);
        assert_eq!(frame(b"1,2\r", usize::MAX), Line::Incomplete);
        assert_eq!(
            frame(b"1,2\r\n", usize::MAX),
            Line::Ready { len: 3, used: 5 }
        );
    }

    #[test]
    fn encodes_and_replies() {
        let mut out = Vec::new();
        Request {
            delay: 5,
            bucket: 10,
        }
        .encode(&mut out);
        reply_value(&mut out, 42);
        reply_err(&mut out, ParseError::Malformed);
        assert_eq!(out, b"5,10\n42\nERR expected <delay>,<bucket>\n");
        assert_eq!(Reply::parse(b"42"), Some(Reply::Value(42)));
        assert_eq!(Reply::parse(b"42\r"), Some(Reply::Value(42)));
        assert_eq!(Reply::parse(b"ERR no"), Some(Reply::Err(b"no")));
        assert_eq!(Reply::parse(b"x"), None);
        assert_eq!(Reply::parse(b""), None);
        assert_eq!(Reply::parse(b"-1"), None);
    }
}
