//! The flags that bound what a load's clients wait for and hold, the same
//! for every protocol: `--reply-timeout` (its default the protocol's own,
//! said in each load's help) and `--max-reply`.

use crate::args;
use std::time::Duration;

/// `--reply-timeout`'s help with `$default`, the protocol's: each load's
/// help says its own (its [`ReplyTimeout`]).
macro_rules! reply_timeout_help {
    ($default:literal) => {
        concat!(
            "How long a connection with requests in flight waits for a whole reply before it \
             fails (\"no reply within T\"), and replies in flight may take after the run \
             [default: ",
            $default,
            "]"
        )
    };
}
pub(super) use reply_timeout_help;

/// A protocol's `--reply-timeout` default, as its help says it
/// ([`reply_timeout_help`]).
pub trait ReplyTimeout: Send + Sync + 'static {
    const HELP: &'static str;
}

/// The bounds of a load whose `--reply-timeout` default `D` says.
#[derive(clap::Args)]
pub struct BoundArgs<D: ReplyTimeout> {
    #[arg(long, value_name = "T", value_parser = args::duration, help = D::HELP)]
    pub reply_timeout: Option<Duration>,
    /// The longest reply accepted: a reply may be at most twice what this
    /// load's requests can get (from its sizes), and never more than this;
    /// past it the connection is closed ("reply longer than N")
    #[arg(long, value_name = "BYTES", default_value = "4MiB", value_parser = args::size(1, 1 << 40))]
    pub max_reply: u64,
    #[arg(skip)]
    default: std::marker::PhantomData<D>,
}

impl<D: ReplyTimeout> BoundArgs<D> {
    /// `--max-reply` in bytes.
    pub fn max_reply(&self) -> usize {
        usize::try_from(self.max_reply).unwrap_or(usize::MAX)
    }
}
