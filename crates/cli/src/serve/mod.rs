//! `serverlab serve <protocol>`: flags, then a server from the libraries.

use crate::args::{self, ServeAddr};
use anyhow::Context;
use clap::{Args, Subcommand};
use serverlab_server::{stop_on_signals, ListenAddr, Server, ServerConfig, Shutdown, StrategyKind};
use serverlab_service::Service;
use serverlab_util::port_holder;
use serverlab_util::server_stats::ServerStats;
use serverlab_util::CpuSet;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

mod board;
mod bucket;
mod durability;
mod echo;
mod external;
mod kv;
mod memory;
mod metrics;
mod resp;

/// The strategy a server runs when none is named.
pub const DEFAULT_STRATEGY: &str = "async";

#[derive(Args)]
#[command(after_help = args::serve_after_help())]
pub struct ServeCmd {
    #[command(subcommand)]
    protocol: ServeProtocol,
}

/// A protocol `serve` serves: its flags (the common server flags among
/// them) and how it starts. Each lives in its own file here, `module::Args`,
/// named after the protocol in `serverlab_proto::for_each_protocol!`.
trait Protocol: Sized {
    /// As `serve` takes it.
    const NAME: &'static str;
    /// Its line of `serve --help`, less the port.
    const ABOUT: &'static str;
    /// Where it listens unless told otherwise (none: a free port).
    const PORT: Option<u16>;
    fn server(&self) -> &ServerArgs;
    fn run(self) -> anyhow::Result<ExitCode>;
}

/// A protocol's line of `serve --help`.
fn about<P: Protocol>() -> String {
    match P::PORT {
        Some(port) => format!("{}. Port {port}", P::ABOUT),
        None => P::ABOUT.to_string(),
    }
}

/// `ServeProtocol`, the `serve` subcommands: the registry's protocols,
/// then the servers that are not protocols of their own (in brackets).
macro_rules! protocols {
    ([$($extra:tt)*] $($listed:tt)*) => {
        protocols!(@all $($listed)* $($extra)*);
    };
    (@all $($module:ident: $variant:ident),* $(,)?) => {
        #[derive(Subcommand)]
        enum ServeProtocol {
            $(
                #[command(
                    name = <$module::Args as Protocol>::NAME,
                    about = about::<$module::Args>()
                )]
                $variant($module::Args),
            )*
        }

        impl ServeProtocol {
            fn name(&self) -> &'static str {
                match self {
                    $(ServeProtocol::$variant(_) => <$module::Args as Protocol>::NAME,)*
                }
            }

            fn server(&self) -> &ServerArgs {
                match self {
                    $(ServeProtocol::$variant(a) => a.server(),)*
                }
            }

            fn run(self) -> anyhow::Result<ExitCode> {
                match self {
                    $(ServeProtocol::$variant(a) => a.run(),)*
                }
            }
        }
    };
}

serverlab_proto::for_each_protocol!(protocols, echo: Echo, external: External);

/// Flags every server takes.
#[derive(Args, Clone)]
#[command(allow_negative_numbers = true)]
pub struct ServerArgs {
    /// Address to listen on: HOST:PORT, HOST (the protocol's port) or :PORT (on 127.0.0.1),
    /// or unix:PATH for a Unix domain socket (a stale socket file there is replaced, a
    /// served one refused; removed at a clean stop) [default: 127.0.0.1 and the protocol's
    /// port]
    #[arg(long, value_name = "HOST:PORT", value_parser = args::serve_addr)]
    pub addr: Option<ServeAddr>,
    /// Concurrency strategy
    #[arg(long, default_value = DEFAULT_STRATEGY, value_parser = args::named::<StrategyKind>())]
    pub strategy: StrategyKind,
    /// Workers, event loops or runtime threads, where the strategy has them (not
    /// thread-per-connection or thread-per-request) [default: the number of CPUs allowed]
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=4096))]
    pub threads: Option<u16>,
    /// Pin every server thread to these CPUs, like taskset (examples: 0, 0-1, 1,3)
    #[arg(long, value_name = "LIST", value_parser = parse_cpus)]
    pub cpus: Option<CpuSet>,
    /// Connections open at once; past it a new one evicts the connection waiting longest
    /// for a request (counted), or, if none waits, waits in the listen backlog until one
    /// closes. Lowered, and the startup line says so, when the file-descriptor limit holds
    /// fewer
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: u64,
    /// Time unwritten replies may make no progress (a client that does not read them)
    /// before the connection is reset, and counted (30s, 500ms)
    #[arg(long, default_value = "30s", value_parser = args::duration)]
    pub write_timeout: Duration,
    /// With --strategy uring: a kernel thread polls each ring for submissions, so submitting
    /// needs no system call (the thread spins a CPU while the server is busy)
    #[arg(long)]
    pub uring_sqpoll: bool,
    /// Also write the final statistics, as JSON, to this file
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,
    /// Time every request's service time (and, under a reactor strategy, every worker
    /// run's busy time), not one in 64 per thread (so the maximum is the true one; costs
    /// two clock reads and a record per request, docs/measuring.md)
    #[arg(long)]
    pub time_all: bool,
    /// Serve the server's counters for Prometheus at http://ADDR/metrics, on a listener and
    /// thread of their own (HOST:PORT or :PORT; port 0 takes a free one, which the startup
    /// line names; docs/observing.md)
    #[arg(long, value_name = "HOST:PORT", value_parser = metrics_addr)]
    pub metrics: Option<SocketAddr>,
}

/// `--metrics`'s value: an address with its port (the endpoint has no
/// port of its own to default to).
fn metrics_addr(s: &str) -> Result<SocketAddr, String> {
    let a = args::host_port(s)?;
    match a.port {
        Some(_) => Ok(a.or_port(0)),
        None => Err(format!(
            "'{s}' has no port: write HOST:PORT or :PORT, e.g. 127.0.0.1:9464 (port 0 takes a \
             free one)"
        )),
    }
}

fn parse_cpus(s: &str) -> Result<CpuSet, String> {
    s.parse()
}

impl ServeCmd {
    /// The protocol's name, as `serve` takes it.
    pub fn protocol(&self) -> &'static str {
        self.protocol.name()
    }

    /// What the flags' parsers cannot check alone: `--threads` only with a
    /// strategy it sizes, and none of the flags `serve external` cannot
    /// pass on (a usage error otherwise, which says why). `matches`:
    /// clap's, of `serve`.
    pub fn check(&self, matches: &clap::ArgMatches) -> Result<(), String> {
        config(self.protocol.server(), 0)
            .check()
            .map_err(|e| e.to_string())?;
        let ours = matches.subcommand_matches(self.protocol());
        match (&self.protocol, ours) {
            (ServeProtocol::External(args), Some(ours)) => args.refused(ours).map_or(Ok(()), Err),
            _ => Ok(()),
        }
    }
}

pub fn run(cmd: ServeCmd) -> anyhow::Result<ExitCode> {
    cmd.protocol.run()
}

/// The config a set of server flags describes.
pub fn config(args: &ServerArgs, default_port: u16) -> ServerConfig {
    let addr = match &args.addr {
        None => ListenAddr::Tcp(SocketAddr::from((Ipv4Addr::LOCALHOST, default_port))),
        Some(ServeAddr::Tcp(a)) => ListenAddr::Tcp(a.or_port(default_port)),
        Some(ServeAddr::Unix(path)) => ListenAddr::Unix(path.clone()),
    };
    let mut cfg = ServerConfig::new(addr, args.strategy);
    cfg.threads = args.threads.map(usize::from);
    cfg.cpus = args.cpus.clone();
    cfg.max_connections = args.max_connections;
    cfg.write_timeout = Some(args.write_timeout);
    cfg.uring_sqpoll = args.uring_sqpoll;
    cfg
}

/// Bind, announce, serve until stopped, print the final statistics.
///
/// `store` names the store's locking scheme for `--metrics`' `store`
/// label ("none" where the protocol keeps no store).
fn serve<P: Protocol, S: Service>(
    svc: Arc<S>,
    args: &ServerArgs,
    store: &str,
    what: &str,
) -> anyhow::Result<ExitCode> {
    let name = P::NAME;
    let cfg = config(args, P::PORT.unwrap_or(0));
    let allocator = memory::tune(cfg.cpus.as_ref().map(|c| c.len()));
    // Before binding, so a strategy this machine cannot run fails naming
    // why, not as a failure to listen.
    cfg.preflight()?;
    let shutdown = Shutdown::new();
    let scrapes = args.metrics.map(metrics::bind).transpose()?;
    let server = Server::bind(svc.clone(), &cfg, shutdown.clone())
        .map_err(|e| cannot_listen(&cfg.addr, e))?;
    if args.time_all {
        svc.common().times.time_every_request();
        svc.common().busy.time_every_run();
    }
    stop_on_signals(&shutdown).context("cannot install signal handlers")?;
    memory::give_back_after_bursts(svc.clone(), shutdown.clone());
    let pinned = cfg
        .cpus
        .as_ref()
        .map(|c| format!(", cpus {c}"))
        .unwrap_or_default();
    let what = if what.is_empty() {
        String::new()
    } else {
        format!(", {what}")
    };
    let scraped_at = match scrapes {
        Some(listener) => {
            let at = listener.local_addr().context("the --metrics listener")?;
            let labels = metrics::ConstLabels {
                protocol: name.to_string(),
                strategy: cfg.strategy.to_string(),
                store: store.to_string(),
            };
            metrics::start(listener, svc.clone(), labels)?;
            format!("; metrics at http://{at}/metrics")
        }
        None => String::new(),
    };
    say(&format!(
        "serverlab serve {name}: listening on {} (strategy {}, {}{pinned}, {}, allocator {}{what}){scraped_at}\n",
        server.local_addr(),
        cfg.strategy,
        cfg.concurrency(),
        server.connection_limit(),
        allocator,
    ));
    let stats = server.run().context("server failed")?;
    say(&format!(
        "serverlab serve {name}: stopped. Final statistics:\n{}",
        render(&stats)
    ));
    if let Some(path) = &args.stats_json {
        let text = serde_json::to_string_pretty(&stats)? + "\n";
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Write `text` to standard output, and carry on if nobody reads it any
/// more (`serve … | head -1`): a server's work, and its `--stats-json`, do
/// not depend on its output being read.
pub(crate) fn say(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Why a server cannot listen, in one line; a port in use names the
/// process holding it where it can be seen, and says what to do.
fn cannot_listen(addr: &ListenAddr, e: std::io::Error) -> anyhow::Error {
    let addr = match addr {
        ListenAddr::Tcp(addr) if e.kind() == std::io::ErrorKind::AddrInUse => *addr,
        _ => return anyhow::Error::new(e).context(format!("cannot listen on {addr}")),
    };
    let elsewhere = format!(
        "serve on another port (--addr {}:0 takes a free one)",
        addr.ip()
    );
    let next = match port_holder::find(addr) {
        Some(h) => format!(
            "process {} ({}) holds it: stop it (kill {}) or {elsewhere}",
            h.pid, h.command, h.pid
        ),
        None => format!(
            "no process of this user holds it (`ss -ltnp 'sport = :{}'` may name the one that \
             does): {elsewhere}",
            addr.port()
        ),
    };
    anyhow::anyhow!("cannot listen on {addr}: {e}; {next}")
}

/// Final statistics as indented `name: value` lines.
pub fn render(stats: &ServerStats) -> String {
    let mut v = serde_json::to_value(stats).expect("statistics serialize");
    // The busy-time histogram is for --stats-json, not for reading.
    if let Some(busy) = v.get_mut("worker_busy_us").and_then(|b| b.as_object_mut()) {
        busy.remove("histogram");
    }
    render_stats(&v, 1)
}

/// Statistics as indented `name: value` lines; small objects on one line.
pub fn render_stats(v: &serde_json::Value, depth: usize) -> String {
    let pad = "  ".repeat(depth);
    let mut out = String::new();
    let Some(map) = v.as_object() else { return out };
    for (k, v) in map {
        match v {
            serde_json::Value::Object(inner) if inner.values().all(|x| !x.is_object()) => {
                let parts: Vec<String> =
                    inner.iter().map(|(ik, iv)| format!("{ik} {iv}")).collect();
                out += &format!("{pad}{k}: {}\n", parts.join(", "));
            }
            serde_json::Value::Object(_) => {
                out += &format!("{pad}{k}:\n");
                out += &render_stats(v, depth + 1);
            }
            other => out += &format!("{pad}{k}: {other}\n"),
        }
    }
    out
}
