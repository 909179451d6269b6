//! The report's tables as CSV beside report.md, for spreadsheets and
//! pandas: raw numbers (no thousands separators, no units in the cells,
//! full precision), one row per point and, for latency, per percentile.
//!
//! - `report-throughput.csv`: the point's axis values, then throughput's
//!   n, mean, geometric mean, median, min, max, sd, CV and 95% CI in
//!   req/s (`mean_rps`, …), and the share of the baseline (`share_…`)
//!   when the sweep has one.
//! - `report-latency.csv`: the axis values, `percentile` (p50, p90, p99,
//!   p99.9), then the same statistics of it over the repetitions,
//!   in µs (`mean_us`, …).

use crate::points::PointStats;
use crate::stats::Summary;
use serverlab_sweep::Manifest;
use std::path::{Path, PathBuf};

pub const THROUGHPUT: &str = "report-throughput.csv";
pub const LATENCY: &str = "report-latency.csv";

/// The statistics' columns, each name followed by `unit` where it has one.
fn summary_columns(prefix: &str, unit: &str) -> Vec<String> {
    let with_unit = ["mean", "geomean", "median", "min", "max", "sd"];
    let mut c = vec![format!("{prefix}n")];
    c.extend(with_unit.iter().map(|s| format!("{prefix}{s}{unit}")));
    c.push(format!("{prefix}cv"));
    c.push(format!("{prefix}ci_low{unit}"));
    c.push(format!("{prefix}ci_high{unit}"));
    c
}

/// A summary's cells in [`summary_columns`]' order; empty cells for what
/// it does not have (no runs, one run, a value at zero).
fn summary_cells(s: Option<&Summary>) -> Vec<String> {
    let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    let Some(s) = s else {
        return vec![String::new(); 10];
    };
    vec![
        s.n.to_string(),
        s.mean.to_string(),
        opt(s.geomean),
        s.median.to_string(),
        s.min.to_string(),
        s.max.to_string(),
        opt(s.sd),
        opt(s.cv),
        opt(s.ci.map(|c| c.0)),
        opt(s.ci.map(|c| c.1)),
    ]
}

/// The axes' names (or `point` where there are none).
fn axis_columns(m: &Manifest) -> Vec<String> {
    let names: Vec<String> = m.axes.iter().map(|a| a.key.clone()).collect();
    if names.is_empty() {
        vec!["point".into()]
    } else {
        names
    }
}

/// A point's axis values as written in the experiment (or its slug).
fn axis_cells(m: &Manifest, s: &PointStats) -> Vec<String> {
    if m.axes.is_empty() {
        return vec![s.runs.point.slug.clone()];
    }
    crate::tables::axis_values(m, s, |_, v| v.to_string())
}

/// `report-throughput.csv`'s text.
pub fn throughput(m: &Manifest, stats: &[PointStats]) -> String {
    let share = stats.iter().any(|s| s.share.is_some());
    let mut header = axis_columns(m);
    header.extend(summary_columns("", "_rps"));
    if share {
        header.extend(summary_columns("share_", ""));
    }
    let rows = stats.iter().map(|s| {
        let mut row = axis_cells(m, s);
        row.extend(summary_cells(s.throughput.as_ref()));
        if share {
            row.extend(summary_cells(s.share.as_ref()));
        }
        row
    });
    render(header, rows)
}

/// `report-latency.csv`'s text.
pub fn latency(m: &Manifest, stats: &[PointStats]) -> String {
    let mut header = axis_columns(m);
    header.push("percentile".into());
    header.extend(summary_columns("", "_us"));
    let rows = stats.iter().flat_map(|s| {
        s.latency.iter().map(move |(name, summary)| {
            let mut row = axis_cells(m, s);
            row.push((*name).to_string());
            row.extend(summary_cells(Some(summary)));
            row
        })
    });
    render(header, rows)
}

fn render(header: Vec<String>, rows: impl Iterator<Item = Vec<String>>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&header).expect("CSV to memory");
    for row in rows {
        w.write_record(&row).expect("CSV to memory");
    }
    String::from_utf8(w.into_inner().expect("CSV to memory")).expect("UTF-8 cells")
}

/// Writes both files into `dir`; their paths.
pub fn write(
    dir: &Path,
    m: &Manifest,
    stats: &[PointStats],
) -> Result<Vec<PathBuf>, crate::ReportError> {
    let files = [
        (THROUGHPUT, throughput(m, stats)),
        (LATENCY, latency(m, stats)),
    ];
    let mut written = Vec::new();
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| crate::ReportError::Write {
            path: path.clone(),
            source: e,
        })?;
        written.push(path);
    }
    Ok(written)
}
