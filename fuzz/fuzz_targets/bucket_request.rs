#![no_main]
//! Bucket request parsing (`proto::bucket::Request::parse`) against the
//! grammar in the wire contract (docs/protocols/), written here a second way: exactly two runs of
//! ASCII digits joined by one comma, each fitting in 64 bits; and a request
//! encodes back to a line that parses to itself. Input: the line.

use libfuzzer_sys::fuzz_target;
use serverlab_proto::bucket::{ParseError, Request};

/// 1+ ASCII digits, as a u64 when it fits.
fn number(digits: &[u8]) -> Result<Option<u64>, ParseError> {
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(ParseError::Malformed);
    }
    let text = std::str::from_utf8(digits).expect("ASCII");
    Ok(text.parse::<u64>().ok())
}

fn reference(line: &[u8]) -> Result<Request, ParseError> {
    let comma = line
        .iter()
        .position(|&b| b == b',')
        .ok_or(ParseError::Malformed)?;
    match (number(&line[..comma])?, number(&line[comma + 1..])?) {
        (Some(delay), Some(bucket)) => Ok(Request { delay, bucket }),
        _ => Err(ParseError::TooLarge),
    }
}

fuzz_target!(|line: &[u8]| {
    let got = Request::parse(line);
    assert_eq!(got, reference(line), "{:?}", String::from_utf8_lossy(line));
    if let Ok(req) = got {
        let mut wire = Vec::new();
        req.encode(&mut wire);
        assert_eq!(wire.pop(), Some(b'\n'));
        assert_eq!(Request::parse(&wire), Ok(req));
        let canonical = |n: &[u8]| n == b"0" || !n.starts_with(b"0");
        if line.split(|&b| b == b',').all(canonical) {
            assert_eq!(
                wire, line,
                "a request without leading zeros re-encodes as sent"
            );
        }
    }
});
