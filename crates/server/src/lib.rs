//! Server strategies: sockets, threads, queues and event loops.
//!
//! Every strategy is one implementation generic over
//! [`serverlab_service::Service`], so each serves every protocol. A
//! connection's bytes are always handled by a [`session::Session`], which
//! keeps requests and replies in order whatever the strategy.

mod blocking;
mod io;
mod listen;
mod reactor;
pub mod session;
pub mod shutdown;
mod stats;
pub mod strategy;
mod tokio_rt;

pub use shutdown::Shutdown;
pub use strategy::StrategyKind;

use serverlab_service::Service;
use serverlab_util::CpuSet;
use stats::ConnStats;
use std::net::SocketAddr;
use std::sync::Arc;

/// How long a graceful stop waits for clients that do not read their
/// replies before dropping their connections.
pub(crate) const DRAIN_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The default [`ServerConfig::write_timeout`].
pub const DEFAULT_WRITE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// How to run a server: everything but the protocol.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub addr: SocketAddr,
    pub strategy: StrategyKind,
    /// Workers, loops or runtime threads; `None`: one per allowed CPU.
    pub threads: Option<usize>,
    /// Pin every server thread to these CPUs.
    pub cpus: Option<CpuSet>,
    /// Connections open at once; more are accepted and closed at once.
    pub max_connections: u64,
    /// How long unwritten replies may make no progress (a client that does
    /// not read them) before the connection is reset and counted;
    /// `None`: forever.
    pub write_timeout: Option<std::time::Duration>,
}

impl ServerConfig {
    pub fn new(addr: SocketAddr, strategy: StrategyKind) -> Self {
        ServerConfig {
            addr,
            strategy,
            threads: None,
            cpus: None,
            max_connections: 10_000,
            write_timeout: Some(DEFAULT_WRITE_TIMEOUT),
        }
    }

    /// The worker count this config resolves to.
    pub fn resolved_threads(&self) -> usize {
        self.threads.unwrap_or_else(|| match &self.cpus {
            Some(c) => c.len(),
            None => CpuSet::allowed().map(|c| c.len()).unwrap_or(1),
        })
    }
}

/// What a strategy shares with its threads.
pub(crate) struct Ctx<S> {
    pub svc: Arc<S>,
    pub stats: ConnStats,
    pub shutdown: Shutdown,
    pub max_connections: u64,
    pub write_timeout: Option<std::time::Duration>,
    pub threads: usize,
    pub cpus: Option<CpuSet>,
}

/// A bound server, ready to run.
pub struct Server<S: Service> {
    ctx: Arc<Ctx<S>>,
    strategy: StrategyKind,
    listeners: Vec<std::net::TcpListener>,
    local_addr: SocketAddr,
}

impl<S: Service> Server<S> {
    /// Pin the calling thread (and so every thread the server starts) and
    /// bind the listening socket(s).
    pub fn bind(svc: Arc<S>, cfg: &ServerConfig, shutdown: Shutdown) -> std::io::Result<Self> {
        if let Some(cpus) = &cfg.cpus {
            cpus.pin_current_thread()?;
        }
        let threads = cfg.resolved_threads().max(1);
        let reuse_port = cfg.strategy == StrategyKind::SharedNothing;
        let first = listen::bind(cfg.addr, reuse_port)?;
        let local_addr = first.local_addr()?;
        let mut listeners = vec![first];
        if reuse_port {
            for _ in 1..threads {
                listeners.push(listen::bind(local_addr, true)?);
            }
        }
        let ctx = Arc::new(Ctx {
            svc,
            stats: ConnStats::default(),
            shutdown,
            max_connections: cfg.max_connections,
            write_timeout: cfg.write_timeout,
            threads,
            cpus: cfg.cpus.clone(),
        });
        Ok(Server {
            ctx,
            strategy: cfg.strategy,
            listeners,
            local_addr,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn threads(&self) -> usize {
        self.ctx.threads
    }

    /// Serve until the shutdown is triggered and every connection has been
    /// answered and closed. Returns the final statistics.
    pub fn run(self) -> std::io::Result<serde_json::Value> {
        let ctx = self.ctx;
        let mut listeners = self.listeners;
        match self.strategy {
            StrategyKind::ThreadPerConnection => blocking::run(ctx.clone(), listeners.remove(0))?,
            StrategyKind::ThreadPerRequest => {
                reactor::run(ctx.clone(), listeners.remove(0), reactor::Pool::Spawn)?
            }
            StrategyKind::PoolLocked => {
                reactor::run(ctx.clone(), listeners.remove(0), reactor::Pool::Locked)?
            }
            StrategyKind::PoolLockFree => {
                reactor::run(ctx.clone(), listeners.remove(0), reactor::Pool::LockFree)?
            }
            StrategyKind::Async => tokio_rt::run_multi(ctx.clone(), listeners.remove(0))?,
            StrategyKind::SharedNothing => tokio_rt::run_shared_nothing(ctx.clone(), listeners)?,
        }
        let mut report = serde_json::Map::new();
        report.insert("connections".into(), ctx.stats.report());
        if let serde_json::Value::Object(svc) = ctx.svc.report() {
            report.extend(svc);
        }
        Ok(serde_json::Value::Object(report))
    }
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
