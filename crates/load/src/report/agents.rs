//! What a split load adds to a result: in an agent's own result, which
//! share it ran and when it started ([`AgentRun`]); in the result
//! `serverlab merge` writes, a line per agent and what is wrong with the
//! set ([`Merged`]).

use serde::{Deserialize, Serialize};

/// An agent's run, in its own result (also a single run's, given a
/// `--start-at`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentRun {
    /// Which agent (from 0) of how many.
    pub index: usize,
    pub count: usize,
    /// The instant asked for (`--start-at`), in seconds since the Unix
    /// epoch; absent: the run started at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at_unix_s: Option<f64>,
    /// How long after that instant the run actually started, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_lag_ms: Option<f64>,
    /// When the run started (connections open) and its measured window
    /// (after the warm-up) began, by this machine's wall clock, in
    /// seconds since the Unix epoch.
    pub started_unix_s: f64,
    pub window_start_unix_s: f64,
}

/// A merged result's account of its agents.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Merged {
    /// How many agents the load was split into, and one line for each
    /// agent whose files were found, by index.
    pub count: usize,
    pub agents: Vec<AgentLine>,
    /// What makes the merged result suspect, one sentence each: agents
    /// missing, started late, generator-bound, or configured otherwise.
    pub flags: Vec<String>,
}

/// One agent of a merge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentLine {
    pub index: usize,
    /// The files it was read from.
    pub file: String,
    /// Its clients (connections, sessions in flight) and its requests.
    pub concurrency: u64,
    pub requests: u64,
    /// Open loop: the rate it ran (its share of the total).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_rps: Option<f64>,
    /// Its own CPU: working share of its cores.
    pub client_cpu_utilization: f64,
    pub start_lag_ms: Option<f64>,
    /// Its window began this long after the earliest agent's, ms.
    pub start_offset_ms: f64,
    /// It kept its cores busy itself: the load it offered may be less
    /// than asked, and its latencies include its own queueing.
    pub generator_bound: bool,
}
