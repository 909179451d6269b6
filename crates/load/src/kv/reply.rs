//! Framing kv responses in a client's input: the HTTP framing every HTTP
//! load shares ([`crate::http::response`]), then what kv reads of the
//! head (its ETag). kv servers send no chunked bodies: one is refused.

use crate::http::response;
use serverlab_proto::kv::client::{ResponseHead, Tag};
use serverlab_proto::kv::{parse_etag, Method};

/// A final response at the front of a client's input.
pub struct Response<'a> {
    pub head: ResponseHead,
    pub body: &'a [u8],
    /// Bytes it takes, with any interim responses before it.
    pub len: usize,
}

/// The final response to a request of `method` at the front of `input`,
/// once it is whole; `Ok(None)` until then. `Err` describes a stream that
/// cannot be read on.
pub fn next_response(input: &[u8], method: Method) -> Result<Option<Response<'_>>, String> {
    let head_request = method == Method::Head;
    let Some(r) = response::next_response(input, head_request, "kv (HTTP/1.1)")? else {
        return Ok(None);
    };
    if r.chunked {
        return Err(
            "a chunked response (Transfer-Encoding), which a kv server does not send".into(),
        );
    }
    let etag = r.etag.map_or(Tag::Absent, |v| {
        parse_etag(v).map_or(Tag::Foreign, Tag::Digest)
    });
    Ok(Some(Response {
        head: ResponseHead {
            status: r.status,
            len: r.head.len(),
            body_len: r.body.len(),
            content_length: r.content_length,
            etag,
            close: r.close,
        },
        body: r.body,
        len: r.len,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_whole_responses_only() {
        let wire =
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nredHTTP";
        for cut in 0..wire.len() - 4 {
            assert!(next_response(&wire[..cut], Method::Put).unwrap().is_none());
        }
        let r = next_response(wire, Method::Put).unwrap().unwrap();
        assert_eq!(
            (r.head.status, r.body, r.len),
            (200, &b"red"[..], wire.len() - 4)
        );
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n";
        let r = next_response(head, Method::Head).unwrap().unwrap();
        assert_eq!(
            (r.body, r.len, r.head.content_length),
            (&b""[..], head.len(), Some(3))
        );
        assert!(next_response(b"HTTP/1.1 200 OK\r\n\r\n", Method::Get).is_err());
        for other in [&b"\n"[..], b"0\n", b"+OK\r\n", b"HTTX", b"H\n"] {
            let e = next_response(other, Method::Get).err().unwrap();
            assert!(e.starts_with("this does not look like a kv"), "{e}");
        }
        assert!(next_response(b"HTT", Method::Get).unwrap().is_none());
        let mut long = b"HTTP/1.1 200 OK\r\nX-Long: ".to_vec();
        long.resize(response::MAX_HEAD, b'a');
        assert!(next_response(&long, Method::Get).unwrap().is_none());
        long.push(b'a');
        assert!(next_response(&long, Method::Get).is_err());
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
        assert!(next_response(chunked, Method::Get).is_err());
        let tagged = b"HTTP/1.1 200 OK\r\nETag: \"00112233445566778899aabbccddeeff\"\r\nContent-Length: 0\r\n\r\n";
        let r = next_response(tagged, Method::Get).unwrap().unwrap();
        assert!(matches!(r.head.etag, Tag::Digest(d) if d[15] == 0xff));
    }
}
