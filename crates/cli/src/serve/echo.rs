//! `serverlab serve echo`.

use super::{serve, ServerArgs};
use clap::Args;
use serverlab_service::echo::EchoService;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args)]
pub struct EchoArgs {
    #[command(flatten)]
    pub(super) server: ServerArgs,
    /// Longest request in bytes; a longer one closes its connection
    #[arg(long, default_value_t = 65535, value_parser = clap::value_parser!(u64).range(1..=(1 << 30)))]
    max_request: u64,
}

pub fn run(a: EchoArgs) -> anyhow::Result<ExitCode> {
    serve(
        "echo",
        12345,
        Arc::new(EchoService::new(a.max_request as usize)),
        &a.server,
        "",
    )
}
