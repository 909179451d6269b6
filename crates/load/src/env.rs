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
}

impl Environment {
    pub fn capture() -> Self {
        let kernel = nix::sys::utsname::uname()
            .map(|u| {
                format!(
                    "{} {}",
                    u.sysname().to_string_lossy(),
                    u.release().to_string_lossy()
                )
            })
            .unwrap_or_else(|_| "unknown".into());
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
