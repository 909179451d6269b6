//! The concurrency strategies a server can run under (`--strategy`).

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StrategyKind {
    ThreadPerConnection,
    ThreadPerRequest,
    PoolLocked,
    PoolLockFree,
    Async,
    SharedNothing,
}

impl StrategyKind {
    pub const ALL: [StrategyKind; 6] = [
        StrategyKind::ThreadPerConnection,
        StrategyKind::ThreadPerRequest,
        StrategyKind::PoolLocked,
        StrategyKind::PoolLockFree,
        StrategyKind::Async,
        StrategyKind::SharedNothing,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StrategyKind::ThreadPerConnection => "thread-per-connection",
            StrategyKind::ThreadPerRequest => "thread-per-request",
            StrategyKind::PoolLocked => "pool-locked",
            StrategyKind::PoolLockFree => "pool-lockfree",
            StrategyKind::Async => "async",
            StrategyKind::SharedNothing => "shared-nothing",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            StrategyKind::ThreadPerConnection => {
                "a blocking thread for each connection, for its whole life"
            }
            StrategyKind::ThreadPerRequest => {
                "an event loop hands each ready request to a newly spawned thread"
            }
            StrategyKind::PoolLocked => {
                "an event loop queues ready connections for N workers; mutex+condvar queue"
            }
            StrategyKind::PoolLockFree => {
                "an event loop queues ready connections for N workers; lock-free queue"
            }
            StrategyKind::Async => "tokio multi-thread runtime, N workers, work stealing",
            StrategyKind::SharedNothing => {
                "N single-thread event loops, one SO_REUSEPORT listener each"
            }
        }
    }
}

impl fmt::Display for StrategyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for StrategyKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        StrategyKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = StrategyKind::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown strategy '{s}' (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}
