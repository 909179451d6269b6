//! Output sinks: each renders a finished [`crate::report::LoadReport`].

mod agents;
pub mod caps;
pub mod csv;
pub mod gfmt;
pub mod hdrlog;
mod intervals;
mod ramp;
pub mod steps;
pub mod text;
mod validity;

/// The report as pretty JSON (schema `serverlab-load/3`).
pub fn json(report: &crate::report::LoadReport) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("report serializes");
    s.push('\n');
    s
}

/// A duration given in µs, written as µs, ms or s.
pub fn micros(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{us:.0} µs")
    }
}
