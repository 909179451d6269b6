//! Reports of sweeps, from their results on disk only: statistics per
//! point across repetitions (mean, geometric mean, median, min, max, sd,
//! CV, 95% confidence intervals on the log scale), shares of a baseline,
//! outliers and busy-machine runs, comparisons between sweeps (Welch on
//! logarithms, Hedges' g), plots as SVG and PNG, and `report.md` /
//! `report.html` that read top-down: summary, plots, problems, appendix.
#![forbid(unsafe_code)]
// A test reads as one story; the 60-line limit is for the code under test.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod axes;
pub mod certified;
pub mod chart;
pub mod compare;
pub mod data;
pub mod dates;
pub mod doc;
pub mod error;
pub mod figures;
pub mod font;
pub mod generate;
pub mod html;
pub mod markdown;
pub mod metrics;
pub mod openloop;
pub mod overlap;
pub mod points;
pub mod problems;
pub mod scaling;
pub mod server_stats;
pub mod shards;
pub mod stats;
pub mod student;
pub mod summary;
pub mod tables;
pub mod tables_csv;
pub mod ticks;
pub mod units;
pub mod usl;
pub mod welch;

pub use error::ReportError;
pub use generate::{generate, generate_shards, generate_with, Options, Written};
