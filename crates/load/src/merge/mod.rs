//! `serverlab merge`: the results of a load's agents ([`crate::harness::Agent`])
//! made into one result, in the schema and text of a single run. Each
//! operation's histograms are added exactly, both views, from the agents'
//! HDR interval logs; never a percentile averaged. The per-second series
//! are added by wall-clock second; errors and verification are combined;
//! and what makes the set suspect is flagged (an agent missing, started
//! late against the others, generator-bound, or configured otherwise).

mod files;
mod flags;
pub mod hlog;
mod protocol;
mod seconds;

pub use files::{read_dirs, AgentFile};

use crate::record::new_histogram;
use crate::report::{
    AgentLine, ClientCpu, LoadReport, Merged, OpSummary, Percentiles, Results, ScanReport,
    ScheduleReport, Step, Verification, CLIENT_BOTTLENECK, KEPT_UP,
};
use hdrhistogram::Histogram;

/// Merge `agents` (at least one, as [`read_dirs`] found them) into one
/// result.
pub fn merge(mut agents: Vec<AgentFile>) -> Result<LoadReport, String> {
    agents.sort_by_key(|a| a.index);
    let first = agents.first().ok_or("no agent files to merge")?;
    let t0 = agents
        .iter()
        .map(|a| a.window_start_unix_s)
        .fold(f64::INFINITY, f64::min);
    let last_step = first
        .report
        .scan
        .as_ref()
        .map(|s| s.steps.len().saturating_sub(1));
    let base = flags::reference(&agents);
    let mut report = agents[base].report.clone();
    let names: Vec<String> = first
        .report
        .results
        .operations
        .iter()
        .map(|o| o.name.clone())
        .collect();
    let hist = histograms(&agents, &names, last_step);
    let results = results(&agents, &names, &hist, t0, last_step);
    report.results = results;
    if let Some(scan) = &first.report.scan {
        report.scan = Some(merged_scan(&agents, scan, &names));
    }
    report.results.protocol = protocol::merge(&agents, &report.results)?;
    report.results.merged = Some(Merged {
        count: agents.iter().map(|a| a.count).max().unwrap_or(0),
        agents: agents.iter().map(|a| line(a, t0)).collect(),
        flags: flags::flags(&agents, base, t0),
    });
    Ok(report)
}

/// Each operation's two histograms over every agent: latency (from the
/// intended send time) and service time.
struct OpHistograms {
    latency: Vec<Histogram<u64>>,
    service: Vec<Option<Histogram<u64>>>,
}

/// Every interval of every agent (of the step `step`, in a scan) added
/// into one histogram per operation and view.
fn histograms(agents: &[AgentFile], names: &[String], step: Option<usize>) -> OpHistograms {
    let mut latency = vec![new_histogram(); names.len()];
    let mut service: Vec<Option<Histogram<u64>>> = vec![None; names.len()];
    for iv in agents.iter().flat_map(|a| &a.intervals) {
        if step.is_some() && iv.step != step {
            continue;
        }
        let (op, is_service) = match iv.tag.strip_suffix(".service") {
            Some(op) => (op, true),
            None => (iv.tag.as_str(), false),
        };
        let Some(k) = names.iter().position(|n| n == op) else {
            continue;
        };
        let into = if is_service {
            service[k].get_or_insert_with(new_histogram)
        } else {
            &mut latency[k]
        };
        into.add(&iv.histogram).expect("histograms of one shape");
    }
    OpHistograms { latency, service }
}

fn results(
    agents: &[AgentFile],
    names: &[String],
    hist: &OpHistograms,
    t0: f64,
    step: Option<usize>,
) -> Results {
    let all = || agents.iter().map(|a| &a.report.results);
    let duration_s = agents
        .iter()
        .map(|a| a.window_start_unix_s - t0 + a.report.results.duration_s)
        .fold(0.0, f64::max);
    let requests = all().map(|r| r.requests).sum();
    let per_s = |n: u64| {
        if duration_s > 0.0 {
            n as f64 / duration_s
        } else {
            0.0
        }
    };
    let open = all().any(|r| r.requested_rps.is_some());
    let requested_rps = open.then(|| all().filter_map(|r| r.requested_rps).sum::<f64>());
    let seconds = seconds::Seconds::of(agents, t0, step);
    Results {
        duration_s,
        requests,
        throughput_rps: per_s(requests),
        requested_rps,
        concurrency: all().map(|r| r.concurrency).sum(),
        operations: operations(names, hist, duration_s),
        per_second: seconds.requests.clone(),
        per_second_latency_us: open.then(|| seconds.latency()),
        schedule: open
            .then(|| schedule(agents, requested_rps, per_s(requests)))
            .flatten(),
        threads: seconds.threads,
        late_replies: all().map(|r| r.late_replies).sum(),
        interrupted: all().any(|r| r.interrupted),
        errors: agents
            .iter()
            .flat_map(|a| {
                a.report
                    .results
                    .errors
                    .iter()
                    .map(move |e| format!("agent {}: {e}", a.index))
            })
            .collect(),
        verification: verification(agents),
        client_cpu: client_cpu(agents),
        agent: None,
        merged: None,
        protocol: None,
    }
}

fn operations(names: &[String], hist: &OpHistograms, duration_s: f64) -> Vec<OpSummary> {
    names
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let h = &hist.latency[k];
            OpSummary {
                name: name.clone(),
                count: h.len(),
                rate_rps: if duration_s > 0.0 {
                    h.len() as f64 / duration_s
                } else {
                    0.0
                },
                latency_us: Percentiles::of(h),
                service_us: hist.service[k].as_ref().map(Percentiles::of),
                histogram_us: h
                    .iter_recorded()
                    .map(|v| (v.value_iterated_to() as f64 / 1000.0, v.count_at_value()))
                    .collect(),
            }
        })
        .collect()
}

/// The agents' schedules as one: counts added, the worst lags.
fn schedule(
    agents: &[AgentFile],
    requested: Option<f64>,
    throughput: f64,
) -> Option<ScheduleReport> {
    let mut all = agents
        .iter()
        .filter_map(|a| a.report.results.schedule.as_ref());
    let mut s = all.next()?.clone();
    for o in all {
        s.sent_requests += o.sent_requests;
        s.sent_rps += o.sent_rps;
        s.backlog_requests += o.backlog_requests;
        s.warmup_sent_requests += o.warmup_sent_requests;
        s.late_requests += o.late_requests;
        s.max_lag_us = s.max_lag_us.max(o.max_lag_us);
        s.client_late_requests += o.client_late_requests;
        s.client_max_lag_us = s.client_max_lag_us.max(o.client_max_lag_us);
    }
    let requested = requested.unwrap_or_default();
    s.achieved_share = if requested > 0.0 {
        throughput / requested
    } else {
        0.0
    };
    s.kept_up = s.achieved_share >= KEPT_UP;
    Some(s)
}

fn verification(agents: &[AgentFile]) -> Verification {
    let mut v = Verification::default();
    for a in agents {
        let o = &a.report.results.verification;
        v.enabled |= o.enabled;
        v.checked += o.checked;
        v.mismatches += o.mismatches;
        v.examples
            .extend(o.examples.iter().map(|e| format!("agent {}: {e}", a.index)));
    }
    v
}

/// The agents' clients as one client: CPU time added, over all their
/// machines' cores, each machine's counted once (agents on one machine
/// share its cores; an agent whose file names no host is a machine of its
/// own).
fn client_cpu(agents: &[AgentFile]) -> ClientCpu {
    let mut c = ClientCpu::measure((0.0, 0.0), 0.0, 0.0, 0);
    let mut working_core_s = 0.0;
    let mut machines: std::collections::BTreeMap<String, usize> = Default::default();
    for a in agents {
        let o = &a.report.results.client_cpu;
        c.user_s += o.user_s;
        c.system_s += o.system_s;
        c.idle_poll_s += o.idle_poll_s;
        working_core_s += o.utilization * o.cores as f64;
        let host = match &a.report.environment.host {
            h if h.is_empty() => format!("agent {}", a.index),
            h => h.clone(),
        };
        let cores = machines.entry(host).or_default();
        *cores = (*cores).max(o.cores);
    }
    c.cores = machines.values().sum();
    c.utilization = if c.cores > 0 {
        working_core_s / c.cores as f64
    } else {
        0.0
    };
    // Each agent's cores were its own: the merged client is the
    // bottleneck where an agent was generator-bound.
    c.cores_busy = None;
    c.bottleneck = agents
        .iter()
        .any(|a| generator_bound(&a.report.results.client_cpu));
    c
}

/// An agent's line: its share, CPU, start.
fn line(a: &AgentFile, t0: f64) -> AgentLine {
    let r = &a.report.results;
    AgentLine {
        index: a.index,
        file: a.path.display().to_string(),
        concurrency: r.concurrency,
        requests: r.requests,
        rate_rps: r.requested_rps,
        client_cpu_utilization: r.client_cpu.utilization,
        start_lag_ms: r.agent.as_ref().and_then(|g| g.start_lag_ms),
        start_offset_ms: (a.window_start_unix_s - t0) * 1e3,
        generator_bound: generator_bound(&r.client_cpu),
    }
}

/// The agent kept its own cores busy: the load it offered was what it
/// could generate, not what was asked.
pub fn generator_bound(c: &ClientCpu) -> bool {
    c.utilization >= CLIENT_BOTTLENECK
}

/// A scan's steps, each merged across agents: rates added, latency from
/// the step's histograms added.
fn merged_scan(agents: &[AgentFile], scan: &ScanReport, names: &[String]) -> ScanReport {
    let steps = (0..scan.steps.len())
        .map(|k| {
            let rows: Vec<&Step> = agents
                .iter()
                .filter_map(|a| a.report.scan.as_ref().and_then(|s| s.steps.get(k)))
                .collect();
            let hist = histograms(agents, names, Some(k));
            let mut all = new_histogram();
            for h in &hist.latency {
                all.add(h).expect("histograms of one shape");
            }
            let p = (!all.is_empty()).then(|| Percentiles::of(&all));
            let requested = rows.iter().filter_map(|s| s.requested_rps).sum::<f64>();
            let achieved: f64 = rows.iter().map(|s| s.achieved_rps).sum();
            Step {
                requested_rps: Some(requested),
                achieved_rps: achieved,
                stat_us: p.as_ref().map(|p| p.p99),
                p50_us: p.as_ref().map(|p| p.p50),
                p99_us: p.as_ref().map(|p| p.p99),
                max_us: p.as_ref().map(|p| p.max),
                late_requests: rows.iter().map(|s| s.late_requests).sum(),
                client_late_requests: rows.iter().map(|s| s.client_late_requests).sum(),
                kept_up: requested > 0.0 && achieved >= KEPT_UP * requested,
                errors: rows.iter().map(|s| s.errors).sum(),
                pass: None,
            }
        })
        .collect();
    ScanReport {
        steps,
        ..scan.clone()
    }
}
