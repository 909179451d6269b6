//! `load http`'s own results: responses per status, those whose status
//! was not expected (the errors, by status), and each target's counts.

use super::{Across, Merge, TextLines};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpResults {
    /// `--expect-status`, as given.
    pub expect_status: String,
    /// Responses counted in the window, per status.
    pub statuses: BTreeMap<u16, u64>,
    /// Of those, the statuses not expected: the errors, by status.
    pub errors_by_status: BTreeMap<u16, u64>,
    /// Per target, in the order given.
    pub targets: Vec<TargetResults>,
}

/// One target's responses in the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetResults {
    /// `METHOD URL`.
    pub target: String,
    pub weight: u32,
    pub requests: u64,
    /// Responses with a status not expected.
    pub errors: u64,
    pub statuses: BTreeMap<u16, u64>,
}

impl HttpResults {
    /// The results of `targets` (their statuses counted; errors not yet)
    /// judged by `expect`.
    pub fn of(expect: &crate::http::Expect, mut targets: Vec<TargetResults>) -> Self {
        let mut statuses: BTreeMap<u16, u64> = BTreeMap::new();
        let mut errors_by_status: BTreeMap<u16, u64> = BTreeMap::new();
        for t in &mut targets {
            t.errors = 0;
            for (&s, &n) in &t.statuses {
                *statuses.entry(s).or_insert(0) += n;
                if !expect.allows(s) {
                    *errors_by_status.entry(s).or_insert(0) += n;
                    t.errors += n;
                }
            }
        }
        HttpResults {
            expect_status: expect.to_string(),
            statuses,
            errors_by_status,
            targets,
        }
    }

    /// Responses whose status was not expected.
    pub fn errors(&self) -> u64 {
        self.errors_by_status.values().sum()
    }

    /// The statuses not expected, as errors of the run (one line each,
    /// with the targets that got it): a run that has them failed.
    pub fn error_lines(&self) -> Vec<String> {
        let plural = |n: u64| serverlab_util::plural(n, "response", "responses");
        self.errors_by_status
            .iter()
            .map(|(&status, &n)| {
                let got: Vec<String> = self
                    .targets
                    .iter()
                    .filter_map(|t| match t.statuses.get(&status) {
                        Some(&k) if k > 0 => Some(format!("{} {k}", t.target)),
                        _ => None,
                    })
                    .collect();
                format!(
                    "status {status}: {}, expected {} ({})",
                    plural(n),
                    self.expect_status,
                    got.join(", ")
                )
            })
            .collect()
    }
}

impl Merge for HttpResults {
    /// Counts added, target by target (the agents ran the same targets).
    fn merge(parts: &[&Self], at: &Across<'_>) -> Result<Self, String> {
        let n = at.same("the number of targets", parts, |p| p.targets.len())?;
        let targets = (0..n)
            .map(|i| {
                let each: Vec<&TargetResults> = parts.iter().map(|p| &p.targets[i]).collect();
                TargetResults::merge(&each, at)
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(HttpResults {
            expect_status: at.same("expect_status", parts, |p| p.expect_status.clone())?,
            statuses: at.counts("statuses", parts, |p| &p.statuses)?,
            errors_by_status: at.counts("errors_by_status", parts, |p| &p.errors_by_status)?,
            targets,
        })
    }
}

impl Merge for TargetResults {
    fn merge(parts: &[&Self], at: &Across<'_>) -> Result<Self, String> {
        Ok(TargetResults {
            target: at.same("a target", parts, |p| p.target.clone())?,
            weight: at.same("a target's weight", parts, |p| p.weight)?,
            requests: at.count("targets.requests", parts, |p| p.requests)?,
            errors: at.count("targets.errors", parts, |p| p.errors)?,
            statuses: at.counts("targets.statuses", parts, |p| &p.statuses)?,
        })
    }
}

fn by_status(counts: &BTreeMap<u16, u64>) -> String {
    let each: Vec<String> = counts.iter().map(|(s, n)| format!("{s}={n}")).collect();
    if each.is_empty() {
        "none".into()
    } else {
        each.join(" ")
    }
}

impl TextLines for HttpResults {
    /// The statuses not expected (each an error of the run).
    fn error_replies(&self) -> u64 {
        self.errors()
    }

    fn text_lines(&self) -> Vec<String> {
        let mut lines = vec![
            format!("statuses (in the window): {}", by_status(&self.statuses)),
            format!(
                "errors by status (expected {}): {}",
                self.expect_status,
                by_status(&self.errors_by_status)
            ),
            "targets (in the window):".into(),
        ];
        let wide = self
            .targets
            .iter()
            .map(|t| t.target.len())
            .max()
            .unwrap_or(0);
        for t in &self.targets {
            lines.push(format!(
                "  {:<wide$}  weight {}: {} requests, {} errors ({})",
                t.target,
                t.weight,
                t.requests,
                t.errors,
                by_status(&t.statuses)
            ));
        }
        lines
    }
}
