//! The report as text for a terminal: a line per case (with the
//! transcript of a failure), the concurrency verdict with any witness,
//! and a summary line.

use crate::case::{CaseResult, Exchange, Status};
use crate::concurrency::{ConcurrencyReport, Plan, Verdict};
use crate::lin::{Undecided, Witness};
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
            out += &exchanges(&c.exchanges);
            out += &format!("        why it matters: {}\n", c.why);
            if c.scope == crate::case::Scope::Serverlab {
                out += &serverlab_hint(c);
            }
        }
    }
    out
}

/// Exchanges shown before the first that failed; the rest are counted.
const SHOWN_BEFORE: usize = 2;

/// A failed case's exchanges: the first that failed, the few just before
/// it, and any after it; the earlier ones (all as expected) counted.
fn exchanges(all: &[Exchange]) -> String {
    let first_bad = all.iter().position(|e| !e.ok).unwrap_or(all.len());
    let from = first_bad.saturating_sub(SHOWN_BEFORE);
    let mut out = String::new();
    if from > 0 {
        out += &format!("        ({from} earlier exchanges as expected; all in --format json)\n");
    }
    for e in &all[from..] {
        let mark = if e.ok { " " } else { "✗" };
        out += &format!("      {mark} sent     {}\n", e.sent);
        out += &format!("          expected {}\n", e.expected);
        out += &format!("          got      {}\n", e.got);
    }
    out
}

/// What `[serverlab]` means under a failed case: not the assignment's
/// rule, how to leave such rules out, and the server setting the case
/// depends on (a `--flag` its rule names), which must be the server's.
fn serverlab_hint(c: &CaseResult) -> String {
    let flags: Vec<&str> = c
        .checks
        .split(|ch: char| ch.is_whitespace() || ",:;()".contains(ch))
        .filter(|w| w.starts_with("--"))
        .collect();
    let mut out = String::from(
        "        [serverlab]: serverlab's own rule, beyond what the protocol's assignment asks; \
         a server that follows the assignment alone may differ here (--assignment skips these)",
    );
    if !flags.is_empty() {
        out += &format!(
            "; the limit is the server's: run check with {} set as the server has it",
            flags.join(", ")
        );
    }
    out + "\n"
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
        match (&p.witness, &p.undecided) {
            (Some(w), _) => out += &witness(w),
            (None, Some(u)) => out += &undecided(p.operations, u),
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

/// Where an inconclusive search stopped, and what to try.
fn undecided(operations: usize, u: &Undecided) -> String {
    format!(
        " after {:.1} s ({operations} operations, {} states): the budget ran out after {} \
         steps in the window of {} operations sent from {} to {}, which it could not decide; \
         {}. A larger --lin-budget, --lin-states or --budget, fewer clients (--concurrency) or \
         a shorter --duration may decide it\n",
        u.seconds,
        u.states,
        u.steps,
        u.operations,
        ms(u.from_ns),
        ms(u.to_ns),
        match u.decided {
            0 => "it is the first".to_string(),
            n => format!("the {n} operations before it are linearizable"),
        },
    )
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
    if let Some(c) = &w.context {
        out += &format!("    Before them: {c}.\n");
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
        None => match &r.concurrency_skipped {
            Some(why) => format!("concurrency not checked ({why})"),
            None => "concurrency not checked".into(),
        },
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
    let own = r
        .cases
        .iter()
        .filter(|c| c.status == Status::Failed && c.scope == crate::case::Scope::Serverlab)
        .count();
    if own > 0 && !r.assignment {
        line += &format!(
            "{own} of the failed cases are serverlab's own rules ([serverlab]), beyond the \
             protocol's assignment; --assignment checks the assignment's rules only\n"
        );
    }
    if r.concurrency
        .as_ref()
        .is_some_and(|c| c.verdict == Verdict::NotLinearizable)
    {
        line += "failed: linearizable\n";
    }
    line
}
