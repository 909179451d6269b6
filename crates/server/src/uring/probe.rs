//! Whether `--strategy uring` can run on this machine, and if not, why, in
//! words a user can act on: io_uring disabled by sysctl, restricted to a
//! group, blocked by a seccomp filter, or a kernel too old for what the
//! strategy uses (multishot receive: Linux 6.0).
//!
//! The server checks before it announces that it listens, so a machine
//! without io_uring fails at start (exit 1) naming the reason. Test builds
//! (the `test-switches` feature, which only the CLI's tests enable) honour
//! `SERVERLAB_TEST_URING_UNAVAILABLE=disabled|restricted|seccomp|old-kernel`,
//! which feeds the diagnosis the facts of such a machine.

use super::sys::{self, SetupError};
use std::io;

/// The oldest kernel with everything the strategy uses: multishot accept
/// and provided-buffer rings (5.19), multishot receive (6.0).
const NEEDS: (u32, u32) = (6, 0);

/// What the strategy suggests instead: readiness-based, needs nothing.
const INSTEAD: &str = "every other strategy works without io_uring, e.g. --strategy async";

/// What the diagnosis goes by.
#[derive(Debug)]
struct Facts {
    /// Setting up a ring the way the server will.
    setup: Result<(), SetupError>,
    /// `/proc/sys/kernel/io_uring_disabled`, where the kernel has it
    /// (6.6 and later).
    disabled: Option<u8>,
    /// `uname -r`.
    release: String,
}

/// `Ok` if a ring as `cfg` describes can be set up here; otherwise why
/// not, and what to use instead.
pub(super) fn check(cfg: &sys::Config) -> Result<(), String> {
    let facts = match faked() {
        Some(facts) => facts,
        // On a thread of its own: a thread that used a ring may later find
        // a blocking call with a timeout interrupted (EINTR) by the ring's
        // leftover task work, and the caller (the server's main thread, a
        // test) should not have to know.
        None => std::thread::scope(|s| s.spawn(|| observe(cfg)).join())
            .map_err(|_| "probing io_uring panicked".to_string())?,
    };
    diagnose(&facts).map_err(|why| format!("{why}; {INSTEAD}"))
}

fn observe(cfg: &sys::Config) -> Facts {
    // The smallest ring of the same kind: set up, then dropped.
    let small = sys::Config {
        entries: 4,
        buffers: 1,
        buffer_len: 64,
        ..cfg.clone()
    };
    Facts {
        setup: sys::Uring::new(&small).map(drop),
        disabled: std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
            .ok()
            .and_then(|s| s.trim().parse().ok()),
        release: release(),
    }
}

fn release() -> String {
    nix::sys::utsname::uname()
        .map(|u| u.release().to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Why io_uring cannot run, from the facts.
fn diagnose(f: &Facts) -> Result<(), String> {
    let old = version(&f.release).is_some_and(|v| v < NEEDS);
    let too_old = || {
        format!(
            "the kernel ({}) is too old: --strategy uring needs Linux {}.{} or later \
             (multishot receive, provided-buffer rings)",
            f.release, NEEDS.0, NEEDS.1
        )
    };
    let e = match &f.setup {
        Ok(()) if old => return Err(too_old()),
        Ok(()) => return Ok(()),
        Err(SetupError::Ring(e)) => e,
        Err(SetupError::Buffers(_)) if old => return Err(too_old()),
        Err(other) => return Err(format!("io_uring cannot be set up: {other}")),
    };
    let errno = e.raw_os_error();
    Err(match (errno, f.disabled) {
        (_, Some(2)) => "io_uring is disabled on this machine \
                         (/proc/sys/kernel/io_uring_disabled is 2)"
            .to_string(),
        (Some(libc::EPERM), Some(1)) => "io_uring is restricted to the group in \
                                         /proc/sys/kernel/io_uring_group \
                                         (io_uring_disabled is 1), and this process is not in it"
            .to_string(),
        (Some(libc::ENOSYS), _) if old => too_old(),
        (Some(libc::ENOSYS | libc::EPERM), _) => format!(
            "io_uring_setup is refused ({}): a seccomp filter blocks it (container runtimes' \
             default profiles do), or the kernel was built without io_uring",
            io::Error::from_raw_os_error(errno.unwrap_or(0))
        ),
        _ => format!("io_uring cannot be set up: io_uring_setup failed: {e}"),
    })
}

/// `major.minor` of a kernel release such as `6.18.44-fc`.
fn version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The facts of a machine without io_uring, in test builds only.
#[cfg(feature = "test-switches")]
fn faked() -> Option<Facts> {
    let case = std::env::var("SERVERLAB_TEST_URING_UNAVAILABLE").ok()?;
    Some(fake(&case))
}

#[cfg(not(feature = "test-switches"))]
fn faked() -> Option<Facts> {
    None
}

#[cfg(any(all(test, not(serverlab_loom)), feature = "test-switches"))]
fn fake(case: &str) -> Facts {
    let refused = |errno| Err(SetupError::Ring(io::Error::from_raw_os_error(errno)));
    let (setup, disabled, release) = match case {
        "disabled" => (refused(libc::EPERM), Some(2), "6.18.0"),
        "restricted" => (refused(libc::EPERM), Some(1), "6.18.0"),
        "seccomp" => (refused(libc::EPERM), Some(0), "6.18.0"),
        "old-kernel" => (refused(libc::ENOSYS), None, "4.19.0-26-amd64"),
        other => panic!("SERVERLAB_TEST_URING_UNAVAILABLE={other}: not a case"),
    };
    Facts {
        setup,
        disabled,
        release: release.to_string(),
    }
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests {
    use super::*;

    fn why(case: &str) -> String {
        diagnose(&fake(case)).unwrap_err()
    }

    #[test]
    fn each_reason_is_named() {
        assert!(why("disabled").contains("io_uring_disabled is 2"));
        assert!(why("restricted").contains("io_uring_group"));
        assert!(why("seccomp").contains("seccomp"));
        let old = why("old-kernel");
        assert!(
            old.contains("4.19.0-26-amd64") && old.contains("6.0"),
            "{old}"
        );
    }

    #[test]
    fn a_new_kernel_that_sets_up_is_fine_and_an_old_one_is_not() {
        let mut f = Facts {
            setup: Ok(()),
            disabled: Some(0),
            release: "6.18.44-fc-v782".into(),
        };
        assert_eq!(diagnose(&f), Ok(()));
        f.release = "5.15.0".into();
        assert!(diagnose(&f).unwrap_err().contains("too old"));
        f.setup = Err(SetupError::Buffers(io::Error::from_raw_os_error(
            libc::EINVAL,
        )));
        assert!(diagnose(&f).unwrap_err().contains("too old"));
    }

    #[test]
    fn versions() {
        assert_eq!(version("6.18.44-fc-v782"), Some((6, 18)));
        assert_eq!(version("5.4.0-150-generic"), Some((5, 4)));
        assert_eq!(version("nonsense"), None);
    }

    /// This machine: either io_uring works, or the reason is one of the
    /// named ones (printed, so a run on such a machine says why).
    #[test]
    fn this_machine() {
        let cfg = super::super::config(false, None);
        match check(&cfg) {
            Ok(()) => {}
            Err(why) => {
                eprintln!("io_uring unavailable here: {why}");
                assert!(why.ends_with(INSTEAD), "{why}");
            }
        }
    }
}
