//! A protocol's own results merged across agents by their type: each
//! field as its results type says it combines ([`crate::results::Merge`]):
//! counts added (an error past `u64::MAX`), settings of the run and
//! properties of the server the same in every agent (else an error),
//! means weighted by their counts, extremes kept, and derived figures (a
//! share, replies per second, a bucket run's bound) computed again from
//! the merged figures by the function a single run uses.

use super::AgentFile;
use crate::report::{ProtocolResults, Results};
use crate::results::{Across, Part};

/// The agents' own results as one run's; `merged` is the run merged so
/// far (its requests and throughput are what derived figures are
/// computed from). Agents of different protocols are refused.
pub fn merge(agents: &[AgentFile], merged: &Results) -> Result<Option<ProtocolResults>, String> {
    let first = agents.first().ok_or("no agent files to merge")?;
    let protocol = first.report.protocol.as_str();
    if let Some(other) = agents.iter().find(|a| a.report.protocol != protocol) {
        return Err(format!(
            "the agents ran different protocols: {protocol} in {} but {} in {}",
            name(first),
            other.report.protocol,
            name(other)
        ));
    }
    let parts = agents
        .iter()
        .map(|a| {
            a.report.results.protocol.as_ref().ok_or_else(|| {
                format!(
                    "{} has no results.{protocol} (the {protocol} load's own)",
                    name(a)
                )
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let t0 = agents
        .iter()
        .map(|a| a.window_start_unix_s)
        .fold(f64::INFINITY, f64::min);
    let at = Across {
        parts: agents
            .iter()
            .map(|a| Part {
                name: name(a),
                config: &a.report.config,
                cores_online: a.report.environment.cores_online,
                start_offset_s: a.window_start_unix_s - t0,
            })
            .collect(),
        requests: merged.requests,
        throughput_rps: merged.throughput_rps,
    };
    ProtocolResults::merge(&parts, &at)
        .map(Some)
        .map_err(|e| format!("merging the {protocol} results: {e}"))
}

/// An agent as errors name it: its index and its file.
fn name(a: &AgentFile) -> String {
    format!("agent {} ({})", a.index, a.path.display())
}
