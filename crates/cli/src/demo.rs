//! `serverlab demo`: a board server on a free port, 5 posters and 5
//! readers for 5 seconds with every reply verified, the text result, and a
//! graceful stop. Server and client are pinned to different CPUs when
//! there are at least two.

use crate::load::{emit, Format};
use crate::serve::{render, DEFAULT_STRATEGY};
use anyhow::Context;
use clap::Args;
use serverlab_load::board::BoardLoad;
use serverlab_load::Progress;
use serverlab_server::{Server, ServerConfig, Shutdown};
use serverlab_service::board::{BoardService, ExitPolicy};
use serverlab_store::StoreKind;
use serverlab_util::server_stats::ServerStats;
use serverlab_util::CpuSet;
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
    let mut cfg = ServerConfig::new(
        "127.0.0.1:0".parse().expect("valid address"),
        DEFAULT_STRATEGY.parse().expect("valid strategy"),
    );
    cfg.cpus = server_cpus
        .as_deref()
        .map(|c| c.parse().expect("allowed CPU"));
    let store = serverlab_store::board::new(StoreKind::RwLock);
    let svc = Arc::new(BoardService::new(store, 65535, ExitPolicy::Loopback));
    let shutdown = Shutdown::new();

    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let stop = shutdown.clone();
    let server = std::thread::spawn(move || -> anyhow::Result<ServerStats> {
        let server = Server::bind(svc, &cfg, stop)?;
        addr_tx.send(server.local_addr()).ok();
        Ok(server.run()?)
    });
    let addr = addr_rx
        .recv()
        .map_err(|_| anyhow::anyhow!("the demo server did not start"))?;
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
        "serverlab demo: board server ({DEFAULT_STRATEGY}, store rwlock) on {addr}; \
         5 posters + 5 readers for {} s, every reply verified; {placement}.\n",
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
    let report = report?;
    let code = emit(&report, Format::Text, None)?;
    println!("\nserver's final statistics:");
    print!("{}", render(&stats));
    Ok(code)
}
