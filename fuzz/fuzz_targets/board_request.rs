#![no_main]
//! Board request parsing (`proto::board::Request::parse`) against the
//! grammar in the wire contract (docs/protocols/), written here a second way; and a valid request
//! encodes back to a frame that parses to itself. Input: the frame.

use libfuzzer_sys::fuzz_target;
use serverlab_proto::board::Request;
use serverlab_proto::Terminator;

/// A topic: no `@ # NUL CR LF`. A message: 1+ bytes, no `NUL CR LF`.
fn topic_ok(t: &[u8]) -> bool {
    !t.iter().any(|b| b"@#\0\r\n".contains(b))
}
fn message_ok(m: &[u8]) -> bool {
    !m.is_empty() && !m.iter().any(|b| b"\0\r\n".contains(b))
}

/// 1+ ASCII digits; `Some(None)` when too large for u64.
fn id(digits: &[u8]) -> Option<Option<u64>> {
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value = digits.iter().try_fold(0u128, |v, &d| {
        let v = v * 10 + u128::from(d - b'0');
        (v <= u128::from(u64::MAX)).then_some(v)
    });
    Some(value.map(|v| v as u64))
}

fn reference(frame: &[u8]) -> Request<'_> {
    let split = |rest: &'static [u8]| -> Option<(&[u8], &[u8])> {
        let body = frame.strip_prefix(rest)?;
        let hash = body.iter().position(|&b| b == b'#')?;
        Some((&body[..hash], &body[hash + 1..]))
    };
    if frame == b"LIST" {
        Request::List
    } else if frame == b"EXIT" {
        Request::Exit
    } else if let Some((topic, message)) = split(b"POST@") {
        if topic_ok(topic) && message_ok(message) {
            Request::Post { topic, message }
        } else {
            Request::Invalid
        }
    } else if let Some((topic, digits)) = split(b"READ@") {
        match id(digits) {
            Some(id) if topic_ok(topic) => Request::Read { topic, id },
            _ => Request::Invalid,
        }
    } else if let Some(topic) = frame.strip_prefix(b"COUNT@").filter(|t| topic_ok(t)) {
        Request::Count { topic }
    } else {
        Request::Invalid
    }
}

fuzz_target!(|frame: &[u8]| {
    let req = Request::parse(frame);
    assert_eq!(
        req,
        reference(frame),
        "{:?}",
        String::from_utf8_lossy(frame)
    );
    if req == Request::Invalid {
        return;
    }
    let mut wire = Vec::new();
    req.encode(&mut wire, Terminator::Nul);
    let (_, encoded) = wire.split_last().expect("a terminator");
    assert_eq!(Request::parse(encoded), req, "encoded as {encoded:?}");
    if !matches!(req, Request::Read { .. }) {
        // Only READ ids have other spellings (leading zeros, overflow).
        assert_eq!(encoded, frame);
    }
});
