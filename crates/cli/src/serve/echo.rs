//! `serverlab serve echo`.

use super::{serve, Protocol, ServerArgs};
use clap::Args;
use serverlab_service::echo::EchoService;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args)]
pub struct EchoArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Longest request in bytes; a longer one closes its connection
    #[arg(long, default_value_t = 65535, value_parser = clap::value_parser!(u64).range(1..=(1 << 30)))]
    max_request: u64,
}

impl Protocol for EchoArgs {
    const NAME: &'static str = "echo";

    fn server(&self) -> &ServerArgs {
        &self.server
    }

    fn run(self) -> anyhow::Result<ExitCode> {
        serve(
            Self::NAME,
            12345,
            Arc::new(EchoService::new(self.max_request as usize)),
            &self.server,
            "",
        )
    }
}
