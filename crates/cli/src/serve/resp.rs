//! `serverlab serve resp`.

use super::{serve, Protocol, ServerArgs};
use crate::args;
use anyhow::Context;
use clap::Args;
use serverlab_proto::resp::Limits;
use serverlab_service::resp::RespService;
use serverlab_store::StoreKind;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args)]
pub struct RespArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// How keys are locked
    #[arg(long, default_value = "sharded", value_parser = args::named_from(&serverlab_store::resp::KINDS))]
    store: StoreKind,
    /// Longest bulk string in a request; a longer one is a protocol error (the connection closes)
    #[arg(long, default_value = "1MiB", value_name = "SIZE", value_parser = args::size(1, 1 << 30))]
    max_bulk: u64,
    /// Most elements in a request's array; more is a protocol error
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1..=(1 << 30)))]
    max_args: u64,
    /// Longest inline command; a longer one is a protocol error
    #[arg(long, default_value = "64KiB", value_name = "SIZE", value_parser = args::size(16, 1 << 30))]
    max_inline: u64,
    /// Most unread input a connection may hold without a whole request (Redis's
    /// client-query-buffer-limit); more is a protocol error
    #[arg(long, default_value = "1GiB", value_name = "SIZE", value_parser = args::size(1024, 1 << 30))]
    max_query: u64,
}

impl Protocol for RespArgs {
    const NAME: &'static str = "resp";

    fn server(&self) -> &ServerArgs {
        &self.server
    }

    fn run(self) -> anyhow::Result<ExitCode> {
        let limits = Limits {
            max_bulk: self.max_bulk as usize,
            max_args: self.max_args as usize,
            max_inline: self.max_inline as usize,
            max_query: self.max_query as usize,
        };
        let store = serverlab_store::resp::new(self.store)
            .context("the RESP store does not offer this locking scheme")?;
        let about = format!("strategy {}, store {}", self.server.strategy, self.store);
        let what = format!(
            "store {}, max bulk {} bytes, max args {}, max inline {} bytes",
            self.store, self.max_bulk, self.max_args, self.max_inline
        );
        let svc = RespService::new(store, limits, about);
        serve(Self::NAME, 6379, Arc::new(svc), &self.server, &what)
    }
}
