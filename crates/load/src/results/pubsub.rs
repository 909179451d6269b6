//! The RESP load's pub/sub workload's own results: what was published
//! and how many subscribers each PUBLISH reached, against how many hear
//! its channel; what was delivered, and what was lost, duplicated,
//! reordered or garbled on the way.

use super::{Across, Merge};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PubSubResults {
    pub publishers: usize,
    pub subscribers: usize,
    pub channels: usize,
    /// Subscribers PSUBSCRIBEd to patterns instead of SUBSCRIBing.
    pub patterns: bool,
    /// PUBLISHes sent, and those answered with a count of subscribers.
    pub published: u64,
    pub publish_replies: u64,
    /// The counts those replies added up to, and what they should have
    /// (the subscribers that hear each channel).
    pub reach_got: u64,
    pub reach_expected: u64,
    /// Replies that counted fewer, or more, subscribers than hear the channel.
    pub publishes_short: u64,
    pub publishes_over: u64,
    /// Every message sent times the subscribers that hear its channel.
    pub expected_deliveries: u64,
    /// Messages delivered once each (the first time), in all and in the
    /// measured window, and those per second of the window.
    pub delivered: u64,
    pub delivered_in_window: u64,
    pub delivered_per_s: f64,
    /// Messages published that a subscriber that hears the channel never
    /// got (by the end of the drain).
    pub lost: u64,
    /// Messages delivered again to one subscriber.
    pub duplicated: u64,
    /// Messages delivered after a later one of the same publisher on the
    /// same channel.
    pub reordered: u64,
    /// What a subscriber got that is no message of this run: not a
    /// message, on a channel it does not hear, unstamped, damaged, or
    /// numbered past what its publisher sent.
    pub garbled: u64,
}

impl PubSubResults {
    pub fn new((publishers, subscribers, channels): (usize, usize, usize), patterns: bool) -> Self {
        PubSubResults {
            publishers,
            subscribers,
            channels,
            patterns,
            published: 0,
            publish_replies: 0,
            reach_got: 0,
            reach_expected: 0,
            publishes_short: 0,
            publishes_over: 0,
            expected_deliveries: 0,
            delivered: 0,
            delivered_in_window: 0,
            delivered_per_s: 0.0,
            lost: 0,
            duplicated: 0,
            reordered: 0,
            garbled: 0,
        }
    }

    pub fn text_lines(&self) -> Vec<String> {
        let how = if self.patterns {
            "pattern subscribers (PSUBSCRIBE)"
        } else {
            "subscribers"
        };
        vec![
            format!(
                "pubsub: {} publishers, {} {how}, {} channels",
                self.publishers, self.subscribers, self.channels
            ),
            format!(
                "published: {} ({} answered), reaching {} subscribers of {} expected ({} \
                 short, {} over)",
                self.published,
                self.publish_replies,
                self.reach_got,
                self.reach_expected,
                self.publishes_short,
                self.publishes_over
            ),
            format!(
                "delivered: {} of {} expected ({:.0}/s in the window); lost {}, duplicated {}, \
                 reordered {}, garbled {}",
                self.delivered,
                self.expected_deliveries,
                self.delivered_per_s,
                self.lost,
                self.duplicated,
                self.reordered,
                self.garbled
            ),
        ]
    }
}

impl Merge for PubSubResults {
    /// Each agent has publishers, subscribers and channels of its own:
    /// every figure adds up.
    fn merge(parts: &[&Self], at: &Across<'_>) -> Result<Self, String> {
        let n = |f: &str, get: fn(&Self) -> u64| at.count(f, parts, get);
        let sum = |get: fn(&Self) -> usize| parts.iter().map(|p| get(p)).sum();
        Ok(PubSubResults {
            publishers: sum(|p| p.publishers),
            subscribers: sum(|p| p.subscribers),
            channels: sum(|p| p.channels),
            patterns: at.same("pubsub.patterns", parts, |p| p.patterns)?,
            published: n("pubsub.published", |p| p.published)?,
            publish_replies: n("pubsub.publish_replies", |p| p.publish_replies)?,
            reach_got: n("pubsub.reach_got", |p| p.reach_got)?,
            reach_expected: n("pubsub.reach_expected", |p| p.reach_expected)?,
            publishes_short: n("pubsub.publishes_short", |p| p.publishes_short)?,
            publishes_over: n("pubsub.publishes_over", |p| p.publishes_over)?,
            expected_deliveries: n("pubsub.expected_deliveries", |p| p.expected_deliveries)?,
            delivered: n("pubsub.delivered", |p| p.delivered)?,
            delivered_in_window: n("pubsub.delivered_in_window", |p| p.delivered_in_window)?,
            // The agents' windows overlap: their rates add.
            delivered_per_s: parts.iter().map(|p| p.delivered_per_s).sum(),
            lost: n("pubsub.lost", |p| p.lost)?,
            duplicated: n("pubsub.duplicated", |p| p.duplicated)?,
            reordered: n("pubsub.reordered", |p| p.reordered)?,
            garbled: n("pubsub.garbled", |p| p.garbled)?,
        })
    }
}
