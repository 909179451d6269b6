//! What makes a merge suspect, one sentence each. (What makes it wrong
//! is refused: [`super::refuse`].)

use super::clocks::{Placement, MARGIN_S};
use super::{generator_bound, AgentFile};

/// More than this between the agents' starts, and the agents did not
/// load the server together for the whole window.
pub const LATE_MS: f64 = 10.0;

/// The flags of a merge of `agents` (sorted by index, of one run) into
/// `count` agents, placed as `place` says.
pub fn flags(agents: &[AgentFile], count: usize, place: &Placement) -> Vec<String> {
    let mut out = Vec::new();
    let missing: Vec<String> = (0..count)
        .filter(|i| !agents.iter().any(|a| a.index == *i))
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        out.push(format!(
            "missing: {} of {count} agents found; no files of agent {} (the merged load is \
             smaller than asked)",
            agents.len(),
            missing.join(", ")
        ));
    }
    if agents.iter().all(|a| a.run_id.is_none()) {
        out.push(
            "no run id: these files were written before run ids, so that they are of one run \
             cannot be checked"
                .into(),
        );
    }
    for (k, a) in agents.iter().enumerate() {
        agent_flags(a, k, place, &mut out);
    }
    out
}

fn agent_flags(a: &AgentFile, k: usize, place: &Placement, out: &mut Vec<String>) {
    let r = &a.report.results;
    let offset_s = a.window_start_unix_s - place.t0;
    if place.wrong[k] {
        out.push(format!(
            "clock: agent {}'s window began {offset_s:+.3} s from the first of the others', by \
             its clock: further than the run lasts ({:.1} s) plus {MARGIN_S} s, so its clock (or \
             its start) is wrong; its seconds are placed as if it started with the others",
            a.index, place.run_s
        ));
    } else if offset_s * 1e3 > LATE_MS {
        out.push(format!(
            "late: agent {} started {:.1} ms after the first (more than {LATE_MS} ms): its first \
             second is not the others'",
            a.index,
            offset_s * 1e3
        ));
    }
    let lag = r.agent.as_ref().and_then(|g| g.start_lag_ms);
    if let Some(lag) = lag.filter(|&l| l > LATE_MS) {
        out.push(format!(
            "late: agent {} started {lag:.1} ms after --start-at (its connections or setup took \
             longer than the time to the start)",
            a.index
        ));
    }
    if generator_bound(&r.client_cpu) {
        out.push(format!(
            "generator-bound: agent {} kept {:.0}% of its {} cores busy itself: it may have set \
             the pace; add agents",
            a.index,
            r.client_cpu.utilization * 100.0,
            r.client_cpu.cores
        ));
    }
}
