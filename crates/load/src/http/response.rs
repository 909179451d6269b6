//! Framing HTTP/1.1 responses in a client's input, for every HTTP load
//! (`load http` and `load kv`): the head parsed with httparse, the body by
//! `Content-Length` or chunked transfer coding, interim 1xx responses
//! skipped. Everything is bounded: a head over 64 KiB, a chunk or a length
//! past what a reply may be, or trailers without end are errors, and a
//! reply still incomplete never holds more than the driver's reply limit
//! (`--max-reply`), so a hostile server cannot grow the client's memory.

/// How every response begins (its status line's protocol name).
const STATUS: &[u8] = b"HTTP/";
/// Largest response head (or chunked trailer) accepted.
pub const MAX_HEAD: usize = 64 * 1024;
/// Largest body length believed (the driver's reply limit is lower).
const MAX_BODY: u64 = 1 << 30;
/// Header lines a head may have.
const MAX_FIELDS: usize = 96;

/// A final response at the front of a client's input.
#[derive(Debug)]
pub struct Response<'a> {
    pub status: u16,
    /// Its head, status line to the blank line (for fields a load checks).
    pub head: &'a [u8],
    /// Its body as sent: the content, or (chunked) the chunks as coded.
    pub body: &'a [u8],
    /// Bytes it takes, with any interim responses before it.
    pub len: usize,
    /// The server will close the connection after it.
    pub close: bool,
    pub content_length: Option<u64>,
    pub chunked: bool,
    /// Its `ETag` field's value, if it has one.
    pub etag: Option<&'a [u8]>,
}

/// How a body is delimited.
enum Framing {
    None,
    Length(usize),
    Chunked,
}

/// What a head says.
struct Head<'a> {
    status: u16,
    len: usize,
    close: bool,
    content_length: Option<u64>,
    framing: Framing,
    etag: Option<&'a [u8]>,
}

/// The final response to a request at the front of `input`, once whole;
/// `Ok(None)` until then. `head_request`: it answers a HEAD (no body,
/// whatever the head says). `server`: what the load expects ("kv
/// (HTTP/1.1)"), for the error when something else answers. `Err`
/// describes a stream that cannot be read on.
pub fn next_response<'a>(
    input: &'a [u8],
    head_request: bool,
    server: &str,
) -> Result<Option<Response<'a>>, String> {
    let mut at = 0;
    loop {
        let rest = &input[at..];
        // Any other server answers something else at once (a board server
        // an empty line): said within one reply, not after a timeout.
        let n = rest.len().min(STATUS.len());
        if rest[..n] != STATUS[..n] {
            return Err(format!(
                "this does not look like a {server} server (it sent {})",
                crate::quoted(rest)
            ));
        }
        let Some(head) = parse_head(rest, head_request)? else {
            return Ok(None);
        };
        let Some(end) = body_end(rest, &head)? else {
            return Ok(None);
        };
        if (100..200).contains(&head.status) {
            at += end;
            continue;
        }
        return Ok(Some(Response {
            status: head.status,
            head: &rest[..head.len],
            body: &rest[head.len..end],
            len: at + end,
            close: head.close,
            content_length: head.content_length,
            chunked: matches!(head.framing, Framing::Chunked),
            etag: head.etag,
        }));
    }
}

fn parse_head(buf: &[u8], head_request: bool) -> Result<Option<Head<'_>>, String> {
    let mut fields = [httparse::EMPTY_HEADER; MAX_FIELDS];
    let mut res = httparse::Response::new(&mut fields);
    let len = match res.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => {
            return Err("a response head over 64 KiB".into())
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(format!("a malformed response head ({e})")),
    };
    if len > MAX_HEAD {
        return Err("a response head over 64 KiB".into());
    }
    let status = res.code.unwrap_or(0);
    let f = Fields::read(res.headers)?;
    let bodiless = head_request || (100..200).contains(&status) || status == 204 || status == 304;
    let framing = if bodiless {
        Framing::None
    } else if f.chunked {
        Framing::Chunked
    } else {
        match f.length {
            Some(n) if n > MAX_BODY => return Err(format!("a Content-Length of {n}: too long")),
            Some(n) => Framing::Length(n as usize),
            None => {
                return Err(format!(
                    "a {status} response with neither Content-Length nor chunked coding (its \
                     body runs to the end of the connection, which this client does not read)"
                ))
            }
        }
    };
    Ok(Some(Head {
        status,
        len,
        close: f.close || (res.version == Some(0) && !f.keep_alive),
        content_length: f.length,
        framing,
        etag: f.etag,
    }))
}

/// The header fields framing and the loads read.
#[derive(Default)]
struct Fields<'a> {
    length: Option<u64>,
    chunked: bool,
    close: bool,
    keep_alive: bool,
    etag: Option<&'a [u8]>,
}

impl<'a> Fields<'a> {
    fn read(headers: &[httparse::Header<'a>]) -> Result<Fields<'a>, String> {
        let mut f = Fields::default();
        for h in headers {
            let value = h.value.trim_ascii();
            if h.name.eq_ignore_ascii_case("content-length") {
                let n = std::str::from_utf8(value)
                    .ok()
                    .and_then(|v| v.parse::<u64>().ok())
                    .filter(|&n| f.length.is_none_or(|m| m == n))
                    .ok_or("a Content-Length that is not a number, or two that differ")?;
                f.length = Some(n);
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                let last = value.rsplit(|&b| b == b',').next().unwrap_or_default();
                if !last.trim_ascii().eq_ignore_ascii_case(b"chunked") {
                    return Err(format!(
                        "a Transfer-Encoding that does not end in chunked ({})",
                        crate::quoted(value)
                    ));
                }
                f.chunked = true;
            } else if h.name.eq_ignore_ascii_case("etag") {
                f.etag = f.etag.or(Some(value));
            } else if h.name.eq_ignore_ascii_case("connection") {
                for token in value.split(|&b| b == b',') {
                    f.close |= token.trim_ascii().eq_ignore_ascii_case(b"close");
                    f.keep_alive |= token.trim_ascii().eq_ignore_ascii_case(b"keep-alive");
                }
            }
        }
        Ok(f)
    }
}

/// Where the body after `head` ends in `buf`, once it is all there.
fn body_end(buf: &[u8], head: &Head<'_>) -> Result<Option<usize>, String> {
    match head.framing {
        Framing::None => Ok(Some(head.len)),
        Framing::Length(n) => Ok((buf.len() >= head.len + n).then_some(head.len + n)),
        Framing::Chunked => chunks_end(buf, head.len),
    }
}

/// The end of the chunked body that starts at `at`: chunks, the last
/// (size 0), trailer fields, a blank line.
fn chunks_end(buf: &[u8], mut at: usize) -> Result<Option<usize>, String> {
    loop {
        let (took, size) = match httparse::parse_chunk_size(&buf[at..]) {
            // A line past the bound is refused whole or in part alike.
            Ok(httparse::Status::Complete((took, _))) if took > MAX_HEAD => {
                return Err("a chunk-size line over 64 KiB".into())
            }
            Ok(httparse::Status::Complete(c)) => c,
            Ok(httparse::Status::Partial) if buf.len() - at > MAX_HEAD => {
                return Err("a chunk-size line over 64 KiB".into())
            }
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(_) => {
                return Err(format!(
                    "a malformed chunk size ({})",
                    crate::quoted(&buf[at..])
                ))
            }
        };
        at += took;
        if size == 0 {
            return trailers_end(buf, at);
        }
        if size > MAX_BODY {
            return Err(format!("a chunk of {size} bytes: too long"));
        }
        let data_end = at + size as usize;
        if buf.len() < data_end + 2 {
            return Ok(None);
        }
        if &buf[data_end..data_end + 2] != b"\r\n" {
            return Err("a chunk not followed by CRLF".into());
        }
        at = data_end + 2;
    }
}

/// The end of the trailer section at `start` (lines up to a blank one).
fn trailers_end(buf: &[u8], start: usize) -> Result<Option<usize>, String> {
    let mut at = start;
    loop {
        let Some(i) = memchr::memmem::find(&buf[at..], b"\r\n") else {
            if buf.len() - start > MAX_HEAD {
                return Err("chunked trailers over 64 KiB".into());
            }
            return Ok(None);
        };
        at += i + 2;
        if i == 0 {
            return Ok(Some(at));
        }
        if at - start > MAX_HEAD {
            return Err("chunked trailers over 64 KiB".into());
        }
    }
}

/// The value of header `name` in a response head (the first, if several).
pub fn field<'a>(head: &'a [u8], name: &str) -> Option<&'a [u8]> {
    head.split(|&b| b == b'\n').skip(1).find_map(|line| {
        let (n, v) = line.split_at(line.iter().position(|&b| b == b':')?);
        n.trim_ascii()
            .eq_ignore_ascii_case(name.as_bytes())
            .then(|| v[1..].trim_ascii())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(wire: &[u8], head: bool) -> Response<'_> {
        next_response(wire, head, "HTTP/1.1").unwrap().unwrap()
    }

    #[test]
    fn frames_whole_responses_only() {
        let wire =
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nredHTTP";
        for cut in 0..wire.len() - 4 {
            assert!(next_response(&wire[..cut], false, "x").unwrap().is_none());
        }
        let r = whole(wire, false);
        assert_eq!(
            (r.status, r.body, r.len),
            (200, &b"red"[..], wire.len() - 4)
        );
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n";
        let r = whole(head, true);
        assert_eq!(
            (r.body, r.len, r.content_length),
            (&b""[..], head.len(), Some(3))
        );
        let r = whole(b"HTTP/1.1 204 No Content\r\n\r\n", false);
        assert_eq!((r.status, r.body), (204, &b""[..]));
        assert!(next_response(b"HTTP/1.1 200 OK\r\n\r\n", false, "x").is_err());
        for other in [&b"\n"[..], b"0\n", b"+OK\r\n", b"HTTX", b"H\n"] {
            let e = next_response(other, false, "kv (HTTP/1.1)").err().unwrap();
            assert!(
                e.starts_with("this does not look like a kv (HTTP/1.1) server"),
                "{e}"
            );
        }
        let mut long = b"HTTP/1.1 200 OK\r\nX-Long: ".to_vec();
        long.resize(MAX_HEAD, b'a');
        assert!(next_response(&long, false, "x").unwrap().is_none());
        long.push(b'a');
        assert!(next_response(&long, false, "x").is_err());
    }

    #[test]
    fn frames_chunked_bodies() {
        let wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n\
            4;ext=1\r\nwiki\r\n5\r\npedia\r\n0\r\nX-Trailer: t\r\n\r\nHTTP/1.1";
        let end = wire.len() - 8;
        for cut in 0..end {
            assert!(
                next_response(&wire[..cut], false, "x").unwrap().is_none(),
                "{cut}"
            );
        }
        let r = whole(wire, false);
        assert!(r.chunked);
        assert_eq!((r.status, r.len), (200, end));
        assert!(r.body.starts_with(b"4;ext=1\r\nwiki"));
        let plain = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
        assert_eq!(whole(plain, false).len, plain.len());
        for bad in [
            &b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"[..],
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffff\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        ] {
            assert!(next_response(bad, false, "x").is_err(), "{bad:?}");
        }
        // Trailers without end are refused once past the bound.
        let mut trailing = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n".to_vec();
        while trailing.len() < 2 * MAX_HEAD {
            trailing.extend_from_slice(b"X: y\r\n");
        }
        assert!(next_response(&trailing, false, "x").is_err());
    }

    /// Whatever a response is cut to, the framer says what it says of the
    /// whole, or "not yet": never an error that the whole has not.
    #[test]
    fn a_prefix_is_judged_as_the_whole() {
        let mut long_ext = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;".to_vec();
        long_ext.resize(long_ext.len() + MAX_HEAD + 1000, b'e');
        long_ext.extend_from_slice(b"\r\nx\r\n0\r\n\r\n");
        let mut long_trailer =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: ".to_vec();
        long_trailer.resize(long_trailer.len() + MAX_HEAD / 2, b't');
        long_trailer.extend_from_slice(b"\r\n\r\nHTTP/1.1 200 OK\r\n");
        long_trailer.resize(long_trailer.len() + MAX_HEAD, b'x');
        let plain =
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1"
                .to_vec();
        for wire in [long_ext, long_trailer, plain] {
            let whole = next_response(&wire, false, "x").map(|r| r.map(|r| r.len));
            for cut in (0..wire.len()).step_by(97).chain([wire.len() - 1]) {
                match next_response(&wire[..cut], false, "x") {
                    Ok(None) => {}
                    Ok(Some(r)) => assert_eq!(Ok(Some(r.len)), whole, "{cut}"),
                    Err(e) => assert!(whole.is_err(), "{e} at {cut} but not whole"),
                }
            }
        }
    }

    #[test]
    fn says_when_the_server_closes() {
        let r = whole(
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            false,
        );
        assert!(r.close);
        let r = whole(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false);
        assert!(r.close);
        let r = whole(
            b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n",
            false,
        );
        assert!(!r.close);
        let two = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab";
        assert!(next_response(two, false, "x").is_err());
    }

    #[test]
    fn fields_are_found_by_name() {
        let head = b"HTTP/1.1 200 OK\r\nETag: \"x\"\r\ncontent-length: 3\r\n\r\n";
        assert_eq!(field(head, "etag"), Some(&b"\"x\""[..]));
        assert_eq!(field(head, "Content-Length"), Some(&b"3"[..]));
        assert_eq!(field(head, "Date"), None);
    }
}
