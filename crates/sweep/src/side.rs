//! The two sides of a run: the server and the load.

use crate::plan::Source;
use crate::spec::{Experiment, Part, RESERVED_LOAD, RESERVED_SERVER};

/// Which command of a run a flag belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Server,
    Load,
}

impl Side {
    pub const BOTH: [Side; 2] = [Side::Server, Side::Load];

    /// As the experiment file names its table: `server`, `load`.
    pub fn name(self) -> &'static str {
        match self {
            Side::Server => "server",
            Side::Load => "load",
        }
    }

    /// The axis source of one of this side's flags.
    pub fn flag(self, flag: &str) -> Source {
        match self {
            Side::Server => Source::ServerFlag(flag.to_string()),
            Side::Load => Source::LoadFlag(flag.to_string()),
        }
    }

    /// This side's part of an experiment.
    pub fn part(self, e: &Experiment) -> &Part {
        match self {
            Side::Server => &e.server,
            Side::Load => &e.load,
        }
    }

    /// The flags the sweep sets on this side itself.
    pub fn reserved(self) -> &'static [&'static str] {
        match self {
            Side::Server => &RESERVED_SERVER,
            Side::Load => &RESERVED_LOAD,
        }
    }
}
