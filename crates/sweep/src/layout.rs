//! Where a sweep keeps things on disk, and the manifest (`sweep.json`)
//! that says what the sweep was:
//!
//! ```text
//! DIR/experiment.toml                 the experiment file as given
//! DIR/sweep.json                      axes, points and baseline (this manifest)
//! DIR/schedule.json                   the order of the runs, block by block
//! DIR/runs/<point>/rep-<k>/run.json   what ran, how, how it ended, the machine
//!                         load.json   the load's result (serverlab-load/3, docs/load-json.md)
//!                         server.json the server's final statistics
//!                         load.log, load.err, server.log
//! ```

use crate::design::Order;
use crate::error::SweepError;
use crate::host::Host;
use crate::plan::{Axis, Plan, Point};
use crate::shard::Shard;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const MANIFEST_SCHEMA: &str = "serverlab-sweep/2";
/// Sweeps before run order, targets and baselines: still read.
pub const MANIFEST_SCHEMA_1: &str = "serverlab-sweep/1";
pub const MANIFEST: &str = "sweep.json";
pub const EXPERIMENT: &str = "experiment.toml";
pub const RUNS: &str = "runs";
pub const RUN_RECORD: &str = "run.json";
pub const LOAD_JSON: &str = "load.json";
pub const SERVER_JSON: &str = "server.json";
pub const LOAD_LOG: &str = "load.log";
pub const LOAD_ERR: &str = "load.err";
pub const SERVER_LOG: &str = "server.log";

/// `sweep.json`: the experiment, its axes and its points.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub schema: String,
    pub name: String,
    pub description: String,
    /// Blocks every point runs in; a target may add more (schedule.json).
    pub repetitions: u32,
    /// The order inside a block and its seed (schedule.json has the order
    /// itself). None in version-1 sweeps.
    #[serde(default)]
    pub order: Option<Order>,
    #[serde(default)]
    pub seed: Option<u64>,
    /// The throughput CI half-width, as a share of the mean, that points
    /// were repeated towards, and the most repetitions allowed.
    #[serde(default)]
    pub target_ci: Option<f64>,
    #[serde(default)]
    pub max_repetitions: Option<u32>,
    /// The fixed configuration run once per block (slug `baseline`).
    #[serde(default)]
    pub baseline: Option<Point>,
    pub client_cpus: Option<String>,
    pub timeout_s: f64,
    pub serverlab_version: String,
    pub axes: Vec<Axis>,
    pub points: Vec<Point>,
    /// The machine it ran on (none in sweeps made before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<Host>,
    /// The share of the blocks this directory holds (`sweep --shard I/N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

impl Manifest {
    /// The manifest of `plan`, run in an order shuffled from `seed`.
    pub fn of(plan: &Plan, seed: u64) -> Manifest {
        let e = &plan.experiment;
        let d = &e.design;
        Manifest {
            schema: MANIFEST_SCHEMA.into(),
            name: e.name.clone(),
            description: e.description.clone(),
            repetitions: d.repetitions,
            order: Some(d.order),
            seed: (d.order == Order::Random).then_some(seed),
            target_ci: d.target_ci,
            max_repetitions: d.target_ci.map(|_| d.max()),
            baseline: plan.baseline.clone(),
            client_cpus: crate::spec::Cpus::written(&e.client_cpus),
            timeout_s: e.timeout.as_secs_f64(),
            serverlab_version: env!("CARGO_PKG_VERSION").into(),
            axes: plan.axes.clone(),
            points: plan.points.clone(),
            host: Some(Host::here()),
            shard: None,
        }
    }

    /// Read `dir/sweep.json`.
    pub fn read(dir: &Path) -> Result<Manifest, SweepError> {
        let path = dir.join(MANIFEST);
        let text =
            std::fs::read_to_string(&path).map_err(|e| SweepError::io("cannot read", &path, e))?;
        serde_json::from_str(&text).map_err(|e| {
            SweepError::io(
                "cannot parse",
                &path,
                std::io::Error::new(std::io::ErrorKind::InvalidData, e),
            )
        })
    }
}

/// The directory of one repetition of one point.
pub fn run_dir(out: &Path, point: &Point, repetition: u32) -> PathBuf {
    out.join(RUNS)
        .join(&point.slug)
        .join(format!("rep-{repetition}"))
}

/// Write `text` to `path` whole or not at all (a temporary file, renamed).
pub fn write_atomic(path: &Path, text: &str) -> Result<(), SweepError> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(|e| SweepError::io("cannot write", &tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| SweepError::io("cannot write", path, e))
}
