//! Every way opening or using a log fails, each naming the path, offset or
//! choice concerned.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use crate::format::{Bad, HeaderError, SnapshotBad};

/// An error from opening, replaying, appending to or compacting a log.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// [`Durability::None`](crate::Durability::None) keeps no log to open.
    #[error("durability none keeps no log: there is nothing to open")]
    NoLog,
    /// Another process (or another `Wal` in this one) holds the directory.
    #[error("data directory {dir} is in use by another server (it holds the lock on {lock})")]
    InUse { dir: PathBuf, lock: PathBuf },
    /// The directory cannot be created, listed or written.
    #[error("data directory {path}: {source}")]
    Dir { path: PathBuf, source: io::Error },
    /// Reading, writing or syncing one file failed.
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    /// A file named like a log or snapshot whose header is not one.
    #[error("{path}: not a serverlab log file: {what}")]
    BadHeader { path: PathBuf, what: HeaderError },
    /// A file an older build wrote, in a format this one does not read.
    #[error("{path}: written by an older serverlab (format {version}); this build reads {current}: open the directory with the build that wrote it, or move the directory aside to start with an empty one", current = crate::format::VERSION)]
    OldFormat { path: PathBuf, version: u16 },
    /// A bad record before the tail, under
    /// [`Recover::Strict`](crate::Recover::Strict).
    #[error("{path}: corrupt record at byte offset {offset} ({bad}) before the end of the log; start with --recover truncate to keep the valid prefix (the log is cut there)")]
    Corrupt {
        path: PathBuf,
        offset: u64,
        bad: Bad,
    },
    /// A bad record at the end of a log segment that a later one follows:
    /// only the newest segment can have a torn tail.
    #[error("{path}: bad record at byte offset {offset} ({bad}) at the end of a log segment that later ones follow: only the newest segment can have a torn tail, so this is damage, and acknowledged writes may be lost; start with --recover truncate to keep the valid prefix (this segment is cut there and the later ones removed)")]
    DamagedSegment {
        path: PathBuf,
        offset: u64,
        bad: Bad,
    },
    /// A snapshot that does not end as written: cut at a record boundary
    /// or in its header, a bad record, or a trailer that does not match.
    #[error("{path}: snapshot damaged at byte offset {offset} ({what}), so records of the state may be missing; start with --recover truncate to keep its valid records (it is cut there and its trailer rewritten)")]
    Snapshot {
        path: PathBuf,
        offset: u64,
        what: SnapshotBad,
    },
    /// A log segment whose header is cut short although its creation was
    /// recorded (or later segments follow it): damage, not a crash.
    #[error("{path}: its header is cut short, but it was synced when it was created, so the file is damaged; start with --recover truncate to drop it and the segments after it")]
    TornHeader { path: PathBuf },
    /// A log segment missing between two that are present.
    #[error("{path} is missing, but {next} follows it: a log segment was removed or lost, and acknowledged writes with it; start with --recover truncate to keep the log before the gap (the segments after it are removed)")]
    Gap { path: PathBuf, next: PathBuf },
    /// The newest log segment (as the manifest records it) is missing.
    #[error("{path} is missing: {manifest} records log segment {generation} as created, so the newest writes are lost; start with --recover truncate to keep the log that remains")]
    MissingNewest {
        path: PathBuf,
        manifest: PathBuf,
        generation: u64,
    },
    /// The log starts after a compaction, but the snapshot it follows is
    /// not there.
    #[error("{path} is missing: the log starts at {first}, after a compaction, so the state the snapshot held is lost; start with --recover truncate to start empty (the log segments are removed)")]
    MissingSnapshot { path: PathBuf, first: PathBuf },
    /// Log files with no manifest to say which segment is the newest.
    #[error("{path} is missing, but the directory holds log files: whether the newest segment is still there cannot be told; start with --recover truncate to trust the files present (the manifest is rewritten)")]
    NoManifest { path: PathBuf },
    /// A manifest that is not one.
    #[error("{path}: damaged manifest ({what}); start with --recover truncate to trust the files present (the manifest is rewritten)")]
    BadManifest { path: PathBuf, what: HeaderError },
    /// The replay callback refused a record.
    #[error("{path}: the record at byte offset {offset} could not be applied: {source}")]
    Apply {
        path: PathBuf,
        offset: u64,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A payload over [`MAX_RECORD`](crate::format::MAX_RECORD).
    #[error("a record of {0} bytes is over the log's limit of {max} bytes", max = crate::format::MAX_RECORD)]
    TooLong(usize),
    /// An earlier write or `fsync` failed; the log accepts nothing more and
    /// no waiting write is acknowledged.
    #[error("the log failed and accepts no more writes: {0}")]
    Failed(Arc<crate::Failure>),
    /// The test hook stopped a compaction here, as a crash would.
    #[cfg(test)]
    #[error("simulated crash")]
    SimulatedCrash,
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, source }
    }

    pub(crate) fn dir(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Error {
        let path = path.into();
        move |source| Error::Dir { path, source }
    }
}
