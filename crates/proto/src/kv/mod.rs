//! The kv protocol: HTTP/1.1 requests on a key-value store, without I/O.
//!
//! A request head is found and parsed (with `httparse`) into a typed
//! [`Head`]; a server then waits for the body its `Content-Length` names
//! and applies the whole request. Responses always carry
//! `Content-Length`. [`client`] holds the other side: encoding requests
//! and parsing responses, for the load generator.

pub mod client;
mod date;
mod etag;
mod fields;
mod head;
mod hex;
mod reject;
mod response;
mod target;

pub use date::{imf_fixdate, DATE_LEN};
pub use etag::{digest, etag, parse_etag, Digest, IfNoneMatch, ETAG_LEN};
pub use head::{scan, Head, HeadScan, Limits};
pub use reject::{Reject, RequestError};
pub use response::{Connection, Response, CONTINUE};
pub use target::{decode_key, push_encoded_key, Target, TargetError, MAX_KEY};

use std::time::Duration;

/// As every subcommand spells it.
pub const NAME: &str = "kv";
/// One line for lists of protocols.
pub const DESCRIBE: &str = "an HTTP/1.1 key-value store (GET, HEAD, PUT, POST, DELETE /<key>)";
/// Where a kv server listens unless told otherwise.
pub const DEFAULT_PORT: u16 = 8080;
/// The time a connection has to deliver each whole request unless told
/// otherwise (`--header-timeout`): then 408 and close.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The methods the store answers; anything else is `Other` (405).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    Get,
    Head,
    Put,
    Post,
    Delete,
    Other,
}

impl Method {
    pub const ALL: [Method; 6] = [
        Method::Get,
        Method::Head,
        Method::Put,
        Method::Post,
        Method::Delete,
        Method::Other,
    ];

    /// Methods are case-sensitive tokens (RFC 9110 §9.1): `get` is `Other`.
    pub fn parse(token: &str) -> Method {
        match token {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "PUT" => Method::Put,
            "POST" => Method::Post,
            "DELETE" => Method::Delete,
            _ => Method::Other,
        }
    }

    /// The token as sent; `other` for the catch-all.
    pub fn name(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Put => "PUT",
            Method::Post => "POST",
            Method::Delete => "DELETE",
            Method::Other => "other",
        }
    }

    /// PUT and POST store their body.
    pub fn writes(self) -> bool {
        matches!(self, Method::Put | Method::Post)
    }
}

/// `Allow` for a key: every method the store answers.
pub const ALLOW_KEY: &str = "GET, HEAD, PUT, POST, DELETE";
/// `Allow` for the server's own read-only resources under `/_/`.
pub const ALLOW_RESERVED: &str = "GET, HEAD";

/// Every status the server sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    Ok,
    Created,
    NotModified,
    BadRequest,
    NotFound,
    MethodNotAllowed,
    RequestTimeout,
    LengthRequired,
    ContentTooLarge,
    UriTooLong,
    ExpectationFailed,
    HeadersTooLarge,
    /// A write refused because the write-ahead log failed.
    ServiceUnavailable,
}

impl Status {
    pub const ALL: [Status; 13] = [
        Status::Ok,
        Status::Created,
        Status::NotModified,
        Status::BadRequest,
        Status::NotFound,
        Status::MethodNotAllowed,
        Status::RequestTimeout,
        Status::LengthRequired,
        Status::ContentTooLarge,
        Status::UriTooLong,
        Status::ExpectationFailed,
        Status::HeadersTooLarge,
        Status::ServiceUnavailable,
    ];

    pub fn code(self) -> u16 {
        match self {
            Status::Ok => 200,
            Status::Created => 201,
            Status::NotModified => 304,
            Status::BadRequest => 400,
            Status::NotFound => 404,
            Status::MethodNotAllowed => 405,
            Status::RequestTimeout => 408,
            Status::LengthRequired => 411,
            Status::ContentTooLarge => 413,
            Status::UriTooLong => 414,
            Status::ExpectationFailed => 417,
            Status::HeadersTooLarge => 431,
            Status::ServiceUnavailable => 503,
        }
    }

    pub fn reason(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Created => "Created",
            Status::NotModified => "Not Modified",
            Status::BadRequest => "Bad Request",
            Status::NotFound => "Not Found",
            Status::MethodNotAllowed => "Method Not Allowed",
            Status::RequestTimeout => "Request Timeout",
            Status::LengthRequired => "Length Required",
            Status::ContentTooLarge => "Content Too Large",
            Status::UriTooLong => "URI Too Long",
            Status::ExpectationFailed => "Expectation Failed",
            Status::HeadersTooLarge => "Request Header Fields Too Large",
            Status::ServiceUnavailable => "Service Unavailable",
        }
    }

    /// The status line, CRLF included.
    pub fn line(self) -> &'static [u8] {
        match self {
            Status::Ok => b"HTTP/1.1 200 OK\r\n",
            Status::Created => b"HTTP/1.1 201 Created\r\n",
            Status::NotModified => b"HTTP/1.1 304 Not Modified\r\n",
            Status::BadRequest => b"HTTP/1.1 400 Bad Request\r\n",
            Status::NotFound => b"HTTP/1.1 404 Not Found\r\n",
            Status::MethodNotAllowed => b"HTTP/1.1 405 Method Not Allowed\r\n",
            Status::RequestTimeout => b"HTTP/1.1 408 Request Timeout\r\n",
            Status::LengthRequired => b"HTTP/1.1 411 Length Required\r\n",
            Status::ContentTooLarge => b"HTTP/1.1 413 Content Too Large\r\n",
            Status::UriTooLong => b"HTTP/1.1 414 URI Too Long\r\n",
            Status::ExpectationFailed => b"HTTP/1.1 417 Expectation Failed\r\n",
            Status::HeadersTooLarge => b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
            Status::ServiceUnavailable => b"HTTP/1.1 503 Service Unavailable\r\n",
        }
    }
}

/// The HTTP version of a request (httparse knows only 1.0 and 1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    Http10,
    Http11,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_agree_with_codes_and_reasons() {
        for s in Status::ALL {
            let want = format!("HTTP/1.1 {} {}\r\n", s.code(), s.reason());
            assert_eq!(s.line(), want.as_bytes());
        }
    }

    #[test]
    fn methods_are_case_sensitive() {
        assert_eq!(Method::parse("GET"), Method::Get);
        assert_eq!(Method::parse("get"), Method::Other);
        assert_eq!(Method::parse("PATCH"), Method::Other);
        for m in Method::ALL.into_iter().filter(|&m| m != Method::Other) {
            assert_eq!(Method::parse(m.name()), m);
        }
    }
}
