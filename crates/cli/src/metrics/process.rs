//! The standard `process_*` metrics, read from /proc/self at each scrape
//! (prometheus-client ships none): CPU time, resident and virtual memory,
//! open and allowed file descriptors, and when the process started.

use super::encode::{gauge, gauge_f64};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::MetricType;
use std::fmt::Error;

#[derive(Debug)]
pub struct ProcessCollector;

/// The fields of /proc/self/stat the metrics need.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stat {
    /// User and system CPU time, in clock ticks.
    pub cpu_ticks: u64,
    /// Start, in clock ticks after boot.
    pub start_ticks: u64,
    pub vsize_bytes: u64,
    pub rss_pages: u64,
}

/// Parse /proc/self/stat: fields after the command (which may hold spaces
/// and parentheses, so the text after the last `)`).
pub fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    // `rest` starts at field 3 (state): field n is rest's (n - 3)th.
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| f.get(n - 3)?.parse::<u64>().ok();
    Some(Stat {
        cpu_ticks: field(14)? + field(15)?,
        start_ticks: field(22)?,
        vsize_bytes: field(23)?,
        rss_pages: field(24)?,
    })
}

/// Seconds since the epoch at boot (`btime` of /proc/stat).
fn boot_time() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(p).unwrap_or(4096)
}

fn open_fds() -> Option<i64> {
    Some(std::fs::read_dir("/proc/self/fd").ok()?.count() as i64)
}

fn max_fds() -> Option<i64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the limit into `lim`, a valid rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return None;
    }
    i64::try_from(lim.rlim_cur).ok()
}

impl Collector for ProcessCollector {
    fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), Error> {
        let ticks = clock_ticks();
        if let Some(s) = std::fs::read_to_string("/proc/self/stat")
            .ok()
            .as_deref()
            .and_then(parse_stat)
        {
            let metric = enc.encode_descriptor(
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds.",
                None,
                MetricType::Counter,
            )?;
            ConstCounter::new(s.cpu_ticks as f64 / ticks).encode(metric)?;
            let rss = s.rss_pages * page_size();
            gauge(
                &mut enc,
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                rss as i64,
            )?;
            gauge(
                &mut enc,
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
                s.vsize_bytes as i64,
            )?;
            if let Some(boot) = boot_time() {
                let start = boot as f64 + s.start_ticks as f64 / ticks;
                gauge_f64(
                    &mut enc,
                    "process_start_time_seconds",
                    "Start time of the process since unix epoch in seconds.",
                    start,
                )?;
            }
        }
        if let Some(n) = open_fds() {
            gauge(
                &mut enc,
                "process_open_fds",
                "Number of open file descriptors.",
                n,
            )?;
        }
        if let Some(n) = max_fds() {
            gauge(
                &mut enc,
                "process_max_fds",
                "Maximum number of open file descriptors.",
                n,
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_fields_after_a_command_with_spaces_and_parentheses() {
        let line = "4242 (serve (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 \
                    30 12 0 0 20 0 3 0 98765 123456789 2048 18446744073709551615";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.cpu_ticks, 42);
        assert_eq!(s.start_ticks, 98765);
        assert_eq!(s.vsize_bytes, 123_456_789);
        assert_eq!(s.rss_pages, 2048);
        assert_eq!(parse_stat("nonsense"), None);
    }

    #[test]
    fn reads_this_process() {
        let text = std::fs::read_to_string("/proc/self/stat").unwrap();
        let s = parse_stat(&text).unwrap();
        assert!(s.rss_pages > 0 && s.start_ticks > 0, "{s:?}");
        assert!(open_fds().unwrap() > 2);
    }
}
