//! Whether the server speaks the protocol at all, decided from one
//! exchange before any case runs: the protocol's `hello`, a request every
//! server of it answers at once, and the first line of the answer judged
//! by its `recognise`. No answer within [`PROBE`], or an answer no such
//! server sends (another protocol's, an echo), is one line naming the
//! problem, instead of every case failing (or waiting out its timeout)
//! one by one.

use crate::protocol::Protocol;
use crate::wire::{show, Conn, Got};
use std::net::SocketAddr;
use std::time::Duration;

/// How long the first answer may take (at most the run's `--timeout`).
pub const PROBE: Duration = Duration::from_secs(2);

/// Why the server is not one of `P`'s, in one line with a next step; `Ok`
/// when its answer is one a server of `P` sends.
pub fn identify<P: Protocol>(
    proto: &P,
    addr: SocketAddr,
    timeout: Duration,
    nonce: &str,
) -> Result<(), String> {
    let wait = timeout.min(PROBE);
    let mut conn = Conn::open(addr, wait).map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    let hello = proto.hello(nonce);
    conn.send(&hello);
    let is_it = format!(
        "is {addr} the {name} server? `serverlab check PROTOCOL` must name the protocol it speaks",
        name = P::NAME
    );
    let answer = match conn.read(Duration::ZERO, first_line) {
        Got::Reply(line) => line,
        Got::Closed(part) if !part.is_empty() => part,
        Got::Timeout(part) if !part.is_empty() => {
            return Err(format!(
                "{addr} sent no reply within {wait:?} to {}: only {} arrived, not a whole {} \
                 reply (a server trickling bytes, or of another protocol); {is_it}",
                show(&hello),
                show(&part),
                P::NAME
            ))
        }
        Got::Timeout(_) => {
            return Err(format!(
                "{addr} sent no reply within {wait:?} to {}: it does not speak {} (a server \
                 of another protocol may be waiting for more); {is_it}",
                show(&hello),
                P::NAME
            ))
        }
        Got::Closed(_) => {
            return Err(format!(
                "{addr} closed the connection without answering {}: is it a {} server, and not \
                 at its connection limit?",
                show(&hello),
                P::NAME
            ))
        }
        too_long @ Got::TooLong => {
            return Err(format!(
                "{addr} answered {} with {}: it does not speak {}; {is_it}",
                show(&hello),
                too_long.show(),
                P::NAME
            ))
        }
    };
    proto.recognise(&hello, &answer).map_err(|why| {
        format!(
            "this does not look like a {} server: to {} it sent {}{}; {is_it}",
            P::NAME,
            show(&hello),
            show(&answer),
            why.map_or_else(|| like(&answer), |w| format!(" ({w})")),
        )
    })
}

/// The first line of an answer: through its first `\0` or `\n`, the end of
/// a reply in every protocol here (a kv status line, a RESP simple reply,
/// a board or bucket reply).
fn first_line(buf: &[u8]) -> Option<usize> {
    memchr::memchr2(0, b'\n', buf).map(|i| i + 1)
}

/// Which protocol's server an answer sounds like, if one is plain.
fn like(answer: &[u8]) -> String {
    let what = if answer.starts_with(b"HTTP/") {
        "an HTTP server, such as kv, would"
    } else if answer.ends_with(b"\r\n")
        && matches!(answer.first(), Some(b'+' | b'-' | b':' | b'$' | b'*'))
    {
        "a RESP server would"
    } else {
        return String::new();
    };
    format!(", as {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_lines_and_likenesses() {
        assert_eq!(first_line(b"17\0more"), Some(3));
        assert_eq!(first_line(b"HTTP/1.1 400 Bad Request\r\n"), Some(26));
        assert_eq!(first_line(b"HTTP/1.1"), None);
        assert_eq!(
            like(b"HTTP/1.1 400 Bad Request\r\n"),
            ", as an HTTP server, such as kv, would"
        );
        assert_eq!(
            like(b"-ERR unknown command\r\n"),
            ", as a RESP server would"
        );
        assert_eq!(like(b"\0"), "");
    }
}
