//! `serverlab merge`: the results of a load's agents ([`crate::harness::Agent`])
//! made into one result, in the schema and text of a single run. Each
//! operation's histograms are added exactly, both views, from the agents'
//! HDR interval logs; never a percentile averaged. The per-second series
//! are added by wall-clock second; errors and verification are combined;
//! counts are added checked. What cannot be merged is refused, a line per
//! file ([`Refused`]): files of other runs, protocols or flags, agents
//! missing, logs that are not their results' — and what makes the set
//! suspect is flagged (an agent started late against the others, with a
//! wrong clock, or generator-bound). The logs are read one at a time and
//! added as they are read, and the per-second series spans the agents'
//! common window, so a merge's memory follows its agents, not their
//! clocks.

mod clocks;
mod files;
mod flags;
pub mod hlog;
mod protocol;
mod refuse;
mod seconds;
mod totals;

pub use files::{read_dirs, AgentFile};

use crate::report::{
    AgentLine, ClientCpu, LoadReport, Merged, OpSummary, Percentiles, Results, ScanReport,
    ScheduleReport, Step, Verification, CLIENT_BOTTLENECK, KEPT_UP,
};
use clocks::Placement;
use std::fmt;
use totals::{Reading, Totals};

/// Why files cannot be merged: a line per problem, each naming its file.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused(pub Vec<String>);

impl Refused {
    pub fn one(line: String) -> Self {
        Refused(vec![line])
    }
}

impl From<String> for Refused {
    fn from(line: String) -> Self {
        Refused::one(line)
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("\n"))
    }
}

impl std::error::Error for Refused {}

/// How to merge.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Merge the agents found when some are missing (flagged), rather
    /// than refuse.
    pub allow_missing: bool,
}

/// Merge `agents` (at least one, as [`read_dirs`] found them) into one
/// result, or refuse.
pub fn merge(mut agents: Vec<AgentFile>, options: Options) -> Result<LoadReport, Refused> {
    agents.sort_by_key(|a| a.index);
    let first = agents
        .first()
        .ok_or("no agent files to merge".to_string())?;
    refuse::check(&agents, options.allow_missing)?;
    let place = clocks::place(&agents);
    let last_step = first
        .report
        .scan
        .as_ref()
        .map(|s| s.steps.len().saturating_sub(1));
    let mut report = first.report.clone();
    let names: Vec<String> = first
        .report
        .results
        .operations
        .iter()
        .map(|o| o.name.clone())
        .collect();
    let reading = Reading {
        names: &names,
        step: last_step,
        steps: first.report.scan.as_ref().map_or(0, |s| s.steps.len()),
    };
    let mut totals = add_logs(&agents, &place, &reading)?;
    let mut results = results(&agents, &names, &mut totals, &place)?;
    let judged: Vec<(usize, &Results)> = agents
        .iter()
        .map(|a| (a.index, &a.report.results))
        .collect();
    crate::certify::merged::judge(&mut results, &judged, &totals.latency, &totals.service);
    report.results = results;
    if let Some(scan) = &first.report.scan {
        report.scan = Some(merged_scan(&agents, scan, &totals)?);
    }
    report.results.protocol = protocol::merge(&agents, &report.results)?;
    let count = first.count;
    report.results.merged = Some(Merged {
        count,
        agents: agents
            .iter()
            .enumerate()
            .map(|(k, a)| line(a, &place, k))
            .collect(),
        flags: flags::flags(&agents, count, &place),
    });
    Ok(report)
}

/// Every agent's log added, each its series placed; refused, a line per
/// file, where a log is not its result's.
fn add_logs(
    agents: &[AgentFile],
    place: &Placement,
    reading: &Reading<'_>,
) -> Result<Totals, Refused> {
    let mut totals = Totals::new(reading.names.len(), reading.steps);
    let mut problems = Vec::new();
    for k in 0..agents.len() {
        if let Err(why) = totals.add_log(agents, k, place, reading) {
            problems.push(why);
        }
    }
    if !problems.is_empty() {
        return Err(Refused(problems));
    }
    for (k, a) in agents.iter().enumerate() {
        totals.seconds.add_series(a, place.shift(k))?;
    }
    Ok(totals)
}

/// The sum of `value` over `agents`, or the line naming the file whose
/// `what` took it past 2^64 - 1.
fn total(
    agents: &[AgentFile],
    what: &str,
    value: impl Fn(&AgentFile) -> u64,
) -> Result<u64, String> {
    let mut sum = 0u64;
    for a in agents {
        let v = value(a);
        sum = sum.checked_add(v).ok_or_else(|| overflow(a, what, v))?;
    }
    Ok(sum)
}

fn overflow(a: &AgentFile, what: &str, v: u64) -> String {
    format!(
        "{}: its {what} ({v}) take the agents' total past 2^64 - 1: not a count `load` wrote",
        a.path.display()
    )
}

fn results(
    agents: &[AgentFile],
    names: &[String],
    totals: &mut Totals,
    place: &Placement,
) -> Result<Results, Refused> {
    let all = || agents.iter().map(|a| &a.report.results);
    let duration_s = agents
        .iter()
        .zip(&place.starts)
        .map(|(a, start)| start - place.t0 + a.report.results.duration_s)
        .fold(0.0, f64::max);
    let requests = total(agents, "requests", |a| a.report.results.requests)?;
    let per_s = |n: u64| {
        if duration_s > 0.0 {
            n as f64 / duration_s
        } else {
            0.0
        }
    };
    let open = all().any(|r| r.requested_rps.is_some());
    let requested_rps = open.then(|| all().filter_map(|r| r.requested_rps).sum::<f64>());
    let schedule = match open {
        true => schedule(agents, requested_rps, per_s(requests))?,
        false => None,
    };
    Ok(Results {
        duration_s,
        requests,
        throughput_rps: per_s(requests),
        // Every agent's configuration is the same.
        warmup_s: agents.first().map_or(0.0, |a| a.report.results.warmup_s),
        served: None,
        requested_rps,
        concurrency: total(agents, "concurrency", |a| a.report.results.concurrency)?,
        operations: operations(names, totals, duration_s),
        per_second: totals.seconds.requests.clone(),
        per_second_latency_us: open.then(|| totals.seconds.latency()),
        schedule,
        threads: std::mem::take(&mut totals.seconds.threads),
        late_replies: total(agents, "late replies", |a| a.report.results.late_replies)?,
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
        failures: total(agents, "failures", |a| a.report.results.failures)?,
        thresholds: Vec::new(),
        verification: verification(agents)?,
        client_cpu: client_cpu(agents),
        agent: None,
        merged: None,
        validity: None,
        client_share: None,
        tls: None,
        protocol: None,
    })
}

fn operations(names: &[String], totals: &Totals, duration_s: f64) -> Vec<OpSummary> {
    names
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let h = &totals.latency[k];
            OpSummary {
                name: name.clone(),
                count: h.len(),
                rate_rps: if duration_s > 0.0 {
                    h.len() as f64 / duration_s
                } else {
                    0.0
                },
                latency_us: Percentiles::with_intervals(h, None),
                service_us: totals.service[k]
                    .as_ref()
                    .map(|h| Percentiles::with_intervals(h, None)),
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
) -> Result<Option<ScheduleReport>, String> {
    let with: Vec<&AgentFile> = agents
        .iter()
        .filter(|a| a.report.results.schedule.is_some())
        .collect();
    let Some(first) = with.first() else {
        return Ok(None);
    };
    let mut s = first.report.results.schedule.clone().expect("filtered");
    let sum = |what: &str, f: fn(&ScheduleReport) -> u64| {
        let mut sum = 0u64;
        for a in &with {
            let v = a.report.results.schedule.as_ref().map_or(0, f);
            sum = sum.checked_add(v).ok_or_else(|| overflow(a, what, v))?;
        }
        Ok::<u64, String>(sum)
    };
    s.sent_requests = sum("requests sent", |o| o.sent_requests)?;
    s.backlog_requests = sum("backlog", |o| o.backlog_requests)?;
    s.warmup_sent_requests = sum("warm-up requests", |o| o.warmup_sent_requests)?;
    s.late_requests = sum("late requests", |o| o.late_requests)?;
    s.client_late_requests = sum("client-late requests", |o| o.client_late_requests)?;
    for o in with
        .iter()
        .skip(1)
        .filter_map(|a| a.report.results.schedule.as_ref())
    {
        s.sent_rps += o.sent_rps;
        // A ramp's asks, second by second: each agent asked its share.
        for (i, &n) in o.asked_per_second.iter().enumerate() {
            match s.asked_per_second.get_mut(i) {
                Some(sum) => *sum += n,
                None => s.asked_per_second.push(n),
            }
        }
        s.max_lag_us = s.max_lag_us.max(o.max_lag_us);
        s.client_max_lag_us = s.client_max_lag_us.max(o.client_max_lag_us);
    }
    let requested = requested.unwrap_or_default();
    s.achieved_share = if requested > 0.0 {
        throughput / requested
    } else {
        0.0
    };
    s.kept_up = s.achieved_share >= KEPT_UP;
    Ok(Some(s))
}

fn verification(agents: &[AgentFile]) -> Result<Verification, String> {
    fn v(a: &AgentFile) -> &Verification {
        &a.report.results.verification
    }
    Ok(Verification {
        enabled: agents.iter().any(|a| v(a).enabled),
        checked: total(agents, "verified replies", |a| v(a).checked)?,
        mismatches: total(agents, "mismatches", |a| v(a).mismatches)?,
        examples: agents
            .iter()
            .flat_map(|a| {
                v(a).examples
                    .iter()
                    .map(move |e| format!("agent {}: {e}", a.index))
            })
            .collect(),
        not_checked: agents.iter().find_map(|a| v(a).not_checked.clone()),
    })
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

/// Agent `k`'s line: its share, CPU, start (as placed: a wrong clock's
/// is flagged, not shown as an offset of years).
fn line(a: &AgentFile, place: &Placement, k: usize) -> AgentLine {
    let r = &a.report.results;
    AgentLine {
        index: a.index,
        file: a.path.display().to_string(),
        concurrency: r.concurrency,
        requests: r.requests,
        rate_rps: r.requested_rps,
        client_cpu_utilization: r.client_cpu.utilization,
        start_lag_ms: r.agent.as_ref().and_then(|g| g.start_lag_ms),
        start_offset_ms: (place.starts[k] - place.t0) * 1e3,
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
fn merged_scan(
    agents: &[AgentFile],
    scan: &ScanReport,
    totals: &Totals,
) -> Result<ScanReport, String> {
    let steps = (0..scan.steps.len())
        .map(|k| {
            let rows: Vec<&Step> = agents.iter().filter_map(|a| step_row(a, k)).collect();
            let count = |what: &str, f: fn(&Step) -> u64| {
                total(agents, &format!("step {k}'s {what}"), |a| {
                    step_row(a, k).map_or(0, f)
                })
            };
            let p = totals.steps[k]
                .as_ref()
                .filter(|h| !h.is_empty())
                .map(Percentiles::of);
            let requested = rows.iter().filter_map(|s| s.requested_rps).sum::<f64>();
            let achieved: f64 = rows.iter().map(|s| s.achieved_rps).sum();
            Ok(Step {
                requested_rps: Some(requested),
                achieved_rps: achieved,
                stat_us: p.as_ref().map(|p| p.p99),
                p50_us: p.as_ref().map(|p| p.p50),
                p99_us: p.as_ref().map(|p| p.p99),
                max_us: p.as_ref().map(|p| p.max),
                late_requests: count("late requests", |s| s.late_requests)?,
                client_late_requests: count("client-late requests", |s| s.client_late_requests)?,
                kept_up: requested > 0.0 && achieved >= KEPT_UP * requested,
                errors: count("errors", |s| s.errors)?,
                pass: None,
            })
        })
        .collect::<Result<_, String>>()?;
    Ok(ScanReport {
        steps,
        ..scan.clone()
    })
}

/// Agent `a`'s row of step `k` of its scan.
fn step_row(a: &AgentFile, k: usize) -> Option<&Step> {
    a.report.scan.as_ref().and_then(|s| s.steps.get(k))
}
