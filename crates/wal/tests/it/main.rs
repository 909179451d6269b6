//! The log as a library: real files in a temporary directory, replay
//! checked against what was appended.

mod commit;
mod dir;
mod leader;
mod powerloss;
mod prop;
mod recovery;
mod replay;

use std::path::{Path, PathBuf};

use serverlab_wal::{Durability, Error, Options, Recover, Wal};

/// Opens `dir`, collecting every replayed record.
pub fn open(dir: &Path, opts: Options) -> Result<(Wal, Vec<Vec<u8>>), Error> {
    let mut got = Vec::new();
    let wal = Wal::open(dir, opts, |r| {
        got.push(r.to_vec());
        Ok(())
    })?;
    Ok((wal, got))
}

pub fn opts(durability: Durability) -> Options {
    Options::new(durability)
}

pub fn truncating(durability: Durability) -> Options {
    Options {
        recover: Recover::Truncate,
        ..Options::new(durability)
    }
}

/// Appends `records` to a fresh log in `dir` and closes it; returns the one
/// log segment written.
pub fn write_log(dir: &Path, records: &[Vec<u8>]) -> PathBuf {
    let (wal, got) = open(dir, opts(Durability::Os)).unwrap();
    assert!(got.is_empty());
    for r in records {
        wal.append(r).unwrap();
    }
    drop(wal);
    let logs = logs(dir);
    assert_eq!(logs.len(), 1, "{logs:?}");
    logs.into_iter().next().unwrap()
}

/// Copies the manifest of `src` into `dst`, which then holds a copy of
/// the files of `src` the manifest speaks for.
pub fn copy_manifest(src: &Path, dst: &Path) {
    let name = serverlab_wal::MANIFEST_FILE;
    std::fs::copy(src.join(name), dst.join(name)).unwrap();
}

/// The directory's log segments, oldest first.
pub fn logs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    v.sort();
    v
}

pub fn payloads(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("PUT key{i} value-{i}").into_bytes())
        .collect()
}

/// Records the data `fsync`s carried, summed from their histogram: the
/// records synced, each once if none was synced twice.
pub fn synced(s: &serverlab_wal::Stats) -> u64 {
    s.records_per_fsync
        .iter_recorded()
        .map(|v| v.value_iterated_to() * v.count_at_value())
        .sum()
}
