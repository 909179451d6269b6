//! The file-descriptor budget: the soft `RLIMIT_NOFILE` raised toward the
//! hard limit when a server starts, and the connection cap sized so that
//! `--max-connections` binds before the descriptor limit does.
//!
//! A server that runs out of descriptors can still not be wedged (see
//! `accept.rs`), but every connection past the limit is then shed; sizing
//! the cap first means the server evicts (counted, `idle.rs`) or lets new
//! connections wait in the backlog (`room.rs`) with descriptors to spare,
//! and says at start which limit applies.

use std::fmt;

/// Descriptors a server needs besides its connections' and those open
/// when it is sized (its listeners, the spare): event queues, wakers,
/// signal pipes, the statistics file, a few per thread.
const RESERVE_BASE: u64 = 32;
const RESERVE_PER_THREAD: u64 = 4;
/// Connections admitted over the cap at most, while connections evicted
/// for them are still closing (`accept.rs`); their descriptors are
/// reserved too.
pub const EVICTION_SLACK: u64 = 16;

/// The most connections a server may hold open, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimit {
    /// Connections open at once.
    pub max: u64,
    /// `--max-connections` as asked.
    pub asked: u64,
    /// The soft descriptor limit in force.
    pub fd_limit: u64,
    /// What it was before the server raised it, if it did.
    pub raised_from: Option<u64>,
    /// Descriptors one connection uses under the strategy.
    pub fds_per_connection: u64,
    /// The listen backlog, where connections wait while the cap is
    /// reached (`listen::backlog`).
    pub backlog: u32,
}

impl ConnectionLimit {
    /// Raise the soft descriptor limit as far as allowed and size the cap:
    /// `asked`, or fewer if the descriptors left (the limit less those
    /// open now and a reserve for `threads`) hold fewer connections of
    /// `fds_per_connection` each.
    pub fn size(asked: u64, fds_per_connection: u64, threads: usize) -> ConnectionLimit {
        let (fd_limit, raised_from) = raise_soft_limit();
        let per = fds_per_connection.max(1);
        let reserve =
            open_fds() + RESERVE_BASE + RESERVE_PER_THREAD * threads as u64 + EVICTION_SLACK * per;
        let fit = fd_limit.saturating_sub(reserve) / per;
        ConnectionLimit {
            max: asked.min(fit).max(1),
            asked,
            fd_limit,
            raised_from,
            fds_per_connection: per,
            backlog: crate::listen::backlog(),
        }
    }

    /// Whether the descriptor limit, not `--max-connections`, sets the cap.
    pub fn fds_bind(&self) -> bool {
        self.max < self.asked
    }
}

/// "max 10000 connections (--max-connections; fd limit 1048576), then
/// new ones wait in a backlog of 4096", or, when descriptors bind, which
/// limit and why.
impl fmt::Display for ConnectionLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let raised = match self.raised_from {
            Some(from) => format!(", raised from {from}"),
            None => String::new(),
        };
        if self.fds_bind() {
            write!(
                f,
                "max {} connections (the fd limit binds: {} descriptors{raised}, {} per connection; --max-connections {})",
                self.max, self.fd_limit, self.fds_per_connection, self.asked
            )?;
        } else {
            write!(
                f,
                "max {} connections (--max-connections; fd limit {}{raised})",
                self.max, self.fd_limit
            )?;
        }
        write!(
            f,
            ", then new ones wait in a backlog of {} (somaxconn)",
            self.backlog
        )
    }
}

/// Raise the soft `RLIMIT_NOFILE` to the hard limit (or the most the
/// kernel allows a process, if the hard limit is unlimited). Returns the
/// soft limit now, and the old one if it changed. Failure leaves it as it
/// was: the cap is sized from whatever is in force.
fn raise_soft_limit() -> (u64, Option<u64>) {
    use nix::sys::resource::{getrlimit, setrlimit, Resource, RLIM_INFINITY};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return (u64::MAX, None);
    };
    let target = if hard == RLIM_INFINITY {
        nr_open().unwrap_or(1 << 20)
    } else {
        hard
    };
    if soft >= target || setrlimit(Resource::RLIMIT_NOFILE, target, hard).is_err() {
        return (soft, None);
    }
    (target, Some(soft))
}

/// Whether descriptor `fd` lies past the soft descriptor limit now in
/// force. Descriptors are allocated lowest first, so every one below it is
/// open and the process holds more than the limit allows — which only an
/// operation armed before the limit was lowered can do (io_uring's accept
/// keeps the limit of when it was armed).
pub(crate) fn past_limit(fd: std::os::fd::RawFd) -> bool {
    use nix::sys::resource::{getrlimit, Resource};
    getrlimit(Resource::RLIMIT_NOFILE).is_ok_and(|(soft, _)| fd as u64 >= soft)
}

/// The kernel's per-process ceiling on descriptors.
fn nr_open() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Descriptors this process has open now.
fn open_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_the_flag_or_what_descriptors_allow() {
        let ample = ConnectionLimit {
            max: 100,
            asked: 100,
            fd_limit: 1 << 20,
            raised_from: Some(1024),
            fds_per_connection: 1,
            backlog: 4096,
        };
        assert!(!ample.fds_bind());
        assert_eq!(
            ample.to_string(),
            "max 100 connections (--max-connections; fd limit 1048576, raised from 1024), \
             then new ones wait in a backlog of 4096 (somaxconn)"
        );
        let tight = ConnectionLimit {
            max: 490,
            asked: 10_000,
            fd_limit: 1024,
            raised_from: None,
            fds_per_connection: 2,
            backlog: 4096,
        };
        assert!(tight.fds_bind());
        assert!(tight.to_string().starts_with(
            "max 490 connections (the fd limit binds: 1024 descriptors, 2 per connection"
        ));
    }

    #[test]
    fn a_descriptor_is_past_the_limit_only_at_or_above_it() {
        use nix::sys::resource::{getrlimit, Resource};
        let (soft, _) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
        assert!(!past_limit(0));
        // An unlimited soft limit has no descriptor past it.
        if let Ok(at) = i32::try_from(soft) {
            assert!(!past_limit(at - 1));
            assert!(past_limit(at));
        }
    }

    #[test]
    fn sizing_leaves_room_for_what_is_open() {
        let l = ConnectionLimit::size(u64::MAX, 2, 4);
        assert!(l.fds_bind());
        assert!(l.max * 2 + open_fds() <= l.fd_limit, "{l}");
        assert_eq!(ConnectionLimit::size(3, 1, 1).max, 3);
    }
}
