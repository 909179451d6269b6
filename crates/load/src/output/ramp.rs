//! Text: a ramped open loop (`--stages`) second by second — the requests
//! the ramp asked for beside the replies that came, and their p99 — and
//! the thresholds judged.

use crate::report::Results;
use crate::thresholds::Judged;
use std::fmt::Write;

/// Each second's asked and answered requests, when the rate ramped.
pub fn lines(out: &mut String, r: &Results) {
    let Some(s) = &r.schedule else { return };
    let Some(stages) = &s.stages else { return };
    let _ = writeln!(out, "  stages {stages}, second by second:");
    let _ = writeln!(
        out,
        "    {:>6} {:>10} {:>10} {:>10}",
        "second", "asked", "answered", "p99"
    );
    let latency = r.per_second_latency_us.as_deref().unwrap_or_default();
    for (i, asked) in s.asked_per_second.iter().enumerate() {
        let answered = r.per_second.get(i).copied().unwrap_or(0);
        let p99 = latency
            .get(i)
            .and_then(|l| l.p99)
            .map_or("-".to_string(), super::micros);
        let _ = writeln!(out, "    {i:>6} {asked:>10.0} {answered:>10} {p99:>10}");
    }
}

/// Each threshold, passed or failed.
pub fn thresholds(out: &mut String, judged: &[Judged]) {
    if judged.is_empty() {
        return;
    }
    let failed = judged.iter().filter(|j| !j.passed).count();
    let verdict = match failed {
        0 => "all passed".to_string(),
        n => format!("{n} of {} failed", judged.len()),
    };
    let _ = writeln!(out, "  thresholds: {verdict}");
    for j in judged {
        let mark = if j.passed { "passed" } else { "FAILED" };
        let _ = writeln!(out, "    {mark} {}: {}", j.threshold, j.detail);
    }
}
