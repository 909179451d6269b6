//! Strict decimal numbers as the protocols write them: ASCII digits only, no
//! sign, no spaces.

/// Parse 1+ ASCII digits. `Ok(None)` when the digits are valid but the value
/// does not fit in a u64; `Err(())` when the text is not 1+ digits.
#[allow(clippy::result_unit_err)]
pub fn parse_u64(text: &[u8]) -> Result<Option<u64>, ()> {
    if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
        return Err(());
    }
    let mut value: u64 = 0;
    for &d in text {
        value = match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d - b'0')))
        {
            Some(v) => v,
            None => return Ok(None),
        };
    }
    Ok(Some(value))
}

/// Append `n` in decimal.
pub fn push_u64(out: &mut Vec<u8>, n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut n = n;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        assert_eq!(parse_u64(b"0"), Ok(Some(0)));
        assert_eq!(parse_u64(b"007"), Ok(Some(7)));
        assert_eq!(parse_u64(b"18446744073709551615"), Ok(Some(u64::MAX)));
        assert_eq!(parse_u64(b"18446744073709551616"), Ok(None));
        assert_eq!(parse_u64(b"99999999999999999999999"), Ok(None));
        assert_eq!(parse_u64(b""), Err(()));
        assert_eq!(parse_u64(b"+1"), Err(()));
        assert_eq!(parse_u64(b"1 "), Err(()));
        assert_eq!(parse_u64(b"1#2"), Err(()));
    }

    #[test]
    fn pushes() {
        for n in [0, 1, 9, 10, 12345, u64::MAX] {
            let mut v = Vec::new();
            push_u64(&mut v, n);
            assert_eq!(v, n.to_string().into_bytes());
        }
    }
}
