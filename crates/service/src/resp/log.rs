//! RESP's compaction: the snapshot of the live data as commands (a `SET`
//! per string, `RPUSH`es per list) that replay like any logged command.
//!
//! RESP's records do not all overwrite (`INCRBY`, the pushes and pops
//! depend on what was there), so the snapshot must be the state exactly
//! as of the cut: the store is copied in memory under the lock that
//! orders writes into the log ([`Durable::cut`]), which holds writes (not
//! reads) for the time the copy takes, and the copy is encoded and
//! written on a thread of its own.

use crate::Durable;
use serverlab_proto::resp::client::command;
use serverlab_store::resp::{Held, RespStore};
use serverlab_wal::{Compaction, Wal};
use std::sync::Arc;

/// At most this many elements, and about this many bytes, per `RPUSH`
/// record of a long list (the server's `--max-args` permitting).
const CHUNK_ITEMS: usize = 1024;
const CHUNK_BYTES: usize = 1 << 20;

/// A key and what it held at the cut (or before a write, to undo it).
pub(super) enum Copied {
    Str(Box<[u8]>, Box<[u8]>),
    List(Box<[u8]>, Vec<Box<[u8]>>),
}

/// Starts a compaction when the log is due one: the cut and the copy
/// under the write-order lock, the snapshot on a thread of its own.
/// `max_args` is the server's `--max-args`, which every record replayed
/// must respect.
pub(super) fn compact_if_due(log: &Durable, store: &Arc<dyn RespStore>, max_args: usize) {
    let cut = log.cut(|| copy(&**store));
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

/// The store's contents, copied.
pub(super) fn copy(store: &dyn RespStore) -> Vec<Copied> {
    let mut live = Vec::with_capacity(store.len());
    store.for_each(&mut |k, held| {
        live.push(match held {
            Held::Str(v) => Copied::Str(k.into(), v.into()),
            Held::List(items) => Copied::List(k.into(), items.iter().cloned().collect()),
        });
    });
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

/// The records that rebuild `live` from an empty store: `SET key value`
/// for a string, `RPUSH key e1 e2 …` in chunks for a list.
fn records(
    live: &[Copied],
    max_args: usize,
    emit: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let per = CHUNK_ITEMS.min(max_args.saturating_sub(2)).max(1);
    let mut rec = Vec::new();
    let mut args: Vec<&[u8]> = Vec::new();
    for c in live {
        match c {
            Copied::Str(k, v) => {
                rec.clear();
                command(&mut rec, &[b"SET", k, v]);
                emit(&rec)?;
            }
            Copied::List(k, items) => {
                let mut rest = &items[..];
                while !rest.is_empty() {
                    let mut n = 0;
                    let mut bytes = 0;
                    while n < rest.len() && n < per && (n == 0 || bytes < CHUNK_BYTES) {
                        bytes += rest[n].len();
                        n += 1;
                    }
                    args.clear();
                    args.extend([&b"RPUSH"[..], k]);
                    args.extend(rest[..n].iter().map(|i| &i[..]));
                    rec.clear();
                    command(&mut rec, &args);
                    emit(&rec)?;
                    rest = &rest[n..];
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
            Copied::Str(b"k".to_vec().into(), b"v".to_vec().into()),
            Copied::List(b"l".to_vec().into(), items),
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
        let recs = all(&[Copied::List(b"l".to_vec().into(), items)], 1 << 20);
        assert_eq!(recs.len(), 3, "one megabyte element per record");
    }
}
