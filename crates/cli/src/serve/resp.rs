//! `serverlab serve resp`.

use super::durability::{self, DurabilityArgs};
use super::{serve, Protocol, ServerArgs};
use crate::{args, limits};
use anyhow::Context;
use serverlab_proto::resp;
use serverlab_service::resp::{PubSubLimits, RespService};
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
    /// How far a pub/sub subscriber may fall behind, as Redis's
    /// client-output-buffer-limit pubsub: HARD,SOFT,SECONDS (messages not yet
    /// taken past HARD bytes, or past SOFT for longer than SECONDS, cut it off;
    /// 0 for no bound)
    #[arg(long, value_name = "HARD,SOFT,SECS", default_value = "32MiB,8MiB,60",
          value_parser = pubsub_limit)]
    pubsub_limit: PubSubLimits,
    /// Keyspace notifications from the start, as Redis's
    /// notify-keyspace-events: K, E and the classes g$lshzxetdmn, A for g$lshzxetd
    /// (CONFIG SET changes them; empty: none)
    #[arg(long, value_name = "FLAGS", default_value = "",
          value_parser = serverlab_service::resp::keyspace_events)]
    notify_keyspace_events: u32,
}

/// `--pubsub-limit HARD,SOFT,SECS`: two sizes and whole seconds.
fn pubsub_limit(text: &str) -> Result<PubSubLimits, String> {
    let parts: Vec<&str> = text.split(',').collect();
    let [hard, soft, secs] = parts[..] else {
        return Err("expected HARD,SOFT,SECONDS (e.g. 32MiB,8MiB,60)".into());
    };
    let size = args::size(0, 1 << 40);
    let secs: u64 = secs
        .trim()
        .parse()
        .map_err(|_| format!("{secs:?} is not a whole number of seconds"))?;
    Ok(PubSubLimits {
        hard: size(hard)? as usize,
        soft: size(soft)? as usize,
        soft_for: std::time::Duration::from_secs(secs),
    })
}

impl Protocol for Args {
    const NAME: &'static str = resp::NAME;
    const ABOUT: &'static str = "Redis's protocol, RESP2: strings, lists, sets, hashes, sorted \
                                 sets, deadlines, transactions, blocking pops and \
                                 publish/subscribe, for redis-cli, redis-benchmark and clients";
    const PORT: Option<u16> = Some(resp::DEFAULT_PORT);

    fn server(&self) -> &ServerArgs {
        &self.server
    }

    fn run(self) -> anyhow::Result<ExitCode> {
        let limits = self.limits.get();
        // A request holds its bulk strings whole: a SET of a value at
        // --max-bulk, with its framing and a key, must fit in the query
        // buffer.
        if limits.max_bulk.saturating_add(4096) > limits.max_query {
            crate::usage_error_of(
                "serve",
                Self::NAME,
                clap::error::ErrorKind::ArgumentConflict,
                format!(
                    "--max-bulk {} does not fit in --max-query {} with 4 KiB to spare: a SET of a \
                     value that long could never arrive whole (raise --max-query)",
                    limits.max_bulk, limits.max_query
                ),
            );
        }
        let about = format!("strategy {}, store {}", self.server.strategy, self.store);
        let mut svc = RespService::new(self.store, limits, about)
            .context("the RESP store does not offer this locking scheme")?
            .with_pubsub_limits(self.pubsub_limit)
            .with_keyspace_events(self.notify_keyspace_events);
        let wal = self
            .durability
            .open(Self::NAME, self.server.strategy, |rec| svc.replay(rec))?;
        let what = format!(
            "store {}, max bulk {} bytes, max args {}, max inline {} bytes, max query {} bytes, {}",
            self.store,
            limits.max_bulk,
            limits.max_args,
            limits.max_inline,
            limits.max_query,
            durability::describe(wal.as_ref())
        );
        if let Some(wal) = wal {
            svc = svc.with_log(wal);
        }
        serve::<Self, _>(Arc::new(svc), &self.server, &self.store.to_string(), &what)
    }
}
