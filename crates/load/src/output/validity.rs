//! Text: the run's verdict — "certified", or each failed check with its
//! fix.

use crate::certify::verdict::Validity;
use std::fmt::Write;

pub fn lines(out: &mut String, v: &Validity) {
    if v.certified {
        let undecided: Vec<&str> = v
            .checks
            .iter()
            .filter(|c| c.passed.is_none())
            .map(|c| c.name.as_str())
            .collect();
        let also = if undecided.is_empty() {
            String::new()
        } else {
            format!(" ({} not applicable or undecided)", undecided.join(", "))
        };
        let _ = writeln!(out, "  certified: every check passed{also}");
        return;
    }
    let _ = writeln!(out, "  not certified:");
    for c in v.failed() {
        let _ = writeln!(out, "    {}: {}", c.name, c.detail);
        if let Some(fix) = &c.fix {
            let _ = writeln!(out, "      fix: {fix}");
        }
    }
}
