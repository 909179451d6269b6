//! Experiment sweeps: an experiment file (TOML) expanded into a plan of
//! points × repetitions, run one fresh (optionally pinned) server per run,
//! with every run's configuration and results kept on disk for `report`.

pub mod child;
pub mod error;
pub mod layout;
pub mod pinning;
pub mod plan;
pub mod record;
pub mod runner;
pub mod spec;
pub mod validate;
pub mod value;

pub use error::{SpecError, SweepError};
pub use layout::Manifest;
pub use plan::{params_text, Axis, Plan, Point, Source};
pub use record::{RunRecord, Status};
pub use runner::{run, Observer, Options, RunRef, Summary};
pub use spec::{Cpus, Experiment};
pub use validate::validate;
pub use value::Scalar;
