//! Finding and reading the agents' files: `agent-I-of-N.json` (the
//! result) and `agent-I-of-N.hlog` (its HDR interval log) in each
//! directory given. Only the results are read here, each checked against
//! its own name; the logs are read one at a time as the merge adds them
//! ([`super::hlog`]), so no agent's intervals are held.

use super::Refused;
use crate::report::LoadReport;
use std::path::{Path, PathBuf};

/// The largest agent result read, checked before it is read. A result
/// grows by about 15 bytes per client and second (each client's
/// per-second series), so this is some 19 million client-seconds — 1,000
/// clients for 5 hours in one agent, 100 for two days — and a wider or
/// longer load is split over more agents (docs/measuring.md). Parsed, a
/// result takes up to about three times its size.
pub const MAX_RESULT_BYTES: u64 = 256 << 20;
/// Offending operation names a refusal quotes (it counts the rest).
const QUOTED: usize = 3;

/// One agent's result, read, and where its log is.
pub struct AgentFile {
    pub index: usize,
    /// The count its name gives (its result says the same).
    pub count: usize,
    pub path: PathBuf,
    /// Its HDR interval log, beside it.
    pub hlog: PathBuf,
    pub report: LoadReport,
    /// Its protocol's own results as written (merged field by field).
    pub protocol_json: serde_json::Value,
    /// When its measured window began, by its wall clock.
    pub window_start_unix_s: f64,
    /// The run it was one of, if its file says (files written before run
    /// ids do not).
    pub run_id: Option<String>,
}

/// Every agent's result in `dirs`: refused, a line per file, where a
/// file cannot be read or disagrees with its name, or two files are one
/// agent's.
pub fn read_dirs(dirs: &[PathBuf]) -> Result<Vec<AgentFile>, Refused> {
    let mut out: Vec<AgentFile> = Vec::new();
    let mut problems = Vec::new();
    for path in agent_paths(dirs)? {
        let Some((index, count)) = agent_name(&path) else {
            continue;
        };
        if let Some(twin) = out.iter().find(|a| a.index == index && a.count == count) {
            problems.push(format!(
                "{}: agent {index} of {count} again (also {})",
                path.display(),
                twin.path.display()
            ));
            continue;
        }
        match read(&path, index, count) {
            Ok(a) => out.push(a),
            Err(why) => problems.push(format!("{}: {why}", path.display())),
        }
    }
    if !problems.is_empty() {
        return Err(Refused(problems));
    }
    if out.is_empty() {
        let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Err(Refused::one(format!(
            "no agent results (agent-I-of-N.json) in {}",
            dirs.join(", ")
        )));
    }
    Ok(out)
}

/// Every file in `dirs`, each directory's sorted.
fn agent_paths(dirs: &[PathBuf]) -> Result<Vec<PathBuf>, Refused> {
    let mut all = Vec::new();
    for dir in dirs {
        let entries = std::fs::read_dir(dir)
            .map_err(|e| Refused::one(format!("{}: cannot read it: {e}", dir.display())))?;
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        all.extend(paths);
    }
    Ok(all)
}

/// `agent-I-of-N.json` → (I, N).
fn agent_name(path: &Path) -> Option<(usize, usize)> {
    let name = path.file_name()?.to_str()?;
    let rest = name.strip_prefix("agent-")?.strip_suffix(".json")?;
    let (i, n) = rest.split_once("-of-")?;
    Some((i.parse().ok()?, n.parse().ok()?))
}

/// The result at `path`, named agent `index` of `count`, or why it
/// cannot be merged.
fn read(path: &Path, index: usize, count: usize) -> Result<AgentFile, String> {
    if index >= count {
        return Err(format!(
            "agent {index} of {count}: agents are numbered from 0, below their count"
        ));
    }
    let text = read_capped(path)?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))?;
    let protocol = value["protocol"].as_str().unwrap_or_default();
    let protocol_json = value["results"][protocol].clone();
    let report = LoadReport::from_value(value).map_err(|e| e.to_string())?;
    operations(&report)?;
    let agent = report
        .results
        .agent
        .as_ref()
        .ok_or("not an agent's result (no results.agent: run with --agent)")?;
    if (agent.index, agent.count) != (index, count) {
        return Err(format!(
            "its result says agent {} of {}, its name agent {index} of {count}: renamed, or \
             another agent's",
            agent.index, agent.count
        ));
    }
    let (window_start_unix_s, run_id) = (agent.window_start_unix_s, agent.run_id.clone());
    window(&report)?;
    Ok(AgentFile {
        index,
        count,
        path: path.to_path_buf(),
        hlog: path.with_extension("hlog"),
        report,
        protocol_json,
        window_start_unix_s,
        run_id,
    })
}

/// A result's window is one `load` could have written: its start a
/// number (a clock may be wrong: [`super::clocks`]), its length no
/// longer than its per-second series (which has a slot for every second
/// of it). What the merge allocates follows from these, so a file cannot
/// make it allocate more than its own size.
fn window(report: &LoadReport) -> Result<(), String> {
    let r = &report.results;
    let start = r.agent.as_ref().map_or(0.0, |a| a.window_start_unix_s);
    if !start.is_finite() {
        return Err(format!("its window starts at {start}, not a time"));
    }
    let seconds = r.per_second.len();
    if !(r.duration_s.is_finite() && r.duration_s >= 0.0 && r.duration_s <= seconds as f64) {
        return Err(format!(
            "its window is {} s long but its per-second series has {seconds} seconds: not a \
             result `load` wrote",
            r.duration_s
        ));
    }
    Ok(())
}

/// The text of the file at `path`: refused unless it is a regular file
/// of at most [`MAX_RESULT_BYTES`] (a device such as /dev/zero, a pipe or
/// a directory is not a result; one that grows past the limit while read
/// is cut there).
fn read_capped(path: &Path) -> Result<String, String> {
    use serverlab_util::file::{read_regular_text_capped, ReadError};
    read_regular_text_capped(path, MAX_RESULT_BYTES).map_err(|e| match e {
        ReadError::NotRegular => "not a regular file (a device, pipe or directory): an agent's \
                                  result is the file `load --out` wrote"
            .into(),
        ReadError::TooBig { bytes, .. } => format!(
            "{bytes} bytes, past the {} MiB an agent's result may be: not a result `load` wrote",
            MAX_RESULT_BYTES >> 20
        ),
        ReadError::Io(e) => format!("cannot read it: {e}"),
    })
}

/// The operations a `protocol` load has, by the names its results use.
fn operations_of(protocol: &str) -> Option<&'static [&'static str]> {
    use serverlab_proto::{board, bucket, kv, resp};
    match protocol {
        board::NAME => Some(&crate::board::OPS),
        bucket::NAME => Some(&crate::bucket::OPS),
        kv::NAME => Some(&crate::kv::OPS),
        resp::NAME => Some(&crate::resp::OPS),
        crate::http::NAME => Some(&crate::http::OPS),
        _ => None,
    }
}

/// The result's operations are its protocol's, each once: what the merge
/// allocates per operation (a 264 KiB histogram each) is then bounded by the
/// protocol, not by the file. A refusal quotes the first few offenders
/// and counts the rest.
fn operations(report: &LoadReport) -> Result<(), String> {
    let protocol = report.protocol.as_str();
    let Some(known) = operations_of(protocol) else {
        return Err(format!("a {protocol} load, which merge does not know"));
    };
    // A RESP load's commands of the user's own (`--command`), as its
    // configuration names them: no more than the file holds.
    let mut own: Vec<&str> = report
        .config
        .get("commands")
        .and_then(|c| c.as_array())
        .map(|a| a.iter().filter_map(|c| c.get("name")?.as_str()).collect())
        .unwrap_or_default();
    // Its pub/sub workload's operations (PUBLISH, deliver), likewise.
    let workload = report.config.get("workload").and_then(|w| w.as_str());
    if protocol == serverlab_proto::resp::NAME && workload == Some("pubsub") {
        own.extend(crate::resp::pubsub::OPS);
    }
    let mut seen = std::collections::BTreeSet::new();
    let (mut quoted, mut offenders) = (Vec::new(), 0usize);
    for op in &report.results.operations {
        let name = op.name.as_str();
        if (known.contains(&name) || own.contains(&name)) && seen.insert(name) {
            continue;
        }
        offenders += 1;
        if quoted.len() < QUOTED {
            quoted.push(format!("'{}'", clip(name)));
        }
    }
    if offenders == 0 {
        return Ok(());
    }
    let more = match offenders - quoted.len() {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    Err(format!(
        "operations {}{more} are not a {protocol} load's ({}) or are named twice: not a result \
         `load` wrote",
        quoted.join(", "),
        known.join(", ")
    ))
}

/// `name`, cut to 40 characters (a name quoted in a refusal).
fn clip(name: &str) -> String {
    match name.char_indices().nth(40) {
        Some((at, _)) => format!("{}…", &name[..at]),
        None => name.to_string(),
    }
}
