//! What cannot be merged, refused before anything is added: files of
//! runs split another way, of other protocols, with other flags, of
//! other runs, and agents missing (unless the merge is told to allow
//! them). Each problem is a line naming a file. Where the files
//! disagree, the most of them (ties: the lowest-numbered agent's) are
//! the run, and each file apart from them is named.

use super::{AgentFile, Refused};
use std::collections::BTreeSet;

/// Refused unless `agents` (sorted by index) are of one run; agents
/// missing are refused unless `allow_missing`.
pub fn check(agents: &[AgentFile], allow_missing: bool) -> Result<(), Refused> {
    let mut lines = Vec::new();
    let count = apart(
        agents,
        |a| a.count,
        &mut lines,
        |a, r| {
            format!(
                "agent {} of {}, but {} is of {}: files of a {}-agent and a {}-agent run",
                a.index,
                a.count,
                r.path.display(),
                r.count,
                a.count,
                r.count
            )
        },
    );
    apart(
        agents,
        |a| a.report.protocol.clone(),
        &mut lines,
        |a, r| {
            format!(
                "a {} load, but {} is a {} load: agents of different protocols cannot be merged",
                a.report.protocol,
                r.path.display(),
                r.report.protocol
            )
        },
    );
    if lines.is_empty() {
        flags_agree(agents, &mut lines);
    }
    if lines.is_empty() {
        runs_agree(agents, &mut lines);
    }
    if lines.is_empty() && !allow_missing {
        lines.extend(missing(agents, count));
    }
    if lines.is_empty() {
        Ok(())
    } else {
        Err(Refused(lines))
    }
}

/// The value of `key` most agents share (ties: the lowest-numbered
/// agent's); a line, from `say(file, a file of the most)`, for each file
/// whose value is another.
fn apart<K: Ord + Clone>(
    agents: &[AgentFile],
    key: impl Fn(&AgentFile) -> K,
    lines: &mut Vec<String>,
    say: impl Fn(&AgentFile, &AgentFile) -> String,
) -> K {
    let mut tally: Vec<(K, usize, usize)> = Vec::new(); // (value, agents, first)
    for (i, a) in agents.iter().enumerate() {
        let k = key(a);
        match tally.iter_mut().find(|(v, _, _)| *v == k) {
            Some(t) => t.1 += 1,
            None => tally.push((k, 1, i)),
        }
    }
    let (most, _, first) = tally
        .iter()
        .max_by_key(|(_, n, first)| (*n, std::cmp::Reverse(*first)))
        .cloned()
        .expect("at least one agent");
    for a in agents.iter().filter(|a| key(a) != most) {
        lines.push(format!("{}: {}", a.path.display(), say(a, &agents[first])));
    }
    most
}

/// Every agent ran the flags most did: its configuration and load model.
fn flags_agree(agents: &[AgentFile], lines: &mut Vec<String>) {
    let flags = |a: &AgentFile| (a.report.config.to_string(), a.report.load_model.clone());
    apart(agents, flags, lines, |a, r| {
        let mut keys = differences(&a.report.config, &r.report.config);
        if a.report.load_model != r.report.load_model {
            keys.push(format!(
                "load model '{}' vs '{}'",
                a.report.load_model, r.report.load_model
            ));
        }
        format!(
            "run with other flags than {}: {}; agents of one load are given the same flags",
            r.path.display(),
            keys.join(", ")
        )
    });
}

/// Every agent names one run: the same run id, all or none of them.
fn runs_agree(agents: &[AgentFile], lines: &mut Vec<String>) {
    let some = |a: &AgentFile| a.run_id.is_some();
    let has = apart(agents, some, lines, |a, r| match &r.run_id {
        Some(id) => format!(
            "no run id (written before run ids), so it cannot be checked to be of the run of {} \
             (run {id}); merge it only with files that have none",
            r.path.display()
        ),
        None => format!(
            "run {}, but {} has no run id (written before run ids) and cannot be checked to \
             be of its run; merge it only with files that have one",
            a.run_id.as_deref().unwrap_or_default(),
            r.path.display()
        ),
    });
    if !has || !lines.is_empty() {
        return;
    }
    apart(
        agents,
        |a| a.run_id.clone(),
        lines,
        |a, r| {
            format!(
                "of run {}, but {} is of run {}: agents of different runs (a stale file of an \
             earlier run, or another --start-at or --run-id)",
                a.run_id.as_deref().unwrap_or_default(),
                r.path.display(),
                r.run_id.as_deref().unwrap_or_default()
            )
        },
    );
}

/// The agents of `count` without a file, as one line.
fn missing(agents: &[AgentFile], count: usize) -> Option<String> {
    let found: BTreeSet<usize> = agents.iter().map(|a| a.index).collect();
    let lost: Vec<usize> = (0..count).filter(|i| !found.contains(i)).collect();
    if lost.is_empty() {
        return None;
    }
    let names: Vec<String> = lost
        .iter()
        .take(8)
        .map(|i| format!("agent-{i}-of-{count}.json"))
        .collect();
    let more = match lost.len() {
        n if n > 8 => format!(" and {} more", n - 8),
        _ => String::new(),
    };
    let dir = agents[0]
        .path
        .parent()
        .map_or(String::new(), |d| format!("{}/", d.display()));
    Some(format!(
        "{dir}{}{more}: missing, {} of {count} agents found (the merged load would be smaller \
         than asked); merge --allow-missing merges those found, flagged",
        names.join(", "),
        found.len()
    ))
}

/// The configuration keys whose values differ, each with both values.
pub fn differences(a: &serde_json::Value, b: &serde_json::Value) -> Vec<String> {
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
