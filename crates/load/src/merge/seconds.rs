//! The merged per-second series: each agent's seconds placed by the wall
//! clock ([`super::clocks`]) — an agent's second k is the merged second
//! nearest to its start, counted from the first agent's window — and
//! added. A second's latency histogram is made when an interval lands in
//! it, and grows to the largest value it holds, so the series costs what
//! the agents' seconds hold, not a full histogram for every second.

use super::AgentFile;
use crate::report::{Percentiles, SecondLatency, ThreadSummary};
use hdrhistogram::Histogram;

#[derive(Default)]
pub struct Seconds {
    pub requests: Vec<u64>,
    /// Per merged second, every operation's latency (intended-time view).
    latency: Vec<Option<Histogram<u64>>>,
    /// Every agent's clients, their seconds placed as the agent's.
    pub threads: Vec<ThreadSummary>,
}

/// `from` added into `into` from slot `at` on; None if a slot overflows.
fn add_at(into: &mut Vec<u64>, at: usize, from: &[u64]) -> Option<()> {
    if into.len() < at + from.len() {
        into.resize(at + from.len(), 0);
    }
    for (k, n) in from.iter().enumerate() {
        into[at + k] = into[at + k].checked_add(*n)?;
    }
    Some(())
}

impl Seconds {
    /// Agent `a`'s series (requests, and each client's) from merged
    /// second `at` on.
    pub fn add_series(&mut self, a: &AgentFile, at: usize) -> Result<(), String> {
        let overflow = || {
            format!(
                "its requests per second overflow the agents' total past 2^64 - 1: not counts \
                 `load` wrote ({})",
                a.path.display()
            )
        };
        add_at(&mut self.requests, at, &a.report.results.per_second).ok_or_else(overflow)?;
        for t in &a.report.results.threads {
            let mut per_second = Vec::new();
            add_at(&mut per_second, at, &t.per_second).ok_or_else(overflow)?;
            self.threads.push(ThreadSummary {
                role: format!("agent {} {}", a.index, t.role),
                per_second,
                ..t.clone()
            });
        }
        Ok(())
    }

    /// An interval's latency histogram into merged second `sec`.
    pub fn add_latency(&mut self, sec: usize, h: &Histogram<u64>) -> Result<(), String> {
        if h.is_empty() {
            return Ok(());
        }
        if self.latency.len() <= sec {
            self.latency.resize(sec + 1, None);
        }
        let into = match &mut self.latency[sec] {
            Some(into) => into,
            slot => slot.insert(Histogram::new(3).expect("valid histogram precision")),
        };
        into.add(h)
            .map_err(|e| format!("a histogram that does not add: {e:?}"))
    }

    /// Each merged second's replies and their latency, µs.
    pub fn latency(&self) -> Vec<SecondLatency> {
        let n = self.requests.len().max(self.latency.len());
        (0..n)
            .map(|k| {
                let requests = self.requests.get(k).copied().unwrap_or(0);
                match self.latency.get(k).and_then(Option::as_ref) {
                    Some(h) => {
                        let p = Percentiles::of(h);
                        SecondLatency {
                            requests,
                            p50: Some(p.p50),
                            p99: Some(p.p99),
                            max: Some(p.max),
                        }
                    }
                    None => SecondLatency {
                        requests,
                        ..SecondLatency::default()
                    },
                }
            })
            .collect()
    }
}
