//! Waiting for a child process with a limit, for the callers that must
//! not hang on one that never ends (a server's stop, a test's guard).

use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// How often [`wait_within`] looks.
const LOOK_EVERY: Duration = Duration::from_millis(20);

/// `child`'s exit status once it has exited, looked for until `limit`
/// has passed; `None` if it is still running then (or cannot be waited
/// for).
pub fn wait_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(LOOK_EVERY),
            _ => return None,
        }
    }
}

/// [`wait_within`], then, if it is still running, kill and reap `child`
/// and answer `None`.
pub fn wait_or_kill(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let status = wait_within(child, limit);
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn an_exited_child_is_reaped_and_a_running_one_killed() {
        let mut quick = Command::new("true").spawn().unwrap();
        let status = wait_within(&mut quick, Duration::from_secs(60));
        assert!(status.is_some_and(|s| s.success()));
        let mut slow = Command::new("sleep").arg("60").spawn().unwrap();
        assert_eq!(wait_or_kill(&mut slow, Duration::from_millis(50)), None);
        // Killed and reaped: nothing is left to wait for.
        assert!(slow.try_wait().unwrap().is_some());
    }
}
