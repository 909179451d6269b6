//! Hexadecimal digits, for entity tags (lower case) and percent-encoding
//! (upper case, as RFC 3986 §2.1 recommends).

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// The two lower-case hex digits of `b`.
pub(crate) fn lower(b: u8) -> [u8; 2] {
    [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]]
}

/// The two upper-case hex digits of `b`.
pub(crate) fn upper(b: u8) -> [u8; 2] {
    lower(b).map(|d| d.to_ascii_uppercase())
}

/// The value of one hex digit, either case.
pub(crate) fn value(d: u8) -> Option<u8> {
    match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        b'A'..=b'F' => Some(d - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for b in 0..=255u8 {
            for pair in [lower(b), upper(b)] {
                let (hi, lo) = (value(pair[0]).unwrap(), value(pair[1]).unwrap());
                assert_eq!(hi << 4 | lo, b);
            }
        }
        assert_eq!((lower(0xaf), upper(0xaf)), (*b"af", *b"AF"));
        assert_eq!(value(b'g'), None);
    }
}
