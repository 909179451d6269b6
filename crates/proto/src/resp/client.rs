//! The client side of RESP2: commands encoded as arrays of bulk strings,
//! and replies read from a client's input, whole or not yet.

use super::number::{parse_i64, push_i64};

/// Append `args` as one command: `*<n>\r\n` and a bulk string each.
pub fn command(out: &mut Vec<u8>, args: &[&[u8]]) {
    out.push(b'*');
    push_i64(out, args.len() as i64);
    out.extend_from_slice(b"\r\n");
    for a in args {
        out.push(b'$');
        push_i64(out, a.len() as i64);
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

/// A reply, borrowing the input it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply<'a> {
    Simple(&'a [u8]),
    /// An error's text, its code first (`ERR …`, `WRONGTYPE …`).
    Error(&'a [u8]),
    Int(i64),
    /// A bulk string; `None` is the null bulk (`$-1`).
    Bulk(Option<&'a [u8]>),
    /// An array; `None` is the null array (`*-1`).
    Array(Option<Vec<Reply<'a>>>),
}

impl Reply<'_> {
    /// In a person's words, for mismatch reports and witnesses.
    pub fn show(&self) -> String {
        let text = |b: &[u8]| {
            let s = String::from_utf8_lossy(&b[..b.len().min(60)]).into_owned();
            if b.len() > 60 {
                format!("{s}…({} bytes)", b.len())
            } else {
                s
            }
        };
        match self {
            Reply::Simple(s) => format!("+{}", text(s)),
            Reply::Error(e) => format!("-{}", text(e)),
            Reply::Int(n) => format!(":{n}"),
            Reply::Bulk(None) => "(nil)".into(),
            Reply::Bulk(Some(b)) => format!("{:?}", text(b)),
            Reply::Array(None) => "(nil array)".into(),
            Reply::Array(Some(items)) => {
                let shown: Vec<String> = items.iter().take(8).map(Reply::show).collect();
                let more = if items.len() > 8 { ", …" } else { "" };
                format!("[{}{more}]", shown.join(", "))
            }
        }
    }
}

/// A stream that is not RESP.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    #[error("a reply starting with {0:?}, not one of + - : $ *")]
    Type(char),
    #[error("a reply whose length or integer is malformed")]
    Number,
    #[error("a reply line or bulk string not ended by CR LF")]
    Crlf,
    #[error("a reply nested deeper than 32 arrays")]
    Depth,
}

/// The whole reply at the front of `input` and its length; `Ok(None)`
/// while it is incomplete.
pub fn parse(input: &[u8]) -> Result<Option<(Reply<'_>, usize)>, ReplyError> {
    walk::<Build>(input, 0, 0)
}

/// Only the length of the whole reply at the front of `input`: [`parse`]'s
/// walk, refusing what it refuses, without building the reply (no
/// allocation for arrays); `Ok(None)` while it is incomplete.
pub fn skip(input: &[u8]) -> Result<Option<usize>, ReplyError> {
    Ok(walk::<Measure>(input, 0, 0)?.map(|((), n)| n))
}

/// What a walk over a reply makes of it.
trait Visit<'a> {
    type Value;
    /// An array's items so far.
    type Items;
    /// A reply with no items: anything but `Reply::Array(Some(_))`.
    fn leaf(reply: Reply<'a>) -> Self::Value;
    fn items(n: usize) -> Self::Items;
    fn push(items: &mut Self::Items, item: Self::Value);
    fn array(items: Self::Items) -> Self::Value;
}

/// [`parse`]'s walk: the reply itself.
struct Build;

impl<'a> Visit<'a> for Build {
    type Value = Reply<'a>;
    type Items = Vec<Reply<'a>>;

    fn leaf(reply: Reply<'a>) -> Reply<'a> {
        reply
    }

    fn items(n: usize) -> Vec<Reply<'a>> {
        Vec::with_capacity(n.min(1024))
    }

    fn push(items: &mut Vec<Reply<'a>>, item: Reply<'a>) {
        items.push(item);
    }

    fn array(items: Vec<Reply<'a>>) -> Reply<'a> {
        Reply::Array(Some(items))
    }
}

/// [`skip`]'s walk: nothing kept.
struct Measure;

impl Visit<'_> for Measure {
    type Value = ();
    type Items = ();

    fn leaf(_: Reply<'_>) {}

    fn items(_: usize) {}

    fn push(_: &mut (), _: ()) {}

    fn array(_: ()) {}
}

/// The line at `at` (after its type byte, which the caller has seen) and
/// where the next starts. The CR is looked for after the type byte: a
/// type byte that is itself a CR is no line's end.
fn line(input: &[u8], at: usize) -> Result<Option<(&[u8], usize)>, ReplyError> {
    let text = at + 1;
    let Some(cr) = memchr::memchr(b'\r', &input[text..]) else {
        return Ok(None);
    };
    match input.get(text + cr + 1) {
        None => Ok(None),
        Some(b'\n') => Ok(Some((&input[text..text + cr], text + cr + 2))),
        Some(_) => Err(ReplyError::Crlf),
    }
}

fn number(text: &[u8]) -> Result<i64, ReplyError> {
    parse_i64(text).ok_or(ReplyError::Number)
}

/// A bulk string's or an array's length: `None` for the null one (-1).
fn length(text: &[u8]) -> Result<Option<usize>, ReplyError> {
    match number(text)? {
        -1 => Ok(None),
        n if n >= 0 => Ok(Some(n as usize)),
        _ => Err(ReplyError::Number),
    }
}

/// The reply at `at`, `depth` arrays down, and where the next starts.
fn walk<'a, V: Visit<'a>>(
    input: &'a [u8],
    at: usize,
    depth: usize,
) -> Result<Option<(V::Value, usize)>, ReplyError> {
    if depth > 32 {
        return Err(ReplyError::Depth);
    }
    let Some(&kind) = input.get(at) else {
        return Ok(None);
    };
    if !b"+-:$*".contains(&kind) {
        return Err(ReplyError::Type(kind as char));
    }
    let Some((text, next)) = line(input, at)? else {
        return Ok(None);
    };
    let leaf = |reply| Ok(Some((V::leaf(reply), next)));
    match kind {
        b'+' => leaf(Reply::Simple(text)),
        b'-' => leaf(Reply::Error(text)),
        b':' => leaf(Reply::Int(number(text)?)),
        b'$' => match length(text)? {
            None => leaf(Reply::Bulk(None)),
            Some(n) => {
                Ok(bulk(input, next, n)?.map(|(b, end)| (V::leaf(Reply::Bulk(Some(b))), end)))
            }
        },
        // `*`, the one type byte left.
        _ => match length(text)? {
            None => leaf(Reply::Array(None)),
            Some(n) => items::<V>(input, next, n, depth),
        },
    }
}

/// A bulk string's `n` bytes at `at`, and where the next reply starts.
fn bulk(input: &[u8], at: usize, n: usize) -> Result<Option<(&[u8], usize)>, ReplyError> {
    let end = at + n;
    if input.len() < end + 2 {
        return Ok(None);
    }
    if &input[end..end + 2] != b"\r\n" {
        return Err(ReplyError::Crlf);
    }
    Ok(Some((&input[at..end], end + 2)))
}

/// An array's `n` items from `at`, and where the next reply starts.
fn items<'a, V: Visit<'a>>(
    input: &'a [u8],
    mut at: usize,
    n: usize,
    depth: usize,
) -> Result<Option<(V::Value, usize)>, ReplyError> {
    let mut items = V::items(n);
    for _ in 0..n {
        let Some((item, after)) = walk::<V>(input, at, depth + 1)? else {
            return Ok(None);
        };
        V::push(&mut items, item);
        at = after;
    }
    Ok(Some((V::array(items), at)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_replies_round_trip() {
        let mut wire = Vec::new();
        command(&mut wire, &[b"SET", b"k", b"a\r\nb"]);
        assert_eq!(wire, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n");
        let replies = b"+OK\r\n-ERR x\r\n:-3\r\n$-1\r\n$2\r\nab\r\n*2\r\n$1\r\na\r\n*-1\r\n*0\r\n";
        let mut at = 0;
        let mut got = Vec::new();
        while at < replies.len() {
            let (r, n) = parse(&replies[at..]).unwrap().unwrap();
            assert_eq!(skip(&replies[at..]).unwrap(), Some(n));
            got.push(r);
            at += n;
        }
        assert_eq!(
            got,
            vec![
                Reply::Simple(b"OK"),
                Reply::Error(b"ERR x"),
                Reply::Int(-3),
                Reply::Bulk(None),
                Reply::Bulk(Some(b"ab")),
                Reply::Array(Some(vec![Reply::Bulk(Some(b"a")), Reply::Array(None)])),
                Reply::Array(Some(vec![])),
            ]
        );
        for cut in 0..replies.len() {
            if let Ok(Some((_, n))) = parse(&replies[..cut]) {
                assert!(n <= cut);
            }
        }
        assert_eq!(parse(b"$5\r\nab").unwrap(), None);
        assert_eq!(skip(b"*2\r\n:1\r\n").unwrap(), None);
        assert!(parse(b"?x\r\n").is_err());
        assert!(parse(b"$2\r\nabc\r\n").is_err());
    }

    /// Found by the fuzz target `resp_reply`: a reply starting with CR
    /// (a server sending a bare CR LF) panicked the client's parser (a
    /// slice from 1 to 0) instead of being refused as not RESP. A type
    /// byte that is none of RESP's is now refused at once, before its
    /// line is complete.
    #[test]
    fn a_reply_starting_with_cr_is_an_error_not_a_panic() {
        for input in [
            &b"\r\n"[..],
            b"\r",
            b"\r\r\n",
            b"*1\r\n\r\n",
            b"*2\r\n:1\r\n\r",
        ] {
            assert_eq!(parse(input), Err(ReplyError::Type('\r')), "{input:?}");
            assert_eq!(skip(input), Err(ReplyError::Type('\r')), "{input:?}");
        }
    }
    /// `skip` and `parse` are one walker: a bulk string not ended by CR
    /// LF, or an integer that is not one, is refused by both. (`skip`
    /// took `$3\r\nabcXY` for a whole 9-byte reply and `:x\r\n` for a
    /// 4-byte one, while `parse` refused them.)
    #[test]
    fn skip_refuses_what_parse_refuses() {
        for (input, want) in [
            (&b"$3\r\nabcXY"[..], ReplyError::Crlf),
            (b"*2\r\n$1\r\naXY:1\r\n", ReplyError::Crlf),
            (b":x\r\n", ReplyError::Number),
            (b"*1\r\n:1x\r\n", ReplyError::Number),
        ] {
            assert_eq!(parse(input).map(|r| r.map(|(_, n)| n)), Err(want.clone()));
            assert_eq!(
                skip(input),
                Err(want),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }
}
