//! `serverlab serve resp`.

use super::durability::{self, DurabilityArgs};
use super::{serve, Protocol, ServerArgs};
use crate::{args, limits};
use anyhow::Context;
use serverlab_proto::resp;
use serverlab_service::resp::RespService;
use serverlab_store::StoreKind;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// How keys are locked
    #[arg(long, default_value_t = serverlab_store::resp::DEFAULT, value_parser = args::named_from(&serverlab_store::resp::KINDS))]
    store: StoreKind,
    #[command(flatten)]
    limits: limits::Resp,
    #[command(flatten)]
    durability: DurabilityArgs,
}

impl Protocol for Args {
    const NAME: &'static str = resp::NAME;
    const ABOUT: &'static str = "Redis's protocol, RESP2: strings and lists, for redis-cli, \
                                 redis-benchmark and clients";
    const PORT: Option<u16> = Some(resp::DEFAULT_PORT);

    fn server(&self) -> &ServerArgs {
        &self.server
    }

    fn run(self) -> anyhow::Result<ExitCode> {
        let limits = self.limits.get();
        let store = serverlab_store::resp::new(self.store)
            .context("the RESP store does not offer this locking scheme")?;
        let about = format!("strategy {}, store {}", self.server.strategy, self.store);
        let mut svc = RespService::new(store, limits, about);
        let wal = self.durability.open(Self::NAME, |rec| svc.replay(rec))?;
        let what = format!(
            "store {}, max bulk {} bytes, max args {}, max inline {} bytes, {}",
            self.store,
            limits.max_bulk,
            limits.max_args,
            limits.max_inline,
            durability::describe(wal.as_ref())
        );
        if let Some(wal) = wal {
            svc = svc.with_log(wal);
        }
        serve::<Self, _>(Arc::new(svc), &self.server, &what)
    }
}
