//! Line framing: the replies of board, echo and bucket end at a NUL or
//! an LF. (kv frames HTTP responses in `kv::reply`, resp frames RESP
//! values in the proto crate.)

/// The reply at the front of `input` framed by a NUL or LF, without its
/// terminator, and the bytes it takes with it.
pub fn line(input: &[u8]) -> Option<(&[u8], usize)> {
    memchr::memchr2(0, b'\n', input).map(|i| (&input[..i], i + 1))
}

/// [`line`] for a [`super::Conversation::take`]. (How long a line may
/// grow is the driver's: it fails a connection whose unfinished reply
/// outgrows its `max_reply`.)
pub fn take_line(input: &[u8]) -> Result<Option<(&[u8], usize)>, String> {
    Ok(line(input))
}

/// How a connection whose reply outgrew `max` bytes fails, said the same
/// by every protocol (so the run says it once).
pub fn reply_too_long(max: usize) -> String {
    format!(
        "the server sent a reply longer than {max} bytes, more than any request of this load \
         can get (raise --max-reply if the server is right)"
    )
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
