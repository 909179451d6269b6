//! `serverlab serve kv`.

use super::durability::{self, DurabilityArgs};
use super::{serve, Protocol, ServerArgs};
use crate::{args, limits};
use serverlab_proto::kv;
use serverlab_service::kv::{KvConfig, KvService};
use serverlab_store::StoreKind;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// How keys are locked
    #[arg(long, default_value_t = serverlab_store::kv::DEFAULT, value_parser = args::named::<StoreKind>())]
    store: StoreKind,
    #[command(flatten)]
    limits: limits::Kv,
    #[command(flatten)]
    durability: DurabilityArgs,
}

impl Protocol for Args {
    const NAME: &'static str = kv::NAME;
    const ABOUT: &'static str = "An HTTP/1.1 key-value store (GET, HEAD, PUT, POST, DELETE /<key>)";
    const PORT: Option<u16> = Some(kv::DEFAULT_PORT);

    fn server(&self) -> &ServerArgs {
        &self.server
    }

    fn run(self) -> anyhow::Result<ExitCode> {
        let cfg = KvConfig {
            limits: self.limits.get(),
            header_timeout: self.limits.header_timeout(),
        };
        let mut svc = KvService::new(serverlab_store::kv::new(self.store), cfg);
        let wal = self
            .durability
            .open(Self::NAME, self.server.strategy, |rec| svc.replay(rec))?;
        let what = format!(
            "store {}, max value {} bytes, header timeout {:?}, {}",
            self.store,
            cfg.limits.max_value,
            cfg.header_timeout,
            durability::describe(wal.as_ref())
        );
        if let Some(wal) = wal {
            svc = svc.with_log(wal);
        }
        serve::<Self, _>(Arc::new(svc), &self.server, &self.store.to_string(), &what)
    }
}
