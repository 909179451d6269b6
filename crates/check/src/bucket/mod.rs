//! `check bucket`: the ERSS delay-and-add protocol's cases, model and
//! workload, and finding the number of buckets.

mod cases;
pub mod model;
mod probe;
mod talk;
mod workload;

use crate::case::Case;
use crate::concurrency::{drive, judge, ConcurrencyReport, Plan};
use crate::protocol::Protocol;
use crate::wire::Conn;
use serverlab_proto::bucket::{self, DelayUnit, Reply};
use std::net::SocketAddr;
use std::time::Duration;

/// What `check bucket` assumes about the server.
#[derive(Debug, Clone)]
pub struct Bucket {
    /// `None`: found by probing before the cases run.
    pub buckets: Option<u64>,
    pub delay_unit: DelayUnit,
    pub max_delay: u64,
    pub max_line: usize,
}

impl Bucket {
    /// A check of a server with these limits, its number of buckets found
    /// by probing.
    pub fn new(limits: bucket::Limits) -> Self {
        Bucket {
            buckets: None,
            delay_unit: limits.delay_unit,
            max_delay: limits.max_delay,
            max_line: limits.max_line,
        }
    }
}

impl Default for Bucket {
    fn default() -> Self {
        Bucket::new(bucket::Limits::default())
    }
}

impl Protocol for Bucket {
    const NAME: &'static str = bucket::NAME;
    const DEFAULT_PORT: u16 = bucket::DEFAULT_PORT;

    fn cases() -> Vec<Case<Bucket>> {
        cases::all()
    }

    fn hello(&self, _nonce: &str) -> Vec<u8> {
        // Bucket 0 exists on every server; a delay of 0 is answered at once.
        talk::request(0, 0)
    }

    fn recognise(&self, _hello: &[u8], answer: &[u8]) -> Result<(), Option<String>> {
        let line = answer.strip_suffix(b"\n").unwrap_or(answer);
        Reply::parse(line).map(|_| ()).ok_or(None)
    }

    fn prepare(&mut self, addr: SocketAddr, timeout: Duration) -> Result<(), String> {
        if self.buckets.is_none() {
            self.buckets = Some(probe::count(addr, timeout)?);
        }
        Ok(())
    }

    fn settings(&self) -> Vec<(&'static str, String)> {
        vec![
            (
                "buckets",
                self.buckets.map_or("?".into(), |n| n.to_string()),
            ),
            ("delay_unit", self.delay_unit.to_string()),
            ("max_delay", self.max_delay.to_string()),
            ("max_line", self.max_line.to_string()),
        ]
    }

    fn concurrency(&self, addr: SocketAddr, plan: &Plan, _nonce: &str) -> ConcurrencyReport {
        let n = self.buckets.expect("known once prepared");
        let mut rng = fastrand::Rng::with_seed(plan.seed);
        let mut chosen: Vec<u64> = Vec::new();
        while chosen.len() < workload::SHARED.min(n as usize) {
            let b = rng.u64(..n);
            if !chosen.contains(&b) {
                chosen.push(b);
            }
        }
        let load = workload::Load::new(
            chosen,
            self.delay_unit,
            self.max_delay,
            plan.assignment,
            addr,
        );
        let over = format!("{} of {n} buckets", load.buckets.len());
        let start = match initial_values(addr, plan.timeout, &load.buckets) {
            Ok(v) => v,
            Err(e) => return ConcurrencyReport::failed(plan, over, e),
        };
        let drive = drive(&load, addr, plan);
        let parts = load.partition(&start, &drive.history);
        judge(&drive, plan, over, parts)
    }
}

/// Each bucket's value before the phase: the model's starting states.
fn initial_values(
    addr: SocketAddr,
    timeout: Duration,
    buckets: &[u64],
) -> Result<Vec<u64>, String> {
    buckets
        .iter()
        .map(|b| {
            let mut c = Conn::open(addr, timeout).map_err(|e| format!("cannot connect: {e}"))?;
            c.send(format!("0,{b}\n").as_bytes());
            let got = c.read(Duration::ZERO, talk::line_end);
            match got
                .reply()
                .and_then(|r| Reply::parse(r.strip_suffix(b"\n")?))
            {
                Some(Reply::Value(v)) => Ok(v),
                _ => Err(format!("0,{b} before the phase answered {}", got.show())),
            }
        })
        .collect()
}
