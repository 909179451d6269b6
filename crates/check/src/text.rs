//! The report as text for a terminal: a line per case (with the
//! transcript of a failure), the concurrency verdict with any witness,
//! and a summary line.

use crate::case::{CaseResult, Status};
use crate::concurrency::{ConcurrencyReport, Plan, Verdict};
use crate::lin::Witness;
use crate::report::Report;
use crate::run::{IN_SKIP, NOT_IN_ONLY};

/// Witnesses shown in text; JSON has them all.
const WITNESSES_SHOWN: usize = 3;

/// The first line: what is checked, where, assuming what.
pub fn header(r: &Report) -> String {
    let s: Vec<String> = r
        .settings
        .iter()
        .map(|(k, v)| format!("{k} {}", v.as_str().unwrap_or_default()))
        .collect();
    let only = if r.assignment {
        ", the assignment's rules only"
    } else {
        ""
    };
    format!(
        "serverlab check {} {} ({}{only})\n",
        r.protocol,
        r.addr,
        s.join(", ")
    )
}

/// A case's line, with the transcript if it failed; nothing for a case
/// the user left out with --only or --skip.
pub fn case(c: &CaseResult) -> String {
    let chosen_out = c
        .reason
        .as_deref()
        .is_some_and(|r| r == NOT_IN_ONLY || r == IN_SKIP);
    if c.status == Status::Skipped && chosen_out {
        return String::new();
    }
    let mark = match c.status {
        Status::Passed => "pass",
        Status::Failed => "FAIL",
        Status::Skipped => "skip",
    };
    let scope = match c.scope {
        crate::case::Scope::Assignment => "",
        crate::case::Scope::Serverlab => " [serverlab]",
    };
    let mut out = format!("  {mark}  {:<28} {}{scope}\n", c.name, c.checks);
    match c.status {
        Status::Passed => {}
        Status::Skipped => {
            if let Some(r) = &c.reason {
                out += &format!("        ({r})\n");
            }
        }
        Status::Failed => {
            if let Some(r) = &c.reason {
                out += &format!("        {r}\n");
            }
            for e in &c.exchanges {
                let mark = if e.ok { " " } else { "✗" };
                out += &format!("      {mark} sent     {}\n", e.sent);
                out += &format!("          expected {}\n", e.expected);
                out += &format!("          got      {}\n", e.got);
            }
            out += &format!("        why it matters: {}\n", c.why);
        }
    }
    out
}

pub fn concurrency_starts(plan: &Plan) -> String {
    format!(
        "concurrency: {} clients for {:.1} s (seed {})…\n",
        plan.clients,
        plan.duration.as_secs_f64(),
        plan.seed
    )
}

pub fn concurrency(c: &ConcurrencyReport) -> String {
    let mut out = format!(
        "  {} operations over {} in {:.1} s; checked in {:.2} s: {}\n",
        c.operations,
        c.over,
        c.duration_s,
        c.check_s,
        c.verdict.name()
    );
    if let Some(e) = &c.error {
        out += &format!("  the run stopped: {e}\n");
    }
    let bad: Vec<_> = c
        .partitions
        .iter()
        .filter(|p| p.outcome != "linearizable")
        .collect();
    for p in bad.iter().take(WITNESSES_SHOWN) {
        out += &format!("  {} ({} operations): {}", p.name, p.operations, p.outcome);
        match (&p.witness, p.steps) {
            (Some(w), _) => out += &witness(w),
            (None, Some(steps)) => {
                out += &format!(
                    " after {steps} search steps: the budget ran out before an answer; \
                     try fewer clients (--concurrency) or a shorter --duration\n"
                )
            }
            _ => out.push('\n'),
        }
    }
    if bad.len() > WITNESSES_SHOWN {
        out += &format!(
            "  … and {} more partitions (all in --format json)\n",
            bad.len() - WITNESSES_SHOWN
        );
    }
    out
}

/// A witness in a student's words.
pub fn witness(w: &Witness) -> String {
    let mut out = String::from(". No order of these operations explains all their replies:\n");
    for o in &w.ops {
        out += &format!(
            "    {:<2} client {:<3} sent {:>12}  answered {:>12}  {}\n",
            o.label,
            o.client,
            ms(o.sent_ns),
            ms(o.answered_ns),
            o.what
        );
    }
    for a in &w.after {
        out += &format!("    {a}, so {} comes first in any order.\n", after_first(a));
    }
    if !w.closest.is_empty() {
        out += "    The order that explains the most:\n";
        for line in &w.closest {
            out += &format!("      {line}\n");
        }
    }
    for s in &w.stuck {
        out += &format!("    {s}.\n");
    }
    if !w.minimal {
        out += "    (the search budget ran out while shrinking: some of these may not be needed)\n";
    }
    out
}

/// "B was sent after A was answered" → "A".
fn after_first(line: &str) -> &str {
    line.rsplit(" after ")
        .next()
        .and_then(|s| s.strip_suffix(" was answered"))
        .unwrap_or("the first")
}

fn ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

pub fn summary(r: &Report) -> String {
    let phase = match &r.concurrency {
        Some(c) => format!("concurrency {}", c.verdict.name()),
        None => "concurrency not checked".into(),
    };
    let verdict = if r.ok { "PASSED" } else { "FAILED" };
    let failed: Vec<&str> = r
        .cases
        .iter()
        .filter(|c| c.status == Status::Failed)
        .map(|c| c.name)
        .collect();
    let mut line = format!(
        "{verdict}: {} passed, {} failed, {} skipped; {phase}; {:.1} s\n",
        r.passed, r.failed, r.skipped, r.seconds
    );
    if !failed.is_empty() {
        line += &format!("failed: {}\n", failed.join(", "));
    }
    if r.concurrency
        .as_ref()
        .is_some_and(|c| c.verdict == Verdict::NotLinearizable)
    {
        line += "failed: linearizable\n";
    }
    line
}
