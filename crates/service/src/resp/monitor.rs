//! MONITOR, as Redis 7.0 serves it (docs/protocols/resp.md, 5.2.7): a
//! monitor is sent, for every command any connection runs after it
//! (itself included), the line `+<secs>.<micros> [<db> <addr>] "name"
//! "arg"…`, each argument quoted and escaped as Redis's `sdscatrepr`
//! does. The line is made after the command ran (its database is the one
//! the command left), as Redis's `call` feeds its monitors; what Redis
//! never feeds is not fed here: a command refused before it runs (an
//! unknown command or subcommand, a wrong number of arguments, one a
//! subscribed connection may not run), one queued in a transaction (it is
//! fed when EXEC runs it, before the EXEC), and the administrative ones
//! (CONFIG, MONITOR, CLIENT LIST and UNBLOCK). A monitor's lines go
//! through its outbox, as a subscriber's messages do, and are bounded
//! as they are ([`super::pubsub`]). When no connection is a monitor, a
//! command pays one relaxed load.

use super::Args;
use serverlab_proto::resp::command::{Cmd, Rejection};
use serverlab_proto::resp::Name;
use std::io::Write;

/// Whether Redis would feed `name` (run, not refused) to its monitors:
/// not an administrative command, nor a container's subcommand it does
/// not know.
pub(crate) fn shown(name: Option<Name>, a: &Args) -> bool {
    let sub = || a.try_arg(1).unwrap_or_default();
    match name {
        None | Some(Name::Config | Name::Monitor) => false,
        Some(Name::Client) if sub().eq_ignore_ascii_case(b"reply") => true,
        Some(Name::Client) => {
            !(sub().eq_ignore_ascii_case(b"list") || sub().eq_ignore_ascii_case(b"unblock"))
                && Name::Client.subcommand(sub()).is_some()
        }
        Some(n) if n.has_subcommands() => n.subcommand(sub()).is_some(),
        Some(_) => true,
    }
}

/// Whether a parsed command was refused before it ran, as Redis's
/// `processCommand` refuses it (and so never shows it).
pub(crate) fn refused_early(cmd: &Cmd) -> bool {
    matches!(
        cmd,
        Cmd::Reject(
            Rejection::UnknownCommand | Rejection::UnknownSubcommand(_) | Rejection::WrongArity(_)
        )
    )
}

/// The line for a command that ran on database `db` from `addr`.
pub(crate) fn line(db: usize, addr: &str, unix: bool, a: &Args) -> Vec<u8> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut out = Vec::with_capacity(64);
    let _ = write!(out, "+{}.{:06} [{db} ", now.as_secs(), now.subsec_micros());
    if unix {
        out.extend_from_slice(b"unix:");
    } else {
        out.extend_from_slice(addr.as_bytes());
    }
    out.push(b']');
    let hello_auth = Name::find(a.arg(0)) == Some(Name::Hello);
    let mut redact = 0;
    for (i, arg) in a.from(0).enumerate() {
        out.push(b' ');
        if redact > 0 {
            redact -= 1;
            repr(&mut out, b"(redacted)");
            continue;
        }
        repr(&mut out, arg);
        if hello_auth && i > 1 && arg.eq_ignore_ascii_case(b"auth") {
            // HELLO's AUTH username password, as Redis hides them.
            redact = 2;
        }
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// `s` quoted as Redis's `sdscatrepr` quotes it.
pub(crate) fn repr(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for &c in s {
        match c {
            b'\\' | b'"' => out.extend_from_slice(&[b'\\', c]),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            7 => out.extend_from_slice(b"\\a"),
            8 => out.extend_from_slice(b"\\b"),
            c if c.is_ascii_graphic() || c == b' ' => out.push(c),
            c => {
                let _ = write!(out, "\\x{c:02x}");
            }
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::repr;

    #[test]
    fn quotes_as_sdscatrepr() {
        let mut out = Vec::new();
        repr(&mut out, b"a b\"c\\\n\r\t\x07\x08\x01\xff~");
        assert_eq!(out, b"\"a b\\\"c\\\\\\n\\r\\t\\a\\b\\x01\\xff~\"");
    }
}
