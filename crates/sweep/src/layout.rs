//! Where a sweep keeps things on disk, and the manifest (`sweep.json`)
//! that says what the sweep was:
//!
//! ```text
//! DIR/experiment.toml                 the experiment file as given
//! DIR/sweep.json                      axes and points (this manifest)
//! DIR/runs/<point>/rep-<k>/run.json   what ran, how, and how it ended
//!                         load.json   the load's result (serverlab-load/1)
//!                         server.json the server's final statistics
//!                         load.log, load.err, server.log
//! ```

use crate::error::SweepError;
use crate::plan::{Axis, Plan, Point};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const MANIFEST_SCHEMA: &str = "serverlab-sweep/1";
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
    pub repetitions: u32,
    pub client_cpus: Option<String>,
    pub timeout_s: f64,
    pub serverlab_version: String,
    pub axes: Vec<Axis>,
    pub points: Vec<Point>,
}

impl Manifest {
    pub fn of(plan: &Plan) -> Manifest {
        let e = &plan.experiment;
        Manifest {
            schema: MANIFEST_SCHEMA.into(),
            name: e.name.clone(),
            description: e.description.clone(),
            repetitions: e.repetitions,
            client_cpus: crate::spec::Cpus::written(&e.client_cpus),
            timeout_s: e.timeout.as_secs_f64(),
            serverlab_version: env!("CARGO_PKG_VERSION").into(),
            axes: plan.axes.clone(),
            points: plan.points.clone(),
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
