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
    /// The run this agent was one of: every agent of one run carries the
    /// same id (`load --run-id`, or [`AgentRun::derive_run_id`] of what
    /// the agents share), so `merge` can refuse a file of another run.
    /// Absent from files written before run ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

impl AgentRun {
    /// The run id every agent of one run derives alike, when none is
    /// given: 16 hex digits hashing the protocol, the load model, the
    /// configuration (which leaves the agent's index out), the agent
    /// count and the start instant asked for (`--start-at`), bit for bit.
    /// Agents given other flags, or another start, get another id; so
    /// does a stale file of an earlier run, unless that run had the same
    /// flags and start instant.
    pub fn derive_run_id(
        protocol: &str,
        load_model: &str,
        config: &serde_json::Value,
        count: usize,
        start_at_unix_s: Option<f64>,
    ) -> String {
        let start = start_at_unix_s.map_or("-".to_string(), |t| format!("{:016x}", t.to_bits()));
        let text = format!("{protocol}\n{load_model}\n{config}\n{count}\n{start}");
        format!("{:016x}", fnv1a(text.as_bytes()))
    }
}

/// FNV-1a, 64 bits: stable across builds and platforms (std's hashers
/// are not promised to be).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A merged result's account of its agents.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Merged {
    /// How many agents the load was split into, and one line for each
    /// agent whose files were found, by index.
    pub count: usize,
    pub agents: Vec<AgentLine>,
    /// What makes the merged result suspect, one sentence each: agents
    /// missing (merged with `--allow-missing`), started late, with a
    /// wrong clock, or generator-bound; files without run ids.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_differ_with_what_agents_share() {
        let config = serde_json::json!({"rate": 400.0, "posters": 2});
        let id =
            |c: &serde_json::Value, n, at| AgentRun::derive_run_id("board", "open-loop", c, n, at);
        let base = id(&config, 4, Some(1_767_225_600.5));
        assert_eq!(base.len(), 16);
        assert_eq!(base, id(&config, 4, Some(1_767_225_600.5)), "deterministic");
        assert_ne!(base, id(&config, 2, Some(1_767_225_600.5)));
        assert_ne!(base, id(&config, 4, Some(1_767_225_601.5)));
        assert_ne!(base, id(&config, 4, None));
        let other = serde_json::json!({"rate": 400.0, "posters": 3});
        assert_ne!(base, id(&other, 4, Some(1_767_225_600.5)));
        // The same on every platform and build: FNV-1a's published value.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
