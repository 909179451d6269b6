//! The verdict on agents merged (`serverlab merge`): the checks the
//! merged figures can decide are decided again on them — the schedule
//! (the agents' replies against the rate they were asked together) and
//! the sample size (every operation's p99 interval, read off the merged
//! histograms) — and the checks that need what each agent kept to
//! itself (its thinned series, its gaps between sends, its client's
//! share) are carried from the agents' own verdicts: failed where an
//! agent's failed, naming it; passed where every agent that decided
//! passed. Where an agent's latencies correlated, the merged intervals
//! are widened as its were (to the smallest share of effective samples
//! among the agents).

use super::verdict::{self, Check, Validity};
use crate::report::{Ci95, Results};
use hdrhistogram::Histogram;

/// The checks carried from the agents' verdicts, in the order a run
/// gives them.
const CARRIED: [&str; 3] = ["arrivals", "stationarity", "independence"];

/// Judge `r`, merged from `agents` (each agent's index and result),
/// widening its intervals (from the merged `latency` and `service`
/// histograms, per operation) where an agent's were; sets `r.validity`.
pub fn judge(
    r: &mut Results,
    agents: &[(usize, &Results)],
    latency: &[Histogram<u64>],
    service: &[Option<Histogram<u64>>],
) {
    let share = agents
        .iter()
        .flat_map(|(_, a)| &a.operations)
        .filter_map(|o| {
            let e = o.latency_us.ci95.as_ref()?.effective_samples?;
            (o.count > 0).then(|| e / o.count as f64)
        })
        .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.min(s))));
    if let Some(share) = share {
        widen(r, latency, service, share);
    }
    let mut checks = vec![schedule(r, agents)];
    checks.extend(CARRIED.iter().map(|name| carried(name, agents)));
    checks.push(verdict::sample_size(r));
    checks.push(carried("client_bias", agents));
    r.validity = Some(Validity {
        certified: checks.iter().all(|c| c.passed != Some(false)),
        checks,
    });
}

/// Each operation's intervals for `share` of its merged samples.
fn widen(
    r: &mut Results,
    latency: &[Histogram<u64>],
    service: &[Option<Histogram<u64>>],
    share: f64,
) {
    for (k, op) in r.operations.iter_mut().enumerate() {
        let Some(h) = latency.get(k).filter(|h| !h.is_empty()) else {
            continue;
        };
        let effective = Some(h.len() as f64 * share);
        op.latency_us.ci95 = Some(Ci95::of(h, effective));
        if let (Some(p), Some(Some(s))) = (op.service_us.as_mut(), service.get(k)) {
            if !s.is_empty() {
                p.ci95 = Some(Ci95::of(s, effective));
            }
        }
    }
}

/// The agents' replies against the rate asked of them all.
fn schedule(r: &Results, agents: &[(usize, &Results)]) -> Check {
    let (Some(asked), Some(s)) = (r.requested_rps, &r.schedule) else {
        return Check::new(
            "schedule",
            None,
            "closed loop: no rate was asked, so none to keep".into(),
        );
    };
    let reached = verdict::reached_rps(r);
    let share = if asked > 0.0 { reached / asked } else { 0.0 };
    let tolerance = verdict::rate_tolerance(r, asked);
    let passed = (share - 1.0).abs() <= tolerance;
    let short: Vec<String> = agents
        .iter()
        .filter_map(|(i, a)| {
            let c = a
                .validity
                .as_ref()?
                .checks
                .iter()
                .find(|c| c.name == "schedule")?;
            (c.passed == Some(false)).then(|| format!("agent {i}"))
        })
        .collect();
    let agents_said = if short.is_empty() {
        String::new()
    } else {
        format!(
            "; by their own verdicts {} did not keep theirs",
            short.join(", ")
        )
    };
    Check::new(
        "schedule",
        Some(passed),
        format!(
            "the {} agents together reached {reached:.1} of the {asked:.1} req/s asked ({:.1}%, \
             {:.1}% allowed); sends went late by at most {}{agents_said}",
            agents.len(),
            share * 100.0,
            tolerance * 100.0,
            crate::output::micros(s.max_lag_us)
        ),
    )
    .fix_if_failed(
        "the agents did not keep their rate together: add agents, ask for less (--rate), or \
         give the server and the agents more CPUs (see each agent's own verdict)",
    )
}

/// A check only each agent could decide, carried from their verdicts.
fn carried(name: &str, agents: &[(usize, &Results)]) -> Check {
    let mut failed = Vec::new();
    let mut fix = None;
    let (mut passed, mut undecided, mut unjudged) = (0, 0, 0);
    for (i, a) in agents {
        let Some(v) = &a.validity else {
            unjudged += 1;
            continue;
        };
        match v.checks.iter().find(|c| c.name == name) {
            Some(c) if c.passed == Some(false) => {
                failed.push(format!("agent {i}: {}", c.detail));
                fix = fix.or(c.fix.clone());
            }
            Some(c) if c.passed == Some(true) => passed += 1,
            _ => undecided += 1,
        }
    }
    let n = agents.len();
    let unjudged = if unjudged > 0 {
        format!(" ({unjudged} agents' files carry no verdict)")
    } else {
        String::new()
    };
    if !failed.is_empty() {
        let mut c = Check::new(name, Some(false), failed.join("; "));
        c.fix = fix;
        return c;
    }
    if passed == 0 {
        return Check::new(
            name,
            None,
            format!("no agent's own verdict decided it{unjudged}"),
        );
    }
    let also = if undecided > 0 {
        format!(", {undecided} undecided")
    } else {
        String::new()
    };
    Check::new(
        name,
        Some(true),
        format!(
            "passed in each agent's own verdict that decided it ({passed} of {n}{also}){unjudged}"
        ),
    )
}
