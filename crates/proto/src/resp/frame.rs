//! Framing RESP requests, incrementally and without copying: an array of
//! bulk strings (`*2\r\n$3\r\nGET\r\n$1\r\nk\r\n`) or an inline command
//! (`GET k\r\n`). A [`Framer`] lives with its connection and resumes
//! where it stopped, so a request arriving in many pieces (or a huge one)
//! is parsed once, not once per piece. Arguments are [`Span`]s of the
//! request's bytes; only an inline argument with quotes or escapes is
//! copied (into the framer's scratch).
//!
//! As redis-server 7: `*0`, `*-1` and a blank inline line are requests
//! of nothing (consumed, never answered); anything else malformed is a
//! [`ProtocolError`], answered `-ERR Protocol error: …`, and the
//! connection closes.

use super::inline;
use super::number::parse_i64;
use super::Limits;

/// Where one argument lies: `len` bytes at `start` from the request's
/// first byte, or, for an unescaped inline argument, in the framer's
/// scratch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    /// The top bit set: in the scratch.
    start: u32,
    len: u32,
}

const SCRATCH: u32 = 1 << 31;

impl Span {
    pub(crate) fn input(start: usize, len: usize) -> Span {
        Span {
            start: start as u32,
            len: len as u32,
        }
    }

    pub(crate) fn scratch(start: usize, len: usize) -> Span {
        Span {
            start: start as u32 | SCRATCH,
            len: len as u32,
        }
    }

    pub fn len(self) -> usize {
        self.len as usize
    }

    pub fn is_empty(self) -> bool {
        self.len == 0
    }
}

/// What framing found at the front of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framed {
    /// Wait for more bytes.
    Incomplete,
    /// A whole request of `len` bytes, with at least one argument
    /// ([`Framer::args`]).
    Request { len: usize },
    /// `len` bytes that ask for nothing (`*0\r\n`, an empty line): consume
    /// them, answer nothing.
    Empty { len: usize },
    /// The input can never become a request: answer and close.
    Error(ProtocolError),
}

/// A request that breaks the protocol or a limit. Its reply is
/// `-ERR Protocol error: <message>`, then the connection closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolError {
    /// An inline command over `--max-inline`.
    TooBigInline,
    /// An inline command whose quotes do not close (or a closing quote
    /// not followed by a space).
    UnbalancedQuotes,
    /// A `*` line of over 64 KiB.
    TooBigMbulkCount,
    /// A `*` count that is not an integer, or over `--max-args`.
    InvalidMultibulkLength,
    /// A `$` line of over 64 KiB.
    TooBigBulkCount,
    /// An array element that is not a bulk string.
    ExpectedDollar(u8),
    /// A `$` length that is not an integer, negative, or over `--max-bulk`.
    InvalidBulkLength,
    /// A line or a bulk string not followed by CR LF.
    ExpectedCrlf,
    /// More unconsumed input than `--max-query` without a whole request.
    QueryBufferFull,
}

impl ProtocolError {
    /// The error reply's text after `ERR `: Redis's words where Redis has
    /// the error. CR and LF never appear in it.
    pub fn message(self) -> String {
        let m = match self {
            ProtocolError::TooBigInline => "too big inline request",
            ProtocolError::UnbalancedQuotes => "unbalanced quotes in request",
            ProtocolError::TooBigMbulkCount => "too big mbulk count string",
            ProtocolError::InvalidMultibulkLength => "invalid multibulk length",
            ProtocolError::TooBigBulkCount => "too big bulk count string",
            ProtocolError::ExpectedDollar(c) => {
                let c = if c == b'\r' || c == b'\n' { b' ' } else { c };
                return format!("Protocol error: expected '$', got '{}'", c as char);
            }
            ProtocolError::InvalidBulkLength => "invalid bulk length",
            ProtocolError::ExpectedCrlf => "expected CRLF",
            ProtocolError::QueryBufferFull => "query buffer over --max-query",
        };
        format!("Protocol error: {m}")
    }

    /// Its name in the server's statistics.
    pub fn name(self) -> &'static str {
        match self {
            ProtocolError::TooBigInline => "inline_too_long",
            ProtocolError::UnbalancedQuotes => "unbalanced_quotes",
            ProtocolError::TooBigMbulkCount | ProtocolError::InvalidMultibulkLength => {
                "bad_array_length"
            }
            ProtocolError::TooBigBulkCount | ProtocolError::InvalidBulkLength => "bad_bulk_length",
            ProtocolError::ExpectedDollar(_) => "not_a_bulk_string",
            ProtocolError::ExpectedCrlf => "missing_crlf",
            ProtocolError::QueryBufferFull => "query_too_long",
        }
    }

    /// Every name, in a fixed order (for counters).
    pub const NAMES: [&'static str; 8] = [
        "inline_too_long",
        "unbalanced_quotes",
        "bad_array_length",
        "bad_bulk_length",
        "not_a_bulk_string",
        "missing_crlf",
        "query_too_long",
        "other",
    ];
}

/// The longest `*`/`$` header line Redis buffers looking for its CR.
const MAX_HEADER_LINE: usize = 64 << 10;

/// A connection's framing state: how far into the current request it has
/// parsed, and the arguments found so far.
#[derive(Debug, Default)]
pub struct Framer {
    /// Bytes of the current request parsed so far.
    at: usize,
    /// Multibulk: the array's length, once its header is parsed.
    count: Option<usize>,
    /// Multibulk: a bulk string whose `$` header is parsed; its bytes
    /// start at `at`.
    bulk: Option<usize>,
    /// Inline: bytes already searched for the LF.
    scanned: usize,
    /// The last call returned a request: the next starts afresh.
    done: bool,
    args: Vec<Span>,
    scratch: Vec<u8>,
}

/// What one step of multibulk parsing found.
enum Step {
    More,
    Wait,
    End(Framed),
}

impl Framer {
    pub fn new() -> Self {
        Self::default()
    }

    /// The arguments of the request the last [`Framer::frame`] returned.
    pub fn args(&self) -> &[Span] {
        &self.args
    }

    /// An argument's bytes: `input` is the request's bytes (from its
    /// first byte).
    pub fn get<'a>(&'a self, input: &'a [u8], s: Span) -> &'a [u8] {
        let start = (s.start & !SCRATCH) as usize;
        let end = start + s.len as usize;
        if s.start & SCRATCH != 0 {
            &self.scratch[start..end]
        } else {
            &input[start..end]
        }
    }

    /// The `i`th argument's bytes.
    pub fn arg<'a>(&'a self, input: &'a [u8], i: usize) -> &'a [u8] {
        self.get(input, self.args[i])
    }

    /// Frame the next request at the front of `input` (which starts where
    /// the previous request ended), resuming any partial progress.
    pub fn frame(&mut self, input: &[u8], limits: &Limits) -> Framed {
        if std::mem::take(&mut self.done) {
            self.args.clear();
            self.scratch.clear();
        }
        let Some(&first) = input.first() else {
            return Framed::Incomplete;
        };
        let framed = if first == b'*' {
            self.multibulk(input, limits)
        } else {
            self.inline(input, limits)
        };
        match framed {
            Framed::Incomplete => {}
            _ => {
                self.at = 0;
                self.count = None;
                self.bulk = None;
                self.scanned = 0;
                self.done = true;
            }
        }
        framed
    }

    fn multibulk(&mut self, input: &[u8], limits: &Limits) -> Framed {
        loop {
            match self.step(input, limits) {
                Step::More => {}
                Step::Wait => return Framed::Incomplete,
                Step::End(f) => return f,
            }
        }
    }

    /// Parse one header or one bulk string.
    fn step(&mut self, input: &[u8], limits: &Limits) -> Step {
        let Some(count) = self.count else {
            let line = match header_line(input, 0, ProtocolError::TooBigMbulkCount) {
                Ok(Some(line)) => line,
                Ok(None) => return Step::Wait,
                Err(e) => return Step::End(Framed::Error(e)),
            };
            let n = match parse_i64(&input[1..line]) {
                Some(n) if n <= 0 => return Step::End(Framed::Empty { len: line + 2 }),
                Some(n) if n as u64 <= limits.max_args as u64 => n as usize,
                _ => return Step::End(Framed::Error(ProtocolError::InvalidMultibulkLength)),
            };
            self.count = Some(n);
            self.args.reserve(n.min(1024));
            self.at = line + 2;
            return Step::More;
        };
        if self.args.len() == count {
            return Step::End(Framed::Request { len: self.at });
        }
        let Some(len) = self.bulk else {
            let at = self.at;
            let Some(&c) = input.get(at) else {
                return Step::Wait;
            };
            if c != b'$' {
                return Step::End(Framed::Error(ProtocolError::ExpectedDollar(c)));
            }
            let line = match header_line(input, at, ProtocolError::TooBigBulkCount) {
                Ok(Some(line)) => line,
                Ok(None) => return Step::Wait,
                Err(e) => return Step::End(Framed::Error(e)),
            };
            match parse_i64(&input[at + 1..line]) {
                Some(n) if n >= 0 && n as u64 <= limits.max_bulk as u64 => {
                    self.bulk = Some(n as usize);
                    self.at = line + 2;
                    return Step::More;
                }
                _ => return Step::End(Framed::Error(ProtocolError::InvalidBulkLength)),
            }
        };
        let at = self.at;
        if input.len() < at + len + 2 {
            return Step::Wait;
        }
        if &input[at + len..at + len + 2] != b"\r\n" {
            return Step::End(Framed::Error(ProtocolError::ExpectedCrlf));
        }
        self.args.push(Span::input(at, len));
        self.bulk = None;
        self.at = at + len + 2;
        Step::More
    }

    fn inline(&mut self, input: &[u8], limits: &Limits) -> Framed {
        let window = &input[..input.len().min(limits.max_inline.saturating_add(2))];
        let Some(lf) = memchr::memchr(b'\n', &window[self.scanned.min(window.len())..])
            .map(|i| i + self.scanned.min(window.len()))
        else {
            if input.len() > limits.max_inline.saturating_add(1) {
                return Framed::Error(ProtocolError::TooBigInline);
            }
            self.scanned = window.len();
            return Framed::Incomplete;
        };
        let end = if lf > 0 && input[lf - 1] == b'\r' {
            lf - 1
        } else {
            lf
        };
        if end > limits.max_inline {
            return Framed::Error(ProtocolError::TooBigInline);
        }
        if inline::split(&input[..end], &mut self.args, &mut self.scratch).is_err() {
            return Framed::Error(ProtocolError::UnbalancedQuotes);
        }
        if self.args.is_empty() {
            Framed::Empty { len: lf + 1 }
        } else {
            Framed::Request { len: lf + 1 }
        }
    }
}

/// The end (the CR's index) of the header line starting at `at`, if it
/// is all there. Its CR must be followed by LF.
fn header_line(
    input: &[u8],
    at: usize,
    too_big: ProtocolError,
) -> Result<Option<usize>, ProtocolError> {
    let rest = &input[at..];
    match memchr::memchr(b'\r', &rest[..rest.len().min(MAX_HEADER_LINE + 1)]) {
        Some(i) => match rest.get(i + 1) {
            None => Ok(None),
            Some(b'\n') => Ok(Some(at + i)),
            Some(_) => Err(ProtocolError::ExpectedCrlf),
        },
        None if rest.len() > MAX_HEADER_LINE => Err(too_big),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests;
