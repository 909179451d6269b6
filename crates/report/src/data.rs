//! A sweep as it is on disk: the manifest, the run order, and for every
//! point (and the baseline) its successful runs (load result, server
//! statistics, the machine's state), failed runs, stale runs (made with
//! other flags than the manifest's point: left out) and runs not made yet.
//! Nothing here runs anything.

use crate::error::ReportError;
use crate::metrics::RunMetrics;
use serverlab_load::report::LoadReport;
use serverlab_sweep::layout::{self, Manifest};
use serverlab_sweep::{MachineState, Point, RunRecord, Schedule, Status};
use std::path::{Path, PathBuf};

pub struct Sweep {
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// The recorded run order (none in sweeps made before it was kept).
    pub schedule: Option<Schedule>,
    pub points: Vec<PointRuns>,
    /// The baseline's runs, one per block.
    pub baseline: Option<PointRuns>,
}

pub struct PointRuns {
    pub point: Point,
    pub runs: Vec<Run>,
    pub failed: Vec<Failure>,
    /// Runs whose record differs from the point (an older configuration
    /// left in the directory): never counted. `error` says what differs.
    pub stale: Vec<Failure>,
    /// Repetitions with no result yet (an unfinished sweep).
    pub missing: Vec<u32>,
}

pub struct Run {
    pub repetition: u32,
    /// Its directory (`runs/<point>/rep-<k>`), relative to the sweep's.
    pub dir: PathBuf,
    /// Its place in the sweep's order (0: not recorded).
    pub sequence: usize,
    pub started_unix_s: u64,
    /// How long it took, start to end (the servers' start and stop
    /// included).
    pub wall_s: f64,
    /// The CPUs its server and load were pinned to; None where either
    /// was not pinned.
    pub cpus: Option<Vec<usize>>,
    /// The machine while it ran, when recorded.
    pub machine: Option<MachineState>,
    pub load: LoadReport,
    pub metrics: RunMetrics,
}

pub struct Failure {
    pub repetition: u32,
    pub error: String,
}

impl Sweep {
    pub fn read(dir: &Path) -> Result<Sweep, ReportError> {
        let manifest = Manifest::read(dir).map_err(|e| ReportError::NotASweep {
            dir: dir.to_path_buf(),
            reason: e.to_string(),
        })?;
        if ![layout::MANIFEST_SCHEMA, layout::MANIFEST_SCHEMA_1].contains(&manifest.schema.as_str())
        {
            return Err(ReportError::NotASweep {
                dir: dir.to_path_buf(),
                reason: format!("unknown schema {}", manifest.schema),
            });
        }
        let schedule = Schedule::read(dir);
        let read = |p: &Point| read_point(dir, p, &manifest, planned(&manifest, &schedule, p));
        let points = manifest.points.iter().map(read).collect();
        let baseline = manifest.baseline.as_ref().map(read);
        Ok(Sweep {
            dir: dir.to_path_buf(),
            manifest,
            schedule,
            points,
            baseline,
        })
    }

    pub fn runs(&self) -> impl Iterator<Item = &Run> {
        self.points.iter().flat_map(|p| p.runs.iter())
    }
}

/// The blocks `point` runs in in this directory: a shard's own, else every
/// fixed one and those a target added.
fn planned(manifest: &Manifest, schedule: &Option<Schedule>, point: &Point) -> Vec<u32> {
    match schedule {
        Some(s) if s.shard.is_some() => s.blocks_of(&point.slug),
        _ => {
            let added = schedule
                .as_ref()
                .map_or(0, |s| s.repetitions_of(&point.slug));
            (1..=added.max(manifest.repetitions)).collect()
        }
    }
}

fn read_point(dir: &Path, point: &Point, manifest: &Manifest, repetitions: Vec<u32>) -> PointRuns {
    let mut out = PointRuns {
        point: point.clone(),
        runs: vec![],
        failed: vec![],
        stale: vec![],
        missing: vec![],
    };
    for repetition in repetitions {
        let rdir = layout::run_dir(dir, point, repetition);
        let Some(record) = RunRecord::read(&rdir.join(layout::RUN_RECORD)) else {
            out.missing.push(repetition);
            continue;
        };
        if let Some(error) = record.differs_from(point, &manifest.client_cpus) {
            out.stale.push(Failure { repetition, error });
            continue;
        }
        if record.status == Status::Failed {
            let error = record.error.clone().unwrap_or_else(|| "failed".into());
            out.failed.push(Failure { repetition, error });
            continue;
        }
        match read_json::<LoadReport>(&rdir.join(layout::LOAD_JSON)) {
            Ok(load) => {
                let server = read_json::<serde_json::Value>(&rdir.join(layout::SERVER_JSON)).ok();
                let metrics = RunMetrics::of(&load, server.as_ref());
                out.runs.push(Run {
                    repetition,
                    dir: rdir.strip_prefix(dir).unwrap_or(&rdir).to_path_buf(),
                    sequence: record.sequence,
                    started_unix_s: record.started_unix_s,
                    wall_s: record.wall_s,
                    cpus: serverlab_sweep::pinning::run_cpus(&record),
                    machine: record.machine,
                    load,
                    metrics,
                });
            }
            Err(e) => out.failed.push(Failure {
                repetition,
                error: e.to_string(),
            }),
        }
    }
    out
}

/// A run's result file could not be used; the run counts as failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot parse {}: {source}", path.display())]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ReadError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReadError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| ReadError::Parse {
        path: path.to_path_buf(),
        source,
    })
}
