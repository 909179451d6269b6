//! The bucket service: `<delay>,<bucket>` lines applied to a
//! [`BucketStore`].
//!
//! [`Service::frame`] finds a line, then parses and checks it into a
//! [`BucketRequest`]; [`Service::delay`] turns its delay into the one the
//! strategy must perform; [`Service::apply`] then adds and replies (or
//! replies `ERR` and closes). A line is therefore parsed once, and the
//! delay happens between parsing and the add, as the protocol orders them.

mod calibrate;
mod timing;

pub use calibrate::{calibrate, Calibration};
pub use timing::Timing;

use crate::protocol_stats::{Counts, ErrorCount, ProtocolStats};
use crate::stats::Counters;
use crate::{After, Common, Delay, Frame, Service};
use serverlab_proto::bucket::{self, Line, ParseError, Request};
use serverlab_store::bucket::BucketStore;
use std::fmt;
use std::sync::Arc;

/// Everything a bucket server is configured with, but its store.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BucketConfig {
    /// Longest request line, without CR/LF (`--max-line`).
    pub max_line: usize,
    /// Largest delay accepted, in units (`--max-delay`).
    pub max_delay: u64,
    pub timing: Timing,
    /// Close each connection after its first reply, as the assignment's
    /// server does (`--close-after-reply`); otherwise keep-alive.
    pub close_after_reply: bool,
}

/// Why a request got `ERR`. Its `Display` is the reason on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reject {
    LineTooLong { max: usize },
    Parse(ParseError),
    NoBucket { bucket: u64, buckets: usize },
    DelayOverMax { delay: u64, max: u64 },
}

impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Reject::LineTooLong { max } => write!(f, "line over {max} bytes"),
            Reject::Parse(e) => write!(f, "{e}"),
            Reject::NoBucket { bucket, buckets } => {
                write!(f, "bucket {bucket} out of range 0-{}", buckets - 1)
            }
            Reject::DelayOverMax { delay, max } => {
                write!(f, "delay {delay} over the maximum {max}")
            }
        }
    }
}

impl std::error::Error for Reject {}

// Counter slots.
const ADDS: usize = 0;
const READS: usize = 1;
const DELAY_UNITS: usize = 2;
const LINE_TOO_LONG: usize = 3;
const MALFORMED: usize = 4;
const TOO_LARGE: usize = 5;
const NO_BUCKET: usize = 6;
const DELAY_OVER_MAX: usize = 7;
const SLOTS: usize = 8;

/// Each rejection's name, as the statistics count it, and its slot.
const REJECTIONS: [(&str, usize); 5] = [
    ("line_too_long", LINE_TOO_LONG),
    ("malformed", MALFORMED),
    ("number_too_large", TOO_LARGE),
    ("bucket_out_of_range", NO_BUCKET),
    ("delay_over_max", DELAY_OVER_MAX),
];

/// The ops: `add` and `read` as the statistics count them; `rejected`: a
/// request refused by `check` (counted under `rejected` by its reason).
const OPS: [&str; 3] = ["add", "read", "rejected"];

/// The bucket server's own statistics.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BucketStats {
    pub requests: BucketRequests,
    /// The delay units the requests asked for, summed.
    pub delay_units: u64,
    /// Requests answered `ERR`, by reason.
    pub rejected: Counts,
}

/// Requests applied: adds (a delay over 0) and reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct BucketRequests {
    pub add: u64,
    pub read: u64,
}

impl ProtocolStats for BucketStats {
    fn requests(&self) -> Vec<(&'static str, u64)> {
        vec![(OPS[0], self.requests.add), (OPS[1], self.requests.read)]
    }

    fn errors(&self) -> Vec<ErrorCount> {
        self.rejected.errors(|reason| Some(reason.into()))
    }
}

impl Reject {
    fn slot(&self) -> usize {
        match self {
            Reject::LineTooLong { .. } => LINE_TOO_LONG,
            Reject::Parse(ParseError::Malformed) => MALFORMED,
            Reject::Parse(ParseError::TooLarge) => TOO_LARGE,
            Reject::NoBucket { .. } => NO_BUCKET,
            Reject::DelayOverMax { .. } => DELAY_OVER_MAX,
        }
    }
}

/// The shortest request line, `0,0` and its LF: `--max-pipelined` lines
/// take at least this many bytes each.
pub const SHORTEST_LINE: usize = 4;

/// The default `--max-pipelined`: requests a connection may have read but
/// not yet answered.
pub const DEFAULT_MAX_PIPELINED: usize = 64;

pub struct BucketService {
    store: Arc<dyn BucketStore>,
    buckets: usize,
    cfg: BucketConfig,
    max_pipelined: usize,
    stats: Counters<SLOTS>,
    common: Common,
}

/// A framed line, parsed and checked against the limits: a request to
/// apply, or why it gets `ERR`. Only [`BucketService`]'s `frame` builds
/// one.
#[derive(Debug)]
pub struct BucketRequest(Result<Request, Reject>);

impl BucketService {
    pub fn new(store: Arc<dyn BucketStore>, cfg: BucketConfig) -> Self {
        BucketService {
            buckets: store.len(),
            store,
            cfg,
            max_pipelined: DEFAULT_MAX_PIPELINED,
            stats: Counters::default(),
            common: Common::default(),
        }
    }

    /// The store's buckets (`--buckets`), read when asked.
    pub fn buckets(&self) -> usize {
        self.store.len()
    }

    pub fn config(&self) -> &BucketConfig {
        &self.cfg
    }

    /// Bound the delay work a connection can queue (`--max-pipelined`): it
    /// holds at most `n` requests read but not yet answered (its input is
    /// at most `n` shortest lines), and the server reads no more from it
    /// until they are answered. Default [`DEFAULT_MAX_PIPELINED`].
    pub fn with_max_pipelined(mut self, n: usize) -> Self {
        self.max_pipelined = n.max(1);
        self
    }

    /// Parse a line (without CR and LF) and check it against the limits.
    fn check(&self, line: &[u8]) -> Result<Request, Reject> {
        let req = Request::parse(line).map_err(Reject::Parse)?;
        if req.bucket >= self.buckets as u64 {
            return Err(Reject::NoBucket {
                bucket: req.bucket,
                buckets: self.buckets,
            });
        }
        if req.delay > self.cfg.max_delay {
            return Err(Reject::DelayOverMax {
                delay: req.delay,
                max: self.cfg.max_delay,
            });
        }
        Ok(req)
    }

    fn reject(&self, why: Reject, out: &mut Vec<u8>) {
        self.stats.add(why.slot(), 1);
        bucket::reply_err(out, why);
    }
}

impl Service for BucketService {
    type Conn = ();
    type Request = BucketRequest;

    fn open(&self, _peer: impl Into<crate::Peer>) {}

    /// `--max-pipelined` shortest lines, so no more requests than that are
    /// ever buffered; but always room for one over-long line to be seen as
    /// such (`--max-line` and a CR LF).
    fn input_limit(&self) -> usize {
        (self.max_pipelined * SHORTEST_LINE).max(self.cfg.max_line + 2)
    }

    fn frame(&self, _conn: &mut (), input: &[u8], out: &mut Vec<u8>) -> Frame<BucketRequest> {
        match bucket::frame(input, self.cfg.max_line) {
            Line::Incomplete => Frame::Incomplete,
            Line::Ready { len, used } => Frame::Ready {
                len: used,
                request: BucketRequest(self.check(&input[..len])),
            },
            Line::TooLong => {
                let max = self.cfg.max_line;
                self.reject(Reject::LineTooLong { max }, out);
                Frame::Close
            }
        }
    }

    fn delay(&self, _conn: &mut (), request: &BucketRequest) -> Option<Delay> {
        let req = request.0.as_ref().ok()?;
        self.cfg.timing.delay(req.delay)
    }

    fn apply(
        &self,
        _conn: &mut (),
        request: BucketRequest,
        _input: &[u8],
        out: &mut Vec<u8>,
    ) -> After {
        match request.0 {
            Ok(req) => {
                // `check` ensured bucket < buckets, which is a usize.
                let value = self.store.add(req.bucket as usize, req.delay);
                if req.delay == 0 {
                    self.stats.add(READS, 1);
                } else {
                    self.stats.add(ADDS, 1);
                    self.stats.add(DELAY_UNITS, req.delay);
                }
                bucket::reply_value(out, value);
                if self.cfg.close_after_reply {
                    After::Close
                } else {
                    After::Continue
                }
            }
            Err(why) => {
                self.reject(why, out);
                After::Close
            }
        }
    }

    /// Unreachable while `frame` reports long lines itself (the buffer
    /// always holds more than one line's limit); kept for safety.
    fn overflow(&self, _conn: &mut (), out: &mut Vec<u8>) {
        let max = self.cfg.max_line;
        self.reject(Reject::LineTooLong { max }, out);
    }

    fn common(&self) -> &Common {
        &self.common
    }

    const OPS: &'static [&'static str] = &OPS;

    fn op(&self, _conn: &(), request: &BucketRequest) -> usize {
        match &request.0 {
            Ok(req) if req.delay == 0 => 1,
            Ok(_) => 0,
            Err(_) => 2,
        }
    }

    fn store_size(&self) -> Option<(&'static str, u64)> {
        Some(("buckets", self.buckets() as u64))
    }

    type Stats = BucketStats;

    fn stats(&self) -> BucketStats {
        let s = |i| self.stats.get(i);
        BucketStats {
            requests: BucketRequests {
                add: s(ADDS),
                read: s(READS),
            },
            delay_units: s(DELAY_UNITS),
            rejected: Counts(REJECTIONS.iter().map(|&(name, i)| (name, s(i))).collect()),
        }
    }
}

#[cfg(test)]
mod tests;
