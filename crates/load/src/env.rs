//! The environment a run happened in, recorded with every result.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub serverlab_version: String,
    pub os: String,
    pub arch: String,
    pub kernel: String,
    pub cores_online: usize,
    /// CPUs this client process was allowed to run on.
    pub client_cpus: Vec<usize>,
    /// Seconds since the Unix epoch when the run started.
    pub started_unix_s: u64,
    /// The machine's host name: a merge counts the cores of agents on one
    /// machine once (empty in files written before it was recorded).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
}

impl Environment {
    pub fn capture() -> Self {
        let uname = nix::sys::utsname::uname().ok();
        let kernel = uname.as_ref().map_or_else(
            || "unknown".into(),
            |u| {
                format!(
                    "{} {}",
                    u.sysname().to_string_lossy(),
                    u.release().to_string_lossy()
                )
            },
        );
        let host = uname.map_or_else(String::new, |u| u.nodename().to_string_lossy().into_owned());
        Environment {
            serverlab_version: env!("CARGO_PKG_VERSION").into(),
            os: std::env::consts::OS.into(),
            arch: std::env::consts::ARCH.into(),
            kernel,
            // Every CPU online, not only those this process may use.
            cores_online: nix::unistd::sysconf(nix::unistd::SysconfVar::_NPROCESSORS_ONLN)
                .ok()
                .flatten()
                .map_or(1, |n| n.max(1) as usize),
            client_cpus: allowed_cpus(),
            started_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            host,
        }
    }
}

pub use serverlab_util::cpus::allowed_cpus;

/// CPU time the calling thread has used so far: (user, system) seconds.
/// Per thread, so a client that shares its process with a server (the
/// demo, tests) counts only its own work.
pub fn thread_cpu_time() -> (f64, f64) {
    use nix::sys::resource::{getrusage, UsageWho};
    match getrusage(UsageWho::RUSAGE_THREAD) {
        Ok(u) => {
            let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
            (secs(u.user_time()), secs(u.system_time()))
        }
        Err(_) => (0.0, 0.0),
    }
}

/// Clock ticks of some CPUs so far, from /proc/stat: busy (user, nice,
/// system, irq, softirq, and steal, when the hypervisor ran another
/// guest) and in all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    pub busy: u64,
    pub total: u64,
}

impl CpuTicks {
    /// `cpus`' ticks now; None where /proc/stat cannot be read (not
    /// Linux) or lists none of them.
    pub fn of(cpus: &[usize]) -> Option<CpuTicks> {
        parse_cpu_ticks(&std::fs::read_to_string("/proc/stat").ok()?, cpus)
    }

    /// The share of the time between `self` and `later` these CPUs were
    /// busy (0 to 1).
    pub fn busy_share(self, later: CpuTicks) -> Option<f64> {
        let total = later.total.checked_sub(self.total)?;
        let busy = later.busy.checked_sub(self.busy)?;
        (total > 0).then(|| (busy as f64 / total as f64).min(1.0))
    }
}

/// The `cpuN` lines of /proc/stat for `cpus`, summed; steal counts as
/// busy (the CPU was not this client's to use).
fn parse_cpu_ticks(stat: &str, cpus: &[usize]) -> Option<CpuTicks> {
    let mut sum = CpuTicks::default();
    let mut seen = 0;
    let mine = serverlab_util::proc_stat::cpu_lines(stat)
        .filter(|l| l.cpu.is_some_and(|n| cpus.contains(&n)));
    for l in mine {
        let busy = l.working() + l.steal;
        sum.busy += busy;
        sum.total += busy + l.idle + l.iowait;
        seen += 1;
    }
    (seen > 0).then_some(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ticks_of_some_cpus() {
        let stat = serverlab_util::proc_stat::EXAMPLE;
        let one = parse_cpu_ticks(stat, &[1]).unwrap();
        assert_eq!(
            one,
            CpuTicks {
                busy: 80,
                total: 100
            }
        );
        let both = parse_cpu_ticks(stat, &[0, 1]).unwrap();
        assert_eq!(
            both,
            CpuTicks {
                busy: 95,
                total: 200
            }
        );
        assert_eq!(parse_cpu_ticks(stat, &[7]), None);
        let later = CpuTicks {
            busy: 170,
            total: 200,
        };
        assert_eq!(one.busy_share(later), Some(0.9));
    }
}
