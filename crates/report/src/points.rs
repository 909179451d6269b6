//! Per point, every measurement summarised across its successful
//! repetitions.

use crate::data::PointRuns;
use crate::metrics::{Pick, RunMetrics, PERCENTILES};
use crate::stats::Summary;

pub struct PointStats<'a> {
    pub runs: &'a PointRuns,
    pub throughput: Option<Summary>,
    pub requests: Option<Summary>,
    /// The client's concurrency (the same in every repetition).
    pub clients: Option<f64>,
    /// The client threads per-thread numbers divide by.
    pub threads: Option<f64>,
    pub per_thread_rps: Option<Summary>,
    pub requests_per_thread: Option<Summary>,
    /// (percentile name, summary in µs), as in [`PERCENTILES`].
    pub latency: Vec<(&'static str, Summary)>,
    pub ops: Vec<(String, Summary)>,
    /// Server service time (statistic name, summary in µs).
    pub service: Vec<(String, Summary)>,
    /// Repetitions where the client may have been the bottleneck.
    pub bottlenecked: usize,
    /// Repetitions in which no request completed inside the measured window.
    pub empty: Vec<u32>,
}

impl<'a> PointStats<'a> {
    pub fn of(runs: &'a PointRuns) -> PointStats<'a> {
        let m: Vec<&RunMetrics> = runs.runs.iter().map(|r| &r.metrics).collect();
        // Over the runs that have the value: a run where nothing completed
        // has no latency, and is not averaged in as zero.
        let over = |f: &dyn Fn(&RunMetrics) -> Option<f64>| -> Option<Summary> {
            let v: Vec<f64> = m.iter().filter_map(|r| f(r)).collect();
            Summary::of(&v)
        };
        let latency = PERCENTILES
            .iter()
            .filter_map(|(name, get)| {
                let get: Pick = *get;
                Some((*name, over(&|r| r.latency_us.as_ref().map(get))?))
            })
            .collect();
        let named = |list: &dyn Fn(&RunMetrics) -> &Vec<(String, f64)>| -> Vec<(String, Summary)> {
            let mut names: Vec<String> = Vec::new();
            for (n, _) in m.iter().flat_map(|r| list(r)) {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
            names
                .into_iter()
                .filter_map(|name| {
                    let s = over(&|r| list(r).iter().find(|(n, _)| *n == name).map(|x| x.1))?;
                    Some((name, s))
                })
                .collect()
        };
        PointStats {
            runs,
            throughput: over(&|r| Some(r.throughput_rps)),
            requests: over(&|r| Some(r.requests)),
            clients: over(&|r| r.clients).map(|s| s.mean),
            threads: over(&|r| r.threads).map(|s| s.mean),
            per_thread_rps: over(&|r| r.per_thread_rps),
            requests_per_thread: over(&|r| r.requests_per_thread),
            latency,
            ops: named(&|r| &r.ops),
            service: named(&|r| &r.service_us),
            bottlenecked: m.iter().filter(|r| r.client_bottleneck).count(),
            empty: runs
                .runs
                .iter()
                .filter(|r| r.metrics.requests == 0.0)
                .map(|r| r.repetition)
                .collect(),
        }
    }

    pub fn latency(&self, name: &str) -> Option<&Summary> {
        self.latency
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| s)
    }

    pub fn service(&self, name: &str) -> Option<&Summary> {
        self.service.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }
}
