//! `check kv|resp ADDR --ledger FILE [--allow-loss DUR]`: a restarted
//! server against the ledger a load wrote (`serverlab_check::ledger`),
//! instead of the conformance cases.

use crate::args;
use anyhow::{bail, Context};
use serverlab_check::ledger;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args)]
#[command(next_help_heading = "After a crash (docs/durability.md)")]
pub struct LedgerArgs {
    /// Check the server's data against this ledger (`load --verify
    /// --ledger FILE`) instead of running the cases: every acknowledged
    /// write must be there
    #[arg(long, value_name = "FILE")]
    ledger: Option<PathBuf>,
    /// With --ledger: acknowledged writes may be missing if acknowledged
    /// this long before the ledger ends (2s for --durability everysec)
    #[arg(long, value_name = "DUR", value_parser = args::duration, requires = "ledger")]
    allow_loss: Option<Duration>,
}

/// Which protocol the restarted server is asked in.
pub use ledger::Source as Fetch;

impl LedgerArgs {
    /// Runs the ledger check if `--ledger` was given.
    pub fn run(&self, addr: SocketAddr, fetch: Fetch) -> Option<anyhow::Result<ExitCode>> {
        let path = self.ledger.as_ref()?;
        Some(self.check(path, addr, fetch))
    }

    fn check(&self, path: &Path, addr: SocketAddr, fetch: Fetch) -> anyhow::Result<ExitCode> {
        let read = match ledger::read(path) {
            Ok(r) => r,
            Err(e) => bail!("{e}"),
        };
        let mut server = ledger::Server::open(addr, fetch, Duration::from_secs(10))
            .with_context(|| format!("cannot connect to {addr}"))?;
        let verdict = ledger::check(&read, self.allow_loss.unwrap_or_default(), |key| {
            server.get(key)
        })
        .with_context(|| format!("reading the server at {addr}"))?;
        println!("ledger {}: {verdict}", path.display());
        Ok(if verdict.passed() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        })
    }
}
