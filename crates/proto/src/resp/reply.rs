//! Encoding RESP2 replies straight into a connection's output buffer.

use super::number::push_i64;

/// `+<text>\r\n`
pub fn simple(out: &mut Vec<u8>, text: &[u8]) {
    out.push(b'+');
    out.extend_from_slice(text);
    out.extend_from_slice(b"\r\n");
}

/// `+OK\r\n`
pub fn ok(out: &mut Vec<u8>) {
    out.extend_from_slice(b"+OK\r\n");
}

/// `-<message>\r\n`: `message` starts with its code (`ERR …`,
/// `WRONGTYPE …`). CR and LF in it become spaces, as Redis makes them,
/// so an error is always one line.
pub fn error(out: &mut Vec<u8>, message: &[u8]) {
    out.push(b'-');
    out.extend(
        message
            .iter()
            .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c }),
    );
    out.extend_from_slice(b"\r\n");
}

/// `:<n>\r\n`
pub fn int(out: &mut Vec<u8>, n: i64) {
    out.push(b':');
    push_i64(out, n);
    out.extend_from_slice(b"\r\n");
}

/// `$<len>\r\n<bytes>\r\n`
pub fn bulk(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 16);
    out.push(b'$');
    push_i64(out, bytes.len() as i64);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
}

/// `$-1\r\n`: the null bulk string.
pub fn null(out: &mut Vec<u8>) {
    out.extend_from_slice(b"$-1\r\n");
}

/// `*<n>\r\n`: an array of the `n` replies that follow.
pub fn array(out: &mut Vec<u8>, n: usize) {
    out.push(b'*');
    push_i64(out, n as i64);
    out.extend_from_slice(b"\r\n");
}

/// `*-1\r\n`: the null array.
pub fn null_array(out: &mut Vec<u8>) {
    out.extend_from_slice(b"*-1\r\n");
}

/// The error for a value of the wrong kind.
pub const WRONGTYPE: &[u8] = b"WRONGTYPE Operation against a key holding the wrong kind of value";
/// The error for an argument or value that is not a 64-bit integer.
pub const NOT_INTEGER: &[u8] = b"ERR value is not an integer or out of range";
/// INCR past the 64-bit range.
pub const OVERFLOW: &[u8] = b"ERR increment or decrement would overflow";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes() {
        let mut out = Vec::new();
        ok(&mut out);
        simple(&mut out, b"PONG");
        error(&mut out, b"ERR a\r\nb");
        int(&mut out, -5);
        bulk(&mut out, b"a\r\nb");
        bulk(&mut out, b"");
        null(&mut out);
        array(&mut out, 2);
        null_array(&mut out);
        assert_eq!(
            out,
            b"+OK\r\n+PONG\r\n-ERR a  b\r\n:-5\r\n$4\r\na\r\nb\r\n$0\r\n\r\n$-1\r\n*2\r\n*-1\r\n"
        );
    }
}
