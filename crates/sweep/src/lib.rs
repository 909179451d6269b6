//! Experiment sweeps: an experiment file (TOML) expanded into a plan of
//! points × repetitions and a baseline (cores an axis placed on the
//! machine's CPUs where asked), run in interleaved blocks, one
//! fresh (optionally pinned) server per run, repeated further where a
//! target asks, with every run's configuration, results and machine state
//! kept on disk for `report`.
// A test reads as one story; the 60-line limit is for the code under test.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod child;
pub mod design;
pub mod error;
pub mod estimate;
pub mod host;
pub mod layout;
pub mod machine;
pub mod pinning;
pub mod placement;
pub mod plan;
pub mod record;
pub mod runner;
pub mod schedule;
pub mod shard;
pub mod side;
pub mod spec;
pub mod topology;
pub mod transport;
pub mod validate;
pub mod value;

pub use design::{Design, Order};
pub use error::{SpecError, SweepError};
pub use estimate::Calibration;
pub use host::Host;
pub use layout::Manifest;
pub use machine::MachineState;
pub use placement::{Cores, Placement};
pub use plan::{params_text, Axis, Plan, Point, Source, BASELINE};
pub use record::{RunRecord, Status};
pub use runner::{run, Observer, Options, Precision, RunRef, Summary, Unresolved};
pub use schedule::Schedule;
pub use shard::Shard;
pub use side::Side;
pub use spec::{Cpus, Experiment};
pub use topology::Topology;
pub use transport::Transport;
pub use validate::validate;
pub use value::Scalar;
