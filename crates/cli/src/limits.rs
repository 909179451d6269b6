//! Each protocol's limits as flags: the bounds a server enforces, which
//! `serve <protocol>` sets and `check <protocol>` must be told, so one
//! struct per protocol is flattened into both. The defaults are the
//! protocol's own (`serverlab_proto::<protocol>::Limits::default()`), the
//! one place they are written.

use crate::args::{self, Size, Span};
use clap::Args;
use serverlab_proto::bucket::DelayUnit;
use serverlab_proto::{board, bucket, kv, resp};

// No doc comments on these structs: clap would take one as the `about`
// of the subcommand they are flattened into.

/// Where `--help` lists them. The heading holds for every flag after them
/// too, so each is flattened last.
const HEADING: &str = "Limits (the server's: give check the same)";

#[derive(Args, Clone, Debug)]
#[command(next_help_heading = HEADING)]
pub struct Board {
    /// Longest request in bytes; a longer one closes its connection
    #[arg(long, default_value_t = board::Limits::default().max_request as u64,
          value_parser = clap::value_parser!(u64).range(1..=(1 << 30)))]
    max_request: u64,
}

impl Board {
    pub fn get(&self) -> board::Limits {
        board::Limits {
            max_request: self.max_request as usize,
        }
    }
}

#[derive(Args, Clone, Debug)]
#[command(next_help_heading = HEADING)]
pub struct Bucket {
    /// The unit a request's delay counts in
    #[arg(long, default_value_t = bucket::Limits::default().delay_unit,
          value_parser = args::named::<DelayUnit>())]
    delay_unit: DelayUnit,
    /// Largest delay accepted, in delay units; a larger one gets ERR
    #[arg(long, default_value_t = bucket::Limits::default().max_delay)]
    max_delay: u64,
    /// Longest request line in bytes (without CR/LF); a longer one gets ERR
    #[arg(long, default_value_t = bucket::Limits::default().max_line as u64,
          value_parser = clap::value_parser!(u64).range(1..=65536))]
    max_line: u64,
}

impl Bucket {
    pub fn get(&self) -> bucket::Limits {
        bucket::Limits {
            max_line: self.max_line as usize,
            max_delay: self.max_delay,
            delay_unit: self.delay_unit,
        }
    }
}

#[derive(Args, Clone, Debug)]
#[command(next_help_heading = HEADING)]
pub struct Kv {
    /// Largest value (request body); a larger one is answered 413 (examples: 1MiB, 4096)
    #[arg(long, default_value_t = Size(kv::Limits::default().max_value as u64), value_name = "SIZE",
          value_parser = args::size_flag(0, 1 << 30))]
    max_value: Size,
    /// Longest request target; a longer one is answered 414
    #[arg(long, default_value_t = Size(kv::Limits::default().max_uri as u64), value_name = "SIZE",
          value_parser = args::size_flag(16, 1 << 20))]
    max_uri: Size,
    /// Largest header section; a larger one is answered 431
    #[arg(long, default_value_t = Size(kv::Limits::default().max_headers as u64), value_name = "SIZE",
          value_parser = args::size_flag(64, 1 << 20))]
    max_headers: Size,
    /// Time a connection has to deliver each whole request, from when the server is ready
    /// for it and has written every reply (idle keep-alive connections included); then 408
    /// and close (10s, 500ms)
    #[arg(long, default_value_t = Span(kv::HEADER_TIMEOUT), value_parser = args::span)]
    header_timeout: Span,
}

impl Kv {
    pub fn get(&self) -> kv::Limits {
        kv::Limits {
            max_uri: self.max_uri.0 as usize,
            max_headers: self.max_headers.0 as usize,
            max_value: self.max_value.0 as usize,
        }
    }

    pub fn header_timeout(&self) -> std::time::Duration {
        self.header_timeout.0
    }
}

#[derive(Args, Clone, Debug)]
#[command(next_help_heading = HEADING)]
pub struct Resp {
    /// Longest bulk string in a request; a longer one is a protocol error (the connection closes)
    #[arg(long, default_value_t = Size(resp::Limits::default().max_bulk as u64), value_name = "SIZE",
          value_parser = args::size_flag(1, 1 << 30))]
    max_bulk: Size,
    /// Most elements in a request's array; more is a protocol error
    #[arg(long, default_value_t = resp::Limits::default().max_args as u64,
          value_parser = clap::value_parser!(u64).range(1..=(1 << 30)))]
    max_args: u64,
    /// Longest inline command; a longer one is a protocol error
    #[arg(long, default_value_t = Size(resp::Limits::default().max_inline as u64), value_name = "SIZE",
          value_parser = args::size_flag(16, 1 << 30))]
    max_inline: Size,
    /// Most unread input a connection may hold without a whole request (Redis's
    /// client-query-buffer-limit); more is a protocol error
    #[arg(long, default_value_t = Size(resp::Limits::default().max_query as u64), value_name = "SIZE",
          value_parser = args::size_flag(1024, 1 << 30))]
    max_query: Size,
}

impl Resp {
    pub fn get(&self) -> resp::Limits {
        resp::Limits {
            max_bulk: self.max_bulk.0 as usize,
            max_args: self.max_args as usize,
            max_inline: self.max_inline.0 as usize,
            max_query: self.max_query.0 as usize,
        }
    }
}
