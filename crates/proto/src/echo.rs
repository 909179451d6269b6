//! The echo protocol: board framing, and the reply is the request reversed.

use crate::Terminator;

/// Append the reply to `frame`: its bytes in reverse order, then `term`.
pub fn reply(out: &mut Vec<u8>, frame: &[u8], term: Terminator) {
    out.extend(frame.iter().rev());
    out.push(term.byte());
}

#[cfg(test)]
mod tests {
    #[test]
    fn reverses() {
        let mut out = Vec::new();
        super::reply(&mut out, b"abc\xff", crate::Terminator::Lf);
        assert_eq!(out, b"\xffcba\n");
    }
}
