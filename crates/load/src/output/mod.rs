//! Output sinks: each renders a finished [`crate::report::LoadReport`].

pub mod caps;
pub mod gfmt;
pub mod text;

/// The report as pretty JSON (schema `serverlab-load/2`).
pub fn json(report: &crate::report::LoadReport) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("report serializes");
    s.push('\n');
    s
}
