//! What can go wrong in a sweep: a bad experiment file (the user's to fix)
//! or a failure to run or store results.

use std::path::PathBuf;

/// The experiment file is wrong; the message names the key or value.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct SpecError {
    pub file: String,
    pub message: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The output directory holds results of a different configuration.
    #[error(
        "{dir} holds a run of this point made with other flags ({detail}); \
         use --force to redo it, or another --out directory"
    )]
    Stale { dir: PathBuf, detail: String },
    /// The cause is said in the message, once: it is not also a source
    /// for an error chain to repeat.
    #[error("{what} {path}: {cause}")]
    Io {
        what: &'static str,
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("interrupted; run the same command again to resume")]
    Interrupted,
}

impl SweepError {
    pub(crate) fn io(what: &'static str, path: impl Into<PathBuf>, cause: std::io::Error) -> Self {
        SweepError::Io {
            what,
            path: path.into(),
            cause,
        }
    }
}
