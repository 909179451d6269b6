//! What `--threads` means under each server strategy, by the strategy's
//! name: the one fact about strategies that crates without the server
//! need (a sweep gives a cores point's server as many threads as cores
//! only where its strategy has a number of threads). The server's own
//! list (`serverlab_server::for_each_strategy!`) answers the same through
//! `StrategyKind::threads()`, and its tests check that the two agree name
//! for name: a strategy added there and not here fails them.

/// What `--threads` means under a strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// It sets how many of these there are ("workers", "event loops").
    Sizes(&'static str),
    /// It does not apply: what sets the concurrency instead ("a thread per
    /// connection"). Giving `--threads` is then a usage error.
    Unused(&'static str),
}

/// Every strategy, by its `--strategy` name, and what `--threads` means
/// under it.
pub const THREADS: &[(&str, Threads)] = &[
    (
        "thread-per-connection",
        Threads::Unused("a thread per connection"),
    ),
    (
        "thread-per-request",
        Threads::Unused("a thread per request"),
    ),
    ("pool-locked", Threads::Sizes("workers")),
    ("pool-lockfree", Threads::Sizes("workers")),
    ("async", Threads::Sizes("runtime workers")),
    ("shared-nothing", Threads::Sizes("event loops")),
    ("uring", Threads::Sizes("rings")),
];

/// What `--threads` means under the strategy named `strategy`; None for a
/// name that is no strategy's.
pub fn threads(strategy: &str) -> Option<Threads> {
    THREADS
        .iter()
        .find(|(name, _)| *name == strategy)
        .map(|&(_, t)| t)
}

/// Whether `--threads` sets how many threads the strategy named
/// `strategy` has. The default strategy (None) has threads; so has a name
/// no strategy has, which the server's flag check refuses on its own.
pub fn sizes_threads(strategy: Option<&str>) -> bool {
    !matches!(strategy.and_then(threads), Some(Threads::Unused(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_answer_says_what() {
        let mut names: Vec<&str> = THREADS.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), THREADS.len());
        for (name, t) in THREADS {
            let (Threads::Sizes(what) | Threads::Unused(what)) = t;
            assert!(!what.is_empty(), "{name}");
        }
        assert!(sizes_threads(None));
        assert!(sizes_threads(Some("uring")));
        assert!(sizes_threads(Some("no-such-strategy")));
        assert!(!sizes_threads(Some("thread-per-request")));
    }
}
