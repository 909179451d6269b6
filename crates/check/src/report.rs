//! The result of a whole check: every case, the concurrency verdict, the
//! totals; serialised as JSON (`serverlab-check/1`).

use crate::case::{CaseResult, Status};
use crate::concurrency::ConcurrencyReport;
use serde::Serialize;

pub const SCHEMA: &str = "serverlab-check/1";

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub protocol: &'static str,
    pub addr: String,
    /// The settings assumed (`buckets`, `delay_unit`, `max_value`, …).
    pub settings: serde_json::Map<String, serde_json::Value>,
    /// Only the assignment's rules were checked.
    pub assignment: bool,
    pub cases: Vec<CaseResult>,
    /// Absent when skipped.
    pub concurrency: Option<ConcurrencyReport>,
    /// Why the concurrency phase did not run, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency_skipped: Option<String>,
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    /// Every case that ran passed, and so did the concurrency phase.
    pub ok: bool,
    pub seconds: f64,
}

impl Report {
    /// Recount the totals and the verdict from the cases and the phase.
    pub fn tally(&mut self) {
        let count = |s| self.cases.iter().filter(|c| c.status == s).count();
        self.passed = count(Status::Passed);
        self.failed = count(Status::Failed);
        self.skipped = count(Status::Skipped);
        let phase_ok = self.concurrency.as_ref().is_none_or(|c| c.verdict.passed());
        self.ok = self.failed == 0 && phase_ok;
    }
}
