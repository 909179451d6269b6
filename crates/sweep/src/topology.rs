//! The machine's CPUs as the kernel describes them under
//! `/sys/devices/system/cpu`: for each CPU this process may use, the
//! physical core it belongs to (package and core id: SMT siblings share
//! one) and its NUMA node (a `nodeN` entry in the CPU's directory).

use std::path::Path;

/// Where the kernel describes the CPUs.
pub const SYS_CPU: &str = "/sys/devices/system/cpu";

/// One logical CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cpu {
    pub id: usize,
    /// (physical package, core id): SMT siblings have the same.
    pub core: (usize, usize),
    pub node: usize,
}

/// The CPUs a sweep may place servers and loads on, by id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    pub cpus: Vec<Cpu>,
}

impl Topology {
    /// This machine: the CPUs this process may use, described from
    /// [`SYS_CPU`].
    pub fn here() -> std::io::Result<Topology> {
        let allowed = serverlab_util::CpuSet::allowed()?;
        Ok(Topology::read(Path::new(SYS_CPU), allowed.cpus()))
    }

    /// The CPUs `allowed`, described from `root` (a directory laid out as
    /// `/sys/devices/system/cpu`). A CPU whose core or node cannot be
    /// read counts as a core of its own on node 0.
    pub fn read(root: &Path, allowed: &[usize]) -> Topology {
        let mut cpus: Vec<Cpu> = allowed.iter().map(|&id| describe(root, id)).collect();
        cpus.sort_by_key(|c| c.id);
        Topology { cpus }
    }

    /// A machine of `n` CPUs, each its own core, on one node.
    pub fn flat(n: usize) -> Topology {
        Topology {
            cpus: (0..n)
                .map(|id| Cpu {
                    id,
                    core: (0, id),
                    node: 0,
                })
                .collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.cpus.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cpus.is_empty()
    }

    /// How many physical cores the CPUs belong to.
    pub fn physical_cores(&self) -> usize {
        let mut cores: Vec<(usize, usize)> = self.cpus.iter().map(|c| c.core).collect();
        cores.sort_unstable();
        cores.dedup();
        cores.len()
    }

    /// The NUMA nodes, each with its number of CPUs, largest first (ties:
    /// lower node first).
    pub fn nodes(&self) -> Vec<(usize, usize)> {
        let mut nodes: Vec<(usize, usize)> = Vec::new();
        for c in &self.cpus {
            match nodes.iter_mut().find(|(n, _)| *n == c.node) {
                Some((_, count)) => *count += 1,
                None => nodes.push((c.node, 1)),
            }
        }
        nodes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        nodes
    }
}

/// One CPU's core and node, as far as `root` says.
fn describe(root: &Path, id: usize) -> Cpu {
    let dir = root.join(format!("cpu{id}"));
    let number = |file: &str| -> Option<usize> {
        std::fs::read_to_string(dir.join("topology").join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let core = match (number("physical_package_id"), number("core_id")) {
        (Some(package), Some(core)) => (package, core),
        // Unknown: a core of its own, apart from every described one.
        _ => (usize::MAX, id),
    };
    Cpu {
        id,
        core,
        node: node_of(&dir).unwrap_or(0),
    }
}

/// The `N` of the `nodeN` entry in a CPU's directory.
fn node_of(dir: &Path) -> Option<usize> {
    std::fs::read_dir(dir).ok()?.find_map(|entry| {
        let name = entry.ok()?.file_name();
        name.to_str()?.strip_prefix("node")?.parse().ok()
    })
}

#[cfg(test)]
pub(crate) mod fixture {
    use std::path::Path;

    /// A sysfs-like tree under `root`: CPU `id` on (package, core) and node.
    pub fn write(root: &Path, cpus: &[(usize, (usize, usize), usize)]) {
        for &(id, (package, core), node) in cpus {
            let dir = root.join(format!("cpu{id}"));
            std::fs::create_dir_all(dir.join("topology")).unwrap();
            std::fs::create_dir_all(dir.join(format!("node{node}"))).unwrap();
            std::fs::write(
                dir.join("topology/physical_package_id"),
                format!("{package}\n"),
            )
            .unwrap();
            std::fs::write(dir.join("topology/core_id"), format!("{core}\n")).unwrap();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_and_nodes_are_read_from_a_sysfs_tree() {
        let tmp = tempfile::tempdir().unwrap();
        // Two nodes of two cores with two threads each: CPU n and n+4 are
        // siblings (as Linux numbers them).
        let layout: Vec<_> = (0..8)
            .map(|id| (id, (id % 4 / 2, id % 4), id % 4 / 2))
            .collect();
        fixture::write(tmp.path(), &layout);
        let t = Topology::read(tmp.path(), &[0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(t.len(), 8);
        assert_eq!(t.physical_cores(), 4);
        assert_eq!(
            t.cpus[5],
            Cpu {
                id: 5,
                core: (0, 1),
                node: 0
            }
        );
        assert_eq!(t.cpus[6].node, 1);
        assert_eq!(t.nodes(), [(0, 4), (1, 4)]);
        // Only the CPUs this process may use.
        let some = Topology::read(tmp.path(), &[6, 1, 3]);
        assert_eq!(
            some.cpus.iter().map(|c| c.id).collect::<Vec<_>>(),
            [1, 3, 6]
        );
        assert_eq!(some.nodes(), [(1, 2), (0, 1)]);
    }

    #[test]
    fn an_undescribed_cpu_is_a_core_of_its_own() {
        let tmp = tempfile::tempdir().unwrap();
        fixture::write(tmp.path(), &[(0, (0, 0), 0)]);
        let t = Topology::read(tmp.path(), &[0, 1]);
        assert_eq!(t.physical_cores(), 2);
        assert_eq!(t.cpus[1].node, 0);
    }

    #[test]
    fn this_machine_is_readable() {
        let t = Topology::here().unwrap();
        assert!(!t.is_empty());
        assert!(t.physical_cores() >= 1 && t.physical_cores() <= t.len());
    }
}
