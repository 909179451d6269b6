//! The machine's state during one run, so a report can tell runs made on a
//! busy machine from the rest: the load average before and after, and the
//! CPU time that other processes used and that the hypervisor stole while
//! the run lasted (from /proc/stat, less what the sweep and its own server
//! and load used, from getrusage).

use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::time::TimeVal;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Other processes using this many cores on average make a run "busy":
/// a quarter of a core taken from a pinned server or load is enough to
/// move its numbers by more than the noise a quiet machine shows.
pub const BUSY_OTHERS_CORES: f64 = 0.25;
/// The hypervisor stealing this many cores on average makes a run busy.
pub const BUSY_STEAL_CORES: f64 = 0.1;

/// What `run.json` records about the machine during a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineState {
    /// CPUs the kernel reports (`cpuN` lines in /proc/stat).
    pub cores: usize,
    /// Seconds between the two snapshots (server start to server stop).
    pub wall_s: f64,
    /// 1-, 5- and 15-minute load averages just before the run and just after.
    pub loadavg_start: [f64; 3],
    pub loadavg_end: [f64; 3],
    /// CPU seconds the whole machine spent in user, nice and system time.
    /// Interrupt and softirq time are in: the run's own loopback traffic is
    /// processed there, and getrusage charges it to the run's processes
    /// too (measured: a quiet run's user + system + softirq equals its own
    /// CPU time; left out, a busy machine's others came to 0).
    pub machine_cpu_s: f64,
    /// CPU seconds the sweep and its reaped children (server, load) used.
    pub own_cpu_s: f64,
    /// `machine_cpu_s − own_cpu_s`, at least 0: everybody else's work.
    pub others_cpu_s: f64,
    /// CPU seconds the hypervisor gave to other guests.
    pub steal_s: f64,
}

impl MachineState {
    fn per_wall(&self, seconds: f64) -> f64 {
        if self.wall_s > 0.0 {
            seconds / self.wall_s
        } else {
            0.0
        }
    }

    /// Cores other processes kept busy, on average over the run.
    pub fn others_cores(&self) -> f64 {
        self.per_wall(self.others_cpu_s)
    }

    /// Cores stolen by the hypervisor, on average over the run.
    pub fn steal_cores(&self) -> f64 {
        self.per_wall(self.steal_s)
    }

    /// Whether others (or the hypervisor) took enough CPU to matter.
    pub fn busy(&self) -> bool {
        self.others_cores() >= BUSY_OTHERS_CORES || self.steal_cores() >= BUSY_STEAL_CORES
    }

    /// `other processes 0.84 cores, steal 0.00 cores, load average 2.31 → 2.60`.
    pub fn describe(&self) -> String {
        format!(
            "other processes {:.2} cores, steal {:.2} cores, load average {:.2} → {:.2}",
            self.others_cores(),
            self.steal_cores(),
            self.loadavg_start[0],
            self.loadavg_end[0]
        )
    }
}

/// CPU times from the `cpu` line of /proc/stat, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq)]
struct CpuTimes {
    busy: u64,
    steal: u64,
}

/// A snapshot at the start of a run.
pub struct Probe {
    stat: CpuTimes,
    loadavg: [f64; 3],
    own_s: f64,
    at: Instant,
}

impl Probe {
    /// None where /proc cannot be read (not Linux): the run records nothing.
    pub fn start() -> Option<Probe> {
        Some(Probe {
            stat: read_stat()?.0,
            loadavg: read_loadavg()?,
            own_s: own_cpu_s()?,
            at: Instant::now(),
        })
    }

    /// The state since `start`; call it once the server and load are reaped.
    pub fn finish(self) -> Option<MachineState> {
        let (stat, cores) = read_stat()?;
        let tick = ticks_per_second()?;
        let wall_s = self.at.elapsed().as_secs_f64();
        let machine_cpu_s = stat.busy.saturating_sub(self.stat.busy) as f64 / tick;
        let own_cpu_s = (own_cpu_s()? - self.own_s).max(0.0);
        Some(MachineState {
            cores,
            wall_s,
            loadavg_start: self.loadavg,
            loadavg_end: read_loadavg()?,
            machine_cpu_s,
            own_cpu_s,
            others_cpu_s: (machine_cpu_s - own_cpu_s).max(0.0),
            steal_s: stat.steal.saturating_sub(self.stat.steal) as f64 / tick,
        })
    }
}

fn ticks_per_second() -> Option<f64> {
    let t = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).ok()??;
    (t > 0).then_some(t as f64)
}

fn seconds(t: TimeVal) -> f64 {
    t.tv_sec() as f64 + t.tv_usec() as f64 * 1e-6
}

/// CPU seconds of this process and its reaped children.
fn own_cpu_s() -> Option<f64> {
    let mut total = 0.0;
    for who in [UsageWho::RUSAGE_SELF, UsageWho::RUSAGE_CHILDREN] {
        let u = getrusage(who).ok()?;
        total += seconds(u.user_time()) + seconds(u.system_time());
    }
    Some(total)
}

fn read_stat() -> Option<(CpuTimes, usize)> {
    parse_stat(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// The `cpu` line's busy time (user + nice + system + irq + softirq) and
/// steal, and the number of `cpuN` lines.
fn parse_stat(text: &str) -> Option<(CpuTimes, usize)> {
    let lines = serverlab_util::proc_stat::cpu_lines(text);
    let (mut total, mut cores) = (None, 0);
    for l in lines {
        match l.cpu {
            None => total = Some(l),
            Some(_) => cores += 1,
        }
    }
    let total = total?;
    let times = CpuTimes {
        busy: total.working(),
        steal: total.steal,
    };
    Some((times, cores))
}

fn read_loadavg() -> Option<[f64; 3]> {
    parse_loadavg(&std::fs::read_to_string("/proc/loadavg").ok()?)
}

fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut it = text.split_whitespace().map(|v| v.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_files_parse() {
        // The total line's 20 1 20 60 2 3 4 5; cpu0 and cpu1 (cpu2's line
        // is too short to count).
        let (t, cores) = parse_stat(serverlab_util::proc_stat::EXAMPLE).unwrap();
        assert_eq!((t.busy, t.steal, cores), (20 + 1 + 20 + 3 + 4, 5, 2));
        assert_eq!(
            parse_loadavg("4.84 3.91 2.30 3/99 29696\n"),
            Some([4.84, 3.91, 2.30])
        );
        assert_eq!(parse_loadavg("x"), None);
    }

    fn state(others: f64, steal: f64) -> MachineState {
        MachineState {
            cores: 2,
            wall_s: 2.0,
            loadavg_start: [0.5, 0.4, 0.3],
            loadavg_end: [0.7, 0.4, 0.3],
            machine_cpu_s: 2.0 + others,
            own_cpu_s: 2.0,
            others_cpu_s: others,
            steal_s: steal,
        }
    }

    #[test]
    fn busy_means_others_or_steal_took_a_share_of_a_core() {
        assert!(!state(0.1, 0.0).busy(), "0.05 cores");
        assert!(state(0.6, 0.0).busy(), "0.3 cores");
        assert!(state(0.0, 0.3).busy(), "0.15 cores stolen");
        assert_eq!(
            state(1.0, 0.0).describe(),
            "other processes 0.50 cores, steal 0.00 cores, load average 0.50 → 0.70"
        );
    }

    /// This process's own work is counted as its own, and within what the
    /// whole machine did (spinning until it has used 0.2 s of CPU, however
    /// long a busy machine makes that take).
    #[test]
    fn a_probe_counts_this_process_as_its_own() {
        let probe = Probe::start().expect("/proc is readable here");
        let start = own_cpu_s().unwrap();
        let deadline = Instant::now() + std::time::Duration::from_secs(20);
        while own_cpu_s().unwrap() - start < 0.2 && Instant::now() < deadline {
            std::hint::spin_loop();
        }
        let s = probe.finish().unwrap();
        assert!(s.cores >= 1 && s.wall_s > 0.0, "{s:?}");
        assert!(
            s.own_cpu_s >= 0.2,
            "the spin's CPU is counted as ours: {s:?}"
        );
        // /proc/stat samples in ticks where getrusage is exact: a few ticks
        // per CPU and a tenth of the total of slack.
        let ticks = 3.0 / ticks_per_second().unwrap() * s.cores as f64;
        assert!(
            s.machine_cpu_s + ticks + 0.1 * s.own_cpu_s >= s.own_cpu_s,
            "{s:?}"
        );
        assert!(s.others_cpu_s >= 0.0 && s.steal_s >= 0.0);
    }
}
