//! `--ledger FILE` of `load kv` and `load resp`: with `--verify`, every
//! write sent and every one acknowledged, for `check kv|resp ADDR --ledger
//! FILE` against the server after a crash (docs/durability.md).

use anyhow::Context;
use serverlab_util::ledger::Ledger;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct LedgerArgs {
    /// With --verify: record every write sent and every one acknowledged in FILE (connections
    /// then write disjoint keys), for `check … --ledger FILE` after a crash
    #[arg(
        long,
        value_name = "FILE",
        requires = "verify",
        conflicts_with = "preload"
    )]
    pub ledger: Option<PathBuf>,
}

impl LedgerArgs {
    /// The ledger, created (emptied) now; an error names the file.
    pub fn open(&self) -> anyhow::Result<Option<Arc<Ledger>>> {
        let Some(path) = &self.ledger else {
            return Ok(None);
        };
        let ledger = Ledger::create(path)
            .with_context(|| format!("--ledger {}: cannot create it", path.display()))?;
        Ok(Some(Arc::new(ledger)))
    }
}

/// Writes out what the ledger buffered; an error names the file.
pub fn close(ledger: Option<&Arc<Ledger>>) -> anyhow::Result<()> {
    if let Some(l) = ledger {
        l.flush()
            .with_context(|| format!("--ledger {}: cannot write it", l.path().display()))?;
    }
    Ok(())
}
