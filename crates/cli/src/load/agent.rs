//! The flags of a load split across processes: which agent this is
//! (given, or from Slurm's or Kubernetes's environment), when its window
//! starts, and where its files go. The split itself is the harness's
//! ([`Agent`]).

use super::usage_error_in;
use clap::error::ErrorKind;
use clap::Args;
use serverlab_load::harness::Agent;
use serverlab_load::report::{AgentRun, LoadReport};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How the agent is named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentSpec {
    Given(Agent),
    /// From a Slurm job array's task (or an srun step's task).
    Slurm,
    /// From a Kubernetes Indexed Job's completion index.
    K8s,
}

#[derive(Args)]
pub struct AgentArgs {
    /// Run one agent's share of a load split across N processes (machines): I/N (from 0: 0/4 … 3/4),
    /// slurm (SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT, or SLURM_PROCID and SLURM_NTASKS), or
    /// k8s (JOB_COMPLETION_INDEX, and --agents). Rates, connections and requests are the whole load's
    #[arg(long, value_name = "I/N|slurm|k8s", value_parser = parse_agent)]
    pub agent: Option<AgentSpec>,
    /// How many agents, for --agent k8s [default: $SERVERLAB_AGENTS]
    #[arg(long, value_name = "N", requires = "agent",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub agents: Option<u32>,
    /// Connect, then start at this wall-clock instant: Unix seconds (1767225600) or RFC 3339
    /// (2026-01-01T12:00:00Z); the result records how late the start was
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub start_at: Option<SystemTime>,
    /// Write the result (JSON) and an HDR interval log into DIR as agent-I-of-N.json and
    /// agent-I-of-N.hlog, for `serverlab merge DIR`
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Name the run every agent is part of (letters, digits, '.', '_', ':', '-'; at most 64), so
    /// `merge` refuses files of another run [default: a hash of the flags, the agent count and
    /// --start-at]
    #[arg(long, value_name = "ID", requires = "agent", value_parser = parse_run_id)]
    pub run_id: Option<String>,
}

impl AgentArgs {
    /// This process's agent (the whole load unless --agent says), or a
    /// usage error of `load <protocol>` that names what is missing.
    /// `search`: the load is a capacity search, which cannot be split.
    pub fn agent(&self, protocol: &str, search: bool) -> Agent {
        let Some(spec) = self.agent else {
            return Agent::SOLO;
        };
        let fail = |msg: String| usage_error_in(protocol, ErrorKind::ValueValidation, msg);
        if search {
            usage_error_in(
                protocol,
                ErrorKind::ArgumentConflict,
                "--search cannot be split across agents: it decides each step's rate from the \
                 last step's result, which no agent has alone; use --scan with --agent (every agent \
                 runs the same rates at the same times) and merge the agents' results"
                    .into(),
            )
        }
        let found = match spec {
            AgentSpec::Given(a) => Ok(a),
            AgentSpec::Slurm => from_slurm(&env),
            AgentSpec::K8s => from_k8s(&env, self.agents),
        };
        found.unwrap_or_else(|e| fail(format!("--agent: {e}")))
    }

    /// The files of agent `agent` under --out, if given: its JSON and
    /// its HDR log (the directory made if need be).
    pub fn files(&self, agent: Agent) -> anyhow::Result<Option<(PathBuf, PathBuf)>> {
        let Some(dir) = &self.out else {
            return Ok(None);
        };
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot make --out {}: {e}", dir.display()))?;
        let name = file_stem(agent);
        let at = |ext: &str| Path::new(dir).join(format!("{name}.{ext}"));
        Ok(Some((at("json"), at("hlog"))))
    }
}

impl AgentArgs {
    /// Record the run id in an agent's result (one with `results.agent`):
    /// --run-id's, or the one every agent of the run derives alike.
    pub fn stamp_run_id(&self, report: &mut LoadReport) {
        let Some(agent) = report.results.agent.as_ref() else {
            return;
        };
        let id = self.run_id.clone().unwrap_or_else(|| {
            AgentRun::derive_run_id(
                &report.protocol,
                &report.load_model,
                &report.config,
                agent.count,
                agent.start_at_unix_s,
            )
        });
        if let Some(agent) = report.results.agent.as_mut() {
            agent.run_id = Some(id);
        }
    }
}

/// A run id: 1 to 64 of `[A-Za-z0-9._:-]`, so it prints on one line and
/// fits in a file name.
fn parse_run_id(s: &str) -> Result<String, String> {
    let ok = |c: char| c.is_ascii_alphanumeric() || "._:-".contains(c);
    if s.is_empty() || s.len() > 64 || !s.chars().all(ok) {
        return Err(format!(
            "'{s}': a run id is 1 to 64 letters, digits, '.', '_', ':' or '-'"
        ));
    }
    Ok(s.to_string())
}

/// `agent-I-of-N`: the name of an agent's files.
pub fn file_stem(agent: Agent) -> String {
    format!("agent-{}-of-{}", agent.index, agent.count)
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// A number from the environment variable `name`, or why not.
fn number(get: &dyn Fn(&str) -> Option<String>, name: &str) -> Result<usize, String> {
    let v = get(name).ok_or_else(|| format!("{name} is not set"))?;
    v.trim()
        .parse()
        .map_err(|_| format!("{name} is '{v}', not a number"))
}

fn checked(index: usize, count: usize, from: &str) -> Result<Agent, String> {
    Agent::new(index, count)
        .ok_or_else(|| format!("{from} gives agent {index} of {count}: not below the count"))
}

/// A job array's task (its index counted from the array's first), or an
/// srun step's task.
fn from_slurm(get: &dyn Fn(&str) -> Option<String>) -> Result<Agent, String> {
    if get("SLURM_ARRAY_TASK_ID").is_some() {
        let id = number(get, "SLURM_ARRAY_TASK_ID")?;
        let count = number(get, "SLURM_ARRAY_TASK_COUNT")?;
        let min =
            get("SLURM_ARRAY_TASK_MIN").map_or(Ok(0), |_| number(get, "SLURM_ARRAY_TASK_MIN"))?;
        let index = id
            .checked_sub(min)
            .ok_or("SLURM_ARRAY_TASK_ID is below SLURM_ARRAY_TASK_MIN")?;
        return checked(index, count, "SLURM_ARRAY_TASK_ID");
    }
    if get("SLURM_PROCID").is_some() {
        let index = number(get, "SLURM_PROCID")?;
        let count = number(get, "SLURM_NTASKS")?;
        return checked(index, count, "SLURM_PROCID");
    }
    Err(
        "slurm: SLURM_ARRAY_TASK_ID is not set (nor SLURM_PROCID): run it as a task of a job \
         array (sbatch --array) or under srun"
            .into(),
    )
}

/// An Indexed Job's completion index; the count from --agents, or
/// $SERVERLAB_AGENTS.
fn from_k8s(get: &dyn Fn(&str) -> Option<String>, agents: Option<u32>) -> Result<Agent, String> {
    let index = number(get, "JOB_COMPLETION_INDEX")
        .map_err(|e| format!("k8s: {e} (set by an Indexed Job: completionMode: Indexed)"))?;
    let count = match agents {
        Some(n) => n as usize,
        None => number(get, "SERVERLAB_AGENTS")
            .map_err(|e| format!("k8s: {e}; give the count with --agents N"))?,
    };
    checked(index, count, "JOB_COMPLETION_INDEX")
}

fn parse_agent(s: &str) -> Result<AgentSpec, String> {
    match s {
        "slurm" => return Ok(AgentSpec::Slurm),
        "k8s" | "kubernetes" => return Ok(AgentSpec::K8s),
        _ => {}
    }
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("'{s}' is not I/N (0/4), slurm or k8s"))?;
    let num = |v: &str| {
        v.trim()
            .parse::<usize>()
            .map_err(|_| format!("'{v}' in '{s}' is not a number"))
    };
    let (index, count) = (num(i)?, num(n)?);
    if count == 0 {
        return Err(format!("'{s}': the count of agents N must be at least 1"));
    }
    Agent::new(index, count)
        .map(AgentSpec::Given)
        .ok_or_else(|| {
            format!(
                "'{s}': agents are numbered from 0, so I must be below N (0/{count} … {}/{count})",
                count - 1
            )
        })
}

/// Unix seconds (fractions allowed) or RFC 3339.
pub fn parse_time(s: &str) -> Result<SystemTime, String> {
    if let Ok(secs) = s.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            return Ok(UNIX_EPOCH + Duration::from_secs_f64(secs));
        }
    }
    rfc3339(s).ok_or_else(|| {
        format!("'{s}' is neither Unix seconds (1767225600.5) nor RFC 3339 (2026-01-01T12:00:00Z)")
    })
}

/// `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
fn rfc3339(s: &str) -> Option<SystemTime> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if b[13] != b':' || b[16] != b':' || !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    if h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut frac = 0.0;
    if let Some(r) = rest.strip_prefix('.') {
        let digits = r.bytes().take_while(u8::is_ascii_digit).count();
        frac = format!("0.{}", &r[..digits]).parse().ok()?;
        rest = &r[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (oh, om) = (
                rest.get(1..3)?.parse::<i64>().ok()?,
                rest.get(4..6)?.parse::<i64>().ok()?,
            );
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            sign * (oh * 3600 + om * 60)
        }
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec - offset;
    let secs = u64::try_from(secs).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_secs_f64(frac))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_in_both_forms() {
        let t = |s| {
            parse_time(s)
                .unwrap()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs_f64()
        };
        assert_eq!(t("1767225600"), 1_767_225_600.0);
        assert_eq!(t("2026-01-01T00:00:00Z"), 1_767_225_600.0);
        assert_eq!(t("2026-01-01T01:00:00.5+01:00"), 1_767_225_600.5);
        assert_eq!(t("1970-01-01T00:00:00Z"), 0.0);
        // Noon on a leap day is 1709208000; 30 minutes west of UTC, half an hour later.
        assert_eq!(t("2024-02-29T12:00:00-00:30"), 1_709_208_000.0 + 1800.0);
        assert!(parse_time("2026-13-01T00:00:00Z").is_err());
        assert!(parse_time("tomorrow").is_err());
    }

    #[test]
    fn agents_come_from_the_schedulers_variables() {
        let vars = |pairs: &'static [(&str, &str)]| {
            move |n: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, v)| v.to_string())
            }
        };
        let a = from_slurm(&vars(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]));
        assert_eq!(a, Ok(Agent::new(3, 4).unwrap()));
        let a = from_slurm(&vars(&[
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_MIN", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "2"),
        ]));
        assert_eq!(a, Ok(Agent::new(1, 2).unwrap()));
        let a = from_slurm(&vars(&[("SLURM_PROCID", "1"), ("SLURM_NTASKS", "2")]));
        assert_eq!(a, Ok(Agent::new(1, 2).unwrap()));
        let e = from_slurm(&vars(&[("SLURM_ARRAY_TASK_ID", "1")])).unwrap_err();
        assert!(e.contains("SLURM_ARRAY_TASK_COUNT"), "{e}");
        assert!(from_slurm(&vars(&[]))
            .unwrap_err()
            .contains("SLURM_ARRAY_TASK_ID"));
        let a = from_k8s(&vars(&[("JOB_COMPLETION_INDEX", "2")]), Some(3));
        assert_eq!(a, Ok(Agent::new(2, 3).unwrap()));
        let e = from_k8s(&vars(&[("JOB_COMPLETION_INDEX", "2")]), None).unwrap_err();
        assert!(
            e.contains("SERVERLAB_AGENTS") && e.contains("--agents"),
            "{e}"
        );
        assert!(from_k8s(&vars(&[]), Some(3))
            .unwrap_err()
            .contains("JOB_COMPLETION_INDEX"));
    }

    #[test]
    fn agent_specs_parse() {
        assert_eq!(
            parse_agent("1/4"),
            Ok(AgentSpec::Given(Agent::new(1, 4).unwrap()))
        );
        assert_eq!(parse_agent("slurm"), Ok(AgentSpec::Slurm));
        assert!(parse_agent("5/4").unwrap_err().contains("below N"));
        assert!(parse_agent("0/0").unwrap_err().contains("at least 1"));
        assert!(parse_agent("two").is_err());
    }

    #[test]
    fn run_ids_are_one_word() {
        assert_eq!(parse_run_id("job-42.a:1"), Ok("job-42.a:1".into()));
        assert!(parse_run_id("").is_err());
        assert!(parse_run_id("a b").is_err());
        assert!(parse_run_id(&"x".repeat(65)).is_err());
    }
}
