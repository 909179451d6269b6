//! The text of a run made of runs: a capacity search's steps and its
//! answer, or a scan's latency-vs-rate table. Each row is printable as
//! its step ends ([`step_row`]), and [`render`] gives the whole.

use super::micros as us;
use crate::report::{LoadReport, ScanReport, SearchReport, Step};
use std::fmt::Write;

/// The search's or scan's text, before the results of the run picked.
pub fn render(report: &LoadReport) -> String {
    let mut out = String::new();
    if let Some(s) = &report.search {
        out.push_str(&search_header(s));
        for (i, step) in s.steps.iter().enumerate() {
            out.push_str(&step_row(i + 1, step, &s.stat));
        }
        out.push_str(&search_answer(s));
    }
    if let Some(s) = &report.scan {
        out.push_str(&scan_header(s));
        for (i, step) in s.steps.iter().enumerate() {
            out.push_str(&step_row(i + 1, step, "p99"));
        }
    }
    out
}

/// What the search looks for, and the probe.
pub fn search_header(s: &SearchReport) -> String {
    let mut out = format!(
        "capacity search: the highest rate at which the {} of the latency (from the intended send \
         time) is at most {} and at least 95% of the rate is achieved\n",
        s.stat,
        us(s.limit_us)
    );
    let _ = writeln!(
        out,
        "  steps of {} s after a {} s warm-up; probe (closed loop): {:.1} req/s, {} {}",
        s.step_s,
        s.warmup_s,
        s.probe.achieved_rps,
        s.stat,
        s.probe.stat_us.map_or("-".into(), us)
    );
    out.push_str(&table_head(&s.stat));
    out
}

/// The scan's table head.
pub fn scan_header(s: &ScanReport) -> String {
    let mut out = format!(
        "scan {} req/s: latency from the intended send time, steps of {} s after a {} s warm-up\n",
        s.range, s.step_s, s.warmup_s
    );
    out.push_str(&table_head("p99"));
    out
}

fn table_head(stat: &str) -> String {
    format!(
        "  {:>4} {:>12} {:>12} {:>10} {:>10} {:>10} {:>10} {:>9}  {}\n",
        "step", "requested/s", "achieved/s", "p50", "p99", stat, "max", "late>1ms", "result"
    )
}

/// Step `n`'s row: requested and achieved rates, latency, lateness, and
/// its verdict (a search's pass or fail; a scan's: kept up or not).
pub fn step_row(n: usize, step: &Step, stat: &str) -> String {
    let verdict = match step.pass {
        Some(true) => "pass".to_string(),
        Some(false) => format!("fail{}", why(step)),
        None if !step.kept_up => "could not keep up".into(),
        None => String::new(),
    };
    let opt = |v: Option<f64>| v.map_or("-".into(), us);
    let stat_col = if stat == "p99" {
        String::new()
    } else {
        opt(step.stat_us)
    };
    format!(
        "  {:>4} {:>12} {:>12.1} {:>10} {:>10} {:>10} {:>10} {:>9}  {}\n",
        n,
        step.requested_rps
            .map_or("probe".into(), |r| format!("{r:.1}")),
        step.achieved_rps,
        opt(step.p50_us),
        opt(step.p99_us),
        stat_col,
        opt(step.max_us),
        step.late_requests,
        verdict
    )
}

/// Why a step failed, beyond its latency.
fn why(step: &Step) -> String {
    let mut reasons = Vec::new();
    if !step.kept_up {
        reasons.push("rate not kept up".to_string());
    }
    if step.errors > 0 {
        reasons.push(format!("{} errors", step.errors));
    }
    if reasons.is_empty() {
        String::new()
    } else {
        format!(" ({})", reasons.join(", "))
    }
}

/// The answer.
pub fn search_answer(s: &SearchReport) -> String {
    let mut out = match s.capacity_rps {
        Some(c) => {
            let failed = s
                .steps
                .iter()
                .filter(|t| t.pass == Some(false))
                .filter_map(|t| t.requested_rps)
                .filter(|&r| r > c)
                .reduce(f64::min);
            let bracket = failed.map_or(String::new(), |f| {
                format!("; the lowest rate above it failed: {f:.1} req/s")
            });
            format!("  capacity: {c:.1} req/s at {}{bracket}\n", s.target)
        }
        None => format!("  capacity: none found at {}\n", s.target),
    };
    if let Some(note) = &s.note {
        let _ = writeln!(out, "  note: {note}");
    }
    out
}
