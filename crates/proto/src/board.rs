//! The CAPS message-board protocol: typed requests and reply encoding.
//!
//! A frame (see [`crate::line`]) parses into exactly one [`Request`]; any
//! frame that is not a whole valid request is [`Request::Invalid`], which the
//! server answers with an empty reply. [`Parsed`] is the same parse holding
//! positions instead of borrowed bytes, for a server that keeps a parsed
//! request apart from its frame.

use crate::number::{parse_u64, push_u64};
use crate::Terminator;

/// As every subcommand spells it.
pub const NAME: &str = "board";
/// One line for lists of protocols.
pub const DESCRIBE: &str = "the CAPS message board (POST, READ, COUNT, LIST, EXIT)";
/// Where a board server listens unless told otherwise.
pub const DEFAULT_PORT: u16 = 12345;

/// The bound a board server enforces (`--max-request`), which a checker
/// must know too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest request in bytes; a longer one closes its connection.
    pub max_request: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_request: 65535 }
    }
}

/// A parsed board request, borrowing its topic and message from the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request<'a> {
    Post {
        topic: &'a [u8],
        message: &'a [u8],
    },
    /// `id` is `None` when the digits overflow u64: a valid request that
    /// finds nothing.
    Read {
        topic: &'a [u8],
        id: Option<u64>,
    },
    Count {
        topic: &'a [u8],
    },
    List,
    Exit,
    Invalid,
}

/// What a server sent in answer to a COUNT, which tells a board server
/// from the rest (the load and the checker ask it before anything else).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountAnswer {
    /// A count: a board server.
    Count(u64),
    /// The request sent back, reversed or not: an echo server (`serve
    /// echo`, the board's transport baseline).
    Echoed,
    /// Something no board server sends.
    Other,
}

/// Classify `reply` (without its terminator) to the COUNT `request`
/// (without its terminator).
pub fn count_answer(request: &[u8], reply: &[u8]) -> CountAnswer {
    if let Ok(Some(n)) = parse_u64(reply) {
        return CountAnswer::Count(n);
    }
    if reply == request || reply.iter().eq(request.iter().rev()) {
        return CountAnswer::Echoed;
    }
    CountAnswer::Other
}

/// The request kinds, for statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Post,
    Read,
    Count,
    List,
    Exit,
    Invalid,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Post,
        Kind::Read,
        Kind::Count,
        Kind::List,
        Kind::Exit,
        Kind::Invalid,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Post => "POST",
            Kind::Read => "READ",
            Kind::Count => "COUNT",
            Kind::List => "LIST",
            Kind::Exit => "EXIT",
            Kind::Invalid => "invalid",
        }
    }
}

/// A topic: 0+ bytes, none of `@ # NUL CR LF`.
pub fn valid_topic(topic: &[u8]) -> bool {
    !topic
        .iter()
        .any(|b| matches!(b, b'@' | b'#' | 0 | b'\r' | b'\n'))
}

/// A message: 1+ bytes, none of `NUL CR LF` (`@` and `#` are allowed).
pub fn valid_message(message: &[u8]) -> bool {
    // One vectorised scan, not a byte at a time: the message is most of a
    // POST's bytes (docs/strategies.md, where a pipelined request's
    // instructions go).
    !message.is_empty() && memchr::memchr3(0, b'\r', b'\n', message).is_none()
}

/// Where a topic or message lies in its frame: a byte range, so a parsed
/// request can be kept without borrowing (or copying) the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    start: usize,
    end: usize,
}

impl Span {
    /// These bytes of `frame` (the frame this span was parsed from).
    pub fn of(self, frame: &[u8]) -> &[u8] {
        &frame[self.start..self.end]
    }
}

/// A parsed board request holding positions in its frame, not the bytes:
/// [`Parsed::resolve`] turns it into a [`Request`] over the same frame
/// without parsing again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed {
    Post { topic: Span, message: Span },
    Read { topic: Span, id: Option<u64> },
    Count { topic: Span },
    List,
    Exit,
    Invalid,
}

impl Parsed {
    /// Parse one frame (without its terminator). Never panics.
    pub fn parse(frame: &[u8]) -> Parsed {
        Self::try_parse(frame).unwrap_or(Parsed::Invalid)
    }

    fn try_parse(frame: &[u8]) -> Option<Parsed> {
        if frame == b"LIST" {
            return Some(Parsed::List);
        }
        if frame == b"EXIT" {
            return Some(Parsed::Exit);
        }
        if frame.starts_with(b"POST@") {
            let (topic, message) = split_topic(frame, 5)?;
            return valid_message(message.of(frame)).then_some(Parsed::Post { topic, message });
        }
        if frame.starts_with(b"READ@") {
            let (topic, id) = split_topic(frame, 5)?;
            let id = parse_u64(id.of(frame)).ok()?;
            return Some(Parsed::Read { topic, id });
        }
        if frame.starts_with(b"COUNT@") {
            let topic = Span {
                start: 6,
                end: frame.len(),
            };
            return valid_topic(topic.of(frame)).then_some(Parsed::Count { topic });
        }
        None
    }

    /// The request over `frame`, the frame this was parsed from.
    pub fn resolve(self, frame: &[u8]) -> Request<'_> {
        match self {
            Parsed::Post { topic, message } => Request::Post {
                topic: topic.of(frame),
                message: message.of(frame),
            },
            Parsed::Read { topic, id } => Request::Read {
                topic: topic.of(frame),
                id,
            },
            Parsed::Count { topic } => Request::Count {
                topic: topic.of(frame),
            },
            Parsed::List => Request::List,
            Parsed::Exit => Request::Exit,
            Parsed::Invalid => Request::Invalid,
        }
    }
}

impl<'a> Request<'a> {
    /// Parse one frame (without its terminator). Never panics.
    pub fn parse(frame: &'a [u8]) -> Request<'a> {
        Parsed::parse(frame).resolve(frame)
    }

    pub fn kind(&self) -> Kind {
        match self {
            Request::Post { .. } => Kind::Post,
            Request::Read { .. } => Kind::Read,
            Request::Count { .. } => Kind::Count,
            Request::List => Kind::List,
            Request::Exit => Kind::Exit,
            Request::Invalid => Kind::Invalid,
        }
    }

    /// Encode as a client sends it, followed by `term`. `Invalid` encodes as
    /// an empty frame; a `Read` with `id: None` as an id one past u64::MAX.
    pub fn encode(&self, out: &mut Vec<u8>, term: Terminator) {
        match *self {
            Request::Post { topic, message } => {
                out.extend_from_slice(b"POST@");
                out.extend_from_slice(topic);
                out.push(b'#');
                out.extend_from_slice(message);
            }
            Request::Read { topic, id } => {
                out.extend_from_slice(b"READ@");
                out.extend_from_slice(topic);
                out.push(b'#');
                match id {
                    Some(id) => push_u64(out, id),
                    None => out.extend_from_slice(b"18446744073709551616"),
                }
            }
            Request::Count { topic } => {
                out.extend_from_slice(b"COUNT@");
                out.extend_from_slice(topic);
            }
            Request::List => out.extend_from_slice(b"LIST"),
            Request::Exit => out.extend_from_slice(b"EXIT"),
            Request::Invalid => {}
        }
        out.push(term.byte());
    }
}

/// Split `frame[from..]`, `<topic>#<rest>`, at the first `#`, rejecting a
/// topic with `@` (or a control byte).
fn split_topic(frame: &[u8], from: usize) -> Option<(Span, Span)> {
    let hash = from + memchr::memchr(b'#', &frame[from..])?;
    let topic = Span {
        start: from,
        end: hash,
    };
    let rest = Span {
        start: hash + 1,
        end: frame.len(),
    };
    valid_topic(topic.of(frame)).then_some((topic, rest))
}

/// The reply to EXIT.
pub const TERMINATING: &[u8] = b"TERMINATING";

/// Append a decimal reply (a POST id or a COUNT) and its terminator.
pub fn reply_number(out: &mut Vec<u8>, n: u64, term: Terminator) {
    push_u64(out, n);
    out.push(term.byte());
}

/// Append a byte-string reply and its terminator.
pub fn reply_bytes(out: &mut Vec<u8>, bytes: &[u8], term: Terminator) {
    out.extend_from_slice(bytes);
    out.push(term.byte());
}

/// Append the LIST entry for one topic (`@topic`, with `#` between entries).
pub fn push_list_entry(out: &mut Vec<u8>, first: bool, topic: &[u8]) {
    if !first {
        out.push(b'#');
    }
    out.push(b'@');
    out.extend_from_slice(topic);
}

/// Split a LIST reply (without its terminator) into topics. The reply
/// `@a#@#@b` holds `a`, the empty topic and `b`; an empty reply holds none.
pub fn parse_list(reply: &[u8]) -> Option<Vec<&[u8]>> {
    if reply.is_empty() {
        return Some(Vec::new());
    }
    reply
        .split(|&b| b == b'#')
        .map(|entry| entry.strip_prefix(b"@"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Request::*;

    /// Every byte, alone and anywhere in messages short and long (past
    /// the vectorised scan's width): only NUL, CR and LF make a message
    /// invalid, and so does being empty.
    #[test]
    fn a_message_is_invalid_exactly_with_nul_cr_or_lf() {
        assert!(!valid_message(b""));
        for b in 0..=255u8 {
            let bad = matches!(b, 0 | b'\r' | b'\n');
            for len in [1, 2, 31, 32, 33, 100] {
                for at in [0, len / 2, len - 1] {
                    let mut m = vec![b'x'; len];
                    m[at] = b;
                    assert_eq!(valid_message(&m), !bad, "byte {b} at {at} of {len}");
                }
            }
        }
    }

    #[test]
    fn count_answers_tell_a_board_server() {
        assert_eq!(count_answer(b"COUNT@t", b"17"), CountAnswer::Count(17));
        assert_eq!(count_answer(b"COUNT@t", b"t@TNUOC"), CountAnswer::Echoed);
        assert_eq!(count_answer(b"COUNT@t", b"COUNT@t"), CountAnswer::Echoed);
        assert_eq!(
            count_answer(b"COUNT@t", b"HTTP/1.1 400 Bad Request\r"),
            CountAnswer::Other
        );
        assert_eq!(count_answer(b"COUNT@t", b""), CountAnswer::Other);
    }

    #[test]
    fn protocol_examples() {
        let cases: &[(&[u8], Request)] = &[
            (
                b"POST@Solar system#The dark side of the @moon is #dark.",
                Post {
                    topic: b"Solar system",
                    message: b"The dark side of the @moon is #dark.",
                },
            ),
            (
                b"POST@#x",
                Post {
                    topic: b"",
                    message: b"x",
                },
            ),
            (
                b"POST@night_sky#cloudy!",
                Post {
                    topic: b"night_sky",
                    message: b"cloudy!",
                },
            ),
            (b"LIST", List),
            (
                b"COUNT@Solar system",
                Count {
                    topic: b"Solar system",
                },
            ),
            (
                b"COUNT@solar_system",
                Count {
                    topic: b"solar_system",
                },
            ),
            (
                b"READ@#0",
                Read {
                    topic: b"",
                    id: Some(0),
                },
            ),
            (
                b"READ@Solar system#1",
                Read {
                    topic: b"Solar system",
                    id: Some(1),
                },
            ),
            (
                b"READ@night_sky#2",
                Read {
                    topic: b"night_sky",
                    id: Some(2),
                },
            ),
            (
                b"READ@t#0007",
                Read {
                    topic: b"t",
                    id: Some(7),
                },
            ),
            (
                b"READ@t#99999999999999999999",
                Read {
                    topic: b"t",
                    id: None,
                },
            ),
            (b"READ@a#1#2", Invalid),
            (b"POST@a@b#c", Invalid),
            (b"POST@a#", Invalid),
            (b"post@a#b", Invalid),
            (b"LIST ", Invalid),
            (b"AAA", Invalid),
            (b"EXIT", Exit),
            (b"EXIT ", Invalid),
            (b"", Invalid),
            (b"READ@a#", Invalid),
            (b"READ@a#-1", Invalid),
            (b"READ@a", Invalid),
            (b"COUNT@a#b", Invalid),
            (b"COUNT@a@b", Invalid),
            (b"COUNT@", Count { topic: b"" }),
            (b"POST@a#b\rc", Invalid),
            (b"POST@a\r#b", Invalid),
            (
                b"POST@t#m#@#",
                Post {
                    topic: b"t",
                    message: b"m#@#",
                },
            ),
        ];
        for (frame, want) in cases {
            assert_eq!(
                Request::parse(frame),
                *want,
                "frame {:?}",
                String::from_utf8_lossy(frame)
            );
        }
    }

    #[test]
    fn non_utf8_bytes_kept() {
        let frame = b"POST@\xff\xfe#\x80\x81";
        assert_eq!(
            Request::parse(frame),
            Post {
                topic: b"\xff\xfe",
                message: b"\x80\x81"
            }
        );
    }

    #[test]
    fn list_encoding_round_trips() {
        let mut out = Vec::new();
        for (i, t) in [&b"Solar system"[..], b"", b"night_sky"].iter().enumerate() {
            push_list_entry(&mut out, i == 0, t);
        }
        assert_eq!(out, b"@Solar system#@#@night_sky");
        assert_eq!(
            parse_list(&out).unwrap(),
            vec![&b"Solar system"[..], b"", b"night_sky"]
        );
        assert_eq!(parse_list(b"").unwrap().len(), 0);
        assert!(parse_list(b"x").is_none());
    }
}
