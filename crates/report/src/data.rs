//! A sweep as it is on disk: the manifest, and for every point its
//! successful runs (load result, server statistics), failed runs, stale
//! runs (made with other flags than the manifest's point: left out) and
//! runs not made yet. Nothing here runs anything.

use crate::error::ReportError;
use crate::metrics::RunMetrics;
use serverlab_load::report::LoadReport;
use serverlab_sweep::layout::{self, Manifest};
use serverlab_sweep::{Point, RunRecord, Status};
use std::path::{Path, PathBuf};

pub struct Sweep {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub points: Vec<PointRuns>,
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
        if manifest.schema != layout::MANIFEST_SCHEMA {
            return Err(ReportError::NotASweep {
                dir: dir.to_path_buf(),
                reason: format!("unknown schema {}", manifest.schema),
            });
        }
        let points = manifest
            .points
            .iter()
            .map(|p| read_point(dir, p, &manifest))
            .collect();
        Ok(Sweep {
            dir: dir.to_path_buf(),
            manifest,
            points,
        })
    }

    pub fn runs(&self) -> impl Iterator<Item = &Run> {
        self.points.iter().flat_map(|p| p.runs.iter())
    }
}

fn read_point(dir: &Path, point: &Point, manifest: &Manifest) -> PointRuns {
    let mut out = PointRuns {
        point: point.clone(),
        runs: vec![],
        failed: vec![],
        stale: vec![],
        missing: vec![],
    };
    for repetition in 1..=manifest.repetitions {
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
