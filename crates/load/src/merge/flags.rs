//! What makes a merge suspect, one sentence each.

use super::{generator_bound, AgentFile};

/// More than this between the agents' starts, and the agents did not
/// load the server together for the whole window.
pub const LATE_MS: f64 = 10.0;

/// The agent whose configuration (and load model) most agents share:
/// the merged result's.
pub fn reference(agents: &[AgentFile]) -> usize {
    let same = |a: &AgentFile, b: &AgentFile| {
        a.report.config == b.report.config && a.report.load_model == b.report.load_model
    };
    (0..agents.len())
        .max_by_key(|&i| {
            let n = agents.iter().filter(|b| same(&agents[i], b)).count();
            (n, std::cmp::Reverse(i))
        })
        .unwrap_or(0)
}

/// The flags of a merge of `agents` (sorted by index), `base` the
/// reference configuration, `t0` the first window's start.
pub fn flags(agents: &[AgentFile], base: usize, t0: f64) -> Vec<String> {
    let mut out = Vec::new();
    let count = agents.iter().map(|a| a.count).max().unwrap_or(0);
    let counts: Vec<usize> = agents.iter().map(|a| a.count).collect();
    if counts.iter().any(|&c| c != count) {
        out.push(format!(
            "the agents' files disagree on how many agents there were: {counts:?}"
        ));
    }
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
    for a in agents {
        let r = &a.report.results;
        let offset_ms = (a.window_start_unix_s - t0) * 1e3;
        if offset_ms > LATE_MS {
            out.push(format!(
                "late: agent {} started {offset_ms:.1} ms after the first (more than {LATE_MS} ms): \
                 its first second is not the others'",
                a.index
            ));
        }
        let lag = r.agent.as_ref().and_then(|g| g.start_lag_ms);
        if let Some(lag) = lag.filter(|&l| l > LATE_MS) {
            out.push(format!(
                "late: agent {} started {lag:.1} ms after --start-at (its connections or setup \
                 took longer than the time to the start)",
                a.index
            ));
        }
        if generator_bound(&r.client_cpu) {
            out.push(format!(
                "generator-bound: agent {} kept {:.0}% of its {} cores busy itself: it may have \
                 set the pace; add agents",
                a.index,
                r.client_cpu.utilization * 100.0,
                r.client_cpu.cores
            ));
        }
        let reference = &agents[base].report;
        if a.report.config != reference.config || a.report.load_model != reference.load_model {
            out.push(format!(
                "configuration: agent {} ran other flags than agent {} ({})",
                a.index,
                agents[base].index,
                differences(&a.report.config, &reference.config).join(", ")
            ));
        }
    }
    out
}

/// The configuration keys whose values differ.
fn differences(a: &serde_json::Value, b: &serde_json::Value) -> Vec<String> {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return vec!["its configuration".into()];
    };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            let show = |v: Option<&serde_json::Value>| v.map_or("-".into(), |v| v.to_string());
            format!("{k} {} vs {}", show(a.get(k)), show(b.get(k)))
        })
        .collect()
}
