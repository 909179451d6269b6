//! Reports of sweeps, from their results on disk only: statistics per
//! point across repetitions (mean, median, min, max, sd, Student-t 95%
//! confidence intervals), comparisons between sweeps (Welch), plots as SVG
//! and PNG, and `report.md` / `report.html`.

pub mod axes;
pub mod chart;
pub mod compare;
pub mod data;
pub mod doc;
pub mod error;
pub mod figures;
pub mod font;
pub mod generate;
pub mod html;
pub mod markdown;
pub mod metrics;
pub mod points;
pub mod server_stats;
pub mod stats;
pub mod student;
pub mod tables;
pub mod ticks;
pub mod units;
pub mod welch;

pub use error::ReportError;
pub use generate::{generate, Written};
