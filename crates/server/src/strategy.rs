//! The concurrency strategies a server can run under (`--strategy`).

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StrategyKind {
    ThreadPerConnection,
    ThreadPerRequest,
    PoolLocked,
    PoolLockFree,
    Async,
    SharedNothing,
}

impl serverlab_util::Named for StrategyKind {
    const WHAT: &'static str = "strategy";
    const ALL: &'static [StrategyKind] = &[
        StrategyKind::ThreadPerConnection,
        StrategyKind::ThreadPerRequest,
        StrategyKind::PoolLocked,
        StrategyKind::PoolLockFree,
        StrategyKind::Async,
        StrategyKind::SharedNothing,
    ];

    fn name(self) -> &'static str {
        match self {
            StrategyKind::ThreadPerConnection => "thread-per-connection",
            StrategyKind::ThreadPerRequest => "thread-per-request",
            StrategyKind::PoolLocked => "pool-locked",
            StrategyKind::PoolLockFree => "pool-lockfree",
            StrategyKind::Async => "async",
            StrategyKind::SharedNothing => "shared-nothing",
        }
    }

    fn describe(self) -> &'static str {
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

serverlab_util::named_enum_impls!(StrategyKind);
