//! The pub/sub workload (`load resp --workload pubsub`): publishers
//! PUBLISH stamped messages ([`stamp`]) to channels, at a rate or as fast
//! as replies come; subscribers, subscribed before any publisher starts,
//! time each delivery from its stamp (the `deliver` operation, beside
//! `PUBLISH`, whose latency is its reply's) and, verifying, check that
//! each message of every publisher on each channel they hear comes
//! exactly once and in order ([`order`]). When the window closes the
//! publishers stop, then the subscribers drain until what was published
//! has come (or the drain timeout passes: what has not come is lost).
//!
//! Channels and subscribers: of `S` subscribers and `C` channels,
//! subscriber `s` hears channel `c` when `c mod S = s mod C`, so every
//! channel has a subscriber and every subscriber a channel (with S ≥ C
//! each subscriber hears one channel, with S < C each channel has one
//! subscriber). Channel `c` is named `sl:TAG:G:c`, `G = c mod S`: with
//! `--patterns` subscriber `s` PSUBSCRIBEs `sl:TAG:G:*`, `G = s mod C`,
//! which covers the same channels. TAG is drawn per process, so two
//! runs on one server never hear each other, and each agent of a split
//! load has channels, publishers and subscribers of its own: a stamp's
//! clock is its own process's.

mod order;
mod publisher;
pub mod stamp;
mod subscriber;

pub use publisher::Publisher;
pub use subscriber::Subscriber;

use crate::harness::Agent;
use crate::results::pubsub::PubSubResults;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The workload's operations, in recorder order.
pub const OPS: [&str; 2] = ["PUBLISH", "deliver"];
pub const PUBLISH: usize = 0;
pub const DELIVER: usize = 1;

/// The most streams (publishers × channels) a run may have: each costs
/// a counter and, per subscriber that hears it, a place in its check.
pub const MAX_STREAMS: usize = 1 << 20;

/// What the clients of one process share.
pub struct PubSub {
    /// Channel names, by local number.
    names: Vec<Vec<u8>>,
    by_name: HashMap<Vec<u8>, usize>,
    /// Each subscriber group's pattern (`--patterns`), by `s mod C`.
    patterns: Option<Vec<Vec<u8>>>,
    /// This process's publishers and subscribers.
    pub(crate) publishers: usize,
    pub(crate) subscribers: usize,
    agent: Agent,
    /// Messages sent, by local publisher and channel (`p × C + c`).
    sent: Vec<AtomicU64>,
    /// Publishers still sending (their window not closed).
    active: AtomicUsize,
    /// The clock stamps count from.
    base: Instant,
}

impl PubSub {
    /// Agent `agent`'s share of the whole run's publishers, subscribers
    /// and channels (publishers first in the run's list of clients).
    pub fn new(
        (publishers, subscribers, channels): (usize, usize, usize),
        patterns: bool,
        agent: Agent,
    ) -> PubSub {
        let n = agent.count.max(1);
        let local_pubs = (0..publishers).filter(|&g| g % n == agent.index).count();
        let local_subs = (0..subscribers)
            .filter(|&s| (publishers + s) % n == agent.index)
            .count();
        let c_local = agent.share(channels);
        let tag = format!("{:08x}", fastrand::u32(..));
        let groups = local_subs.max(1);
        let names: Vec<Vec<u8>> = (0..c_local)
            .map(|c| format!("sl:{tag}:{}:{}", c % groups, agent.global(c)).into_bytes())
            .collect();
        let patterns = patterns.then(|| {
            (0..c_local.min(groups))
                .map(|g| format!("sl:{tag}:{g}:*").into_bytes())
                .collect()
        });
        PubSub {
            by_name: names.iter().cloned().zip(0..).collect(),
            names,
            patterns,
            publishers: local_pubs,
            subscribers: local_subs,
            agent,
            sent: (0..local_pubs * c_local)
                .map(|_| AtomicU64::new(0))
                .collect(),
            active: AtomicUsize::new(local_pubs),
            base: Instant::now(),
        }
    }

    pub fn channels(&self) -> usize {
        self.names.len()
    }

    /// What stops this process's share from running, if anything.
    pub fn unfed(&self) -> Option<String> {
        let (p, s, c) = (self.publishers, self.subscribers, self.channels());
        (p == 0 || s == 0 || c == 0).then(|| {
            format!(
                "agent {} has {p} publishers, {s} subscribers and {c} channels of its own: each \
                 agent needs at least one of each (fewer agents, or more of each)",
                self.agent
            )
        })
    }

    /// The channels subscriber `s` (local) hears.
    pub(crate) fn channels_of(&self, s: usize) -> impl Iterator<Item = usize> + '_ {
        let (subs, chans) = (self.subscribers.max(1), self.channels().max(1));
        (0..self.channels()).filter(move |c| c % subs == s % chans)
    }

    /// Subscribers that hear channel `c`.
    pub(crate) fn reach(&self, c: usize) -> u64 {
        let (s, ch) = (self.subscribers, self.channels());
        if s >= ch {
            (s / ch + usize::from(c < s % ch)) as u64
        } else {
            1
        }
    }

    /// Which local publisher the whole run's publisher `global` is.
    pub(crate) fn local_publisher(&self, global: usize) -> Option<usize> {
        let n = self.agent.count.max(1);
        (global % n == self.agent.index)
            .then_some(global / n)
            .filter(|&p| p < self.publishers)
    }

    fn counter(&self, p: usize, c: usize) -> &AtomicU64 {
        &self.sent[p * self.channels() + c]
    }

    /// Messages local publisher `p` has sent to channel `c`.
    pub(crate) fn sent(&self, p: usize, c: usize) -> u64 {
        self.counter(p, c).load(Ordering::Acquire)
    }

    /// Whether every publisher has stopped (so the counts are final).
    pub(crate) fn stopped(&self) -> bool {
        self.active.load(Ordering::Acquire) == 0
    }

    /// A stamp's time: now, on the shared clock.
    fn stamp_now(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64
    }

    /// The instant a stamp's time names.
    fn instant(&self, ns: u64) -> Instant {
        self.base + Duration::from_nanos(ns)
    }

    /// The figures over every publisher and subscriber, their losses
    /// counted against what was sent and checked when verifying.
    pub fn results(
        &self,
        pubs: &[&Publisher<'_>],
        subs: &[&Subscriber<'_>],
        duration_s: f64,
        checks: &mut crate::checks::Checks,
    ) -> PubSubResults {
        let mut r = PubSubResults::new(
            (self.publishers, self.subscribers, self.channels()),
            self.patterns.is_some(),
        );
        for p in pubs {
            p.add_to(&mut r);
        }
        for p in 0..self.publishers {
            for c in 0..self.channels() {
                r.expected_deliveries += self.sent(p, c) * self.reach(c);
            }
        }
        for s in subs {
            s.add_to(&mut r, checks);
        }
        r.delivered_per_s = if duration_s > 0.0 {
            r.delivered_in_window as f64 / duration_s
        } else {
            0.0
        };
        r
    }
}
