//! The text lines of a split load: an agent's start, and a merged
//! result's agents and flags.

use crate::report::{AgentRun, Merged};
use std::fmt::Write;

/// An agent's line: which share, and how late it started.
pub fn agent_line(out: &mut String, a: &AgentRun) {
    let lag = a.start_lag_ms.map_or(String::new(), |ms| {
        format!(", started {ms:.3} ms after --start-at")
    });
    let _ = writeln!(out, "  agent {} of {}{lag}", a.index, a.count);
}

/// A merged result's agents, one line each, and its flags.
pub fn merged_lines(out: &mut String, m: &Merged) {
    let _ = writeln!(
        out,
        "  merged from {} of {} agents:",
        m.agents.len(),
        m.count
    );
    for a in &m.agents {
        let rate = a
            .rate_rps
            .map_or(String::new(), |r| format!(", {r:.1} req/s asked"));
        let lag = a
            .start_lag_ms
            .map_or(String::new(), |ms| format!(", start lag {ms:.3} ms"));
        let bound = if a.generator_bound {
            ", generator-bound"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "    agent {}: {} clients{rate}, {} requests, client CPU {:.0}%{lag}, window {:+.1} ms{bound}",
            a.index,
            a.concurrency,
            a.requests,
            a.client_cpu_utilization * 100.0,
            a.start_offset_ms
        );
    }
    for f in &m.flags {
        let _ = writeln!(out, "  flag: {f}");
    }
}
