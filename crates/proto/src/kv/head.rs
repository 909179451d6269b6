//! Finding a request head in a byte stream and parsing it (with
//! `httparse`) into a typed [`Head`], or into the status that rejects it.
//!
//! Check, then parse: the head's end (an empty line) is searched for
//! incrementally, resuming where the last call stopped, and httparse runs
//! on the complete head. Limits are enforced while the head is still
//! arriving, so a connection never buffers more than
//! [`Limits::max_head`] bytes of head; and so is syntax: httparse also
//! checks each partial head while its request line is arriving and
//! whenever another line is complete, so garbage (a TLS ClientHello, a
//! binary protocol) is refused at once instead of waiting for a blank line
//! that never comes.

use super::fields::{ConnectionOptions, ContentLength, LengthError};
use super::{IfNoneMatch, Method, Reject, RequestError, Target, Version};

/// Room in a request line beyond the URI: method, spaces, version, CRLF.
const LINE_SLACK: usize = 64;
/// Most header fields in one request; more is answered 431.
pub const MAX_HEADER_COUNT: usize = 100;

/// The size limits a server enforces (`--max-uri`, `--max-headers`,
/// `--max-value`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest request target, in bytes as sent: 414 beyond.
    pub max_uri: usize,
    /// Largest header section (after the request line): 431 beyond.
    pub max_headers: usize,
    /// Largest body: 413 beyond.
    pub max_value: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_uri: 2048,
            max_headers: 16 * 1024,
            max_value: 1 << 20,
        }
    }
}

impl Limits {
    /// Longest request line, CRLF included.
    pub fn max_line(&self) -> usize {
        self.max_uri + LINE_SLACK
    }

    /// Most bytes a head may take before it is rejected, including the
    /// empty lines a client may send before it.
    pub fn max_head(&self) -> usize {
        LINE_SLACK + self.max_line() + self.max_headers + 4
    }

    /// Most bytes one whole request may take.
    pub fn max_request(&self) -> usize {
        self.max_head() + self.max_value
    }
}

/// A parsed request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub method: Method,
    pub target: Target,
    pub version: Version,
    /// Whether the connection stays open after the response: HTTP/1.1
    /// unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
    pub keep_alive: bool,
    /// Body bytes that follow the head (0 without `Content-Length`).
    pub content_length: usize,
    pub if_none_match: Option<IfNoneMatch>,
    /// An HTTP/1.1 client waits for `100 Continue` before its body.
    pub expect_continue: bool,
}

/// The outcome of looking for a head at the front of a connection's input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadScan {
    /// No complete head yet, and no limit passed: wait for more bytes.
    Incomplete,
    /// A head of `len` bytes; its body (if any) follows.
    Complete {
        head: Head,
        len: usize,
    },
    Reject(Reject),
}

fn reject(error: RequestError) -> HeadScan {
    HeadScan::Reject(Reject::new(error))
}

/// A rejection of the request whose line starts `line`: a response to
/// HEAD has no body (RFC 9110 §9.3.2), so it is marked as soon as the
/// method is known, whether or not the head is complete.
fn reject_request(line: &[u8], error: RequestError) -> HeadScan {
    HeadScan::Reject(Reject {
        error,
        head_only: line.starts_with(b"HEAD "),
    })
}

/// Look for a request head at the front of `input`. `scanned` carries the
/// search's progress between calls on the same head: start it at 0, and
/// reset it to 0 for the next request.
pub fn scan(input: &[u8], scanned: &mut usize, limits: &Limits) -> HeadScan {
    // RFC 9112 §2.2: ignore empty lines before the request line.
    let lead = input
        .iter()
        .take_while(|&&b| b == b'\r' || b == b'\n')
        .count();
    if lead > LINE_SLACK {
        return reject(RequestError::LeadingEmptyLines);
    }
    let from = (*scanned).max(lead).min(input.len());
    let new_line = memchr::memchr(b'\n', &input[from..]).is_some();
    match find_end(input, lead, scanned) {
        Some(end) => parse(&input[..end], lead, limits),
        None => incomplete(input, lead, new_line, limits),
    }
}

/// The end of the head (just past its empty line), searching from
/// `*scanned`, which is advanced past what can be ruled out.
fn find_end(input: &[u8], lead: usize, scanned: &mut usize) -> Option<usize> {
    let mut at = (*scanned).max(lead);
    while let Some(i) = memchr::memchr(b'\n', &input[at..]).map(|i| at + i) {
        match (input.get(i + 1), input.get(i + 2)) {
            (Some(b'\n'), _) => return Some(i + 2),
            (Some(b'\r'), Some(b'\n')) => return Some(i + 3),
            (None, _) | (Some(b'\r'), None) => {
                // Cannot tell yet: look at this LF again next time.
                *scanned = i;
                return None;
            }
            _ => at = i + 1,
        }
    }
    *scanned = input.len();
    None
}

/// No head yet: reject it if what has arrived is already malformed, or
/// has passed a limit. `new_line`: a line end arrived since the last call.
fn incomplete(input: &[u8], lead: usize, new_line: bool, limits: &Limits) -> HeadScan {
    let line = &input[lead..];
    let reject = |error| reject_request(line, error);
    let eol = memchr::memchr(b'\n', line);
    // While the request line arrives each check costs at most a line;
    // after it, one check per line bounds the work per head.
    if eol.is_none() || new_line {
        if let Err(e) = check_partial(line) {
            return reject(e);
        }
    }
    match eol {
        None if line.len() > limits.max_line() => {
            // A long line that began like a request line is a long URI.
            let looks_like_request = line[..line.len().min(LINE_SLACK)].contains(&b' ');
            if looks_like_request {
                reject(RequestError::LineTooLong)
            } else {
                reject(RequestError::MalformedLine)
            }
        }
        None => HeadScan::Incomplete,
        Some(eol) if target_len(&line[..eol]) > limits.max_uri => {
            reject(RequestError::TargetTooLong)
        }
        Some(eol) if eol + 1 > limits.max_line() => reject(RequestError::LineTooLong),
        Some(eol) if line.len() - (eol + 1) > limits.max_headers + 2 => {
            reject(RequestError::HeadersTooLarge)
        }
        Some(_) => HeadScan::Incomplete,
    }
}

/// Run httparse on a head that has not all arrived: it parses as far as
/// the bytes go, so an error it finds in them is an error in every head
/// that starts with them. `Partial` means: so far, so good.
fn check_partial(head: &[u8]) -> Result<(), RequestError> {
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADER_COUNT];
    match httparse::Request::new(&mut fields).parse(head) {
        Ok(_) => Ok(()),
        Err(e) => Err(RequestError::from_httparse(e)),
    }
}

/// Length of the target in a request line (`METHOD SP target SP version`),
/// whether or not the head around it is complete yet.
fn target_len(line: &[u8]) -> usize {
    line.split(|&b| b == b' ').nth(1).map_or(0, <[u8]>::len)
}

/// Parse a complete head and apply the limits and rules that need it whole.
fn parse(head: &[u8], lead: usize, limits: &Limits) -> HeadScan {
    match parse_complete(head, lead, limits) {
        Ok((head, len)) => HeadScan::Complete { head, len },
        Err(error) => reject_request(&head[lead..], error),
    }
}

/// [`parse`], with every rule's failure as the error it answers.
fn parse_complete(
    head: &[u8],
    lead: usize,
    limits: &Limits,
) -> Result<(Head, usize), RequestError> {
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADER_COUNT];
    let mut req = httparse::Request::new(&mut fields);
    let len = match req.parse(head) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Err(RequestError::MalformedHead),
        Err(e) => return Err(RequestError::from_httparse(e)),
    };
    let (Some(method), Some(uri), Some(minor)) = (req.method, req.path, req.version) else {
        return Err(RequestError::MalformedHead);
    };
    let method = Method::parse(method);
    check_sizes(head, lead, len, uri, limits)?;
    let version = if minor == 0 {
        Version::Http10
    } else {
        Version::Http11
    };
    let f = Fields::read(req.headers)?;
    let content_length = f.check(method, version, limits)?;
    let target = match Target::parse(uri) {
        Ok(t) => t,
        // The target of a method we do not serve does not matter: 405.
        Err(_) if method == Method::Other => Target::NoKey,
        Err(e) => return Err(RequestError::Target(e)),
    };
    let c = f.connection;
    let keep_alive = !c.close && (version == Version::Http11 || c.keep_alive);
    let head = Head {
        method,
        target,
        version,
        keep_alive,
        content_length,
        if_none_match: f.if_none_match,
        expect_continue: f.expect_continue && version == Version::Http11,
    };
    Ok((head, len))
}

/// The size limits of a complete head: its target, its request line and
/// its header fields.
fn check_sizes(
    head: &[u8],
    lead: usize,
    len: usize,
    uri: &str,
    limits: &Limits,
) -> Result<(), RequestError> {
    if uri.len() > limits.max_uri {
        return Err(RequestError::TargetTooLong);
    }
    let line_end = lead + memchr::memchr(b'\n', &head[lead..]).map_or(0, |i| i + 1);
    // As when the line arrives on its own (see `incomplete`): a head's
    // verdict must not depend on how it was split into reads.
    if line_end - lead > limits.max_line() {
        return Err(RequestError::LineTooLong);
    }
    if len - line_end > limits.max_headers + 2 {
        return Err(RequestError::HeadersTooLarge);
    }
    Ok(())
}

/// What the header fields say, before the rules that combine them.
#[derive(Default)]
struct Fields {
    hosts: usize,
    content_length: ContentLength,
    transfer_encoding: bool,
    connection: ConnectionOptions,
    if_none_match: Option<IfNoneMatch>,
    expect_continue: bool,
    expect_other: bool,
}

impl Fields {
    /// The rules that combine fields with the method and version; the
    /// body's length when they hold.
    fn check(
        &self,
        method: Method,
        version: Version,
        limits: &Limits,
    ) -> Result<usize, RequestError> {
        if self.hosts > 1 || (version == Version::Http11 && self.hosts == 0) {
            return Err(RequestError::Host);
        }
        if self.transfer_encoding {
            return Err(RequestError::TransferEncoding);
        }
        let content_length = match self.content_length.get() {
            Some(Some(n)) if n <= limits.max_value as u64 => n as usize,
            Some(_) => return Err(RequestError::BodyTooLarge),
            None if method.writes() => return Err(RequestError::LengthRequired),
            None => 0,
        };
        if self.expect_other && version == Version::Http11 {
            return Err(RequestError::Expectation);
        }
        Ok(content_length)
    }

    fn read(headers: &[httparse::Header]) -> Result<Fields, RequestError> {
        let mut f = Fields::default();
        for h in headers {
            let value = h.value.trim_ascii();
            let name = h.name;
            if name.eq_ignore_ascii_case("host") {
                f.hosts += 1;
            } else if name.eq_ignore_ascii_case("content-length") {
                f.content_length.add(value).map_err(|e| match e {
                    LengthError::NotANumber => RequestError::LengthNotANumber,
                    LengthError::Conflict => RequestError::LengthConflict,
                })?;
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                f.transfer_encoding = true;
            } else if name.eq_ignore_ascii_case("connection") {
                f.connection.add(value);
            } else if name.eq_ignore_ascii_case("if-none-match") {
                let this = IfNoneMatch::parse(value);
                f.if_none_match = Some(match f.if_none_match.take() {
                    Some(before) => before.merge(this),
                    None => this,
                });
            } else if name.eq_ignore_ascii_case("expect") {
                if value.eq_ignore_ascii_case(b"100-continue") {
                    f.expect_continue = true;
                } else {
                    f.expect_other = true;
                }
            }
        }
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::Status;

    fn scan_all(input: &[u8]) -> HeadScan {
        scan(input, &mut 0, &Limits::default())
    }

    fn complete(input: &[u8]) -> (Head, usize) {
        match scan_all(input) {
            HeadScan::Complete { head, len } => (head, len),
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(input)),
        }
    }

    fn status(input: &[u8]) -> Status {
        match scan_all(input) {
            HeadScan::Reject(r) => r.status(),
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(input)),
        }
    }

    #[test]
    fn a_simple_get() {
        let wire = b"GET /apple HTTP/1.1\r\nHost: x\r\n\r\nNEXT";
        let (head, len) = complete(wire);
        assert_eq!(len, wire.len() - 4);
        assert_eq!(
            head,
            Head {
                method: Method::Get,
                target: Target::Key(b"apple".to_vec()),
                version: Version::Http11,
                keep_alive: true,
                content_length: 0,
                if_none_match: None,
                expect_continue: false,
            }
        );
    }

    #[test]
    fn connection_semantics() {
        let ka = |wire: &[u8]| complete(wire).0.keep_alive;
        assert!(ka(b"GET /k HTTP/1.1\r\nHost: x\r\n\r\n"));
        assert!(!ka(
            b"GET /k HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        ));
        assert!(!ka(
            b"GET /k HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, Close\r\n\r\n"
        ));
        assert!(!ka(b"GET /k HTTP/1.0\r\n\r\n"));
        assert!(ka(b"GET /k HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
        assert!(!ka(
            b"GET /k HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n"
        ));
    }

    #[test]
    fn bodies_and_lengths() {
        let (head, len) = complete(b"PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
        assert_eq!(
            (head.method, head.content_length, len),
            (Method::Put, 5, 47)
        );
        let (head, _) = complete(b"POST /k HTTP/1.1\r\nHost: x\r\ncontent-length:0\r\n\r\n");
        assert_eq!(head.content_length, 0);
        let (head, _) = complete(
            b"PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
        );
        assert_eq!(head.content_length, 3);
        assert_eq!(
            status(b"PUT /k HTTP/1.1\r\nHost: x\r\n\r\n"),
            Status::LengthRequired
        );
        assert_eq!(
            status(b"PUT /k HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Status::LengthRequired
        );
        assert_eq!(
            status(b"PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n"),
            Status::BadRequest
        );
        assert_eq!(
            status(b"PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"),
            Status::BadRequest
        );
        assert_eq!(
            status(b"PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 1048577\r\n\r\n"),
            Status::ContentTooLarge
        );
        assert_eq!(
            status(
                b"PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n"
            ),
            Status::ContentTooLarge
        );
        let (head, _) = complete(b"GET /k HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab");
        assert_eq!(head.content_length, 2, "a GET body is framed, then ignored");
    }

    #[test]
    fn malformed_heads() {
        for wire in [
            &b"GET /k HTTP/1.1\r\n\r\n"[..],
            b"GET /k HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            b"GET /k HTTP/2.0\r\nHost: x\r\n\r\n",
            b"GET /k\r\n\r\n",
            b"GET  /k HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /k HTTP/1.1\r\nHost x\r\n\r\n",
            b"GET /k HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
            b"GET /a%zz HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET * HTTP/1.1\r\nHost: x\r\n\r\n",
            b"\x00\x01\x02\r\n\r\n",
        ] {
            assert_eq!(
                status(wire),
                Status::BadRequest,
                "{:?}",
                String::from_utf8_lossy(wire)
            );
        }
    }

    #[test]
    fn malformed_input_is_refused_before_its_head_ends() {
        let client_hello = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03";
        for (wire, why) in [
            (
                &b"FOO\x01BAR\r\n"[..],
                RequestError::Syntax(httparse::Error::Token),
            ),
            (client_hello, RequestError::Syntax(httparse::Error::Token)),
            (b"GET /k HTTP/3.0\r\nHost: x\r\n", RequestError::Version),
            (
                b"GET /k HTTP/1.1\r\nHo st: x\r\n",
                RequestError::Syntax(httparse::Error::HeaderName),
            ),
            (
                b"GET /k HTTP/1.1\r\nHost: x\r\n folded",
                RequestError::Syntax(httparse::Error::HeaderName),
            ),
        ] {
            assert_eq!(
                scan_all(wire),
                reject(why),
                "{:?}",
                String::from_utf8_lossy(wire)
            );
        }
    }

    #[test]
    fn a_head_arriving_byte_by_byte_is_never_refused_early() {
        // 100 fields in all: the most httparse is given room for.
        let fields: String = (2..MAX_HEADER_COUNT)
            .map(|i| format!("h{i}: v\r\n"))
            .collect();
        let wire = format!("PUT /k HTTP/1.1\r\nHost: x\r\n{fields}Content-Length: 0\r\n\r\n");
        let limits = Limits::default();
        let mut scanned = 0;
        for end in 0..wire.len() {
            let got = scan(&wire.as_bytes()[..end], &mut scanned, &limits);
            assert_eq!(got, HeadScan::Incomplete, "at {end}");
        }
        assert!(matches!(
            scan(wire.as_bytes(), &mut scanned, &limits),
            HeadScan::Complete { .. }
        ));
    }

    #[test]
    fn unknown_methods_are_framed_for_405() {
        let (head, _) = complete(b"PATCH /k HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nz");
        assert_eq!((head.method, head.content_length), (Method::Other, 1));
        let (head, _) = complete(b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(head.method, Method::Other);
    }

    #[test]
    fn expectations() {
        let (head, _) = complete(
            b"PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-Continue\r\n\r\n",
        );
        assert!(head.expect_continue);
        let (head, _) =
            complete(b"PUT /k HTTP/1.0\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
        assert!(!head.expect_continue, "HTTP/1.0 ignores it");
        assert_eq!(
            status(b"GET /k HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n"),
            Status::ExpectationFailed
        );
    }

    #[test]
    fn lf_only_and_leading_empty_lines() {
        let (head, len) = complete(b"\r\n\nGET /k HTTP/1.1\nHost: x\n\nrest");
        assert_eq!((head.target, len), (Target::Key(b"k".to_vec()), 28));
        assert_eq!(scan_all(b"\r\n\r\n"), HeadScan::Incomplete);
        assert_eq!(status(&[b'\n'; 100]), Status::BadRequest);
    }

    #[test]
    fn incremental_scan_agrees_with_whole_scan() {
        let wire = b"PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab";
        let limits = Limits::default();
        let mut scanned = 0;
        for end in 0..wire.len() {
            let got = scan(&wire[..end], &mut scanned, &limits);
            if end < wire.len() - 2 {
                assert_eq!(got, HeadScan::Incomplete, "at {end}");
                assert!(scanned <= end);
            } else {
                assert!(
                    matches!(got, HeadScan::Complete { len: 47, .. }),
                    "at {end}: {got:?}"
                );
            }
        }
    }

    #[test]
    fn size_limits() {
        let limits = Limits {
            max_uri: 20,
            max_headers: 40,
            max_value: 10,
        };
        let st = |wire: &[u8]| match scan(wire, &mut 0, &limits) {
            HeadScan::Reject(r) => Some(r.status()),
            HeadScan::Incomplete => None,
            HeadScan::Complete { .. } => Some(Status::Ok),
        };
        let uri20 = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(19));
        assert_eq!(st(uri20.as_bytes()), Some(Status::Ok));
        let uri21 = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(20));
        assert_eq!(st(uri21.as_bytes()), Some(Status::UriTooLong));
        // Known as soon as the request line is complete.
        let line21 = format!("GET /{} HTTP/1.1\r\n", "a".repeat(20));
        assert_eq!(st(line21.as_bytes()), Some(Status::UriTooLong));
        assert_eq!(st(&line21.as_bytes()[..line21.len() - 2]), None);
        // Rejected before the line ends, once it cannot fit.
        let endless = format!("GET /{}", "a".repeat(100));
        assert_eq!(st(endless.as_bytes()), Some(Status::UriTooLong));
        assert_eq!(st(&[b'x'; 100]), Some(Status::BadRequest));
        let fields = format!(
            "GET /k HTTP/1.1\r\nHost: x\r\nA: {}\r\n\r\n",
            "v".repeat(40)
        );
        assert_eq!(st(fields.as_bytes()), Some(Status::HeadersTooLarge));
        let endless = format!("GET /k HTTP/1.1\r\nHost: x\r\nA: {}", "v".repeat(60));
        assert_eq!(st(endless.as_bytes()), Some(Status::HeadersTooLarge));
        let many: String = (0..=MAX_HEADER_COUNT)
            .map(|i| format!("h{i}:1\r\n"))
            .collect();
        let many = format!("GET /k HTTP/1.1\r\nHost: x\r\n{many}\r\n");
        assert_eq!(
            scan(many.as_bytes(), &mut 0, &Limits::default()),
            reject(RequestError::TooManyHeaders)
        );
        assert_eq!(
            st(b"PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n"),
            Some(Status::ContentTooLarge)
        );
    }

    #[test]
    fn a_long_request_line_is_refused_however_it_arrives() {
        // Fuzz finding (kv_head): a long method with a short target was
        // refused (414) when the head arrived in pieces, but accepted when
        // it arrived whole, making a head of more than `max_head` bytes.
        let limits = Limits {
            max_uri: 16,
            max_headers: 64,
            max_value: 16,
        };
        let method = "M".repeat(limits.max_line());
        let wire = format!("{method} /k HTTP/1.1\r\nHost: x\r\n\r\n");
        let line_end = wire.find('\n').unwrap() + 1;
        let mut scanned = 0;
        let split = scan(&wire.as_bytes()[..line_end], &mut scanned, &limits);
        let whole = scan(wire.as_bytes(), &mut 0, &limits);
        for got in [split, whole] {
            match got {
                HeadScan::Reject(r) => {
                    assert_eq!(r.error, RequestError::LineTooLong);
                    assert_eq!(r.status(), Status::UriTooLong);
                }
                other => panic!("{other:?}"),
            }
        }
        // The longest line allowed still passes, whole or in pieces.
        let method = "M".repeat(limits.max_line() - " /k HTTP/1.1\r\n".len());
        let wire = format!("{method} /k HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(matches!(
            scan(wire.as_bytes(), &mut 0, &limits),
            HeadScan::Complete { .. }
        ));
    }

    #[test]
    fn head_requests_are_marked_in_rejections() {
        match scan_all(b"HEAD /a%zz HTTP/1.1\r\nHost: x\r\n\r\n") {
            HeadScan::Reject(r) => assert!(r.head_only),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn head_requests_are_marked_before_their_head_is_complete() {
        // Fuzz finding (session_kv): a HEAD whose header section passed the
        // limit before it ended was refused with a body, which a response
        // to HEAD must not have; whole, the same head was marked.
        let limits = Limits {
            max_uri: 16,
            max_headers: 64,
            max_value: 16,
        };
        let fields = "A: vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\r\n";
        for head in [
            format!("HEAD /k HTTP/1.1\r\nHost: x\r\n{fields}"),
            format!("HEAD /k HTTP/1.1\r\nHost: x\r\n{fields}\r\n"),
            "HEAD /k HTTP/1.1\r\nHo st: x\r\n".to_string(),
            format!("HEAD /{} HTTP/1.1\r\n", "k".repeat(20)),
        ] {
            match scan(head.as_bytes(), &mut 0, &limits) {
                HeadScan::Reject(r) => assert!(r.head_only, "{head:?}: {r:?}"),
                other => panic!("{head:?}: {other:?}"),
            }
        }
        match scan(b"HEADER /k HTTP/1.1\r\nHo st: x\r\n", &mut 0, &limits) {
            HeadScan::Reject(r) => assert!(!r.head_only, "another method"),
            other => panic!("{other:?}"),
        }
    }
}
