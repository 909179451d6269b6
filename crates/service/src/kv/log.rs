//! kv's log records: one per PUT (or POST) and DELETE, and their replay.
//!
//! A record is `P`, the key's length (u32 little-endian), the key and the
//! value; or `D` and the key. Replay puts and deletes in log order; every
//! record overwrites, so replaying the same records twice ends in the
//! same state.

use crate::durable::Durable;
use serverlab_proto::kv::digest;
use serverlab_store::kv::{KvStore, Value};
use serverlab_wal::ApplyError;
use std::sync::Arc;

const PUT: u8 = b'P';
const DELETE: u8 = b'D';

/// The record of a PUT of `value` at `key`.
pub(super) fn put(key: &[u8], value: &[u8], out: &mut Vec<u8>) {
    out.reserve(5 + key.len() + value.len());
    out.push(PUT);
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(value);
}

/// The record of a DELETE of `key`.
pub(super) fn delete(key: &[u8], out: &mut Vec<u8>) {
    out.push(DELETE);
    out.extend_from_slice(key);
}

/// Applies one record to `store`.
pub(super) fn replay(store: &dyn KvStore, rec: &[u8]) -> Result<(), ApplyError> {
    match rec.split_first() {
        Some((&PUT, rest)) if rest.len() >= 4 => {
            let (len, rest) = rest.split_at(4);
            let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
            if rest.len() < len {
                return Err("a kv PUT record shorter than its key".into());
            }
            let (key, value) = rest.split_at(len);
            let v = Value {
                bytes: value.into(),
                digest: digest(value),
            };
            store.put(key, Arc::new(v));
            Ok(())
        }
        Some((&DELETE, key)) => {
            store.delete(key);
            Ok(())
        }
        _ => Err("not a kv record".into()),
    }
}

/// Starts a compaction when the log is due one: the cut here (appends go
/// to a new segment from now on), settled (every write whose record went
/// to the old segment applied: [`Durable::cut_settled`]), and the snapshot
/// on a thread of its own, so the write that found it due is answered
/// without waiting. The snapshot is the store as its iteration finds it
/// after that, one lock at a time (copying keys and taking the values'
/// `Arc`s, nothing more under a lock): every kv record overwrites, so the
/// new segment's records, replayed over it, end in the state the writes
/// made (docs/durability.md).
pub(super) fn compact_if_due(log: &Durable, store: &Arc<dyn KvStore>) {
    let wal = log.wal();
    let compaction = match log.cut_settled() {
        Ok(Some(c)) => c,
        Ok(None) => return,
        Err(e) => return wal.fail(e),
    };
    let (wal, store) = (Arc::clone(wal), Arc::clone(store));
    let spawned = std::thread::Builder::new()
        .name("kv-compaction".into())
        .spawn(move || {
            let mut live: Vec<(Box<[u8]>, Arc<Value>)> = Vec::new();
            store.for_each(&mut |k, v| live.push((k.into(), Arc::clone(v))));
            // The copy may hold writes applied after the cut whose records
            // are not yet on disk (under `always` a write is applied before
            // its fsync): publish it only once they are, or a snapshot
            // could keep a write the log then refuses.
            if wal.wait(wal.last_appended()).is_err() {
                return; // the log failed: the compaction is abandoned
            }
            let mut rec = Vec::new();
            let written = compaction.write_with(|w| {
                live.iter().try_for_each(|(k, v)| {
                    rec.clear();
                    put(k, &v.bytes, &mut rec);
                    w.record(&rec)
                })
            });
            match written {
                Ok(done) => wal.set_live_bytes(done.bytes),
                // The disk is not to be trusted with the next record either.
                Err(e) => wal.fail(e),
            }
        });
    if let Err(e) = spawned {
        eprintln!("serverlab: compaction not started: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_replay_to_the_same_store() {
        let store = serverlab_store::kv::new(serverlab_store::kv::DEFAULT);
        let mut rec = Vec::new();
        put(b"k", b"value", &mut rec);
        replay(&*store, &rec).unwrap();
        assert_eq!(&*store.get(b"k").unwrap().bytes, b"value");
        rec.clear();
        delete(b"k", &mut rec);
        replay(&*store, &rec).unwrap();
        assert!(store.get(b"k").is_none());
        assert!(replay(&*store, b"X").is_err());
        assert!(replay(&*store, b"P\x09\0\0\0k").is_err());
    }
}
