//! `run.json`: one run's full configuration, how it was started, and how it
//! ended, enough to repeat it by hand.

use crate::machine::MachineState;
use crate::placement::Placement;
use crate::plan::Point;
use serde::{Deserialize, Serialize};

pub const RUN_SCHEMA: &str = "serverlab-run/1";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Failed,
}

/// A command the runner started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Invocation {
    pub protocol: String,
    /// The experiment's flags for this point.
    pub flags: Vec<String>,
    /// The whole command line, as run (the binary first).
    pub argv: Vec<String>,
    /// Its exit code; None if it was killed or never ran.
    pub exit_code: Option<i32>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub schema: String,
    pub experiment: String,
    pub point: usize,
    pub slug: String,
    /// 1-based; also the block the run belongs to (schedule.json).
    pub repetition: u32,
    /// The run's 1-based place in the sweep's order (schedule.json); 0 in
    /// sweeps made before the order was recorded.
    #[serde(default)]
    pub sequence: usize,
    /// The point's axis values.
    pub params: serde_json::Map<String, serde_json::Value>,
    pub server: Invocation,
    pub load: Invocation,
    /// CPUs the load was pinned to, if any.
    pub client_cpus: Option<String>,
    /// Where cores are an axis: the server's and the load's CPUs, how they
    /// were chosen, and any the two shared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// Where the server listened.
    pub server_addr: Option<String>,
    pub status: Status,
    /// Why the run failed.
    pub error: Option<String>,
    pub started_unix_s: u64,
    pub wall_s: f64,
    /// The machine while the run lasted; None where /proc is not readable.
    #[serde(default)]
    pub machine: Option<MachineState>,
}

impl RunRecord {
    /// Whether this record is a finished, successful run of `point` as it
    /// is configured now.
    pub fn done_as(&self, point: &Point, client_cpus: &Option<String>) -> bool {
        self.status == Status::Ok && self.differs_from(point, client_cpus).is_none()
    }

    /// What differs between this record's configuration and `point`'s.
    pub fn differs_from(&self, point: &Point, client_cpus: &Option<String>) -> Option<String> {
        if self.server.protocol != point.server_protocol || self.server.flags != point.server_flags
        {
            return Some(format!(
                "server was `{} {}`, now `{} {}`",
                self.server.protocol,
                self.server.flags.join(" "),
                point.server_protocol,
                point.server_flags.join(" ")
            ));
        }
        if self.load.protocol != point.load_protocol || self.load.flags != point.load_flags {
            return Some(format!(
                "load was `{} {}`, now `{} {}`",
                self.load.protocol,
                self.load.flags.join(" "),
                point.load_protocol,
                point.load_flags.join(" ")
            ));
        }
        if self.client_cpus != *client_cpus {
            return Some(format!(
                "client_cpus was {:?}, now {:?}",
                self.client_cpus, client_cpus
            ));
        }
        None
    }

    pub fn read(path: &std::path::Path) -> Option<RunRecord> {
        let text = std::fs::read_to_string(path).ok()?;
        serde_json::from_str(&text).ok()
    }
}
