//! Encoding responses. Every response carries `Content-Length` (the
//! representation's length, even where the body itself is omitted: HEAD
//! and 304) and `Date`.

use super::{etag, Digest, Status, DATE_LEN};
use crate::number::push_u64;

/// The interim response to `Expect: 100-continue`.
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// What the response says about the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connection {
    /// HTTP/1.1's default, persistent: no header needed.
    Persistent,
    /// An HTTP/1.0 client asked to keep the connection: `Connection: keep-alive`.
    KeepAlive,
    /// The server closes after this response: `Connection: close`.
    Close,
}

/// One response, ready to encode.
#[derive(Debug, Clone, Copy)]
pub struct Response<'a> {
    pub status: Status,
    pub etag: Option<&'a Digest>,
    pub content_type: Option<&'static str>,
    pub allow: Option<&'static str>,
    pub connection: Connection,
    pub date: &'a [u8; DATE_LEN],
    /// The representation: its length is always sent.
    pub body: &'a [u8],
    /// False for HEAD and 304: the body is not sent.
    pub send_body: bool,
}

impl<'a> Response<'a> {
    /// A response with `body`, no tag, no `Allow`, persistent.
    pub fn new(status: Status, date: &'a [u8; DATE_LEN], body: &'a [u8]) -> Self {
        Response {
            status,
            etag: None,
            content_type: None,
            allow: None,
            connection: Connection::Persistent,
            date,
            body,
            send_body: true,
        }
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.status.line());
        out.extend_from_slice(b"Date: ");
        out.extend_from_slice(self.date);
        out.extend_from_slice(b"\r\nContent-Length: ");
        push_u64(out, self.body.len() as u64);
        if let Some(d) = self.etag {
            out.extend_from_slice(b"\r\nETag: ");
            out.extend_from_slice(&etag(d));
        }
        if let Some(t) = self.content_type {
            out.extend_from_slice(b"\r\nContent-Type: ");
            out.extend_from_slice(t.as_bytes());
        }
        if let Some(a) = self.allow {
            out.extend_from_slice(b"\r\nAllow: ");
            out.extend_from_slice(a.as_bytes());
        }
        match self.connection {
            Connection::Persistent => {}
            Connection::KeepAlive => out.extend_from_slice(b"\r\nConnection: keep-alive"),
            Connection::Close => out.extend_from_slice(b"\r\nConnection: close"),
        }
        out.extend_from_slice(b"\r\n\r\n");
        if self.send_body {
            out.extend_from_slice(self.body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::digest;

    const DATE: &[u8; DATE_LEN] = b"Sun, 06 Nov 1994 08:49:37 GMT";

    fn text(r: &Response) -> String {
        let mut out = Vec::new();
        r.encode(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_value() {
        let d = digest(b"red");
        let mut r = Response::new(Status::Ok, DATE, b"red");
        r.etag = Some(&d);
        r.content_type = Some("application/octet-stream");
        assert_eq!(
            text(&r),
            "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Length: 3\r\n\
             ETag: \"bda9643ac6601722a28f238714274da4\"\r\n\
             Content-Type: application/octet-stream\r\n\r\nred"
        );
    }

    #[test]
    fn head_keeps_the_length_and_drops_the_body() {
        let mut r = Response::new(Status::NotFound, DATE, b"not found\n");
        r.send_body = false;
        r.connection = Connection::Close;
        assert_eq!(
            text(&r),
            "HTTP/1.1 404 Not Found\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\
             Content-Length: 10\r\nConnection: close\r\n\r\n"
        );
    }

    #[test]
    fn allow_and_keep_alive() {
        let mut r = Response::new(Status::MethodNotAllowed, DATE, b"");
        r.allow = Some(crate::kv::ALLOW_KEY);
        r.connection = Connection::KeepAlive;
        let t = text(&r);
        assert!(
            t.contains("\r\nAllow: GET, HEAD, PUT, POST, DELETE\r\n"),
            "{t}"
        );
        assert!(t.ends_with("\r\nConnection: keep-alive\r\n\r\n"), "{t}");
        assert!(t.contains("Content-Length: 0\r\n"), "{t}");
    }
}
