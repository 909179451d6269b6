//! `check resp`: Redis's protocol (PROTOCOLS.md section 5) — its cases,
//! its per-key model (a register, a counter or a list, with WRONGTYPE
//! when kinds meet) and its workload.
//!
//! Cases marked as the assignment's are Redis's own behaviour, so
//! `check resp --assignment` checks any Redis-compatible server,
//! redis-server included; serverlab's limits (`--max-bulk`, …) are its
//! own rules.

mod cases;
pub mod model;
mod talk;
mod workload;

use crate::case::Case;
use crate::concurrency::{drive, judge, ConcurrencyReport, Plan};
use crate::protocol::Protocol;
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

impl Default for Resp {
    fn default() -> Self {
        Resp {
            max_bulk: 1 << 20,
            max_args: 1 << 20,
            max_inline: 64 << 10,
        }
    }
}

impl Protocol for Resp {
    const NAME: &'static str = "resp";
    const DEFAULT_PORT: u16 = 6379;

    fn cases() -> Vec<Case<Resp>> {
        cases::all()
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
