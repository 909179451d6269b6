//! CPU sets (`--cpus 0-1`, `1,3`) and pinning a thread, and so every
//! thread it starts afterwards, to one.

use std::fmt;
use std::str::FromStr;

/// A non-empty, sorted, duplicate-free list of CPU numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSet(Vec<usize>);

impl CpuSet {
    pub fn cpus(&self) -> &[usize] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The CPUs the calling thread may run on now.
    pub fn allowed() -> std::io::Result<CpuSet> {
        let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))?;
        let cpus = (0..nix::sched::CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect();
        Ok(CpuSet(cpus))
    }

    /// Pin the calling thread to these CPUs. Threads it spawns afterwards
    /// inherit the mask, so calling this first thing pins a whole process.
    pub fn pin_current_thread(&self) -> std::io::Result<()> {
        nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &self.to_nix()?)?;
        Ok(())
    }

    /// As a `nix` CPU set, for a child process's affinity.
    pub fn to_nix(&self) -> std::io::Result<nix::sched::CpuSet> {
        let mut set = nix::sched::CpuSet::new();
        for &c in &self.0 {
            set.set(c).map_err(std::io::Error::from)?;
        }
        Ok(set)
    }

    /// Only the `i`-th CPU (cycling), for one-loop-per-core strategies.
    pub fn nth(&self, i: usize) -> CpuSet {
        CpuSet(vec![self.0[i % self.0.len()]])
    }

    /// Parse a list without checking it against the CPUs allowed here.
    pub fn parse_unchecked(s: &str) -> Result<CpuSet, String> {
        let bad = || format!("'{s}' is not a CPU list (examples: 0, 0-1, 1,3)");
        let mut cpus = Vec::new();
        for part in s.split(',') {
            let (lo, hi) = part.split_once('-').unwrap_or((part, part));
            let lo: usize = lo.trim().parse().map_err(|_| bad())?;
            let hi: usize = hi.trim().parse().map_err(|_| bad())?;
            if lo > hi || hi >= 1024 {
                return Err(bad());
            }
            cpus.extend(lo..=hi);
        }
        cpus.sort_unstable();
        cpus.dedup();
        if cpus.is_empty() {
            return Err(bad());
        }
        Ok(CpuSet(cpus))
    }
}

/// The CPUs the calling thread may run on (CPU 0 if that cannot be read).
pub fn allowed_cpus() -> Vec<usize> {
    CpuSet::allowed().map_or_else(|_| vec![0], |c| c.0)
}

/// A CPU list, each CPU one this process may use.
impl FromStr for CpuSet {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let set = CpuSet::parse_unchecked(s)?;
        let allowed =
            CpuSet::allowed().map_err(|e| format!("cannot read this process's CPUs: {e}"))?;
        if let Some(c) = set.0.iter().find(|c| !allowed.0.contains(c)) {
            return Err(format!(
                "CPU {c} is not available here (allowed: {allowed})"
            ));
        }
        Ok(set)
    }
}

impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|c| c.to_string()).collect();
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists() {
        assert_eq!("0".parse::<CpuSet>().unwrap().cpus(), &[0]);
        assert_eq!("0-0,0".parse::<CpuSet>().unwrap().cpus(), &[0]);
        assert_eq!(CpuSet::parse_unchecked("3,1-2").unwrap().cpus(), &[1, 2, 3]);
        for bad in ["", "a", "1-0", "-1", "0,,1", "5000"] {
            assert!(bad.parse::<CpuSet>().is_err(), "{bad}");
        }
    }

    #[test]
    fn allowed_is_what_pinning_set() {
        let all = CpuSet::allowed().unwrap();
        let one = all.nth(0);
        std::thread::spawn(move || {
            one.pin_current_thread().unwrap();
            assert_eq!(CpuSet::allowed().unwrap(), one);
            assert_eq!(allowed_cpus(), one.cpus());
        })
        .join()
        .unwrap();
    }
}
