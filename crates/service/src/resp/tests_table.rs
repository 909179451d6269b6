//! The command table ([`Name`]) against the service: every command in it
//! is run by the family its row names, names the keys it writes, and, if
//! it writes, says how it is taken back.
//!
//! What cannot be left out of a row does not compile without it (its key
//! spec, flags and family are columns; [`super::alone::undoes`] and the
//! dispatch to families match every name and every family without a
//! wildcard). What is left is checked here, and, for the log record and
//! the undo of every write, by
//! `tests_undo::every_write_in_the_table_is_taken_back_when_its_fsync_fails`,
//! which needs a sample of every write and fails for one that logs
//! nothing or is not taken back.

use super::alone::{undoes, Undoes};
use super::*;
use crate::run_all;
use serverlab_proto::resp::client;
use serverlab_proto::resp::name::{Family, Flags, Name};

fn peer() -> SocketAddr {
    "127.0.0.1:1".parse().unwrap()
}

/// `name` with the fewest arguments its arity allows, each `1` (a key,
/// a count, a database, a timeout of a second).
fn fewest(name: Name) -> Vec<u8> {
    let f = name.facts();
    let mut args = vec![f.wire.as_bytes()];
    args.extend(std::iter::repeat_n(
        &b"1"[..],
        f.arity.unsigned_abs() as usize - 1,
    ));
    let mut wire = Vec::new();
    client::command(&mut wire, &args);
    wire
}

/// Every command, sent with the fewest arguments its arity allows, is
/// served by its family (a family's `run` matching a name it does not
/// serve panics) with exactly one well-formed reply, on a fresh
/// connection of a fresh service, under every store.
#[test]
fn every_command_is_served_by_its_family() {
    for kind in serverlab_store::resp::KINDS {
        for name in Name::ALL {
            let wire = fewest(name);
            let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let svc = RespService::new(kind, Limits::default(), "test".into()).unwrap();
                let mut conn = svc.open(peer());
                let mut out = Vec::new();
                let ran = run_all(&svc, &mut conn, &wire, &mut out);
                (ran.applied.len(), out)
            }));
            let Ok((applied, out)) = served else {
                panic!("{kind} {name:?}: its family does not serve it");
            };
            assert_eq!(applied, 1, "{kind} {name:?}");
            let len = client::skip(&out).ok().flatten();
            assert_eq!(
                len,
                Some(out.len()),
                "{kind} {name:?}: one reply: {}",
                String::from_utf8_lossy(&out)
            );
        }
    }
}

/// A queued command runs, at EXEC, as it runs alone: every command of
/// the table queued (UNWATCH among them) gets its one reply in EXEC's
/// (but those refused while a transaction is open: a nested MULTI, a
/// WATCH; and RESET, which runs at once and ends the transaction).
#[test]
fn every_command_runs_in_a_transaction() {
    let svc = RespService::new(StoreKind::Sharded, Limits::default(), "test".into()).unwrap();
    for name in Name::ALL {
        if matches!(name, Name::Exec | Name::Discard | Name::Quit) {
            continue;
        }
        let mut wire = Vec::new();
        client::command(&mut wire, &[b"MULTI"]);
        wire.extend(fewest(name));
        client::command(&mut wire, &[b"EXEC"]);
        let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut conn = svc.open(peer());
            let mut out = Vec::new();
            run_all(&svc, &mut conn, &wire, &mut out);
            out
        }));
        let Ok(out) = served else {
            panic!("{name:?} panicked at EXEC");
        };
        let text = String::from_utf8_lossy(&out);
        match name {
            // Refused at once, the transaction going on without them.
            Name::Multi | Name::Watch => assert!(text.ends_with("\r\n*0\r\n"), "{name:?}: {text}"),
            // `PUBSUB 1`: its subcommand is checked as it is queued.
            Name::PubSub => assert!(text.contains("Try PUBSUB HELP"), "{text}"),
            // Run at once, as Redis's: the transaction is gone.
            Name::Reset => assert_eq!(
                text, "+OK\r\n+RESET\r\n-ERR EXEC without MULTI\r\n",
                "{name:?}"
            ),
            _ => assert!(
                text.starts_with("+OK\r\n+QUEUED\r\n*1\r\n"),
                "{name:?}: {text}"
            ),
        }
    }
}

/// A write names the keys it writes (a key spec with a written key), or
/// its row says it touches every key; only EXEC (whose commands each name
/// theirs) and FUNCTION (FLUSH, there being no functions) write none. A
/// command logged as another is a write; a blocking one is a list's.
#[test]
fn every_write_names_what_it_writes() {
    for name in Name::ALL {
        let f = name.facts();
        let names_written = f.keys.iter().any(|k| k.role.writes());
        let keyless = matches!(name, Name::Exec | Name::Function);
        if f.writes() {
            assert!(
                names_written || f.has(Flags::ALL_KEYS) || keyless,
                "{name:?} writes, and its key spec names nothing it writes"
            );
        } else {
            assert!(!names_written, "{name:?} reads, and says it writes");
        }
        assert!(!f.has(Flags::LOGGED_AS_OTHER) || f.writes(), "{name:?}");
        assert!(
            !f.has(Flags::BLOCKING) || matches!(f.family, Family::Lists | Family::Colls),
            "{name:?}"
        );
    }
}

/// Every write (but EXEC and FUNCTION, which change no data of their
/// own) is taken back some way; a read is never.
#[test]
fn every_write_says_how_it_is_taken_back() {
    for name in Name::ALL {
        let f = name.facts();
        let keyless = matches!(name, Name::Exec | Name::Function);
        assert_eq!(
            undoes(name) != Undoes::Nothing,
            f.writes() && !keyless,
            "{name:?}"
        );
    }
}
