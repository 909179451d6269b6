//! Where a plan's server and load run, and what about it undermines the
//! measurement: a server or load not pinned, or the two sharing cores
//! (where cores are an axis, because the machine has too few).

use crate::plan::Plan;
use crate::spec::Cpus;

/// The CPUs a list like `0-1,3` names (None if it is not one).
pub fn cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let (lo, hi): (usize, usize) = (lo.trim().parse().ok()?, hi.trim().parse().ok()?);
        out.extend(lo..=hi);
    }
    Some(out)
}

/// The value of the last `--cpus` in a server's flags.
pub fn server_cpus(flags: &[String]) -> Option<&str> {
    let i = flags.iter().rposition(|f| f == "--cpus")?;
    flags.get(i + 1).map(String::as_str)
}

/// The CPUs a recorded run's server and load were pinned to, together
/// (sorted, once each); None where either was not pinned (it could run on
/// any CPU).
pub fn run_cpus(record: &crate::RunRecord) -> Option<Vec<usize>> {
    let (server, load) = match &record.placement {
        Some(p) => (p.server_cpus.clone(), p.load_cpus.clone()),
        None => (
            server_cpus(&record.server.flags)?.to_string(),
            record.client_cpus.clone()?,
        ),
    };
    let mut all = cpu_list(&server)?;
    all.extend(cpu_list(&load)?);
    all.sort_unstable();
    all.dedup();
    Some(all)
}

/// What a user should know before trusting the numbers, one message each:
/// points whose server is not pinned, a load not pinned, and server CPUs
/// that overlap the load's (where cores are an axis, the points whose
/// server shares CPUs with its load).
pub fn warnings(plan: &Plan) -> Vec<String> {
    let mut out: Vec<String> = unpinned_server(plan).into_iter().collect();
    if plan.experiment.cores.is_some() {
        out.extend(shared_cores(plan));
        return out;
    }
    let Some(client) = &plan.experiment.client_cpus else {
        out.push(
            "the load is not pinned (no `client_cpus`): it may share cores with the server".into(),
        );
        return out;
    };
    out.extend(overlaps(plan, client));
    out
}

/// Points whose server has no `--cpus`.
fn unpinned_server(plan: &Plan) -> Option<String> {
    let points = &plan.points;
    let unpinned = points
        .iter()
        .filter(|p| server_cpus(&p.server_flags).is_none())
        .count();
    (unpinned > 0).then(|| {
        format!(
            "the server is not pinned at {unpinned} of {} points (no `cpus` in [server]): \
             it may run on any core, the load's included",
            points.len()
        )
    })
}

/// A line per core count whose server shares CPUs with its load (the
/// machine has too few to keep them apart).
fn shared_cores(plan: &Plan) -> Vec<String> {
    let mut seen: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    for (_, place) in plan.shared_cpus() {
        if seen.contains(&place.cores) {
            continue;
        }
        seen.push(place.cores);
        let n = plan
            .shared_cpus()
            .filter(|(_, q)| q.cores == place.cores)
            .count();
        let shared: Vec<String> = place.shared.iter().map(|c| c.to_string()).collect();
        let cpu = if shared.len() == 1 { "CPU" } else { "CPUs" };
        out.push(format!(
            "cores={}: the server (CPUs {}) shares {cpu} {} with the load (CPUs {}) at {n} of {} \
             points: this machine has too few CPUs to keep them apart; the report marks \
             these points",
            place.cores,
            place.server_cpus,
            shared.join(", "),
            place.load_cpus,
            plan.points.len()
        ));
    }
    out
}

/// Server CPU lists that overlap `client_cpus`, each with its points.
fn overlaps(plan: &Plan, client: &Cpus) -> Vec<String> {
    let points = &plan.points;
    let mut overlaps: Vec<(String, Vec<usize>, usize)> = Vec::new();
    for p in points {
        let Some(text) = server_cpus(&p.server_flags) else {
            continue;
        };
        let shared: Vec<usize> = cpu_list(text)
            .unwrap_or_default()
            .into_iter()
            .filter(|c| client.set.cpus().contains(c))
            .collect();
        if shared.is_empty() {
            continue;
        }
        match overlaps.iter_mut().find(|(t, _, _)| t == text) {
            Some((_, _, n)) => *n += 1,
            None => overlaps.push((text.to_string(), shared, 1)),
        }
    }
    overlaps
        .into_iter()
        .map(|(text, shared, n)| {
            let shared: Vec<String> = shared.iter().map(|c| c.to_string()).collect();
            format!(
                "server cpus \"{text}\" overlap client_cpus \"{}\" (CPU {}) at {n} of {} points: \
                 there the server and the load compete for the same core",
                client.written,
                shared.join(", "),
                points.len()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Experiment;

    fn plan(text: &str) -> Plan {
        Plan::new(Experiment::parse("t.toml", text).unwrap()).unwrap()
    }

    #[test]
    fn unpinned_and_overlapping_are_named() {
        let w = warnings(&plan("protocol = \"board\""));
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("server is not pinned at 1 of 1"), "{w:?}");
        assert!(w[1].contains("load is not pinned"), "{w:?}");

        let w = warnings(&plan(
            "protocol = \"board\"\nclient_cpus = \"0\"\n[server]\ncpus = [\"0\", \"0-1\", \"1\"]",
        ));
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("server cpus \"0\" overlap client_cpus \"0\" (CPU 0) at 1 of 3"));
        assert!(w[1].contains("\"0-1\""), "{w:?}");
    }

    #[test]
    fn separate_cores_are_fine() {
        let cpus = serverlab_util::CpuSet::allowed().unwrap();
        let [a, b, ..] = cpus.cpus() else {
            return; // one core here: nothing to separate
        };
        let w = warnings(&plan(&format!(
            "protocol = \"board\"\nclient_cpus = \"{b}\"\n[server]\ncpus = \"{a}\""
        )));
        assert!(w.is_empty(), "{w:?}");
    }
}
