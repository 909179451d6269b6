#![no_main]
//! kv responses as the load client parses them
//! (`proto::kv::client::parse_response`): any bytes parse without panic,
//! a complete head is one whatever follows it and incomplete one byte
//! short; and every response the server encodes (`kv::Response::encode`)
//! parses back to its status, length, tag and connection.
//! Input: [method, status, flags, bytes…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::Input;
use serverlab_proto::kv::client::{parse_response, Tag};
use serverlab_proto::kv::{digest, imf_fixdate, Connection, Method, Response, Status};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let method = input.pick(&Method::ALL);
    let status = input.pick(&Status::ALL);
    let flags = input.byte();
    let bytes = input.rest();

    if let Ok(Some(r)) = parse_response(bytes, method) {
        assert!(r.len <= bytes.len());
        let bodiless = method == Method::Head || matches!(r.status, 100..=199 | 204 | 304);
        assert!(!bodiless || r.body_len == 0);
        assert_eq!(parse_response(&bytes[..r.len], method), Ok(Some(r)));
        assert_eq!(parse_response(&bytes[..r.len - 1], method), Ok(None));
    }

    let d = digest(bytes);
    let date = imf_fixdate(u64::from(flags) << 24);
    let mut res = Response::new(status, &date, bytes);
    res.etag = (flags & 1 == 1).then_some(&d);
    res.content_type = (flags & 2 == 2).then_some("text/plain");
    res.allow = (flags & 4 == 4).then_some("GET, HEAD");
    res.connection = [
        Connection::Persistent,
        Connection::KeepAlive,
        Connection::Close,
    ][usize::from(flags >> 3) % 3];
    // HEAD and 304 responses leave the body out, as the server sends them.
    res.send_body = flags & 32 == 0 && status != Status::NotModified;
    let mut wire = Vec::new();
    res.encode(&mut wire);
    let method = if res.send_body {
        Method::Get
    } else {
        Method::Head
    };
    let r = parse_response(&wire, method)
        .expect("the server's response parses")
        .expect("whole");
    assert_eq!(r.status, status.code());
    assert_eq!(r.content_length, Some(bytes.len() as u64));
    assert_eq!(r.len + r.body_len, wire.len());
    assert_eq!(&wire[r.len..], if res.send_body { bytes } else { &[] });
    assert_eq!(
        r.etag,
        if flags & 1 == 1 {
            Tag::Digest(d)
        } else {
            Tag::Absent
        }
    );
    assert_eq!(r.close, res.connection == Connection::Close);
});
