//! `check resp`: Redis's protocol (section 5 of the wire contract,
//! docs/protocols/resp.md) — its cases,
//! its per-key model (a register, a counter or a list, with WRONGTYPE
//! when kinds meet) and its workload.
//!
//! Cases marked as the assignment's are Redis's own behaviour, so
//! `check resp --assignment` checks any Redis-compatible server,
//! redis-server included; serverlab's limits (`--max-bulk`, …) are its
//! own rules.

mod cases;
pub mod model;
pub(crate) mod talk;
mod workload;

use crate::case::Case;
use crate::concurrency::{drive, judge, ConcurrencyReport, Plan};
use crate::protocol::Protocol;
use serverlab_proto::resp;
use std::net::SocketAddr;

/// What `check resp` assumes about the server.
#[derive(Debug, Clone)]
pub struct Resp {
    /// The server's `--max-bulk`.
    pub max_bulk: usize,
    /// The server's `--max-args`.
    pub max_args: usize,
    /// The server's `--max-inline`.
    pub max_inline: usize,
}

impl Resp {
    /// A check of a server with these limits (no case needs `max_query`).
    pub fn new(limits: resp::Limits) -> Self {
        Resp {
            max_bulk: limits.max_bulk,
            max_args: limits.max_args,
            max_inline: limits.max_inline,
        }
    }
}

impl Default for Resp {
    fn default() -> Self {
        Resp::new(resp::Limits::default())
    }
}

impl Protocol for Resp {
    const NAME: &'static str = resp::NAME;
    const DEFAULT_PORT: u16 = resp::DEFAULT_PORT;
    const LEDGER_GET: Option<crate::ledger::LedgerGet> = Some(crate::ledger::resp_get);

    fn cases() -> Vec<Case<Resp>> {
        cases::all()
    }

    fn hello(&self, _nonce: &str) -> Vec<u8> {
        b"*1\r\n$4\r\nPING\r\n".to_vec()
    }

    fn recognise(&self, _hello: &[u8], answer: &[u8]) -> Result<(), Option<String>> {
        let typed = matches!(answer.first(), Some(b'+' | b'-' | b':' | b'$' | b'*'));
        if typed && answer.ends_with(b"\r\n") {
            Ok(())
        } else {
            Err(None)
        }
    }

    fn settings(&self) -> Vec<(&'static str, String)> {
        vec![
            ("max_bulk", self.max_bulk.to_string()),
            ("max_args", self.max_args.to_string()),
            ("max_inline", self.max_inline.to_string()),
        ]
    }

    fn concurrency(&self, addr: SocketAddr, plan: &Plan, nonce: &str) -> ConcurrencyReport {
        let load = workload::Load::new(nonce);
        let drive = drive(&load, addr, plan);
        let parts = load.partition(&drive.history);
        judge(&drive, plan, format!("{} keys", workload::KEYS), parts)
    }
}
