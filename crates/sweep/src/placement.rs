//! Cores as an axis: `cores = [1, 2, 4]` (or `"1..half"`) in `[server]`
//! pins the server to k CPUs of the machine and the load to CPUs the
//! server does not use. The server's CPUs are chosen one per physical
//! core first (SMT siblings last), on one NUMA node first; the load gets
//! the CPUs the largest server leaves, the same at every k, so that only
//! the server changes along the axis. Where the machine has too few CPUs
//! for that, a point's load gets what its own server leaves, and where
//! nothing is left, every CPU: that point's server and load share CPUs,
//! and the sweep and the report say so.

use crate::topology::Topology;
use serde::{Deserialize, Serialize};

/// `cores = "1..half"`: powers of two from 1 up to half the machine's
/// CPUs, and half itself (1, 2, 4, 8 on 16 CPUs; 1, 2, 4, 6 on 12; 1 on
/// 2): the other half runs the load.
pub const UP_TO_HALF: &str = "1..half";

/// `cores` as the experiment writes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Cores {
    /// These core counts.
    List(Vec<usize>),
    /// [`UP_TO_HALF`].
    UpToHalf,
}

/// The core counts an experiment runs on this machine, and why they are
/// what they are when the machine chose them.
#[derive(Debug, Clone, PartialEq)]
pub struct Counts {
    pub counts: Vec<usize>,
    pub note: Option<String>,
}

impl Cores {
    /// `cores = 2`, `cores = [1, 2, 4]` or `cores = "1..half"`.
    pub fn parse(v: &toml::Value) -> Result<Cores, String> {
        let bad = || {
            format!(
                "server.cores: expected core counts such as [1, 2, 4] or \"{UP_TO_HALF}\" \
                 (powers of two up to half the machine's CPUs)"
            )
        };
        let count = |v: &toml::Value| match v.as_integer() {
            Some(n) if n >= 1 => Ok(n as usize),
            _ => Err(bad()),
        };
        match v {
            toml::Value::String(s) if s.trim() == UP_TO_HALF => Ok(Cores::UpToHalf),
            toml::Value::Array(items) if !items.is_empty() => {
                let mut list = Vec::new();
                for item in items {
                    let n = count(item)?;
                    if list.contains(&n) {
                        return Err(format!("server.cores: {n} is listed twice"));
                    }
                    list.push(n);
                }
                Ok(Cores::List(list))
            }
            other => Ok(Cores::List(vec![count(other)?])),
        }
    }

    /// The counts on a machine with `topology`'s CPUs. A count above the
    /// machine's is an error naming the axis.
    pub fn counts(&self, topology: &Topology) -> Result<Counts, String> {
        let n = topology.len();
        match self {
            Cores::List(list) => match list.iter().find(|&&k| k > n) {
                Some(k) => Err(format!(
                    "server.cores = {k}: this machine lets the sweep use {n} CPU{} \
                     (a server cannot have more cores than that)",
                    if n == 1 { "" } else { "s" }
                )),
                None => Ok(Counts {
                    counts: list.clone(),
                    note: None,
                }),
            },
            Cores::UpToHalf => Ok(up_to_half(n)),
        }
    }
}

/// Powers of two up to half of `n` CPUs, and half itself.
fn up_to_half(n: usize) -> Counts {
    let half = (n / 2).max(1);
    let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |k| Some(k * 2))
        .take_while(|&k| k <= half)
        .collect();
    if counts.last() != Some(&half) {
        counts.push(half);
    }
    let note = (counts.len() == 1).then(|| {
        format!(
            "server.cores = \"{UP_TO_HALF}\": this machine lets the sweep use {n} CPU{}, \
             so the server gets 1 core and the load the rest: no scaling beyond k = 1 \
             (run it on a machine with 4 or more CPUs)",
            if n == 1 { "" } else { "s" }
        )
    });
    Counts { counts, note }
}

/// Where one point's server and load run, as recorded in the manifest and
/// in each run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// The server's cores (k).
    pub cores: usize,
    /// `--cpus` of the server and of the load.
    pub server_cpus: String,
    pub load_cpus: String,
    /// CPUs both use (none where they are apart).
    #[serde(default)]
    pub shared: Vec<usize>,
    /// How the server's CPUs were chosen, in words.
    pub how: String,
}

impl Placement {
    pub fn is_shared(&self) -> bool {
        !self.shared.is_empty()
    }
}

/// The machine's CPUs in the order servers get them: the first CPU of
/// each physical core on the largest NUMA node, then of each core on the
/// other nodes, then the remaining SMT siblings in the same node order.
pub fn preference(topology: &Topology) -> Vec<usize> {
    let nodes = topology.nodes();
    let rank = |node: usize| nodes.iter().position(|(n, _)| *n == node).unwrap_or(0);
    let mut seen = Vec::new();
    let mut firsts = Vec::new();
    let mut siblings = Vec::new();
    for c in &topology.cpus {
        if seen.contains(&c.core) {
            siblings.push(c);
        } else {
            seen.push(c.core);
            firsts.push(c);
        }
    }
    firsts.sort_by_key(|c| (rank(c.node), c.id));
    siblings.sort_by_key(|c| (rank(c.node), c.id));
    firsts.iter().chain(&siblings).map(|c| c.id).collect()
}

/// A placement for each of `counts` (none above the machine's CPUs).
pub fn place(topology: &Topology, counts: &[usize]) -> Vec<Placement> {
    let order = preference(topology);
    let all: Vec<usize> = topology.cpus.iter().map(|c| c.id).collect();
    let largest = counts.iter().copied().max().unwrap_or(1).min(order.len());
    let rest_of = |k: usize| -> Vec<usize> {
        let mut rest: Vec<usize> = order[k..].to_vec();
        rest.sort_unstable();
        rest
    };
    let common = rest_of(largest);
    counts
        .iter()
        .map(|&k| {
            let mut server = order[..k].to_vec();
            server.sort_unstable();
            let load = match (common.is_empty(), rest_of(k)) {
                (false, _) => common.clone(),
                (true, rest) if !rest.is_empty() => rest,
                (true, _) => all.clone(),
            };
            let shared = server
                .iter()
                .copied()
                .filter(|c| load.contains(c))
                .collect();
            Placement {
                cores: k,
                server_cpus: list_text(&server),
                load_cpus: list_text(&load),
                shared,
                how: how(topology, &server),
            }
        })
        .collect()
}

/// `one per physical core, on NUMA node 0`, or what else it is.
fn how(topology: &Topology, server: &[usize]) -> String {
    let cpus: Vec<_> = topology
        .cpus
        .iter()
        .filter(|c| server.contains(&c.id))
        .collect();
    let mut cores: Vec<_> = cpus.iter().map(|c| c.core).collect();
    cores.sort_unstable();
    cores.dedup();
    let mut nodes: Vec<usize> = cpus.iter().map(|c| c.node).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let per_core = if cores.len() == cpus.len() {
        "one per physical core".to_string()
    } else {
        format!(
            "{} CPUs on {} physical cores (SMT siblings share one)",
            cpus.len(),
            cores.len()
        )
    };
    let on = match nodes.as_slice() {
        [one] => format!("on NUMA node {one}"),
        many => format!(
            "across NUMA nodes {}",
            many.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!("{per_core}, {on}")
}

/// `0-3,8,10-11`: a CPU list as `--cpus` takes it.
pub fn list_text(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{fixture, Topology};

    fn cores(text: &str) -> Result<Cores, String> {
        let table: toml::Table = toml::from_str(&format!("cores = {text}")).unwrap();
        Cores::parse(&table["cores"])
    }

    #[test]
    fn core_counts_are_parsed_and_checked_against_the_machine() {
        assert_eq!(cores("[1, 2, 4]"), Ok(Cores::List(vec![1, 2, 4])));
        assert_eq!(cores("2"), Ok(Cores::List(vec![2])));
        assert_eq!(cores("\"1..half\""), Ok(Cores::UpToHalf));
        for bad in ["[]", "0", "[1, 1]", "\"all\"", "[1.5]"] {
            let e = cores(bad).unwrap_err();
            assert!(e.contains("server.cores"), "{bad}: {e}");
        }
        let two = Topology::flat(2);
        let e = Cores::List(vec![1, 4]).counts(&two).unwrap_err();
        assert!(
            e.contains("server.cores = 4") && e.contains("2 CPUs"),
            "{e}"
        );
        assert_eq!(Cores::List(vec![1, 2]).counts(&two).unwrap().counts, [1, 2]);
    }

    #[test]
    fn up_to_half_is_powers_of_two_and_half() {
        let counts = |n| Cores::UpToHalf.counts(&Topology::flat(n)).unwrap();
        assert_eq!(counts(16).counts, [1, 2, 4, 8]);
        assert_eq!(counts(12).counts, [1, 2, 4, 6]);
        assert_eq!(counts(4).counts, [1, 2]);
        assert!(counts(16).note.is_none());
        let two = counts(2);
        assert_eq!(two.counts, [1]);
        assert!(two.note.unwrap().contains("no scaling beyond k = 1"));
        assert_eq!(counts(1).counts, [1]);
    }

    /// Two packages (nodes), each of two cores with two SMT threads; Linux
    /// numbers the first thread of every core first (0-3), then their
    /// siblings (4-7).
    fn smt_two_nodes() -> (tempfile::TempDir, Topology) {
        let tmp = tempfile::tempdir().unwrap();
        let layout: Vec<_> = (0..8)
            .map(|id| (id, (id % 4 / 2, id % 4), id % 4 / 2))
            .collect();
        fixture::write(tmp.path(), &layout);
        let t = Topology::read(tmp.path(), &(0..8).collect::<Vec<_>>());
        (tmp, t)
    }

    #[test]
    fn servers_get_physical_cores_on_one_node_first() {
        let (_tmp, t) = smt_two_nodes();
        assert_eq!(preference(&t), [0, 1, 2, 3, 4, 5, 6, 7]);
        let p = place(&t, &[1, 2, 4]);
        assert_eq!(p[1].server_cpus, "0-1");
        assert_eq!(p[1].how, "one per physical core, on NUMA node 0");
        assert_eq!(p[2].server_cpus, "0-3");
        assert_eq!(p[2].how, "one per physical core, across NUMA nodes 0, 1");
        // The load gets what the largest server leaves, at every k.
        assert!(p.iter().all(|p| p.load_cpus == "4-7" && !p.is_shared()));
        // Past the physical cores: siblings.
        let six = &place(&t, &[6])[0];
        assert_eq!(six.server_cpus, "0-5");
        assert!(
            six.how.starts_with("6 CPUs on 4 physical cores"),
            "{}",
            six.how
        );
    }

    #[test]
    fn the_larger_node_and_unordered_numbering_are_followed() {
        let tmp = tempfile::tempdir().unwrap();
        // CPUs 0 and 1 are siblings on node 1; 2, 3, 4 are cores of node 0.
        fixture::write(
            tmp.path(),
            &[
                (0, (1, 0), 1),
                (1, (1, 0), 1),
                (2, (0, 0), 0),
                (3, (0, 1), 0),
                (4, (0, 2), 0),
            ],
        );
        let t = Topology::read(tmp.path(), &[0, 1, 2, 3, 4]);
        assert_eq!(preference(&t), [2, 3, 4, 0, 1]);
        let p = place(&t, &[1, 2]);
        assert_eq!(
            (p[0].server_cpus.as_str(), p[1].server_cpus.as_str()),
            ("2", "2-3")
        );
        assert_eq!(p[0].load_cpus, "0-1,4");
    }

    #[test]
    fn too_few_cpus_share_and_say_so() {
        let p = place(&Topology::flat(2), &[1, 2]);
        assert_eq!(
            (p[0].server_cpus.as_str(), p[0].load_cpus.as_str()),
            ("0", "1")
        );
        assert!(!p[0].is_shared());
        assert_eq!(
            (p[1].server_cpus.as_str(), p[1].load_cpus.as_str()),
            ("0-1", "0-1")
        );
        assert_eq!(p[1].shared, [0, 1]);
        let one = place(&Topology::flat(1), &[1]);
        assert_eq!(one[0].shared, [0]);
    }

    #[test]
    fn cpu_lists_are_compact() {
        assert_eq!(list_text(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(list_text(&[5]), "5");
    }
}
