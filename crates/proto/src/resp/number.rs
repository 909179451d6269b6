//! Integers as Redis reads and writes them: `string2ll`'s strict grammar
//! (an optional `-`, no leading zeros, no `+`, no spaces, at most 20
//! characters) and plain decimal output.

/// Parse `text` as Redis's `string2ll` does: `None` unless it is exactly a
/// 64-bit signed integer in canonical form ("0", "-12", not "012", "+1",
/// " 1" or "-0").
pub fn parse_i64(text: &[u8]) -> Option<i64> {
    if text.is_empty() || text.len() > 20 {
        return None;
    }
    if text == b"0" {
        return Some(0);
    }
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let (&first, _) = digits.split_first()?;
    if !(b'1'..=b'9').contains(&first) || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: u64 = 0;
    for &d in digits {
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    if negative {
        // |i64::MIN| is one more than i64::MAX.
        if v == 1 << 63 {
            Some(i64::MIN)
        } else {
            i64::try_from(v).ok().map(|v| -v)
        }
    } else {
        i64::try_from(v).ok()
    }
}

/// Append `n` in decimal.
pub fn push_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    crate::number::push_u64(out, n.unsigned_abs());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_integers() {
        for (text, want) in [
            (&b"0"[..], Some(0)),
            (b"7", Some(7)),
            (b"-12", Some(-12)),
            (b"9223372036854775807", Some(i64::MAX)),
            (b"-9223372036854775808", Some(i64::MIN)),
            (b"9223372036854775808", None),
            (b"-9223372036854775809", None),
            (b"012", None),
            (b"-0", None),
            (b"+1", None),
            (b" 1", None),
            (b"1 ", None),
            (b"", None),
            (b"-", None),
            (b"1a", None),
            (b"123456789012345678901", None),
        ] {
            assert_eq!(parse_i64(text), want, "{:?}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn writes() {
        for n in [0, 1, -1, i64::MAX, i64::MIN, -120] {
            let mut v = Vec::new();
            push_i64(&mut v, n);
            assert_eq!(v, n.to_string().into_bytes());
            assert_eq!(parse_i64(&v), Some(n));
        }
    }
}
