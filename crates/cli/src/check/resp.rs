//! `serverlab check resp`'s own flags.

use super::ledger::{Fetch, LedgerArgs};
use super::Checker;
use crate::limits;
use serverlab_check::Resp;

#[derive(clap::Args)]
pub struct Flags {
    #[command(flatten)]
    limits: limits::Resp,
    #[command(flatten)]
    ledger: LedgerArgs,
}

impl Checker for Flags {
    const ABOUT: &'static str = "Redis's protocol (RESP2): every rule, then concurrent \
        SET/GET/DEL, INCRBY and RPUSH/LINDEX/LLEN, checked per key (any Redis-compatible \
        server with --assignment)";
    type Check = Resp;

    fn check(self) -> Resp {
        Resp::new(self.limits.get())
    }

    fn ledger(&self) -> Option<(&LedgerArgs, Fetch)> {
        Some((&self.ledger, Fetch::Resp))
    }
}
