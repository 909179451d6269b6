//! The flags that bound what a load's clients wait for and hold, the same
//! for every protocol: `--reply-timeout` and `--max-reply`.

use crate::args;
use std::time::Duration;

#[derive(clap::Args)]
pub struct BoundArgs {
    /// How long a connection with requests in flight waits for a whole reply
    /// before it fails ("no reply within T"), and replies in flight may take
    /// after the run [default: 10s; kv 30s; bucket 30s past twice the longest delay]
    #[arg(long, value_name = "T", value_parser = args::duration)]
    pub reply_timeout: Option<Duration>,
    /// The longest reply accepted: a reply may be at most twice what this
    /// load's requests can get (from its sizes), and never more than this;
    /// past it the connection is closed ("reply longer than N")
    #[arg(long, value_name = "BYTES", default_value = "4MiB", value_parser = args::size(1, 1 << 40))]
    pub max_reply: u64,
}

impl BoundArgs {
    /// `--max-reply` in bytes.
    pub fn max_reply(&self) -> usize {
        usize::try_from(self.max_reply).unwrap_or(usize::MAX)
    }
}
