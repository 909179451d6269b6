//! `serverlab demo`: a board server on a free port, 5 posters and 5
//! readers for 5 seconds with every reply verified, the text result, and a
//! graceful stop. Server and client are pinned to different CPUs when
//! there are at least two.

use crate::load::{emit, Format, OutputFiles};
use crate::serve::{render, DEFAULT_STRATEGY};
use anyhow::Context;
use clap::Args;
use serverlab_load::board::BoardLoad;
use serverlab_load::report::LoadReport;
use serverlab_load::Progress;
use serverlab_server::{Server, ServerConfig, Shutdown};
use serverlab_service::board::{BoardService, ExitPolicy};
use serverlab_util::server_stats::ServerStats;
use serverlab_util::{plural, CpuSet};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Args)]
pub struct DemoArgs {
    /// How long the load runs
    #[arg(long, default_value = "5s", value_parser = crate::args::duration)]
    duration: Duration,
}

pub fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    let allowed = CpuSet::allowed().context("cannot read the CPUs allowed")?;
    let (server_cpus, client_cpus) = match allowed.cpus() {
        [first, second, ..] => (Some(first.to_string()), Some(second.to_string())),
        _ => (None, None),
    };
    let (server, addr, shutdown) = start_server(server_cpus.as_deref())?;
    if let Some(c) = &client_cpus {
        c.parse::<CpuSet>()
            .map_err(anyhow::Error::msg)?
            .pin_current_thread()?;
    }
    let placement = match (&server_cpus, &client_cpus) {
        (Some(s), Some(c)) => format!("server on CPU {s}, client on CPU {c}"),
        _ => "server and client share the only CPU".into(),
    };
    println!(
        "serverlab demo: board server ({DEFAULT_STRATEGY}, store {}) on {addr}; \
         5 posters + 5 readers for {} s, every reply verified; {placement}.\n",
        serverlab_store::board::DEFAULT,
        args.duration.as_secs_f64()
    );

    let mut load = BoardLoad::new(addr);
    load.duration_s = args.duration.as_secs_f64();
    load.reader_mix = "read=90,count=8,list=2".parse().expect("valid mix");
    load.verify = true;
    let progress = Progress::default();
    let report = crate::progress::show(args.duration, &progress, || {
        serverlab_load::run(&load, &progress)
    });
    shutdown.trigger();
    let stats = server
        .join()
        .map_err(|_| anyhow::anyhow!("the demo server panicked"))??;
    let mut report = report?;
    // The warning's advice (more cores, pin apart) is what the demo has
    // already done, or cannot do on one CPU: a note says what it means
    // here instead.
    let busy = std::mem::take(&mut report.results.client_cpu.bottleneck);
    let code = emit(&report, Format::Text, &OutputFiles::default())?;
    println!("\nserver's final statistics:");
    print!("{}", render(&stats));
    print!("{}", explain(&report, &stats, busy, client_cpus.is_some()));
    Ok(code)
}

/// The server's thread, serving until stopped.
type ServerThread = std::thread::JoinHandle<anyhow::Result<ServerStats>>;

/// A board server on 127.0.0.1 (a free port), pinned to `cpus`, on a
/// thread of its own: the thread, where it listens, and its stop.
fn start_server(cpus: Option<&str>) -> anyhow::Result<(ServerThread, SocketAddr, Shutdown)> {
    let mut cfg = ServerConfig::new(
        "127.0.0.1:0".parse::<SocketAddr>().expect("valid address"),
        DEFAULT_STRATEGY.parse().expect("valid strategy"),
    );
    cfg.cpus = cpus.map(|c| c.parse().expect("allowed CPU"));
    let store = serverlab_store::board::new(serverlab_store::board::DEFAULT);
    let svc = Arc::new(BoardService::new(
        store,
        serverlab_proto::board::Limits::default().max_request,
        ExitPolicy::Loopback,
    ));
    let shutdown = Shutdown::new();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let stop = shutdown.clone();
    let server = std::thread::spawn(move || -> anyhow::Result<ServerStats> {
        let server = Server::bind(svc, &cfg, stop)?;
        addr_tx.send(server.local_addr().tcp()).ok();
        Ok(server.run()?)
    });
    let addr = addr_rx
        .recv()
        .ok()
        .flatten()
        .ok_or_else(|| anyhow::anyhow!("the demo server did not start"))?;
    Ok((server, addr, shutdown))
}

/// What the numbers mean, in a few lines, and what to run next.
fn explain(report: &LoadReport, stats: &ServerStats, busy: bool, pinned: bool) -> String {
    let client = report.results.requests;
    let server = stats
        .protocol
        .get("requests")
        .and_then(|r| r.as_object())
        .map(|ops| {
            ops.values()
                .filter_map(serde_json::Value::as_u64)
                .sum::<u64>()
        });
    let late = report.results.late_replies;
    let mut s = String::from("\nReading it:\n");
    s += "  count, rate/s: replies to each operation in the measured window, and per second;\n";
    s += "  p50 … max: each request's latency in microseconds, from its send to its reply (the client's view);\n";
    s += "  verification: every reply checked against what a correct board must answer.\n";
    if let Some(server) = server {
        s += &format!(
            "  the server counts {}, the client {client}: the client's own COUNT per topic \
             before and after the run ({}), and {} after the window, are not in its table.\n",
            plural(server, "request", "requests"),
            server.saturating_sub(client + late),
            plural(late, "reply", "replies")
        );
    }
    if busy {
        let note = if pinned {
            "client and server have a core each, so the client's own cost bounds what it can measure"
        } else {
            "client and server share one core, so the numbers measure both"
        };
        s += &format!(
            "  the client kept its core {:.0}% busy: {note} (docs/measuring.md).\n",
            report.results.client_cpu.utilization * 100.0
        );
    }
    s += "\nNext:\n";
    s += "  serverlab serve board --strategy thread-per-connection --cpus 0   # then, in another terminal:\n";
    s += "  serverlab load board --posters 5 --readers 5 --duration 10s --cpus 1 --verify   # compare strategies\n";
    s += "  serverlab check board 127.0.0.1:12345                 # every protocol rule, then linearizability\n";
    s += "  serverlab sweep experiments/caps.toml && serverlab report results/caps   # a grid, with statistics\n";
    s
}
