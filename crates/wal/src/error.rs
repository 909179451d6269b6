//! Every way opening or using a log fails, each naming the path, offset or
//! choice concerned.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use crate::format::{Bad, HeaderError};

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
    /// A bad record before the tail, under
    /// [`Recover::Strict`](crate::Recover::Strict).
    #[error("{path}: corrupt record at byte offset {offset} ({bad}) before the end of the log; start with recovery mode truncate to cut the log there")]
    Corrupt {
        path: PathBuf,
        offset: u64,
        bad: Bad,
    },
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
