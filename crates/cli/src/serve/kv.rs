//! `serverlab serve kv`.

use super::{serve, Protocol, ServerArgs};
use crate::args;
use clap::Args;
use serverlab_proto::kv::Limits;
use serverlab_service::kv::{KvConfig, KvService};
use serverlab_store::StoreKind;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Args)]
pub struct KvArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// How keys are locked
    #[arg(long, default_value = "rwlock", value_parser = args::named::<StoreKind>())]
    store: StoreKind,
    /// Largest value (request body); a larger one is answered 413 (examples: 1MiB, 4096)
    #[arg(long, default_value = "1MiB", value_name = "SIZE", value_parser = args::size(0, 1 << 30))]
    max_value: u64,
    /// Longest request target; a longer one is answered 414
    #[arg(long, default_value = "2KiB", value_name = "SIZE", value_parser = args::size(16, 1 << 20))]
    max_uri: u64,
    /// Largest header section; a larger one is answered 431
    #[arg(long, default_value = "16KiB", value_name = "SIZE", value_parser = args::size(64, 1 << 20))]
    max_headers: u64,
    /// Time a connection has to deliver each whole request, from when the server is ready
    /// for it and has written every reply (idle keep-alive connections included); then 408
    /// and close (10s, 500ms)
    #[arg(long, default_value = "10s", value_parser = args::duration)]
    header_timeout: Duration,
}

impl Protocol for KvArgs {
    const NAME: &'static str = "kv";

    fn server(&self) -> &ServerArgs {
        &self.server
    }

    fn run(self) -> anyhow::Result<ExitCode> {
        let cfg = KvConfig {
            limits: Limits {
                max_uri: self.max_uri as usize,
                max_headers: self.max_headers as usize,
                max_value: self.max_value as usize,
            },
            header_timeout: self.header_timeout,
        };
        let svc = KvService::new(serverlab_store::kv::new(self.store), cfg);
        let what = format!(
            "store {}, max value {} bytes, header timeout {:?}",
            self.store, self.max_value, self.header_timeout
        );
        serve(Self::NAME, 8080, Arc::new(svc), &self.server, &what)
    }
}
