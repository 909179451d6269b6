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
pub fn error(out: &mut Vec<u8>, message: impl AsRef<[u8]>) {
    let message = message.as_ref();
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

// The error replies more than one command gives, each written once
// (an error only one place gives is written there).

/// The error for a value of the wrong kind.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
/// The error for an argument or value that is not a 64-bit integer.
pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
/// INCR, HINCRBY past the 64-bit range.
pub const OVERFLOW: &str = "ERR increment or decrement would overflow";
/// An option that is not one, or one short of its arguments.
pub const SYNTAX: &str = "ERR syntax error";
/// A count that must not be negative (LPOP's, SPOP's, …).
pub const NOT_POSITIVE: &str = "ERR value is out of range, must be positive";
/// A database number outside 0 to 15 (SELECT, MOVE, COPY, SWAPDB).
pub const DB_INDEX: &str = "ERR DB index is out of range";
/// A value that is not a float (INCRBYFLOAT's increment, a score).
pub const NOT_FLOAT: &str = "ERR value is not a valid float";
/// A blocking command's timeout that is not a number.
pub const TIMEOUT_NOT_FLOAT: &str = "ERR timeout is not a float or out of range";
/// A blocking command's timeout below zero.
pub const TIMEOUT_NEGATIVE: &str = "ERR timeout is negative";
/// LSET's, RENAME's key missing.
pub const NO_SUCH_KEY: &str = "ERR no such key";

/// The error for a command (or `command|subcommand`) given a number of
/// arguments it does not take.
pub fn wrong_arity(name: &str) -> String {
    format!("ERR wrong number of arguments for '{name}' command")
}

/// The error for a deadline out of range (EXPIRE's, SET's `EX`, …).
pub fn invalid_expire(name: &str) -> String {
    format!("ERR invalid expire time in '{name}' command")
}

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
