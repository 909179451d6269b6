//! `serverlab serve board`.

use super::{serve, Protocol, ServerArgs};
use crate::{args, limits};
use serverlab_proto::board;
use serverlab_service::board::{BoardService, ExitPolicy};
use serverlab_store::StoreKind;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// How topics and messages are locked
    #[arg(long, default_value_t = serverlab_store::board::DEFAULT, value_parser = args::named::<StoreKind>())]
    store: StoreKind,
    /// Who may stop the server with EXIT: loopback peers, any peer, or nobody
    #[arg(long, default_value = "loopback", value_parser = args::named::<ExitPolicy>())]
    exit_policy: ExitPolicy,
    #[command(flatten)]
    limits: limits::Board,
}

impl Protocol for Args {
    const NAME: &'static str = board::NAME;
    const ABOUT: &'static str = "The CAPS message board (POST, READ, COUNT, LIST, EXIT)";
    const PORT: Option<u16> = Some(board::DEFAULT_PORT);

    fn server(&self) -> &ServerArgs {
        &self.server
    }

    fn run(self) -> anyhow::Result<ExitCode> {
        let policy = self.exit_policy;
        let store = serverlab_store::board::new(self.store);
        let svc = BoardService::new(store, self.limits.get().max_request, policy);
        let what = format!("store {}, exit policy {policy}", self.store);
        serve::<Self, _>(Arc::new(svc), &self.server, &self.store.to_string(), &what)
    }
}
