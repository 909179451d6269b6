//! Line framing: the replies of board, echo and bucket end at a NUL or
//! an LF. (kv frames HTTP responses in `kv::reply`, resp frames RESP
//! values in the proto crate.)

/// The reply at the front of `input` framed by a NUL or LF, without its
/// terminator, and the bytes it takes with it.
pub fn line(input: &[u8]) -> Option<(&[u8], usize)> {
    memchr::memchr2(0, b'\n', input).map(|i| (&input[..i], i + 1))
}

/// The longest line reply a client waits for before declaring the stream
/// broken.
pub const MAX_LINE: usize = 256 << 20;

/// [`line`] for a [`super::Conversation::take`]: `Err` once `input` holds
/// more than [`MAX_LINE`] bytes without a terminator.
pub fn take_line(input: &[u8]) -> Result<Option<(&[u8], usize)>, String> {
    match line(input) {
        None if input.len() > MAX_LINE => Err("a reply longer than 256 MiB".into()),
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_end_at_nul_or_lf() {
        assert_eq!(line(b"ab\0cd\n"), Some((&b"ab"[..], 3)));
        assert_eq!(line(b"\n"), Some((&b""[..], 1)));
        assert_eq!(line(b"abc"), None);
        assert_eq!(take_line(b"abc"), Ok(None));
    }
}
