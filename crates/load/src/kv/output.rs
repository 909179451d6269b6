//! The kv lines of the text output: statuses, sessions, preload.

use crate::report::LoadReport;
use std::fmt::Write;

/// Lines the generic text sink adds for a kv report.
pub fn extra_lines(report: &LoadReport, out: &mut String) {
    let x = &report.results.extra;
    let _ = writeln!(
        out,
        "  total time {:.3} s, {:.1} replies/s",
        x["total_time_s"].as_f64().unwrap_or(0.0),
        x["replies_per_s"].as_f64().unwrap_or(0.0)
    );
    if let Some(statuses) = x["statuses"].as_object() {
        let parts: Vec<String> = statuses.iter().map(|(s, n)| format!("{s}={n}")).collect();
        let _ = writeln!(out, "  statuses: {}", parts.join(" "));
    }
    let s = &x["sessions"];
    let t = &s["time_ms"];
    let f = |v: &serde_json::Value| v.as_f64().unwrap_or(0.0);
    let _ = writeln!(
        out,
        "  sessions: {} of {} completed, {} failed; session time ms: mean {:.2}, median {:.2}, min {:.2}, max {:.2}",
        s["completed"], s["planned"], s["failed"], f(&t["mean"]), f(&t["median"]), f(&t["min"]), f(&t["max"])
    );
    if let Some(p) = x["preload"].as_object() {
        let _ = writeln!(
            out,
            "  preload: {} keys written in {:.3} s before the run (not measured)",
            p["keys"],
            p["time_s"].as_f64().unwrap_or(0.0)
        );
    }
}
