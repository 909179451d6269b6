//! What each protocol supplies to the checker: its cases, its settings,
//! and its concurrency phase (a workload, a model, a partitioning).

use crate::case::Case;
use crate::concurrency::{ConcurrencyReport, Plan};
use std::net::SocketAddr;
use std::time::Duration;

/// One protocol's checker. A new protocol is one module that implements
/// this (see docs/checking.md).
pub trait Protocol: Sync + Sized {
    /// As `serverlab check` and `serverlab serve` spell it.
    const NAME: &'static str;
    const DEFAULT_PORT: u16;

    /// Every conformance case, in the order they run.
    fn cases() -> Vec<Case<Self>>;

    /// Whether the flag a case's `opt_in` names was given.
    fn opted_in(&self, flag: &str) -> bool {
        let _ = flag;
        false
    }

    /// A request every server of the protocol answers at once, sent before
    /// anything else to tell whether the server speaks the protocol at all
    /// (`nonce` makes any name in it unique to the run).
    fn hello(&self, nonce: &str) -> Vec<u8>;

    /// Whether `answer`, the first line (through `\0` or `\n`) of what
    /// came back to `hello`, is one a server of the protocol sends; if
    /// not, what it is instead where that is known.
    fn recognise(&self, hello: &[u8], answer: &[u8]) -> Result<(), Option<String>>;

    /// Learn what the user did not say (bucket: how many buckets), before
    /// any case runs. An error means the server cannot be checked.
    fn prepare(&mut self, addr: SocketAddr, timeout: Duration) -> Result<(), String> {
        let _ = (addr, timeout);
        Ok(())
    }

    /// The settings the run assumes, as `name value` pairs for the report.
    fn settings(&self) -> Vec<(&'static str, String)>;

    /// How a restarted server is asked for one key's value, to check it
    /// against a load's ledger (`check … --ledger`); None where the
    /// protocol's servers hold no keys a load's writes set.
    const LEDGER_GET: Option<crate::ledger::LedgerGet> = None;

    /// Drive the server with `plan.clients` clients and check the history.
    /// `nonce` prefixes every topic or key, so runs never collide.
    fn concurrency(&self, addr: SocketAddr, plan: &Plan, nonce: &str) -> ConcurrencyReport;
}
