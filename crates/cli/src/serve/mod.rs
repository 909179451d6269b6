//! `serverlab serve <protocol>`: flags, then a server from the libraries.

use crate::args;
use anyhow::Context;
use clap::{Args, Subcommand};
use serverlab_server::{stop_on_signals, Server, ServerConfig, Shutdown, StrategyKind};
use serverlab_service::Service;
use serverlab_util::server_stats::ServerStats;
use serverlab_util::CpuSet;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

mod board;
mod bucket;
mod echo;
mod external;
mod kv;
mod memory;
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
/// them) and how it starts. Each lives in its own file here and is
/// registered by one line of `protocols!` below.
trait Protocol: Sized {
    /// As `serve` takes it.
    const NAME: &'static str;
    fn server(&self) -> &ServerArgs;
    fn run(self) -> anyhow::Result<ExitCode>;
}

/// `ServeProtocol`, the `serve` subcommands, from one line per protocol
/// (its help line, then `Variant(module::Args)`).
macro_rules! protocols {
    ($($(#[doc = $doc:literal])* $variant:ident($args:ty),)*) => {
        #[derive(Subcommand)]
        enum ServeProtocol {
            $(
                $(#[doc = $doc])*
                #[command(name = <$args as Protocol>::NAME)]
                $variant($args),
            )*
        }

        impl ServeProtocol {
            fn name(&self) -> &'static str {
                match self {
                    $(ServeProtocol::$variant(_) => <$args as Protocol>::NAME,)*
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

protocols! {
    /// The CAPS message board (POST, READ, COUNT, LIST, EXIT). Port 12345.
    Board(board::BoardArgs),
    /// Delay, then add to a bucket (the ERSS scalability homework). Port 12345.
    Bucket(bucket::BucketArgs),
    /// Board framing, reply = the request reversed: the transport ceiling. Port 12345.
    Echo(echo::EchoArgs),
    /// An HTTP/1.1 key-value store (GET, HEAD, PUT, POST, DELETE /<key>). Port 8080.
    Kv(kv::KvArgs),
    /// Redis's protocol, RESP2: strings and lists, for redis-cli, redis-benchmark and clients. Port 6379.
    Resp(resp::RespArgs),
    /// Another program as the server (redis-server, …), started, pinned and stopped as a sweep
    /// starts serverlab's: --command 'redis-server --port $PORT'.
    External(external::ExternalArgs),
}

/// Flags every server takes.
#[derive(Args, Clone)]
#[command(allow_negative_numbers = true)]
pub struct ServerArgs {
    /// Address to listen on [default: 127.0.0.1 and the protocol's port]
    #[arg(long, value_name = "HOST:PORT")]
    pub addr: Option<SocketAddr>,
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
    /// Time every request's service time, not one in 64 per thread (so the maximum
    /// is the true one; costs two clock reads and a record per request, docs/measuring.md)
    #[arg(long)]
    pub time_all: bool,
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
    /// strategy it sizes (a usage error otherwise, which says why).
    pub fn check(&self) -> Result<(), String> {
        config(self.protocol.server(), 0)
            .check()
            .map_err(|e| e.to_string())
    }
}

pub fn run(cmd: ServeCmd) -> anyhow::Result<ExitCode> {
    cmd.protocol.run()
}

/// The config a set of server flags describes.
pub fn config(args: &ServerArgs, default_port: u16) -> ServerConfig {
    let addr = args
        .addr
        .unwrap_or_else(|| SocketAddr::from((Ipv4Addr::LOCALHOST, default_port)));
    let mut cfg = ServerConfig::new(addr, args.strategy);
    cfg.threads = args.threads.map(usize::from);
    cfg.cpus = args.cpus.clone();
    cfg.max_connections = args.max_connections;
    cfg.write_timeout = Some(args.write_timeout);
    cfg.uring_sqpoll = args.uring_sqpoll;
    cfg
}

/// Bind, announce, serve until stopped, print the final statistics.
pub(crate) fn serve<S: Service>(
    name: &str,
    port: u16,
    svc: Arc<S>,
    args: &ServerArgs,
    what: &str,
) -> anyhow::Result<ExitCode> {
    let cfg = config(args, port);
    // Before binding, so a strategy this machine cannot run fails naming
    // why, not as a failure to listen.
    cfg.preflight()?;
    let shutdown = Shutdown::new();
    let server = Server::bind(svc.clone(), &cfg, shutdown.clone())
        .with_context(|| format!("cannot listen on {}", cfg.addr))?;
    if args.time_all {
        svc.common().times.time_every_request();
    }
    stop_on_signals(&shutdown).context("cannot install signal handlers")?;
    memory::give_back_after_bursts(svc, shutdown.clone());
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
    println!(
        "serverlab serve {name}: listening on {} (strategy {}, {}{pinned}, {}, allocator {}{what})",
        server.local_addr(),
        cfg.strategy,
        cfg.concurrency(),
        server.connection_limit(),
        memory::ALLOCATOR,
    );
    let stats = server.run().context("server failed")?;
    println!("serverlab serve {name}: stopped. Final statistics:");
    print!("{}", render(&stats));
    if let Some(path) = &args.stats_json {
        let text = serde_json::to_string_pretty(&stats)? + "\n";
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Final statistics as indented `name: value` lines.
pub fn render(stats: &ServerStats) -> String {
    let v = serde_json::to_value(stats).expect("statistics serialize");
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
