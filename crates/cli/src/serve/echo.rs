//! `serverlab serve echo`.

use super::{serve, Protocol, ServerArgs};
use crate::limits;
use serverlab_proto::board;
use serverlab_service::echo::EchoService;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    // The board's framing, so the board's limit.
    #[command(flatten)]
    limits: limits::Board,
}

impl Protocol for Args {
    const NAME: &'static str = "echo";
    const ABOUT: &'static str =
        "Board framing, reply = the request reversed: the transport ceiling";
    const PORT: Option<u16> = Some(board::DEFAULT_PORT);

    fn server(&self) -> &ServerArgs {
        &self.server
    }

    fn run(self) -> anyhow::Result<ExitCode> {
        serve::<Self, _>(
            Arc::new(EchoService::new(self.limits.get().max_request)),
            &self.server,
            "none",
            "",
        )
    }
}
