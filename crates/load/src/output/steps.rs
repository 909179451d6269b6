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
    let mut out =
        format!(
        "capacity search: the highest rate at which the {} of the latency (from the intended send \
         time) is {} {} and at least 95% of the rate is achieved\n",
        s.stat,
        if s.target.contains("<=") { "at most" } else { "under" },
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

/// A step table's latency columns: p50, p99 and max, and the search's
/// statistic between them where it is neither p50 nor p99 (each column
/// once).
fn latency_columns(stat: &str) -> Vec<&str> {
    let mut columns = vec!["p50", "p99"];
    if !columns.contains(&stat) {
        columns.push(stat);
    }
    columns.push("max");
    columns
}

fn table_head(stat: &str) -> String {
    let latency: String = latency_columns(stat)
        .iter()
        .map(|c| format!(" {c:>10}"))
        .collect();
    format!(
        "  {:>4} {:>12} {:>12}{latency} {:>9}  {}\n",
        "step", "requested/s", "achieved/s", "late>1ms", "result"
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
    let latency: String = latency_columns(stat)
        .iter()
        .map(|&c| {
            let value = match c {
                "p50" => step.p50_us,
                "p99" => step.p99_us,
                "max" => step.max_us,
                _ => step.stat_us,
            };
            format!(" {:>10}", opt(value))
        })
        .collect();
    format!(
        "  {:>4} {:>12} {:>12.1}{latency} {:>9}  {}\n",
        n,
        step.requested_rps
            .map_or("probe".into(), |r| format!("{r:.1}")),
        step.achieved_rps,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every column of a step table is named once, and each row has a
    /// value under each.
    #[test]
    fn a_step_table_names_each_column_once() {
        let step = Step {
            requested_rps: Some(1000.0),
            achieved_rps: 990.0,
            stat_us: Some(700.0),
            p50_us: Some(100.0),
            p99_us: Some(900.0),
            max_us: Some(2000.0),
            late_requests: 3,
            client_late_requests: 0,
            kept_up: true,
            errors: 0,
            pass: Some(true),
        };
        for (stat, columns) in [("p99", 8), ("p50", 8), ("p99.9", 9), ("mean", 9)] {
            let head = table_head(stat);
            let names: Vec<&str> = head.split_whitespace().collect();
            assert_eq!(names.len(), columns, "{stat}: {head}");
            for name in &names {
                let times = names.iter().filter(|n| *n == name).count();
                assert_eq!(times, 1, "{stat}: {name} named {times} times in {head}");
            }
            assert!(names.contains(&stat), "{stat}: {head}");
            // A value under each latency column, in order.
            let row = step_row(1, &step, stat)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let shown = if columns == 9 { "700 µs " } else { "" };
            let latency = format!("100 µs 900 µs {shown}2.00 ms 3 pass");
            assert!(row.contains(&latency), "{stat}: {row}");
        }
    }
}
