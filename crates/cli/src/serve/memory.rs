//! Memory given back after a burst: the global allocator this binary is
//! built with (glibc's, or `--features mimalloc` / `--features jemalloc`),
//! and when a server asks it to return freed memory to the system.
//!
//! Every allocator keeps memory a program freed, to reuse it: glibc in
//! per-thread arenas that it trims only at their top, jemalloc for ten
//! seconds by default, mimalloc briefly. After a burst (hundreds of
//! connections holding megabyte buffers, then gone) that is hundreds of
//! megabytes the server no longer uses. So a server looks once a second,
//! and when a burst has ended — it went quiet after serving, or most of
//! its connections closed — asks the allocator to give back what is free:
//! glibc's `malloc_trim(0)`, jemalloc's purge of every arena, mimalloc's
//! `mi_collect(true)`. A steady load never triggers it. The choice of
//! default and the measurements: docs/design.md ("Memory").
//!
//! glibc's trim cannot reach all of it: the free memory at the top of each
//! arena but the first stays, up to twice the largest block recently freed
//! (a megabyte reply: two or four megabytes), and glibc makes up to eight
//! arenas per CPU. A server that spawns a thread per request meets them all
//! and kept 30 to 55 MB after a burst on two CPUs. So under glibc a server
//! allows two arenas per CPU it may use ([`arenas`]), unless
//! `MALLOC_ARENA_MAX` or `GLIBC_TUNABLES` says otherwise.

use serverlab_server::Shutdown;
use serverlab_service::Service;
use std::sync::Arc;
use std::time::Duration;

#[cfg(all(feature = "mimalloc", feature = "jemalloc"))]
compile_error!("choose one allocator feature: mimalloc or jemalloc");

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// The allocator this binary was built with, as the startup line says it.
pub const ALLOCATOR: &str = if cfg!(feature = "mimalloc") {
    "mimalloc"
} else if cfg!(feature = "jemalloc") {
    "jemalloc"
} else {
    "glibc"
};

/// How many malloc arenas glibc may make for a process that may use
/// `cpus` CPUs: two per CPU, not glibc's eight, so that what every arena
/// keeps at its top after a burst adds up to little.
pub fn arenas(cpus: usize) -> usize {
    2 * cpus.max(1)
}

/// Whether the environment already chose glibc's arena count.
fn arenas_chosen_by(env: impl Fn(&str) -> Option<String>) -> bool {
    env("MALLOC_ARENA_MAX").is_some()
        || env("GLIBC_TUNABLES").is_some_and(|t| t.contains("arena_max"))
}

/// Set the allocator up before the server's threads start, for a server
/// that may use `cpus` CPUs (its `--cpus`, or all this process may use);
/// what it chose, for the startup line ("glibc, 4 arenas"). Only glibc's
/// is tuned.
pub fn tune(cpus: Option<usize>) -> String {
    #[cfg(all(
        not(feature = "mimalloc"),
        not(feature = "jemalloc"),
        target_env = "gnu"
    ))]
    {
        if arenas_chosen_by(|k| std::env::var(k).ok()) {
            return format!("{ALLOCATOR}, arenas as the environment sets them");
        }
        let cpus =
            cpus.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let n = arenas(cpus);
        let as_int = libc::c_int::try_from(n).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt has no preconditions; M_ARENA_MAX takes a count,
        // and arenas already made are kept.
        if unsafe { libc::mallopt(libc::M_ARENA_MAX, as_int) } == 1 {
            return format!("{ALLOCATOR}, {n} arenas");
        }
    }
    ALLOCATOR.to_string()
}

/// How often the server looks whether a burst has ended.
const EVERY: Duration = Duration::from_secs(1);
/// Open connections must fall by at least this many (and by half) for a
/// burst to have ended: a churn of a few connections is not one.
const FALL_AT_LEAST: u64 = 32;

/// Ask the allocator to return the memory it holds free to the system.
fn give_back() {
    #[cfg(feature = "mimalloc")]
    // SAFETY: mi_collect has no preconditions; it may be called from any
    // thread at any time.
    unsafe {
        libmimalloc_sys::mi_collect(true)
    };
    #[cfg(feature = "jemalloc")]
    // SAFETY: a valid NUL-terminated control name; "arena.<all>.purge"
    // (MALLCTL_ARENAS_ALL = 4096) reads and writes nothing, so every
    // pointer is null and the length 0.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            c"arena.4096.purge".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        );
    }
    #[cfg(all(
        not(feature = "mimalloc"),
        not(feature = "jemalloc"),
        target_env = "gnu"
    ))]
    // SAFETY: malloc_trim has no preconditions; it takes each arena's lock.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// What the server looks at each second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Sample {
    /// Requests applied so far.
    requests: u64,
    /// Connections closed so far.
    closed: u64,
    /// Connections open now.
    open: u64,
}

/// When a burst has ended: the policy, apart from clocks and allocators.
#[derive(Debug, Default)]
struct Bursts {
    last: Sample,
    /// Requests applied by the last give-back.
    requests_at_trim: u64,
    /// Most connections open since the last give-back.
    peak_open: u64,
}

impl Bursts {
    /// The next second's sample: whether to give memory back now.
    fn tick(&mut self, now: Sample) -> bool {
        self.peak_open = self.peak_open.max(now.open).max(self.last.open);
        let went_quiet = now.requests == self.last.requests && now.requests > self.requests_at_trim;
        let emptied = now.closed > self.last.closed
            && now.open * 2 <= self.peak_open
            && self.peak_open - now.open >= FALL_AT_LEAST;
        self.last = now;
        if went_quiet || emptied {
            self.requests_at_trim = now.requests;
            self.peak_open = now.open;
            return true;
        }
        false
    }
}

/// Give memory back after each burst, from a thread of its own, until the
/// server stops.
pub fn give_back_after_bursts<S: Service>(svc: Arc<S>, stop: Shutdown) {
    let spawned = std::thread::Builder::new()
        .name("give-back".into())
        .spawn(move || {
            let mut bursts = Bursts::default();
            while !stop.is_triggered() {
                std::thread::sleep(EVERY);
                let c = svc.common();
                let sample = Sample {
                    requests: c.times.count(),
                    closed: c.connections.snapshot().closed,
                    open: c.connections.active(),
                };
                if bursts.tick(sample) {
                    give_back();
                }
            }
        });
    if let Err(e) = spawned {
        serverlab_server::warn(&format!(
            "serverlab: memory will not be given back after bursts: {e}"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(requests: u64, closed: u64, open: u64) -> Sample {
        Sample {
            requests,
            closed,
            open,
        }
    }

    #[test]
    fn two_arenas_per_cpu_unless_the_environment_chose() {
        assert_eq!(arenas(1), 2);
        assert_eq!(arenas(16), 32);
        assert_eq!(arenas(0), 2);
        let none = |_: &str| None;
        assert!(!arenas_chosen_by(none));
        assert!(arenas_chosen_by(
            |k: &str| (k == "MALLOC_ARENA_MAX").then(|| "8".into())
        ));
        assert!(arenas_chosen_by(|k: &str| {
            (k == "GLIBC_TUNABLES").then(|| "glibc.malloc.arena_max=8".into())
        }));
        assert!(!arenas_chosen_by(|k: &str| {
            (k == "GLIBC_TUNABLES").then(|| "glibc.malloc.tcache_count=0".into())
        }));
    }

    #[test]
    fn gives_back_once_when_a_burst_ends_never_under_steady_load() {
        let mut b = Bursts::default();
        assert!(!b.tick(s(0, 0, 0)), "idle from the start");
        assert!(!b.tick(s(1000, 0, 10)));
        assert!(!b.tick(s(2000, 5, 10)), "steady, with churn");
        assert!(b.tick(s(2000, 15, 0)), "went quiet");
        assert!(!b.tick(s(2000, 15, 0)), "once");
        // A never-reading burst beside a steady client: requests keep
        // coming, the burst's 200 connections are reset.
        assert!(!b.tick(s(3000, 15, 201)));
        assert!(!b.tick(s(4000, 15, 201)));
        assert!(b.tick(s(5000, 215, 1)), "most connections closed");
        assert!(!b.tick(s(6000, 216, 1)));
        // A few connections closing is not a burst ending.
        assert!(!b.tick(s(7000, 226, 20)));
        assert!(!b.tick(s(8000, 240, 6)));
    }
}
