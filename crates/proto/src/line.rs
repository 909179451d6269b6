//! Terminator framing shared by board and echo: a frame ends at NUL or LF,
//! and a CR right before an LF is dropped.

/// The byte that ended a request; its reply ends with the same byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Terminator {
    Nul,
    Lf,
}

impl Terminator {
    pub fn byte(self) -> u8 {
        match self {
            Terminator::Nul => 0,
            Terminator::Lf => b'\n',
        }
    }
}

/// Where the next frame lies in a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framed {
    /// No terminator yet; the frame so far is within the limit.
    Incomplete,
    /// A whole frame: its payload is `buf[..len]`, and `used` bytes
    /// (payload, any dropped CR, and the terminator) are consumed.
    Frame {
        len: usize,
        used: usize,
        term: Terminator,
    },
    /// More than `max` bytes without a terminator: the peer is over the limit.
    Oversize,
}

/// Find the first frame in `buf`. A frame's payload may be at most `max`
/// bytes; only the first `max + 1` bytes are searched, so a caller that never
/// buffers more than `max + 1` unconsumed bytes stays bounded.
pub fn frame(buf: &[u8], max: usize) -> Framed {
    let window = &buf[..buf.len().min(max.saturating_add(1))];
    match memchr::memchr2(0, b'\n', window) {
        Some(i) if window[i] == 0 => Framed::Frame {
            len: i,
            used: i + 1,
            term: Terminator::Nul,
        },
        Some(i) => {
            let len = if i > 0 && buf[i - 1] == b'\r' {
                i - 1
            } else {
                i
            };
            Framed::Frame {
                len,
                used: i + 1,
                term: Terminator::Lf,
            }
        }
        None if buf.len() > max => Framed::Oversize,
        None => Framed::Incomplete,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame of `len` bytes ended by NUL, `used` bytes in all.
    fn nul(len: usize, used: usize) -> Framed {
        Framed::Frame {
            len,
            used,
            term: Terminator::Nul,
        }
    }

    /// A frame of `len` bytes ended by LF or CRLF, `used` bytes in all.
    fn lf(len: usize, used: usize) -> Framed {
        Framed::Frame {
            len,
            used,
            term: Terminator::Lf,
        }
    }

    #[test]
    fn nul_and_lf_and_crlf() {
        assert_eq!(frame(b"LIST\0rest", 100), nul(4, 5));
        assert_eq!(frame(b"LIST\nrest", 100), lf(4, 5));
        assert_eq!(frame(b"LIST\r\nrest", 100), lf(4, 6));
        // A CR before NUL is payload, not framing.
        assert_eq!(frame(b"LIST\r\0", 100), nul(5, 6));
        assert_eq!(frame(b"\n", 100), lf(0, 1));
    }

    #[test]
    fn limits() {
        assert_eq!(frame(b"abcd", 4), Framed::Incomplete);
        assert_eq!(frame(b"abcd\0", 4), nul(4, 5));
        assert_eq!(frame(b"abcde", 4), Framed::Oversize);
        assert_eq!(frame(b"abcde\0", 4), Framed::Oversize);
        // CRLF: the CR counts toward the limit while we cannot yet tell.
        assert_eq!(frame(b"abc\r\n", 4), lf(3, 5));
    }
}
