//! Framing kv responses in a client's input: the head parsed by the
//! proto crate (httparse), the body by `Content-Length`, interim 1xx
//! responses skipped.

use serverlab_proto::kv::client::{parse_response, ResponseHead};
use serverlab_proto::kv::Method;

/// How every response begins (its status line's protocol name).
const STATUS: &[u8] = b"HTTP/";
/// Largest response head accepted before the stream is declared broken.
const MAX_HEAD: usize = 64 * 1024;
/// Largest response body accepted (a kv server's values are far smaller).
const MAX_BODY: usize = 1 << 30;

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
    let mut at = 0;
    loop {
        let rest = &input[at..];
        // Any other server answers something else at once (a board server
        // an empty line): said within one reply, not after a timeout.
        let n = rest.len().min(STATUS.len());
        if rest[..n] != STATUS[..n] {
            return Err(format!(
                "this does not look like a kv (HTTP/1.1) server (it sent {})",
                crate::quoted(rest)
            ));
        }
        let head = match parse_response(rest, method).map_err(|e| e.to_string())? {
            Some(head) => head,
            None if rest.len() > MAX_HEAD => return Err("a response head over 64 KiB".into()),
            None => return Ok(None),
        };
        if head.body_len > MAX_BODY {
            return Err("a response body over 1 GiB".into());
        }
        let total = head.len + head.body_len;
        if rest.len() < total {
            return Ok(None);
        }
        if (100..200).contains(&head.status) {
            at += total;
            continue;
        }
        return Ok(Some(Response {
            body: &rest[head.len..total],
            head,
            len: at + total,
        }));
    }
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
        long.resize(MAX_HEAD, b'a');
        assert!(next_response(&long, Method::Get).unwrap().is_none());
        long.push(b'a');
        assert!(next_response(&long, Method::Get).is_err());
    }
}
