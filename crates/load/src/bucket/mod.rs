//! The bucket load: C clients on the event-loop driver, each in a closed
//! loop sending `<delay>,<bucket>` and waiting for the reply — by default
//! on a new TCP connection per request, as the assignment's client does,
//! or all on one connection (keep-alive) — with optional verification of
//! every reply and of every bucket's total, and the theoretical bound the
//! run is judged by.

mod bound;
mod client;
mod ledger;
mod read;
mod workload;

pub use crate::results::bucket::BucketResults;
pub use bound::Bound;
pub use workload::DelayRange;

use crate::endpoint::Endpoint;
use crate::harness::{self, Connections, Finish, Pacing, Plan, Timeouts};
use crate::report::ProtocolResults;
use crate::LoadError;
use client::BucketClient;
use serde::Serialize;
use serverlab_proto::bucket::{DelayMode, DelayUnit};
use std::time::Duration;

/// Operation names, in recorder order: requests with a delay, and `0,b`.
pub const OPS: [&str; 2] = ["add", "read"];

/// Generous: a saturated server may leave connections in its backlog a
/// while, and SYN retries take seconds.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);
/// How long past twice its longest delay a request may wait for its reply
/// by default.
const REPLY_SLACK: Duration = Duration::from_secs(30);
/// A throughput over this share of the bound is impossible (twice it:
/// more than timing noise), so an error even without `--verify`.
const IMPOSSIBLE_SHARE: f64 = 2.0;
/// How long reading a bucket before or after the run may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

pub use crate::harness::Stop;

/// A bucket load run's settings.
#[derive(Debug, Clone, Serialize)]
pub struct BucketLoad {
    /// The server: a TCP address, or a Unix socket (`unix:/path`).
    pub addr: Endpoint,
    /// Concurrent clients, each with one request in flight.
    pub connections: usize,
    pub stop: Stop,
    pub delay: DelayRange,
    #[serde(with = "serverlab_util::named::by_name")]
    pub delay_unit: DelayUnit,
    /// The server's delay mode; it only changes the bound.
    #[serde(with = "serverlab_util::named::by_name")]
    pub delay_mode: DelayMode,
    /// Buckets are drawn from 0..buckets.
    pub buckets: u64,
    /// All requests of a connection on one TCP connection.
    pub keep_alive: bool,
    /// Pipeline depth (keep-alive only) and throttle.
    #[serde(flatten)]
    pub pacing: Pacing,
    pub seed: u64,
    pub verify: bool,
    /// Which share of a split load this process runs (said in the
    /// report's `agent`, not here: every agent's configuration is the same).
    #[serde(skip)]
    pub agent: harness::Agent,
    /// Requests the server runs at once, if known (for the bound).
    pub server_concurrency: Option<u64>,
    /// Cores the server runs on, if known (for the bound in work mode).
    pub server_cores: Option<u64>,
    /// How long a connection with a request in flight waits for its
    /// reply (None: [`BucketLoad::reply_timeout`]'s default).
    #[serde(skip)]
    pub reply_timeout: Option<Duration>,
    /// `--max-reply`.
    #[serde(skip)]
    pub max_reply: usize,
}

impl BucketLoad {
    /// The buckets this process draws from: all of them, or a split
    /// load's agent's share, so that agents never add to one bucket and
    /// each can check its own.
    pub(crate) fn agent_buckets(&self) -> usize {
        self.agent.share(self.buckets as usize)
    }

    /// The whole run's number of this agent's bucket `local`.
    pub(crate) fn agent_bucket(&self, local: usize) -> u64 {
        self.agent.global(local) as u64
    }
    pub fn new(addr: impl Into<Endpoint>) -> Self {
        BucketLoad {
            addr: addr.into(),
            connections: 8,
            stop: Stop::DurationS(10.0),
            delay: DelayRange::uniform(1, 3),
            delay_unit: DelayUnit::Seconds,
            delay_mode: DelayMode::Spin,
            buckets: 32,
            keep_alive: false,
            pacing: Pacing::default(),
            seed: 1,
            verify: false,
            agent: harness::Agent::SOLO,
            server_concurrency: None,
            server_cores: None,
            reply_timeout: None,
            max_reply: crate::driver::MAX_REPLY,
        }
    }

    /// How long a request may wait for its reply: as given, else
    /// [`REPLY_SLACK`] past twice the longest delay (a server may queue a
    /// request behind another).
    pub fn reply_timeout(&self) -> Duration {
        self.reply_timeout.unwrap_or_else(|| {
            let longest = self.delay.hi as f64 * self.delay_unit.seconds();
            REPLY_SLACK + Duration::from_secs_f64(2.0 * longest)
        })
    }

    /// What a reply can be: a number, or an ERR line (a bucket line is
    /// 64 bytes at most).
    pub fn reply_limit(&self) -> usize {
        crate::driver::reply_limit(serverlab_proto::bucket::MAX_LINE, self.max_reply)
    }

    /// The shortest the run can take: its duration, or for a request
    /// count, the delays alone at full concurrency. For a progress display.
    pub fn planned(&self) -> Duration {
        match self.stop {
            Stop::DurationS(s) => Duration::from_secs_f64(s),
            Stop::Requests(n) => Duration::from_secs_f64(
                n.div_ceil(self.connections.max(1) as u64) as f64
                    * self.delay.mean()
                    * self.delay_unit.seconds(),
            ),
        }
    }
}

impl harness::Protocol for BucketLoad {
    const NAME: &'static str = serverlab_proto::bucket::NAME;
    const OPS: &'static [&'static str] = &OPS;
    /// Every bucket's value before the run, when verifying.
    type Shared = Option<Vec<u64>>;
    type Exchange<'a> = BucketClient<'a>;

    fn plan(&self) -> Plan {
        let (connections, note) = if self.keep_alive {
            (Connections::Persistent, "keep-alive")
        } else {
            (Connections::PerRequest, "one request per connection")
        };
        let timeouts = Timeouts {
            connect: CONNECT_TIMEOUT,
            // Delays may be long and queues deep: the default waits well
            // past the longest delay.
            reply: Some(self.reply_timeout()),
            drain: Some(self.reply_timeout()),
            max_reply: self.reply_limit(),
        };
        harness::plan!(self, self.stop.window(), connections, timeouts, Some(note))
    }

    fn shares(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("connections", self.connections),
            ("buckets", self.buckets as usize),
        ]
    }

    fn setup(&self, _errors: &mut Vec<String>) -> Result<Option<Vec<u64>>, LoadError> {
        // Reading every bucket finds a count mismatch too.
        if !self.verify {
            read::check_bucket_count(self)?;
        }
        self.verify.then(|| read::read_buckets(self)).transpose()
    }

    fn exchanges<'a>(&'a self, _base: &'a Option<Vec<u64>>) -> Vec<BucketClient<'a>> {
        (0..self.connections)
            .map(|index| BucketClient::new(self, index))
            .collect()
    }

    fn finish(
        &self,
        base: &Option<Vec<u64>>,
        done: Finish<'_, BucketClient<'_>>,
    ) -> ProtocolResults {
        if let (Some(base), true) = (base, done.errors.is_empty()) {
            match read::read_buckets(self) {
                Ok(finals) => {
                    let mut acks: Vec<_> = done
                        .exchanges
                        .iter()
                        .flat_map(|c| c.acks.iter().copied())
                        .collect();
                    // The ledger counts this agent's buckets from 0.
                    let n = self.agent.count as u64;
                    acks.iter_mut().for_each(|a| a.bucket /= n);
                    ledger::check(base, &finals, &mut acks, done.checks);
                }
                Err(e) => done
                    .errors
                    .push(format!("reading the buckets after the run: {e}")),
            }
        }
        let counted = crate::results::bucket::Counted {
            requests: done.measured.requests,
            delay_units: done.exchanges.iter().map(|c| c.counted_units).sum(),
            connections_opened: done.exchanges.iter().map(|c| c.opened).sum(),
            throughput_rps: done.measured.throughput_rps,
        };
        let cores_here = done.environment.cores_online;
        let results = BucketResults::of(&self.bound_config(), counted, cores_here);
        let waited = self.delay_mode != DelayMode::Work;
        if let Some(share) = results
            .bound
            .share
            .filter(|&s| waited && s > IMPOSSIBLE_SHARE)
        {
            done.errors.push(format!(
                "the server answered {:.0}% of the most its delays allow: it cannot have waited \
                 them (is its --delay-unit the same as this load's?)",
                share * 100.0
            ));
        }
        results.into()
    }
}
