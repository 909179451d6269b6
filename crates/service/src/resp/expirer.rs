//! The active expirer's pass under a log: the keys past their deadline
//! deleted alone and logged as `DEL`s, in the log's order with every
//! other write (without a log, the expirer deletes on its own:
//! [`super::expires`]).

use super::expires::now_ms;
use super::keyspace::{Database, Journal, Kept, Keyspace};
use super::undo::InFlight;
use crate::durable::Touch;
use crate::{Durable, Logged};
use crossbeam_utils::sync::ShardedLock;
use serverlab_proto::resp::client::command;

/// The active expirer's pass under a log: every key past its deadline,
/// in every database, deleted alone (under the keyspace's gate, as a
/// command alone deletes them first) and logged as the `DEL`s it comes
/// to, in one record in the log's order with every other write; taken
/// back if the log refuses it. Nothing is taken while no key is due.
pub(super) fn expire_due(
    ks: &ShardedLock<Keyspace>,
    log: &Durable,
    in_flight: &InFlight,
    max_args: usize,
    pubsub: &super::pubsub::PubSub,
) {
    let due = |ks: &Keyspace, now| ks.dbs.iter().any(|d| d.expires.any_due(None, now));
    if !due(&ks.read().unwrap_or_else(|e| e.into_inner()), now_ms()) {
        return;
    }
    if log.failure().is_some() && !in_flight.unsettled(log) {
        // Taken back already: nothing due can be logged, nor deleted.
        return;
    }
    let mut ks = ks.write().unwrap_or_else(|e| e.into_inner());
    if log.failure().is_some() {
        // Nothing can be logged any more: the writes that never committed
        // are taken back, and the due keys stay (as written).
        in_flight.settle(log, &mut ks);
        return;
    }
    let (record, deleted, journal) = pass(&ks, log.undoes());
    if record.is_empty() {
        return;
    }
    let keys: Vec<&[u8]> = deleted.iter().map(|(_, k)| &k[..]).collect();
    let written = log.write(
        Touch::Keys(&keys),
        |rec| {
            rec.extend_from_slice(&record);
            true
        },
        // The journal is kept by the service's writes in flight, as every
        // write's is: its steps need the keyspace, held alone.
        || Box::new(|| {}) as crate::durable::Undo,
        || (),
    );
    match written {
        Ok((_, logged)) => {
            if let (true, Some(Logged::Ticket(t))) = (log.undoes(), logged) {
                in_flight.push(log.wal(), t, journal);
            }
            for (n, key) in &deleted {
                pubsub.expired(*n, [&key[..]]);
            }
            super::snapshot::compact_if_due(log, &ks, max_args)
        }
        // Refused: the keys are put back (newest first, then every write
        // still uncommitted), to be deleted when it can be logged (never,
        // once the log has failed: they stay, as written).
        Err(_) => {
            journal.undo(&mut ks);
            in_flight.settle(log, &mut ks);
        }
    }
}

/// The most keys one pass deletes (and logs, as one record), of the
/// expirer or at a command alone's start: the rest wait for the next
/// pass (the expirer's, 100 ms on, or the next command alone's), so that
/// neither the record (at most 64 MiB) nor the time everyone else waits
/// for the gate grows with how many keys fell due at once. (Small in the
/// unit tests, which fill several passes.)
pub(super) const PASS_KEYS: usize = if cfg!(test) { 100 } else { 10_000 };

/// Deletes the keys past their deadline at `now`, in every database, up
/// to `limit`, putting what takes them back in `journal` (under
/// `always`): the databases and keys deleted, in order.
pub(super) fn delete_due(
    ks: &Keyspace,
    now: i64,
    limit: usize,
    mut journal: Option<&mut Journal>,
) -> Vec<(usize, Box<[u8]>)> {
    let mut deleted = Vec::new();
    for (n, d) in ks.dbs.iter().enumerate() {
        for key in d.expires.due(now, limit - deleted.len()) {
            delete(d, &key, journal.as_deref_mut());
            deleted.push((n, key));
        }
    }
    deleted
}

/// Deletes `key` of `d`, past its deadline: moved out and kept in
/// `journal` (not copied) where one is given.
pub(super) fn delete(d: &Database, key: &[u8], journal: Option<&mut Journal>) {
    match journal {
        Some(j) => j.keep(Kept::take(d, key)),
        None => {
            d.store.del(key);
        }
    }
    d.expires.remove(key);
}

/// The expirer's pass: the record of `DEL`s (with `SELECT`s: a record
/// replays from database 0), the keys (with their databases), and
/// (`keep`: under `always`) what puts them back.
type Pass = (Vec<u8>, Vec<(usize, Box<[u8]>)>, Journal);

fn pass(ks: &Keyspace, keep: bool) -> Pass {
    let mut journal = Journal::default();
    let deleted = delete_due(ks, now_ms(), PASS_KEYS, keep.then_some(&mut journal));
    let mut record = Vec::new();
    let mut rec_db = 0;
    for (n, key) in &deleted {
        if *n != rec_db {
            command(&mut record, &[b"SELECT", n.to_string().as_bytes()]);
            rec_db = *n;
        }
        command(&mut record, &[b"DEL", key]);
    }
    (record, deleted, journal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{run_all, Service};
    use serverlab_proto::resp::{client, Limits};
    use serverlab_store::StoreKind;
    use serverlab_wal::{Committer, Durability, Options, Wal};

    fn run(svc: &super::super::RespService, cmds: &[Vec<String>]) -> String {
        let mut wire = Vec::new();
        for c in cmds {
            let args: Vec<&[u8]> = c.iter().map(|a| a.as_bytes()).collect();
            client::command(&mut wire, &args);
        }
        let mut out = Vec::new();
        let mut conn = svc.open("127.0.0.1:1".parse::<std::net::SocketAddr>().unwrap());
        run_all(svc, &mut conn, &wire, &mut out);
        svc.wal().unwrap().commit_pending();
        String::from_utf8_lossy(&out).into_owned()
    }

    fn one(args: &[&str]) -> Vec<Vec<String>> {
        vec![args.iter().map(|a| a.to_string()).collect()]
    }

    /// Many keys falling due at once under `always`: a command alone
    /// deletes (and logs) a bounded pass of them, not all, and still
    /// runs (its own key, due, is gone for it); passes delete the rest.
    #[test]
    fn a_command_alone_deletes_a_bounded_pass_of_due_keys() {
        let dir = std::env::temp_dir().join(format!("serverlab-pass-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut opts = Options::new(Durability::Always);
        opts.committer = Committer::Caller;
        let wal = Wal::open(&dir, opts, |_| Ok(())).unwrap();
        let svc = super::super::RespService::new(StoreKind::Sharded, Limits::default(), "t".into())
            .unwrap()
            .with_log(wal);
        let n = 10 * PASS_KEYS;
        let sets: Vec<Vec<String>> = (0..n)
            .map(|i| vec!["SET".into(), format!("k{i}"), "v".into()])
            .collect();
        run(&svc, &sets);
        {
            // Deadlines already past (a command setting one would delete
            // the key at once).
            let ks = svc.keyspace.read().unwrap();
            (0..n).for_each(|i| ks.dbs[0].expires.set(format!("k{i}").as_bytes(), 1));
        }
        let last = format!("k{}", n - 1);
        assert_eq!(run(&svc, &one(&["APPEND", &last, "x"])), ":1\r\n");
        let left = svc.keyspace.read().unwrap().dbs[0].expires.len();
        // (The expirer's own passes may run meanwhile: one per 100 ms.)
        assert!(left > 0 && left < n, "{left} of {n} keys left due");
        for _ in 0..2 * n / PASS_KEYS {
            assert_eq!(run(&svc, &one(&["APPEND", "other", "x"]))[..1], *":");
        }
        let ks = svc.keyspace.read().unwrap();
        assert_eq!(ks.dbs[0].expires.len(), 0);
        assert_eq!(ks.dbs[0].store.len(), 2, "only {last} and other");
        drop(ks);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
