//! `check board`: the CAPS message board's cases, model and workload.

mod cases;
pub mod model;
mod talk;
mod workload;

use crate::case::Case;
use crate::concurrency::{drive, judge, ConcurrencyReport, Plan};
use crate::protocol::Protocol;
use serverlab_proto::board;
use std::net::SocketAddr;

/// What `check board` assumes about the server.
#[derive(Debug, Clone)]
pub struct Board {
    /// Send EXIT, as the last case (it stops the server).
    pub include_exit: bool,
    /// The server's `--max-request`.
    pub max_request: usize,
}

impl Board {
    /// A check of a server with these limits.
    pub fn new(limits: board::Limits) -> Self {
        Board {
            include_exit: false,
            max_request: limits.max_request,
        }
    }
}

impl Default for Board {
    fn default() -> Self {
        Board::new(board::Limits::default())
    }
}

impl Protocol for Board {
    const NAME: &'static str = board::NAME;
    const DEFAULT_PORT: u16 = board::DEFAULT_PORT;

    fn cases() -> Vec<Case<Board>> {
        cases::all()
    }

    fn hello(&self, nonce: &str) -> Vec<u8> {
        format!("COUNT@{nonce}hello\0").into_bytes()
    }

    fn recognise(&self, hello: &[u8], answer: &[u8]) -> Result<(), Option<String>> {
        let strip = |b: &'_ [u8]| -> Vec<u8> {
            let b = b
                .strip_suffix(b"\0")
                .or_else(|| b.strip_suffix(b"\n"))
                .unwrap_or(b);
            b.to_vec()
        };
        match board::count_answer(&strip(hello), &strip(answer)) {
            board::CountAnswer::Count(_) => Ok(()),
            board::CountAnswer::Echoed => Err(Some(
                "the request sent back, as `serve echo`, the board's transport baseline, does"
                    .into(),
            )),
            board::CountAnswer::Other => Err(None),
        }
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
