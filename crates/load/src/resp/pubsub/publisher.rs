//! A publisher: PUBLISH a stamped message to its next channel (round
//! robin, each publisher starting at its own), and read the reply, the
//! number of subscribers it reached, against the number that hear the
//! channel.

use super::stamp::{self, Stamp};
use super::{PubSub, PUBLISH};
use crate::checks::Checks;
use crate::driver::Failure;
use crate::keyspace::ValueSize;
use crate::resp::commands::Greeting;
use crate::results::pubsub::PubSubResults;
use serverlab_proto::resp::client::{self, Reply};
use std::sync::atomic::Ordering;

pub struct Publisher<'a> {
    ps: &'a PubSub,
    /// In the whole run, and among this process's publishers.
    index: usize,
    local: usize,
    greeting: Greeting,
    sizes: ValueSize,
    rng: fastrand::Rng,
    next: usize,
    payload: Vec<u8>,
    opened: bool,
    closed: bool,
    published: u64,
    answered: u64,
    reached: u64,
    expected: u64,
    short: u64,
    over: u64,
    pub(crate) error_replies: u64,
}

impl<'a> Publisher<'a> {
    /// The whole run's publisher `index`, sending `sizes` bytes a message.
    pub fn new(
        ps: &'a PubSub,
        index: usize,
        greeting: Greeting,
        sizes: ValueSize,
        seed: u64,
    ) -> Self {
        let local = ps.local_publisher(index).unwrap_or(0);
        let salt = (index as u64 + 0x5EED).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Publisher {
            ps,
            index,
            local,
            greeting,
            sizes,
            rng: fastrand::Rng::with_seed(seed ^ salt),
            next: local,
            payload: Vec::new(),
            opened: false,
            closed: false,
            published: 0,
            answered: 0,
            reached: 0,
            expected: 0,
            short: 0,
            over: 0,
            error_replies: 0,
        }
    }

    pub(crate) fn connect(&mut self) -> bool {
        !std::mem::replace(&mut self.opened, true)
    }

    pub(crate) fn greet(
        &mut self,
        stream: &mut dyn crate::driver::Blocking,
    ) -> std::io::Result<()> {
        self.greeting.send(stream)
    }

    /// PUBLISH the next message: its channel goes with it.
    pub(crate) fn request(&mut self, wire: &mut Vec<u8>) -> Option<(usize, usize)> {
        let ps = self.ps;
        let c = self.next % ps.channels();
        self.next = self.next.wrapping_add(1);
        // Counted before it goes, so a subscriber never sees a number
        // not yet counted.
        let seq = ps.counter(self.local, c).fetch_add(1, Ordering::AcqRel);
        let len = self.sizes.pick(&mut self.rng).max(stamp::STAMP);
        self.payload.clear();
        stamp::write(
            &mut self.payload,
            &Stamp {
                publisher: self.index as u32,
                channel: c as u32,
                seq,
                sent_ns: ps.stamp_now(),
                len: len as u32,
            },
        );
        client::command(wire, &[b"PUBLISH", &ps.names[c], &self.payload]);
        self.published += 1;
        Some((PUBLISH, c))
    }

    /// PUBLISH's reply: how many subscribers the message reached.
    pub(crate) fn reply(
        &mut self,
        input: &[u8],
        channel: usize,
        checks: &mut Checks,
    ) -> Result<Option<usize>, String> {
        let Some((reply, len)) =
            client::parse(input).map_err(|e| crate::resp::not_resp(&e, input))?
        else {
            return Ok(None);
        };
        let want = self.ps.reach(channel);
        checks.checked(u64::from(checks.enabled));
        match reply {
            Reply::Int(n) if n >= 0 => {
                let n = n as u64;
                self.answered += 1;
                self.reached += n;
                self.expected += want;
                self.short += u64::from(n < want);
                self.over += u64::from(n > want);
                if checks.enabled && n != want {
                    checks.mismatch(format!(
                        "pubsub reach: PUBLISH to {} reached {n} subscribers, {want} hear it",
                        String::from_utf8_lossy(&self.ps.names[channel])
                    ));
                }
            }
            other => {
                self.error_replies += u64::from(matches!(other, Reply::Error(_)));
                if checks.enabled {
                    checks.mismatch(format!(
                        "pubsub: PUBLISH answered {}, not a count of subscribers",
                        other.show()
                    ));
                }
            }
        }
        Ok(Some(len))
    }

    pub(crate) fn failed(&mut self, failure: &Failure) -> String {
        format!("publisher {}: {failure}", self.index)
    }

    pub(crate) fn label(&self) -> (&'static str, usize) {
        ("publisher", self.index)
    }

    /// It sends no more: once every publisher has, the counts are final.
    pub(crate) fn window_closed(&mut self) {
        if !std::mem::replace(&mut self.closed, true) {
            self.ps.active.fetch_sub(1, Ordering::AcqRel);
        }
    }

    pub(crate) fn add_to(&self, r: &mut PubSubResults) {
        r.published += self.published;
        r.publish_replies += self.answered;
        r.reach_got += self.reached;
        r.reach_expected += self.expected;
        r.publishes_short += self.short;
        r.publishes_over += self.over;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Agent;

    #[test]
    fn publishes_stamped_messages_round_robin() {
        let ps = PubSub::new((2, 3, 4), false, Agent::SOLO);
        let mut p = Publisher::new(&ps, 1, Greeting::default(), ValueSize::Fixed(80), 1);
        let mut wire = Vec::new();
        let sent: Vec<usize> = (0..5).map(|_| p.request(&mut wire).unwrap().1).collect();
        assert_eq!(sent, [1, 2, 3, 0, 1]);
        assert_eq!((ps.sent(1, 1), ps.sent(1, 0), ps.sent(0, 1)), (2, 1, 0));
        let Ok(Some((Reply::Array(Some(items)), _))) = client::parse(&wire) else {
            panic!("a PUBLISH");
        };
        let Reply::Bulk(Some(m)) = items[2] else {
            panic!("a payload")
        };
        let s = stamp::read(m).unwrap();
        assert_eq!((s.publisher, s.channel, s.seq, s.len), (1, 1, 0, 80));
        // Three subscribers, four channels: one each, channel 3 none… but
        // c mod 3 = s mod 4 gives channel 3 to subscriber 0.
        assert_eq!(ps.reach(3), 1);
        let mut checks = Checks::new(true);
        assert_eq!(p.reply(b":1\r\n", 3, &mut checks), Ok(Some(4)));
        assert_eq!(p.reply(b":0\r", 3, &mut checks), Ok(None));
        assert_eq!(p.reply(b":0\r\n", 3, &mut checks), Ok(Some(4)));
        assert_eq!(checks.totals().1, 1);
        assert!(
            checks.totals().2[0].contains("reached 0"),
            "{:?}",
            checks.totals()
        );
    }
}
