//! The concurrency strategies a server can run under (`--strategy`): the
//! one list of them, and what each answers about itself.
//!
//! A strategy is a type implementing `Strategy` in its own module: its
//! name, its line of `--help`, what `--threads` means to it, the listening
//! sockets it wants, who spends delays, and how it runs (its scheduling
//! only: every transport duty is the `Session`'s). Registering one is one
//! line in [`for_each_strategy!`](crate::for_each_strategy), the list
//! `StrategyKind`, `--strategy`, `serve --help` and the tests' matrices are
//! all made from.

use crate::listen::Listener;
use crate::{Ctx, ServerConfig};
use serverlab_service::Service;
use std::io;
use std::sync::Arc;

/// What `--threads` means under a strategy: also listed by name in
/// `serverlab_util::strategies`, for crates without the server (the
/// sweep); a test below keeps the two lists equal.
pub use serverlab_util::strategies::Threads;

/// The listening sockets a strategy wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listeners {
    /// One, shared by the strategy's threads.
    One,
    /// One per thread, bound to the same port with SO_REUSEPORT, so the
    /// kernel spreads new connections over them (on a Unix socket, one
    /// socket shared by the threads, which race to accept: `listen.rs`).
    PerThread,
}

/// Who spends the delay a request asks for (bucket's spin, sleep, work).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delays {
    /// The thread running the request, which it holds meanwhile: with a
    /// pool, a delayed request occupies a worker.
    OnTheRequestThread,
    /// Timers, or threads apart from those serving sockets: the strategy's
    /// own threads serve on meanwhile.
    OffTheServingThreads,
}

/// A strategy this machine cannot run (a usable configuration, but not
/// here), and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--strategy {strategy} cannot run here: {reason}")]
pub struct Unavailable {
    pub strategy: StrategyKind,
    pub reason: String,
}

/// A concurrency strategy: what it answers about itself, and how it runs.
pub(crate) trait Strategy {
    /// As `--strategy` takes it.
    const NAME: &'static str;
    /// One line for `serve --help`.
    const DESCRIBE: &'static str;
    const THREADS: Threads;
    const LISTENERS: Listeners;
    const DELAYS: Delays;
    /// File descriptors one connection holds (the connection cap is sized
    /// so that they fit under the descriptor limit).
    const FDS_PER_CONNECTION: u64 = 1;
    /// Whether its workers' busy time per request is timed and reported
    /// (`worker_busy_us`): the strategies whose workers take ready
    /// connections from an event loop.
    const TIMES_WORKERS: bool = false;

    /// Whether this machine can run the strategy as `cfg` describes; if
    /// not, why, and what to use instead. Checked before the server binds.
    /// Most strategies need nothing a Linux machine lacks.
    fn preflight(cfg: &ServerConfig) -> Result<(), String> {
        let _ = cfg;
        Ok(())
    }

    /// Serve on `listeners` (as many as [`Strategy::LISTENERS`] asks for)
    /// until the stop is triggered and every connection has finished.
    fn run<S: Service>(ctx: Arc<Ctx<S>>, listeners: Vec<Listener>) -> io::Result<()>;
}

/// The list of strategies: `$callback! { [$($extra)*] snake_name:
/// Variant => implementing::Type, … }`. Everything that enumerates
/// strategies is made from it — [`StrategyKind`] here, and the tests'
/// per-strategy matrices — so a strategy added here is served, listed and
/// tested with no other list to edit. Extra tokens after the callback's
/// name are passed through in the brackets.
#[macro_export]
macro_rules! for_each_strategy {
    ($callback:ident $(, $($extra:tt)*)?) => {
        $callback! {
            [$($($extra)*)?]
            thread_per_connection: ThreadPerConnection => $crate::blocking::ThreadPerConnection,
            thread_per_request: ThreadPerRequest => $crate::reactor::ThreadPerRequest,
            pool_locked: PoolLocked => $crate::reactor::PoolLocked,
            pool_lockfree: PoolLockFree => $crate::reactor::PoolLockFree,
            async_tokio: Async => $crate::tokio_rt::Async,
            shared_nothing: SharedNothing => $crate::tokio_rt::SharedNothing,
            uring: Uring => $crate::uring::Uring,
        }
    };
}

/// `StrategyKind` and its answers, from the list.
macro_rules! registry {
    ([] $($snake:ident: $variant:ident => $imp:path),* $(,)?) => {
        /// A strategy, by name (`--strategy`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum StrategyKind {
            $($variant),*
        }

        impl serverlab_util::Named for StrategyKind {
            const WHAT: &'static str = "strategy";
            const ALL: &'static [StrategyKind] = &[$(StrategyKind::$variant),*];

            fn name(self) -> &'static str {
                match self {
                    $(StrategyKind::$variant => <$imp as Strategy>::NAME),*
                }
            }

            fn describe(self) -> &'static str {
                match self {
                    $(StrategyKind::$variant => <$imp as Strategy>::DESCRIBE),*
                }
            }
        }

        impl StrategyKind {
            /// What `--threads` means under this strategy.
            pub fn threads(self) -> Threads {
                match self {
                    $(StrategyKind::$variant => <$imp as Strategy>::THREADS),*
                }
            }

            /// The listening sockets this strategy wants.
            pub fn listeners(self) -> Listeners {
                match self {
                    $(StrategyKind::$variant => <$imp as Strategy>::LISTENERS),*
                }
            }

            /// File descriptors one connection holds under this strategy.
            pub fn fds_per_connection(self) -> u64 {
                match self {
                    $(StrategyKind::$variant => <$imp as Strategy>::FDS_PER_CONNECTION),*
                }
            }

            /// Whether it reports its workers' busy time per request.
            pub fn times_workers(self) -> bool {
                match self {
                    $(StrategyKind::$variant => <$imp as Strategy>::TIMES_WORKERS),*
                }
            }

            /// Who spends a request's delay under this strategy.
            pub fn delays(self) -> Delays {
                match self {
                    $(StrategyKind::$variant => <$imp as Strategy>::DELAYS),*
                }
            }

            /// Whether this machine can run it as `cfg` describes.
            pub(crate) fn preflight(self, cfg: &ServerConfig) -> Result<(), Unavailable> {
                let reason = match self {
                    $(StrategyKind::$variant => <$imp as Strategy>::preflight(cfg)),*
                };
                reason.map_err(|reason| Unavailable { strategy: self, reason })
            }

            pub(crate) fn run<S: Service>(
                self,
                ctx: Arc<Ctx<S>>,
                listeners: Vec<Listener>,
            ) -> io::Result<()> {
                match self {
                    $(StrategyKind::$variant => <$imp as Strategy>::run(ctx, listeners)),*
                }
            }
        }
    };
}

for_each_strategy!(registry);

serverlab_util::named_enum_impls!(StrategyKind);

#[cfg(test)]
mod tests {
    use super::*;
    use serverlab_util::Named;

    /// Names are unique and round-trip; every strategy answers.
    #[test]
    fn every_strategy_has_a_unique_name() {
        let mut names: Vec<&str> = StrategyKind::ALL.iter().map(|s| s.name()).collect();
        for &s in StrategyKind::ALL {
            assert_eq!(s.name().parse::<StrategyKind>(), Ok(s));
            assert!(!s.describe().is_empty(), "{s}");
            if s.listeners() == Listeners::PerThread {
                assert!(matches!(s.threads(), Threads::Sizes(_)), "{s}");
            }
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), StrategyKind::ALL.len());
    }

    /// `serverlab_util::strategies` says what `--threads` means under
    /// every strategy, as the strategy does, and names no other.
    #[test]
    fn the_util_list_of_threads_is_this_one() {
        for &s in StrategyKind::ALL {
            assert_eq!(
                serverlab_util::strategies::threads(s.name()),
                Some(s.threads()),
                "{s}: add it to serverlab_util::strategies::THREADS"
            );
        }
        assert_eq!(
            serverlab_util::strategies::THREADS.len(),
            StrategyKind::ALL.len()
        );
    }

    /// The list's snake names are the strategies' names with `_` (the
    /// tests name their per-strategy modules after them).
    #[test]
    fn snake_names_match() {
        macro_rules! check {
            ([] $($snake:ident: $variant:ident => $imp:path),* $(,)?) => {
                $(
                    let name = StrategyKind::$variant.name().replace('-', "_");
                    let snake = stringify!($snake);
                    assert!(snake == name || snake.starts_with(&name), "{snake} vs {name}");
                )*
            };
        }
        for_each_strategy!(check);
    }
}
