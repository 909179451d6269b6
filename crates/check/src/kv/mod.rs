//! `check kv`: the HTTP/1.1 key-value store's cases, model and workload.

mod cases;
pub(crate) mod http;
pub mod model;
mod talk;
mod workload;

use crate::case::Case;
use crate::concurrency::{drive, judge, ConcurrencyReport, Plan};
use crate::protocol::Protocol;
use serverlab_proto::kv;
use std::net::SocketAddr;
use std::time::Duration;

/// What `check kv` assumes about the server.
#[derive(Debug, Clone)]
pub struct Kv {
    pub max_value: u64,
    pub max_uri: usize,
    pub max_headers: usize,
    pub header_timeout: Duration,
}

impl Kv {
    /// A check of a server with these limits and `--header-timeout`.
    pub fn new(limits: kv::Limits, header_timeout: Duration) -> Self {
        Kv {
            max_value: limits.max_value as u64,
            max_uri: limits.max_uri,
            max_headers: limits.max_headers,
            header_timeout,
        }
    }
}

impl Default for Kv {
    fn default() -> Self {
        Kv::new(kv::Limits::default(), kv::HEADER_TIMEOUT)
    }
}

impl Protocol for Kv {
    const NAME: &'static str = kv::NAME;
    const DEFAULT_PORT: u16 = kv::DEFAULT_PORT;
    const LEDGER_GET: Option<crate::ledger::LedgerGet> = Some(crate::ledger::kv_get);

    fn cases() -> Vec<Case<Kv>> {
        cases::all()
    }

    fn hello(&self, nonce: &str) -> Vec<u8> {
        format!("GET /{nonce}hello HTTP/1.1\r\nHost: serverlab-check\r\n\r\n").into_bytes()
    }

    fn recognise(&self, _hello: &[u8], answer: &[u8]) -> Result<(), Option<String>> {
        if answer.starts_with(b"HTTP/") {
            Ok(())
        } else {
            Err(None)
        }
    }

    fn settings(&self) -> Vec<(&'static str, String)> {
        vec![
            ("max_value", self.max_value.to_string()),
            ("max_uri", self.max_uri.to_string()),
            ("max_headers", self.max_headers.to_string()),
            ("header_timeout", format!("{:?}", self.header_timeout)),
        ]
    }

    fn concurrency(&self, addr: SocketAddr, plan: &Plan, nonce: &str) -> ConcurrencyReport {
        let load = workload::Load::new(nonce, addr);
        let drive = drive(&load, addr, plan);
        let parts = load.partition(&drive.history);
        judge(&drive, plan, format!("{} keys", workload::KEYS), parts)
    }
}
