//! Finding and reading the agents' files: `agent-I-of-N.json` (the
//! result) and `agent-I-of-N.hlog` (its HDR interval log) in each
//! directory given.

use super::hlog::{self, Interval};
use crate::report::LoadReport;
use std::path::{Path, PathBuf};

/// One agent's files, read.
pub struct AgentFile {
    pub index: usize,
    /// The count its name gives.
    pub count: usize,
    pub path: PathBuf,
    pub report: LoadReport,
    /// Its protocol's own results as written (merged field by field).
    pub protocol_json: serde_json::Value,
    /// When its measured window began, by its wall clock.
    pub window_start_unix_s: f64,
    pub intervals: Vec<Interval>,
}

/// Every agent's files in `dirs`.
pub fn read_dirs(dirs: &[PathBuf]) -> Result<Vec<AgentFile>, String> {
    let mut out: Vec<AgentFile> = Vec::new();
    for dir in dirs {
        let entries =
            std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths {
            let Some((index, count)) = agent_name(&path) else {
                continue;
            };
            if let Some(twin) = out.iter().find(|a| a.index == index && a.count == count) {
                return Err(format!(
                    "agent {index} of {count} twice: {} and {}",
                    twin.path.display(),
                    path.display()
                ));
            }
            out.push(read(&path, index, count)?);
        }
    }
    if out.is_empty() {
        let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Err(format!(
            "no agent results (agent-I-of-N.json) in {}",
            dirs.join(", ")
        ));
    }
    Ok(out)
}

/// `agent-I-of-N.json` → (I, N).
fn agent_name(path: &Path) -> Option<(usize, usize)> {
    let name = path.file_name()?.to_str()?;
    let rest = name.strip_prefix("agent-")?.strip_suffix(".json")?;
    let (i, n) = rest.split_once("-of-")?;
    Some((i.parse().ok()?, n.parse().ok()?))
}

fn read(path: &Path, index: usize, count: usize) -> Result<AgentFile, String> {
    let at = |e: String| format!("{}: {e}", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| at(e.to_string()))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| at(e.to_string()))?;
    let protocol = value["protocol"].as_str().unwrap_or_default();
    let protocol_json = value["results"][protocol].clone();
    let report = LoadReport::from_value(value).map_err(|e| at(e.to_string()))?;
    let window_start_unix_s = report
        .results
        .agent
        .as_ref()
        .map(|a| a.window_start_unix_s)
        .ok_or_else(|| at("not an agent's result (no results.agent: run with --agent)".into()))?;
    let log = path.with_extension("hlog");
    let log_text = std::fs::read_to_string(&log).map_err(|e| {
        format!(
            "{}: {e} (merge adds the agents' histograms from their HDR logs, which --out writes)",
            log.display()
        )
    })?;
    let intervals = hlog::read(&log_text).map_err(|e| format!("{}: {e}", log.display()))?;
    Ok(AgentFile {
        index,
        count,
        path: path.to_path_buf(),
        report,
        protocol_json,
        window_start_unix_s,
        intervals,
    })
}
