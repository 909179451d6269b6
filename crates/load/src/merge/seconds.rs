//! The merged per-second series: each agent's seconds placed by the wall
//! clock — an agent's second k is the merged second nearest to its start,
//! counted from the first agent's window — and added.

use super::AgentFile;
use crate::record::new_histogram;
use crate::report::{Percentiles, SecondLatency, ThreadSummary};
use hdrhistogram::Histogram;

pub struct Seconds {
    pub requests: Vec<u64>,
    /// Per merged second, every operation's latency (intended-time view).
    latency: Vec<Histogram<u64>>,
    /// Every agent's clients, their seconds placed as the agent's.
    pub threads: Vec<ThreadSummary>,
}

/// The merged second an agent's window starts in.
fn shift(a: &AgentFile, t0: f64) -> usize {
    (a.window_start_unix_s - t0).round().max(0.0) as usize
}

fn add_at(into: &mut Vec<u64>, at: usize, from: &[u64]) {
    if into.len() < at + from.len() {
        into.resize(at + from.len(), 0);
    }
    for (k, n) in from.iter().enumerate() {
        into[at + k] += n;
    }
}

impl Seconds {
    pub fn of(agents: &[AgentFile], t0: f64, step: Option<usize>) -> Seconds {
        let mut requests = Vec::new();
        let mut threads = Vec::new();
        let mut latency: Vec<Histogram<u64>> = Vec::new();
        for a in agents {
            let at = shift(a, t0);
            add_at(&mut requests, at, &a.report.results.per_second);
            for t in &a.report.results.threads {
                let mut per_second = Vec::new();
                add_at(&mut per_second, at, &t.per_second);
                threads.push(ThreadSummary {
                    role: format!("agent {} {}", a.index, t.role),
                    per_second,
                    ..t.clone()
                });
            }
            let mine = a
                .intervals
                .iter()
                .filter(|iv| step.is_none() || iv.step == step);
            for iv in mine.filter(|iv| !iv.tag.ends_with(".service")) {
                let sec = (iv.start_unix_s - t0).round().max(0.0) as usize;
                if latency.len() <= sec {
                    latency.resize(sec + 1, new_histogram());
                }
                latency[sec]
                    .add(&iv.histogram)
                    .expect("histograms of one shape");
            }
        }
        Seconds {
            requests,
            latency,
            threads,
        }
    }

    /// Each merged second's replies and their latency, µs.
    pub fn latency(&self) -> Vec<SecondLatency> {
        let n = self.requests.len().max(self.latency.len());
        (0..n)
            .map(|k| {
                let requests = self.requests.get(k).copied().unwrap_or(0);
                match self.latency.get(k).filter(|h| !h.is_empty()) {
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
