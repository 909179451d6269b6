//! RESP's compaction: the snapshot of the live data as commands (a `SET`
//! per string, `RPUSH`es per list) that replay like any logged command.
//!
//! RESP's records do not all overwrite (`INCRBY`, the pushes and pops
//! depend on what was there), so the snapshot must be the state exactly
//! as of the cut: the store is copied in memory under the lock that
//! orders writes into the log ([`Durable::cut`]), which holds writes (not
//! reads) for the time the copy takes, and the copy is encoded and
//! written on a thread of its own.

use super::expires::now_ms;
use super::keyspace::{Journal, Kept, Keyspace};
use super::undo::InFlight;
use crate::durable::Touch;
use crate::{Durable, Logged};
use crossbeam_utils::sync::ShardedLock;
use serverlab_proto::resp::client::command;
use serverlab_store::resp::{Coll, Held};
use serverlab_wal::{Compaction, Wal};
use std::sync::Arc;

/// At most this many elements, and about this many bytes, per `RPUSH`
/// (or `SADD`, `HSET`, `ZADD`) record of a long value (the server's
/// `--max-args` permitting).
const CHUNK_ITEMS: usize = 1024;
const CHUNK_BYTES: usize = 1 << 20;

/// A key and what it held at the cut, in its database, with its
/// deadline.
pub(super) struct Copied {
    db: usize,
    key: Box<[u8]>,
    what: What,
    deadline: Option<i64>,
}

enum What {
    Str(Box<[u8]>),
    List(Vec<Box<[u8]>>),
    Coll(Coll),
}

/// Starts a compaction when the log is due one: the cut and the copy
/// under the write-order lock, the snapshot on a thread of its own.
/// `max_args` is the server's `--max-args`, which every record replayed
/// must respect.
pub(super) fn compact_if_due(log: &Durable, ks: &Keyspace, max_args: usize) {
    let cut = log.cut(|| copy(ks));
    let (compaction, live) = match cut {
        Ok(Some(c)) => c,
        Ok(None) => return,
        Err(e) => return log.wal().fail(e),
    };
    let wal = Arc::clone(log.wal());
    let spawned = std::thread::Builder::new()
        .name("resp-compaction".into())
        .spawn(move || write(&wal, compaction, &live, max_args));
    if let Err(e) = spawned {
        eprintln!("serverlab: compaction not started: {e}");
    }
}

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
            compact_if_due(log, &ks, max_args)
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

/// Every database's contents and deadlines, copied.
pub(super) fn copy(ks: &Keyspace) -> Vec<Copied> {
    let mut live = Vec::with_capacity(ks.keys());
    for (db, d) in ks.dbs.iter().enumerate() {
        d.store.for_each(&mut |k, held| {
            let what = match held {
                Held::Str(v) => What::Str(v.into()),
                Held::List(items) => What::List(items.iter().cloned().collect()),
                Held::Coll(c) => What::Coll(c.clone()),
            };
            live.push(Copied {
                db,
                key: k.into(),
                what,
                deadline: None,
            });
        });
        if !d.expires.is_empty() {
            let deadlines: std::collections::HashMap<_, _> = d.expires.all().into_iter().collect();
            for c in live.iter_mut().filter(|c| c.db == db) {
                c.deadline = deadlines.get(&c.key).copied();
            }
        }
    }
    live
}

fn write(wal: &Wal, compaction: Compaction, live: &[Copied], max_args: usize) {
    let written = compaction.write_with(|w| records(live, max_args, &mut |r| w.record(r)));
    match written {
        Ok(done) => wal.set_live_bytes(done.bytes),
        // The disk is not to be trusted with the next record either.
        Err(e) => wal.fail(e),
    }
}

/// The records that rebuild `live` from an empty keyspace: `SET key
/// value` for a string, `RPUSH key e1 e2 …` for a list, `SADD`, `HSET`
/// and `ZADD` for the collections (long values in chunks), then
/// `PEXPIREAT key ms` for a deadline; each behind `SELECT db` outside
/// database 0 (every record replays from database 0).
fn records(
    live: &[Copied],
    max_args: usize,
    emit: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut rec = Vec::new();
    for c in live {
        let k = &c.key[..];
        let mut one = |args: &[&[u8]]| {
            rec.clear();
            super::ext::select_prefix(&mut rec, c.db);
            command(&mut rec, args);
            emit(&rec)
        };
        match &c.what {
            What::Str(v) => one(&[b"SET", k, v])?,
            What::List(items) => {
                let elems: Vec<Vec<&[u8]>> = items.iter().map(|i| vec![&i[..]]).collect();
                chunks(b"RPUSH", k, &elems, max_args, &mut one)?
            }
            What::Coll(Coll::Set(s)) => {
                let elems: Vec<Vec<&[u8]>> = s.iter().map(|m| vec![&m[..]]).collect();
                chunks(b"SADD", k, &elems, max_args, &mut one)?
            }
            What::Coll(Coll::Hash(h)) => {
                let elems: Vec<Vec<&[u8]>> = h.iter().map(|(f, v)| vec![&f[..], &v[..]]).collect();
                chunks(b"HSET", k, &elems, max_args, &mut one)?
            }
            What::Coll(Coll::ZSet(z)) => {
                let scores: Vec<(String, &[u8])> = z.iter().map(|(m, s)| (score(s), m)).collect();
                let elems: Vec<Vec<&[u8]>> =
                    scores.iter().map(|(s, m)| vec![s.as_bytes(), *m]).collect();
                chunks(b"ZADD", k, &elems, max_args, &mut one)?
            }
        }
        if let Some(at) = c.deadline {
            one(&[b"PEXPIREAT", k, at.to_string().as_bytes()])?;
        }
    }
    Ok(())
}

/// A sorted set's score as ZADD reads it back exactly.
fn score(s: f64) -> String {
    if s.is_infinite() {
        if s > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{s:?}")
    }
}

/// `cmd key e…` for every element (each one or more arguments), as few
/// records as the chunk bounds and `--max-args` allow.
fn chunks(
    cmd: &[u8],
    key: &[u8],
    elems: &[Vec<&[u8]>],
    max_args: usize,
    one: &mut dyn FnMut(&[&[u8]]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let width = elems.first().map_or(1, Vec::len);
    let per = CHUNK_ITEMS.min(max_args.saturating_sub(2) / width).max(1);
    let mut rest = elems;
    let mut args: Vec<&[u8]> = Vec::new();
    while !rest.is_empty() {
        let mut n = 0;
        let mut bytes = 0;
        while n < rest.len() && n < per && (n == 0 || bytes < CHUNK_BYTES) {
            bytes += rest[n].iter().map(|a| a.len()).sum::<usize>();
            n += 1;
        }
        args.clear();
        args.extend([cmd, key]);
        args.extend(rest[..n].iter().flatten());
        one(&args)?;
        rest = &rest[n..];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copied(db: usize, key: &[u8], what: What, deadline: Option<i64>) -> Copied {
        Copied {
            db,
            key: key.into(),
            what,
            deadline,
        }
    }

    #[test]
    fn other_databases_collections_and_deadlines_are_commands_too() {
        let mut z = serverlab_store::resp::ZSet::default();
        z.insert(b"m", 1.5);
        z.insert(b"n", f64::NEG_INFINITY);
        let live = [
            copied(3, b"k", What::Str(b"v".to_vec().into()), Some(1234)),
            copied(0, b"z", What::Coll(Coll::ZSet(z)), None),
        ];
        let recs = all(&live, 1024);
        assert_eq!(
            recs[0],
            b"*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
        );
        assert_eq!(
            recs[1],
            b"*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*3\r\n$9\r\nPEXPIREAT\r\n$1\r\nk\r\n$4\r\n1234\r\n"
        );
        assert_eq!(
            recs[2],
            b"*6\r\n$4\r\nZADD\r\n$1\r\nz\r\n$4\r\n-inf\r\n$1\r\nn\r\n$3\r\n1.5\r\n$1\r\nm\r\n"
        );
    }

    fn all(live: &[Copied], max_args: usize) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        records(live, max_args, &mut |r| {
            out.push(r.to_vec());
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn strings_are_sets_and_lists_are_pushes_in_chunks() {
        let items: Vec<Box<[u8]>> = (0..5).map(|i| vec![b'a' + i; 1].into()).collect();
        let live = [
            copied(0, b"k", What::Str(b"v".to_vec().into()), None),
            copied(0, b"l", What::List(items), None),
        ];
        let recs = all(&live, 4);
        assert_eq!(recs[0], b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");
        // --max-args 4: two elements per RPUSH, in order.
        assert_eq!(recs.len(), 4);
        assert_eq!(
            recs[1],
            b"*4\r\n$5\r\nRPUSH\r\n$1\r\nl\r\n$1\r\na\r\n$1\r\nb\r\n"
        );
        assert_eq!(recs[3], b"*3\r\n$5\r\nRPUSH\r\n$1\r\nl\r\n$1\r\ne\r\n");
    }

    #[test]
    fn a_long_list_is_cut_by_bytes_too() {
        let items: Vec<Box<[u8]>> = (0..3).map(|_| vec![0u8; CHUNK_BYTES].into()).collect();
        let recs = all(&[copied(0, b"l", What::List(items), None)], 1 << 20);
        assert_eq!(recs.len(), 3, "one megabyte element per record");
    }
}
