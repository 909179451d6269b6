//! `serverlab serve board`.

use super::{serve, Protocol, ServerArgs};
use crate::args;
use clap::Args;
use serverlab_service::board::{BoardService, ExitPolicy};
use serverlab_store::StoreKind;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args)]
pub struct BoardArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// How topics and messages are locked
    #[arg(long, default_value = "rwlock", value_parser = args::named::<StoreKind>())]
    store: StoreKind,
    /// Longest request in bytes; a longer one closes its connection
    #[arg(long, default_value_t = 65535, value_parser = clap::value_parser!(u64).range(1..=(1 << 30)))]
    max_request: u64,
    /// Who may stop the server with EXIT: loopback peers, any peer, or nobody
    #[arg(long, default_value = "loopback", value_parser = args::named::<ExitPolicy>())]
    exit_policy: ExitPolicy,
}

impl Protocol for BoardArgs {
    const NAME: &'static str = "board";

    fn server(&self) -> &ServerArgs {
        &self.server
    }

    fn run(self) -> anyhow::Result<ExitCode> {
        let policy = self.exit_policy;
        let store = serverlab_store::board::new(self.store);
        let svc = BoardService::new(store, self.max_request as usize, policy);
        let what = format!("store {}, exit policy {policy}", self.store);
        serve(Self::NAME, 12345, Arc::new(svc), &self.server, &what)
    }
}
