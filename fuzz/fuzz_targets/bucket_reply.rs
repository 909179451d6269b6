#![no_main]
//! Bucket replies as the load client reads them
//! (`proto::bucket::Reply::parse`): a u64 in decimal or `ERR <reason>`,
//! a CR before the LF tolerated; and what the server encodes
//! (`reply_value`, `reply_err`) parses back. Input: [value bytes ×8,
//! reply line…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::Input;
use serverlab_proto::bucket::{reply_err, reply_value, Reply};

fn reference(line: &[u8]) -> Option<Reply<'_>> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if let Some(reason) = line.strip_prefix(b"ERR ") {
        return Some(Reply::Err(reason));
    }
    let all_digits = !line.is_empty() && line.iter().all(u8::is_ascii_digit);
    let value = std::str::from_utf8(line).ok()?.parse::<u64>().ok();
    all_digits.then_some(Reply::Value(value?))
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let value = u64::from_le_bytes(std::array::from_fn(|_| input.byte()));
    let line = input.rest();
    assert_eq!(
        Reply::parse(line),
        reference(line),
        "{:?}",
        String::from_utf8_lossy(line)
    );

    let mut wire = Vec::new();
    reply_value(&mut wire, value);
    assert_eq!(wire.pop(), Some(b'\n'));
    assert_eq!(Reply::parse(&wire), Some(Reply::Value(value)));
    if let Ok(reason) = std::str::from_utf8(line) {
        if !reason.contains('\n') {
            let mut wire = Vec::new();
            reply_err(&mut wire, reason);
            assert_eq!(wire.pop(), Some(b'\n'));
            let reason = reason.strip_suffix('\r').unwrap_or(reason);
            assert_eq!(Reply::parse(&wire), Some(Reply::Err(reason.as_bytes())));
        }
    }
});
