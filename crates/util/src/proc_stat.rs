//! The `cpu` lines of Linux's /proc/stat, read once for every figure that
//! needs them: the load's busy share of its own CPUs, and the sweep's
//! busy-machine flag.

/// One `cpu` or `cpuN` line: clock ticks by kind. Guest time is already
/// inside `user`, so it is not kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuLine {
    /// `Some(n)` for `cpuN`, `None` for the machine's total line.
    pub cpu: Option<usize>,
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuLine {
    /// Ticks spent working here: user, nice, system, irq and softirq
    /// (steal, time the hypervisor gave to others, apart).
    pub fn working(&self) -> u64 {
        self.user + self.nice + self.system + self.irq + self.softirq
    }

    /// Every tick, idle ones and steal included.
    pub fn total(&self) -> u64 {
        self.working() + self.idle + self.iowait + self.steal
    }
}

/// A /proc/stat of two CPUs, for tests: a total line, `cpu0`, `cpu1`, and
/// a `cpu2` line too short to count.
pub const EXAMPLE: &str = "cpu  20 1 20 60 2 3 4 5 0 0\n\
                           cpu0 10 0 5 80 5 0 0 0 0 0\n\
                           cpu1 50 1 20 20 0 3 4 2 0 0\n\
                           cpu2 1 2\nintr 1 2\n";

/// Every `cpu` line of `stat` (the text of /proc/stat) that has its eight
/// first fields; others are passed over.
pub fn cpu_lines(stat: &str) -> impl Iterator<Item = CpuLine> + '_ {
    stat.lines().filter_map(|line| {
        let mut fields = line.split_whitespace();
        let name = fields.next()?.strip_prefix("cpu")?;
        let cpu = match name {
            "" => None,
            n => Some(n.parse().ok()?),
        };
        let f: Vec<u64> = fields
            .take(8)
            .map(|v| v.parse().ok())
            .collect::<Option<_>>()?;
        let [user, nice, system, idle, iowait, irq, softirq, steal] = f[..] else {
            return None;
        };
        Some(CpuLine {
            cpu,
            user,
            nice,
            system,
            idle,
            iowait,
            irq,
            softirq,
            steal,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_line_and_each_cpu() {
        let lines: Vec<CpuLine> = cpu_lines(EXAMPLE).collect();
        assert_eq!(lines.len(), 3, "the short cpu2 line is passed over");
        assert_eq!(lines[0].cpu, None);
        assert_eq!(
            (lines[0].working(), lines[0].steal),
            (20 + 1 + 20 + 3 + 4, 5)
        );
        assert_eq!(lines[0].total(), 20 + 1 + 20 + 60 + 2 + 3 + 4 + 5);
        assert_eq!((lines[2].cpu, lines[2].softirq), (Some(1), 4));
    }
}
