//! Server strategies: sockets, threads, queues and event loops.
//!
//! Every strategy is one implementation generic over
//! [`serverlab_service::Service`], so each serves every protocol. A
//! connection is always driven by a `Session` (`session/`), which owns every
//! transport duty (framing, replies in order, timeouts, lingering close,
//! draining); a strategy is only its scheduling. The strategies are listed
//! once, in [`for_each_strategy!`].
// A test reads as one story; the 60-line limit is for the code under test.
#![cfg_attr(test, allow(clippy::too_many_lines))]

mod accept;
mod blocking;
pub mod by_hand;
mod delay;
mod drive;
pub mod fds;
mod idle;
mod io;
mod listen;
mod listeners;
mod reactor;
mod room;
pub(crate) mod session;
pub mod shutdown;
pub mod strategy;
#[cfg(test)]
mod test_server;
mod tokio_rt;
mod uring;
mod watch;

pub use fds::ConnectionLimit;
pub use listen::{ListenAddr, UNIX, UNIX_PATH_MAX};
pub use session::OUTPUT_HIGH_WATER;
pub use shutdown::Shutdown;
pub use strategy::{Delays, Listeners, StrategyKind, Threads, Unavailable};

use serverlab_service::{ConnCounters, Service};
use serverlab_util::server_stats::ServerStats;
use serverlab_util::CpuSet;
use std::sync::Arc;

/// How long a graceful stop waits for connections to finish before the
/// ones left are reset.
pub(crate) const DRAIN_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The default [`ServerConfig::write_timeout`].
pub const DEFAULT_WRITE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// How to run a server: everything but the protocol.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// A TCP address, or a Unix socket's path.
    pub addr: ListenAddr,
    pub strategy: StrategyKind,
    /// Workers, loops or runtime threads (where the strategy has them, see
    /// [`StrategyKind::threads`]); `None`: one per allowed CPU.
    pub threads: Option<usize>,
    /// Pin every server thread to these CPUs.
    pub cpus: Option<CpuSet>,
    /// Connections open at once; past it a new one evicts the connection
    /// idle longest, or, if none is idle, waits in the listen backlog
    /// until one closes (`room.rs`). Lowered when the descriptor limit
    /// holds fewer (see [`ConnectionLimit`]).
    pub max_connections: u64,
    /// How long unwritten replies may make no progress (a client that does
    /// not read them) before the connection is reset and counted;
    /// `None`: forever.
    pub write_timeout: Option<std::time::Duration>,
    /// `uring` only: a kernel thread polls each ring's submissions
    /// (`--uring-sqpoll`).
    pub uring_sqpoll: bool,
}

/// A configuration no server can run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("--threads does not apply to {strategy}: it runs {instead}")]
    ThreadsUnused {
        strategy: StrategyKind,
        instead: &'static str,
    },
    #[error("--uring-sqpoll applies only to --strategy uring, not {strategy}")]
    SqpollUnused { strategy: StrategyKind },
}

impl ServerConfig {
    pub fn new(addr: impl Into<ListenAddr>, strategy: StrategyKind) -> Self {
        ServerConfig {
            addr: addr.into(),
            strategy,
            threads: None,
            cpus: None,
            max_connections: 10_000,
            write_timeout: Some(DEFAULT_WRITE_TIMEOUT),
            uring_sqpoll: false,
        }
    }

    /// Whether the strategy can run as configured: `threads` only where it
    /// sizes something, `uring_sqpoll` only under `uring`.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.uring_sqpoll && self.strategy != StrategyKind::Uring {
            return Err(ConfigError::SqpollUnused {
                strategy: self.strategy,
            });
        }
        match (self.threads, self.strategy.threads()) {
            (Some(_), Threads::Unused(instead)) => Err(ConfigError::ThreadsUnused {
                strategy: self.strategy,
                instead,
            }),
            _ => Ok(()),
        }
    }

    /// Whether this machine can run the strategy as configured (`uring`
    /// needs io_uring); if not, the error says why and what to use.
    pub fn preflight(&self) -> Result<(), Unavailable> {
        self.strategy.preflight(self)
    }

    /// The thread count this config resolves to (where the strategy has
    /// one to size).
    pub fn resolved_threads(&self) -> usize {
        self.threads
            .unwrap_or_else(|| match &self.cpus {
                Some(c) => c.len(),
                None => CpuSet::allowed().map(|c| c.len()).unwrap_or(1),
            })
            .max(1)
    }

    /// The concurrency a server of this config runs with, in words:
    /// "2 workers", "a thread per connection".
    pub fn concurrency(&self) -> String {
        match self.strategy.threads() {
            Threads::Sizes(what) => match self.resolved_threads() {
                // "1 workers" reads wrong: the plural's "s" goes.
                1 => format!("1 {}", what.strip_suffix('s').unwrap_or(what)),
                n => format!("{n} {what}"),
            },
            Threads::Unused(instead) => instead.to_string(),
        }
    }
}

/// What a strategy shares with its threads.
pub(crate) struct Ctx<S> {
    pub svc: Arc<S>,
    pub shutdown: Shutdown,
    /// The connection cap in force (see [`ConnectionLimit`]).
    pub max_connections: u64,
    pub write_timeout: Option<std::time::Duration>,
    pub threads: usize,
    pub cpus: Option<CpuSet>,
    pub uring_sqpoll: bool,
    /// Open connections' idle states, for eviction at the cap.
    pub idle: idle::IdleTable,
    /// The spare descriptor and the accept log's rate limit.
    pub accept: accept::Acceptor,
    /// Accept loops waiting, at the cap, for a connection to close.
    pub room: room::Room,
}

impl<S: Service> Ctx<S> {
    /// The connection counters every strategy keeps.
    pub fn conns(&self) -> &ConnCounters {
        &self.svc.common().connections
    }
}

/// A bound server, ready to run.
pub struct Server<S: Service> {
    ctx: Arc<Ctx<S>>,
    strategy: StrategyKind,
    listeners: Vec<listen::Listener>,
    local_addr: ListenAddr,
    limit: ConnectionLimit,
    /// Held while the server runs: this process owns the port, or the
    /// Unix socket's path (whose file goes when this is dropped, once
    /// the server has stopped).
    _claim: Option<listen::Claim>,
}

impl<S: Service> Server<S> {
    /// Check the config, pin the calling thread (and so every thread the
    /// server starts), bind the listening socket(s) the strategy wants (a
    /// group sharing the port only on a port no one else serves; on a
    /// Unix socket, one socket shared, see `listen.rs`), raise
    /// the descriptor limit and size the connection cap under it.
    pub fn bind(svc: Arc<S>, cfg: &ServerConfig, shutdown: Shutdown) -> std::io::Result<Self> {
        cfg.check()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        cfg.preflight()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::Unsupported, e))?;
        if let Some(cpus) = &cfg.cpus {
            cpus.pin_current_thread()?;
        }
        let threads = cfg.resolved_threads();
        let count = match cfg.strategy.listeners() {
            Listeners::One => None,
            Listeners::PerThread => Some(threads),
        };
        let (listeners, local_addr, claim) = listen::bind_listeners(&cfg.addr, count)?;
        // The accept's spare descriptor first, so the sizing counts it.
        let accept = accept::Acceptor::new();
        let limit = ConnectionLimit::size(
            cfg.max_connections,
            cfg.strategy.fds_per_connection(),
            threads,
        );
        let ctx = Arc::new(Ctx {
            svc,
            shutdown,
            max_connections: limit.max,
            write_timeout: cfg.write_timeout,
            threads,
            cpus: cfg.cpus.clone(),
            uring_sqpoll: cfg.uring_sqpoll,
            idle: idle::IdleTable::default(),
            accept,
            room: room::Room::default(),
        });
        Ok(Server {
            ctx,
            strategy: cfg.strategy,
            listeners,
            local_addr,
            limit,
            _claim: claim,
        })
    }

    /// Where it listens: the port bound (for port 0, the one taken), or
    /// `unix:PATH`.
    pub fn local_addr(&self) -> ListenAddr {
        self.local_addr.clone()
    }

    /// The connection cap in force, and which limit set it.
    pub fn connection_limit(&self) -> ConnectionLimit {
        self.limit
    }

    /// Serve until the shutdown is triggered and every connection has been
    /// answered and closed (or reset past the drain limit), and every
    /// server thread has finished. Returns the final statistics.
    pub fn run(self) -> std::io::Result<ServerStats> {
        self.strategy.run(self.ctx.clone(), self.listeners)?;
        Ok(serverlab_service::final_stats(&*self.ctx.svc))
    }
}

/// Write one line to standard error, and carry on if nobody reads it any
/// more (`serve … 2>&1 | head -1`): `eprintln!` would panic the thread
/// that says it, a server's thread, while it serves.
pub fn warn(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Stop the server on SIGINT or SIGTERM.
pub fn stop_on_signals(shutdown: &Shutdown) -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    let shutdown = shutdown.clone();
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if signals.forever().next().is_some() {
                shutdown.trigger();
            }
        })?;
    Ok(())
}
