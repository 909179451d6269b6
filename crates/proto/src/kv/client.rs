//! The client's side of kv: encoding requests and parsing response heads
//! (with httparse), for the load generator.

use super::etag::parse_etag;
use super::fields::{ConnectionOptions, ContentLength};
use super::{push_encoded_key, Digest, Method};
use crate::number::push_u64;

/// Append a request for `key`. `body` is sent with its `Content-Length`
/// (PUT and POST); `close` asks the server to close after the response.
pub fn encode_request(
    out: &mut Vec<u8>,
    method: Method,
    key: &[u8],
    body: Option<&[u8]>,
    host: &str,
    close: bool,
) {
    let token = match method {
        Method::Other => "PATCH",
        m => m.name(),
    };
    out.extend_from_slice(token.as_bytes());
    out.push(b' ');
    push_encoded_key(out, key);
    out.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    out.extend_from_slice(host.as_bytes());
    if let Some(body) = body {
        out.extend_from_slice(b"\r\nContent-Length: ");
        push_u64(out, body.len() as u64);
    }
    if close {
        out.extend_from_slice(b"\r\nConnection: close");
    }
    out.extend_from_slice(b"\r\n\r\n");
    if let Some(body) = body {
        out.extend_from_slice(body);
    }
}

/// A response's `ETag`, as far as a kv client cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    Absent,
    /// A quoted 32-digit lower-case hex tag, as a kv server sends.
    Digest(Digest),
    /// Some other tag.
    Foreign,
}

/// A parsed response head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseHead {
    pub status: u16,
    /// Bytes of head; the body follows.
    pub len: usize,
    /// Body bytes that follow (0 for HEAD, 1xx, 204 and 304, whatever
    /// `Content-Length` says).
    pub body_len: usize,
    pub content_length: Option<u64>,
    pub etag: Tag,
    /// The server will close the connection after this response.
    pub close: bool,
}

/// Why a response cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResponseError {
    #[error("malformed response head ({0})")]
    Malformed(httparse::Error),
    #[error("a response with a body but no Content-Length")]
    NoLength,
    #[error("a Content-Length that is not a number, or two that differ")]
    BadLength,
    #[error("a chunked response (Transfer-Encoding), which this client does not read")]
    Chunked,
}

/// Parse the response head at the front of `buf`, answering a request of
/// `method`. `Ok(None)`: incomplete. A 1xx response is returned like any
/// other; the caller skips it.
pub fn parse_response(buf: &[u8], method: Method) -> Result<Option<ResponseHead>, ResponseError> {
    let mut fields = [httparse::EMPTY_HEADER; 64];
    let mut res = httparse::Response::new(&mut fields);
    let len = match res.parse(buf).map_err(ResponseError::Malformed)? {
        httparse::Status::Complete(n) => n,
        httparse::Status::Partial => return Ok(None),
    };
    let status = res.code.unwrap_or(0);
    let http10 = res.version == Some(0);
    let (mut length, mut etag, mut connection) = (
        ContentLength::default(),
        Tag::Absent,
        ConnectionOptions::default(),
    );
    for h in res.headers.iter() {
        let value = h.value.trim_ascii();
        if h.name.eq_ignore_ascii_case("content-length") {
            length.add(value).map_err(|_| ResponseError::BadLength)?;
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(ResponseError::Chunked);
        } else if h.name.eq_ignore_ascii_case("etag") {
            etag = parse_etag(value).map_or(Tag::Foreign, Tag::Digest);
        } else if h.name.eq_ignore_ascii_case("connection") {
            connection.add(value);
        }
    }
    // A length too large for u64 is as unreadable as a malformed one.
    let content_length = match length.get() {
        Some(None) => return Err(ResponseError::BadLength),
        n => n.flatten(),
    };
    let bodiless =
        method == Method::Head || (100..200).contains(&status) || status == 204 || status == 304;
    let body_len = if bodiless {
        0
    } else {
        let n = content_length.ok_or(ResponseError::NoLength)?;
        usize::try_from(n).map_err(|_| ResponseError::BadLength)?
    };
    Ok(Some(ResponseHead {
        status,
        len,
        body_len,
        content_length,
        etag,
        close: connection.close || (http10 && !connection.keep_alive),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::{digest, etag, HeadScan, Limits, Target};

    #[test]
    fn requests_parse_back() {
        let mut wire = Vec::new();
        encode_request(
            &mut wire,
            Method::Put,
            b"a b/\xff",
            Some(b"val"),
            "h:1",
            true,
        );
        assert_eq!(
            wire,
            b"PUT /a%20b%2F%FF HTTP/1.1\r\nHost: h:1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nval"
        );
        let HeadScan::Complete { head, len } = crate::kv::scan(&wire, &mut 0, &Limits::default())
        else {
            panic!("not a request")
        };
        assert_eq!(head.target, Target::Key(b"a b/\xff".to_vec()));
        assert_eq!((head.content_length, head.keep_alive), (3, false));
        assert_eq!(&wire[len..], b"val");
    }

    #[test]
    fn responses() {
        let tag = etag(&digest(b"red"));
        let wire = [
            &b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nETag: "[..],
            &tag,
            b"\r\n\r\nred",
        ]
        .concat();
        let r = parse_response(&wire, Method::Get).unwrap().unwrap();
        assert_eq!(
            (r.status, r.body_len, r.etag, r.close),
            (200, 3, Tag::Digest(digest(b"red")), false)
        );
        assert_eq!(&wire[r.len..], b"red");
        let head = parse_response(&wire, Method::Head).unwrap().unwrap();
        assert_eq!((head.body_len, head.content_length), (0, Some(3)));
        assert_eq!(parse_response(&wire[..20], Method::Get), Ok(None));
        let r = parse_response(
            b"HTTP/1.0 304 Not Modified\r\nContent-Length: 9\r\nETag: \"x\"\r\n\r\n",
            Method::Get,
        )
        .unwrap()
        .unwrap();
        assert_eq!((r.body_len, r.etag, r.close), (0, Tag::Foreign, true));
        assert_eq!(
            parse_response(b"HTTP/1.1 200 OK\r\n\r\n", Method::Get),
            Err(ResponseError::NoLength)
        );
        assert_eq!(
            parse_response(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                Method::Get
            ),
            Err(ResponseError::Chunked)
        );
        for lengths in [
            &b"Content-Length: 1\r\nContent-Length: 2"[..],
            b"Content-Length: x",
            b"Content-Length: 99999999999999999999999",
        ] {
            let wire = [&b"HTTP/1.1 200 OK\r\n"[..], lengths, b"\r\n\r\n"].concat();
            assert_eq!(
                parse_response(&wire, Method::Get),
                Err(ResponseError::BadLength)
            );
        }
        assert!(matches!(
            parse_response(b"HTTP/9 nope\r\n\r\n", Method::Get),
            Err(ResponseError::Malformed(_))
        ));
    }
}
