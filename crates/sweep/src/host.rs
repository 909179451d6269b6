//! The machine a sweep ran on, by name and CPU: recorded in `sweep.json`
//! so that a report of shards run on several machines can say which ran
//! where, and never compare their absolute throughputs.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Host {
    pub hostname: String,
    /// `model name` from /proc/cpuinfo ("unknown" where it cannot be read).
    pub cpu_model: String,
    /// CPUs the kernel reports online.
    pub cpus: usize,
}

impl Host {
    /// This machine.
    pub fn here() -> Host {
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_else(|| "unknown".into());
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        Host {
            hostname,
            cpu_model: cpu_model(&cpuinfo).unwrap_or_else(|| "unknown".into()),
            cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
        }
    }

    /// `node7 (AMD EPYC 7763, 16 CPUs)`.
    pub fn describe(&self) -> String {
        format!("{} ({}, {} CPUs)", self.hostname, self.cpu_model, self.cpus)
    }

    /// Whether two records name the same machine (its name and its CPU).
    pub fn same_machine(&self, other: &Host) -> bool {
        self.hostname == other.hostname && self.cpu_model == other.cpu_model
    }
}

/// The first `model name` (x86) or `Model`/`CPU part` (Arm) line's value.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Model", "Hardware", "CPU part"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|line| {
                let (k, v) = line.split_once(':')?;
                (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_string())
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_model_comes_from_cpuinfo() {
        let text =
            "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU\n";
        assert_eq!(cpu_model(text).as_deref(), Some("Intel(R) Xeon(R) CPU"));
        assert_eq!(cpu_model(""), None);
        let here = Host::here();
        assert!(!here.hostname.is_empty() && here.cpus > 0, "{here:?}");
    }
}
