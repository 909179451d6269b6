//! `serverlab serve bucket` (also `serve bucket N`, the assignment's form).

use super::{serve, Protocol, ServerArgs};
use crate::{args, limits};
use anyhow::Context;
use serverlab_proto::bucket::{self, DelayMode};
use serverlab_service::bucket::{
    calibrate, BucketConfig, BucketService, Timing, DEFAULT_MAX_PIPELINED,
};
use serverlab_store::StoreKind;
use std::process::ExitCode;
use std::sync::Arc;

/// Most buckets a server may hold (8 bytes each).
pub const MAX_BUCKETS: u64 = 1 << 24;

#[derive(clap::Args)]
pub struct Args {
    /// Number of buckets, as the assignment's server takes it (same as --buckets)
    #[arg(value_name = "N", conflicts_with = "buckets", value_parser = clap::value_parser!(u64).range(1..=MAX_BUCKETS))]
    n: Option<u64>,
    /// Number of buckets N: requests name buckets 0 to N-1 [default: 32]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=MAX_BUCKETS))]
    buckets: Option<u64>,
    #[command(flatten)]
    server: ServerArgs,
    /// How the buckets are locked
    #[arg(long, default_value_t = serverlab_store::bucket::DEFAULT, value_parser = args::named_from(&serverlab_store::bucket::KINDS))]
    store: StoreKind,
    /// How a delay is spent
    #[arg(long, default_value = "spin", value_parser = args::named::<DelayMode>())]
    delay_mode: DelayMode,
    /// Close each connection after its first reply, as the assignment's server does
    /// (default: answer further lines until the client closes)
    #[arg(long)]
    close_after_reply: bool,
    /// Requests a connection may have read ahead of its replies (each a delay queued
    /// for it); the server reads no more from it until they are answered
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_PIPELINED as u64, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    max_pipelined: u64,
    #[command(flatten)]
    limits: limits::Bucket,
}

impl Protocol for Args {
    const NAME: &'static str = bucket::NAME;
    const ABOUT: &'static str = "Delay, then add to a bucket (the ERSS scalability homework)";
    const PORT: Option<u16> = Some(bucket::DEFAULT_PORT);

    fn server(&self) -> &ServerArgs {
        &self.server
    }

    fn run(self) -> anyhow::Result<ExitCode> {
        let buckets = self.n.or(self.buckets).unwrap_or(32);
        let limits = self.limits.get();
        let unit = limits.delay_unit;
        let timing = match self.delay_mode {
            DelayMode::Spin => Timing::spin(unit),
            DelayMode::Sleep => Timing::sleep(unit),
            DelayMode::Work => {
                // Calibrate where the server will run: pinning now is what
                // binding the server does first anyway.
                if let Some(cpus) = &self.server.cpus {
                    cpus.pin_current_thread()
                        .with_context(|| format!("cannot pin to CPUs {cpus}"))?;
                }
                let c = calibrate().context("cannot calibrate --delay-mode work")?;
                let timing = Timing::work(unit, &c);
                super::say(&format!(
                    "serverlab serve bucket: work calibration: {c}; 1 {unit} = {:.0} iterations\n",
                    timing.iterations_per_unit()
                ));
                timing
            }
        };
        let store = serverlab_store::bucket::new(self.store, buckets as usize)
            .context("the bucket store does not offer this locking scheme")?;
        let cfg = BucketConfig {
            max_line: limits.max_line,
            max_delay: limits.max_delay,
            timing,
            close_after_reply: self.close_after_reply,
        };
        let what = format!(
            "store {}, {buckets} buckets, delay {} in {}, max delay {}, max pipelined {}, {}",
            self.store,
            self.delay_mode,
            unit,
            limits.max_delay,
            self.max_pipelined,
            if self.close_after_reply {
                "one request per connection"
            } else {
                "keep-alive"
            }
        );
        serve::<Self, _>(
            Arc::new(
                BucketService::new(store, cfg).with_max_pipelined(self.max_pipelined as usize),
            ),
            &self.server,
            &self.store.to_string(),
            &what,
        )
    }
}
