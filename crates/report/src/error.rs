//! What can stop a report.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The directory is not a sweep's output (the user named the wrong one).
    #[error("{dir} is not a sweep's results: {reason}")]
    NotASweep { dir: PathBuf, reason: String },
    /// Two sweeps whose points cannot be paired.
    #[error("cannot compare: {0}")]
    Incomparable(String),
    /// Shards of the split that no directory given holds: the report would
    /// be of part of the sweep.
    #[error("{0}")]
    MissingShards(String),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot draw {plot}: {source}")]
    Plot {
        plot: String,
        source: crate::chart::DrawError,
    },
}
