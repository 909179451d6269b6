#![no_main]
//! kv request targets and keys (`proto::kv::Target::parse`,
//! `decode_key`, `push_encoded_key`): never panic; a key is 1 to MAX_KEY
//! bytes; percent-decoding agrees with a second implementation; and any
//! byte string survives encoding into a target and parsing back.
//! Input: a target (or key bytes).

use libfuzzer_sys::fuzz_target;
use serverlab_proto::kv::{decode_key, push_encoded_key, Target, TargetError, MAX_KEY};

/// RFC 3986 percent-decoding, `+` left alone.
fn reference_decode(raw: &[u8]) -> Result<Vec<u8>, TargetError> {
    let hex = |b: u8| char::from(b).to_digit(16).map(|d| d as u8);
    let mut out = Vec::new();
    let mut rest = raw;
    while let Some((&b, tail)) = rest.split_first() {
        if b != b'%' {
            out.push(b);
            rest = tail;
            continue;
        }
        match tail {
            [hi, lo, more @ ..] => {
                out.push(
                    hex(*hi).ok_or(TargetError::BadPercent)? << 4
                        | hex(*lo).ok_or(TargetError::BadPercent)?,
                );
                rest = more;
            }
            _ => return Err(TargetError::BadPercent),
        }
    }
    Ok(out)
}

fuzz_target!(|data: &[u8]| {
    assert_eq!(decode_key(data), reference_decode(data));

    let mut wire = Vec::new();
    push_encoded_key(&mut wire, data);
    assert!(wire.iter().all(u8::is_ascii_graphic), "{wire:?}");
    assert_eq!(decode_key(&wire[1..]).as_deref(), Ok(data));
    let text = std::str::from_utf8(&wire).expect("ASCII");
    let want = match data {
        [] => Target::NoKey,
        [b'_', b'/', ..] => match &data[2..] {
            b"health" => Target::Health,
            b"stats" => Target::Stats,
            _ => Target::Reserved,
        },
        _ if data.len() > MAX_KEY => Target::KeyTooLong,
        _ => Target::Key(data.to_vec()),
    };
    assert_eq!(Target::parse(text), Ok(want));

    if let Ok(raw) = std::str::from_utf8(data) {
        if let Ok(Target::Key(key)) = Target::parse(raw) {
            assert!(!key.is_empty() && key.len() <= MAX_KEY);
            assert!(!key.starts_with(b"_/"), "a reserved path taken as a key");
        }
    }
});
