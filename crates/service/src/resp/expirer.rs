//! The active expirer's pass under a log: the keys past their deadline
//! deleted alone and logged as `DEL`s, in the log's order with every
//! other write (without a log, the expirer deletes on its own:
//! [`super::expires`]).

use super::expires::now_ms;
use super::keyspace::{Journal, Kept, Keyspace};
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
    let (record, touched, journal) = delete_due(&ks, log.undoes());
    if record.is_empty() {
        return;
    }
    let keys: Vec<&[u8]> = touched.iter().map(|k| &k[..]).collect();
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

/// The most keys one pass of the expirer deletes (and logs, as one
/// record): the rest wait for the next pass, 100 ms on, so that neither
/// the record (at most 64 MiB) nor the time everyone else waits for the
/// gate grows with how many keys fell due at once.
const PASS_KEYS: usize = 10_000;

/// Deletes the keys past their deadline, in every database, up to
/// [`PASS_KEYS`]: the record of `DEL`s (with `SELECT`s: a record replays
/// from database 0), the keys, and (`keep`: under `always`) what puts
/// them back.
fn delete_due(ks: &Keyspace, keep: bool) -> (Vec<u8>, Vec<Box<[u8]>>, Journal) {
    let now = now_ms();
    let (mut record, mut touched, mut journal) = (Vec::new(), Vec::new(), Journal::default());
    let mut rec_db = 0;
    for (n, d) in ks.dbs.iter().enumerate() {
        let room = PASS_KEYS - touched.len();
        for key in d.expires.due(now).into_iter().take(room) {
            if keep {
                // Moved out and kept, not copied.
                journal.keep(Kept::take(d, &key));
            } else {
                d.store.del(&key);
            }
            d.expires.remove(&key);
            if n != rec_db {
                command(&mut record, &[b"SELECT", n.to_string().as_bytes()]);
                rec_db = n;
            }
            command(&mut record, &[b"DEL", &key]);
            touched.push(key);
        }
    }
    (record, touched, journal)
}
