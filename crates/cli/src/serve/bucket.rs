//! `serverlab serve bucket` (also `serve bucket N`, the assignment's form).

use super::{serve, Protocol, ServerArgs};
use crate::args;
use anyhow::Context;
use clap::Args;
use serverlab_proto::bucket::{DelayMode, DelayUnit, MAX_LINE};
use serverlab_service::bucket::{
    calibrate, BucketConfig, BucketService, Timing, DEFAULT_MAX_PIPELINED,
};
use serverlab_store::StoreKind;
use std::process::ExitCode;
use std::sync::Arc;

/// Most buckets a server may hold (8 bytes each).
pub const MAX_BUCKETS: u64 = 1 << 24;

#[derive(Args)]
pub struct BucketArgs {
    /// Number of buckets, as the assignment's server takes it (same as --buckets)
    #[arg(value_name = "N", conflicts_with = "buckets", value_parser = clap::value_parser!(u64).range(1..=MAX_BUCKETS))]
    n: Option<u64>,
    /// Number of buckets N: requests name buckets 0 to N-1 [default: 32]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=MAX_BUCKETS))]
    buckets: Option<u64>,
    #[command(flatten)]
    server: ServerArgs,
    /// How the buckets are locked
    #[arg(long, default_value = "lockfree", value_parser = args::named_from(&serverlab_store::bucket::KINDS))]
    store: StoreKind,
    /// The unit a request's delay counts in
    #[arg(long, default_value = "s", value_parser = args::named::<DelayUnit>())]
    delay_unit: DelayUnit,
    /// How a delay is spent
    #[arg(long, default_value = "spin", value_parser = args::named::<DelayMode>())]
    delay_mode: DelayMode,
    /// Largest delay accepted, in delay units; a larger one gets ERR
    #[arg(long, default_value_t = 60)]
    max_delay: u64,
    /// Longest request line in bytes (without CR/LF); a longer one gets ERR
    #[arg(long, default_value_t = MAX_LINE as u64, value_parser = clap::value_parser!(u64).range(1..=65536))]
    max_line: u64,
    /// Close each connection after its first reply, as the assignment's server does
    /// (default: answer further lines until the client closes)
    #[arg(long)]
    close_after_reply: bool,
    /// Requests a connection may have read ahead of its replies (each a delay queued
    /// for it); the server reads no more from it until they are answered
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_PIPELINED as u64, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    max_pipelined: u64,
}

impl Protocol for BucketArgs {
    const NAME: &'static str = "bucket";

    fn server(&self) -> &ServerArgs {
        &self.server
    }

    fn run(self) -> anyhow::Result<ExitCode> {
        let buckets = self.n.or(self.buckets).unwrap_or(32);
        let timing = match self.delay_mode {
            DelayMode::Spin => Timing::spin(self.delay_unit),
            DelayMode::Sleep => Timing::sleep(self.delay_unit),
            DelayMode::Work => {
                // Calibrate where the server will run: pinning now is what
                // binding the server does first anyway.
                if let Some(cpus) = &self.server.cpus {
                    cpus.pin_current_thread()
                        .with_context(|| format!("cannot pin to CPUs {cpus}"))?;
                }
                let c = calibrate().context("cannot calibrate --delay-mode work")?;
                let timing = Timing::work(self.delay_unit, &c);
                println!(
                    "serverlab serve bucket: work calibration: {c}; 1 {} = {:.0} iterations",
                    self.delay_unit,
                    timing.iterations_per_unit()
                );
                timing
            }
        };
        let store = serverlab_store::bucket::new(self.store, buckets as usize)
            .context("the bucket store does not offer this locking scheme")?;
        let cfg = BucketConfig {
            max_line: self.max_line as usize,
            max_delay: self.max_delay,
            timing,
            close_after_reply: self.close_after_reply,
        };
        let what = format!(
            "store {}, {buckets} buckets, delay {} in {}, max delay {}, max pipelined {}, {}",
            self.store,
            self.delay_mode,
            self.delay_unit,
            self.max_delay,
            self.max_pipelined,
            if self.close_after_reply {
                "one request per connection"
            } else {
                "keep-alive"
            }
        );
        serve(
            Self::NAME,
            12345,
            Arc::new(
                BucketService::new(store, cfg).with_max_pipelined(self.max_pipelined as usize),
            ),
            &self.server,
            &what,
        )
    }
}
