//! Per point, every measurement summarised across its successful
//! repetitions, its throughput as a share of the baseline run in the same
//! block, its outlier runs, and the runs made on a busy machine.

use crate::data::{PointRuns, Run};
use crate::metrics::{Pick, RunMetrics, PERCENTILES};
use crate::stats::{self, Summary};
use serverlab_sweep::MachineState;
use std::path::PathBuf;

pub struct PointStats<'a> {
    pub runs: &'a PointRuns,
    pub throughput: Option<Summary>,
    /// Throughput ÷ the baseline's throughput in the same block (1 = as fast).
    pub share: Option<Summary>,
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
    /// Runs whose throughput lies too many robust sds from the median
    /// ([`stats::outliers`]).
    pub outliers: Vec<Outlier>,
    /// Outlier runs left out of every number (`--drop-outliers`).
    pub dropped: Vec<u32>,
    /// Runs made while other processes (or the hypervisor) took CPU.
    pub busy: Vec<(u32, MachineState)>,
}

/// A run far from its point's other runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Outlier {
    pub repetition: u32,
    /// Its throughput, the point's median, and the distance in robust sds
    /// (on the log scale; negative below the median).
    pub value: f64,
    pub median: f64,
    pub z: f64,
    /// Its directory, relative to the sweep's.
    pub dir: PathBuf,
}

impl<'a> PointStats<'a> {
    /// Every run counted, no baseline.
    pub fn of(runs: &'a PointRuns) -> PointStats<'a> {
        PointStats::with(runs, None, false)
    }

    /// With the baseline's runs to divide by, and outliers left out when
    /// `drop_outliers`.
    pub fn with(
        runs: &'a PointRuns,
        baseline: Option<&PointRuns>,
        drop_outliers: bool,
    ) -> PointStats<'a> {
        let outliers = outliers(&runs.runs);
        let dropped: Vec<u32> = if drop_outliers {
            outliers.iter().map(|o| o.repetition).collect()
        } else {
            vec![]
        };
        let kept: Vec<&Run> = runs
            .runs
            .iter()
            .filter(|r| !dropped.contains(&r.repetition))
            .collect();
        let m: Vec<&RunMetrics> = kept.iter().map(|r| &r.metrics).collect();
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
        PointStats {
            runs,
            throughput: over(&|r| Some(r.throughput_rps)),
            share: baseline.and_then(|b| share(&kept, b, drop_outliers)),
            requests: over(&|r| Some(r.requests)),
            clients: over(&|r| r.clients).map(|s| s.mean),
            threads: over(&|r| r.threads).map(|s| s.mean),
            per_thread_rps: over(&|r| r.per_thread_rps),
            requests_per_thread: over(&|r| r.requests_per_thread),
            latency,
            ops: named(&m, &|r| &r.ops),
            service: named(&m, &|r| &r.service_us),
            bottlenecked: m.iter().filter(|r| r.client_bottleneck).count(),
            empty: kept
                .iter()
                .filter(|r| r.metrics.requests == 0.0)
                .map(|r| r.repetition)
                .collect(),
            outliers,
            dropped,
            busy: kept
                .iter()
                .filter_map(|r| Some((r.repetition, r.machine.clone().filter(|s| s.busy())?)))
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

/// Each named value (operations, service-time statistics) summarised.
fn named(
    m: &[&RunMetrics],
    list: &dyn Fn(&RunMetrics) -> &Vec<(String, f64)>,
) -> Vec<(String, Summary)> {
    let mut names: Vec<String> = Vec::new();
    for (n, _) in m.iter().flat_map(|r| list(r)) {
        if !names.contains(n) {
            names.push(n.clone());
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let v: Vec<f64> = m
                .iter()
                .filter_map(|r| list(r).iter().find(|(n, _)| *n == name).map(|x| x.1))
                .collect();
            Some((name, Summary::of(&v)?))
        })
        .collect()
}

/// Each run's throughput over the baseline's in the same block (none for
/// a block whose baseline run is an outlier left out).
fn share(kept: &[&Run], baseline: &PointRuns, drop_outliers: bool) -> Option<Summary> {
    let dropped: Vec<u32> = match drop_outliers {
        true => outliers(&baseline.runs)
            .iter()
            .map(|o| o.repetition)
            .collect(),
        false => vec![],
    };
    let ratios: Vec<f64> = kept
        .iter()
        .filter_map(|r| {
            let b = baseline
                .runs
                .iter()
                .find(|b| b.repetition == r.repetition && !dropped.contains(&b.repetition))?;
            let base = b.metrics.throughput_rps;
            (base > 0.0).then(|| r.metrics.throughput_rps / base)
        })
        .collect();
    Summary::of(&ratios)
}

/// Runs whose throughput lies too far from the point's median.
fn outliers(runs: &[Run]) -> Vec<Outlier> {
    let values: Vec<f64> = runs.iter().map(|r| r.metrics.throughput_rps).collect();
    let Some(median) = Summary::of(&values).map(|s| s.median) else {
        return vec![];
    };
    stats::outliers(&values)
        .into_iter()
        .map(|(i, z)| Outlier {
            repetition: runs[i].repetition,
            value: values[i],
            median,
            z,
            dir: runs[i].dir.clone(),
        })
        .collect()
}
