//! `check board`: the CAPS message board's cases, model and workload.

mod cases;
pub mod model;
mod talk;
mod workload;

use crate::case::Case;
use crate::concurrency::{drive, judge, ConcurrencyReport, Plan};
use crate::protocol::Protocol;
use std::net::SocketAddr;

/// What `check board` assumes about the server.
#[derive(Debug, Clone)]
pub struct Board {
    /// Send EXIT, as the last case (it stops the server).
    pub include_exit: bool,
    /// The server's `--max-request`.
    pub max_request: usize,
}

impl Default for Board {
    fn default() -> Self {
        Board {
            include_exit: false,
            max_request: 65535,
        }
    }
}

impl Protocol for Board {
    const NAME: &'static str = "board";
    const DEFAULT_PORT: u16 = 12345;

    fn cases() -> Vec<Case<Board>> {
        cases::all()
    }

    fn opted_in(&self, flag: &str) -> bool {
        flag == "--include-exit" && self.include_exit
    }

    fn settings(&self) -> Vec<(&'static str, String)> {
        vec![("max_request", self.max_request.to_string())]
    }

    fn concurrency(&self, addr: SocketAddr, plan: &Plan, nonce: &str) -> ConcurrencyReport {
        let load = workload::Load::new(nonce);
        let drive = drive(&load, addr, plan);
        let parts = load.partition(&drive.history);
        judge(&drive, plan, format!("{} topics", workload::TOPICS), parts)
    }
}
