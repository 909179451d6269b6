//! The kv checker's HTTP client side: requests (encoded by
//! serverlab-proto), and responses read whole and kept with every header.

use crate::wire::{show, Conn, Got};
use serverlab_proto::kv::client::{encode_request, parse_response, Tag};
use serverlab_proto::kv::{digest, etag, Method};
use std::time::Duration;

/// A response as the checker reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resp {
    pub status: u16,
    pub etag: Tag,
    /// The raw `ETag` field, if any.
    pub etag_raw: Option<Vec<u8>>,
    pub content_length: Option<u64>,
    pub allow: Option<String>,
    /// The server said it will close (`Connection: close`, or HTTP/1.0).
    pub close: bool,
    pub body: Vec<u8>,
}

impl Resp {
    /// In a person's words: `200, ETag "…", body "hello"`.
    pub fn show(&self) -> String {
        let mut s = self.status.to_string();
        if let Some(t) = &self.etag_raw {
            s += &format!(", ETag {}", String::from_utf8_lossy(t));
        }
        if let Some(n) = self.content_length {
            s += &format!(", Content-Length {n}");
        }
        if let Some(a) = &self.allow {
            s += &format!(", Allow {a}");
        }
        if self.close {
            s += ", Connection: close";
        }
        if !self.body.is_empty() {
            s += &format!(", body {}", show(&self.body));
        }
        s
    }

    /// Whether the ETag is the MD5 of `value`, as kv requires.
    pub fn etag_is_md5_of(&self, value: &[u8]) -> bool {
        self.etag == Tag::Digest(digest(value))
    }
}

/// `"<md5 hex>"` of a value, as sent in `If-None-Match`.
pub fn tag_of(value: &[u8]) -> String {
    String::from_utf8(etag(&digest(value)).to_vec()).expect("hex is ASCII")
}

/// A request as serverlab-proto encodes it (HTTP/1.1, `Host`).
pub fn request(method: Method, key: &[u8], body: Option<&[u8]>, host: &str) -> Vec<u8> {
    let mut out = Vec::new();
    encode_request(&mut out, method, key, body, host, false);
    out
}

/// A request with extra header lines (each `Name: value`).
pub fn request_with(method: Method, key: &[u8], host: &str, extra: &[String]) -> Vec<u8> {
    let mut out = request(method, key, None, host);
    out.truncate(out.len() - 2);
    for line in extra {
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// What a read found: a whole response, or why not.
pub enum Read {
    Resp(Resp),
    Bad(String),
}

/// Read one response to a request of `method`, allowing `extra` time.
pub fn read(conn: &mut Conn, method: Method, extra: Duration) -> Read {
    let got = conn.read(extra, |buf| match parse_response(buf, method) {
        Ok(Some(h)) if buf.len() >= h.len + h.body_len => Some(h.len + h.body_len),
        Ok(_) => None,
        // Unreadable: take it all, to show it.
        Err(_) => Some(buf.len()),
    });
    match got {
        Got::Reply(bytes) => match parse(&bytes, method) {
            Some(r) => Read::Resp(r),
            None => Read::Bad(format!("{} (not an HTTP response)", show(&bytes))),
        },
        other => Read::Bad(other.show()),
    }
}

fn parse(bytes: &[u8], method: Method) -> Option<Resp> {
    let head = parse_response(bytes, method).ok()??;
    let mut fields = [httparse::EMPTY_HEADER; 64];
    let mut res = httparse::Response::new(&mut fields);
    res.parse(bytes).ok()?;
    let field = |name: &str| {
        res.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value.to_vec())
    };
    Some(Resp {
        status: head.status,
        etag: head.etag,
        etag_raw: field("etag"),
        content_length: head.content_length,
        allow: field("allow").map(|v| String::from_utf8_lossy(&v).into_owned()),
        close: head.close,
        body: bytes[head.len..head.len + head.body_len].to_vec(),
    })
}
