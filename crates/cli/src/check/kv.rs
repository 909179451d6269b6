//! `serverlab check kv`'s own flags.

use super::ledger::{Fetch, LedgerArgs};
use super::Checker;
use crate::limits;
use serverlab_check::Kv;

#[derive(clap::Args)]
pub struct Flags {
    #[command(flatten)]
    limits: limits::Kv,
    #[command(flatten)]
    ledger: LedgerArgs,
}

impl Checker for Flags {
    const ABOUT: &'static str = "The HTTP/1.1 key-value store: every rule, then concurrent \
        GET/HEAD/PUT/POST/DELETE, checked per key";
    type Check = Kv;

    fn check(self) -> Kv {
        Kv::new(self.limits.get(), self.limits.header_timeout())
    }

    fn ledger(&self) -> Option<(&LedgerArgs, Fetch)> {
        Some((&self.ledger, Fetch::Kv))
    }
}
