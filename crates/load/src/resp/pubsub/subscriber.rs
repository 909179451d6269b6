//! A subscriber: SUBSCRIBE (or PSUBSCRIBE) before the run, every
//! confirmation read; then every message the server sends is read,
//! timed from its stamp and, verifying, checked: a message of this run,
//! on a channel it hears, stamped by one of this process's publishers
//! with a number that publisher sent, whole, exactly once and in order.

use super::order::{Order, Seen};
use super::stamp;
use super::{PubSub, DELIVER};
use crate::checks::Checks;
use crate::driver::Failure;
use crate::harness::{Pushed, Received};
use crate::resp::commands::Greeting;
use crate::results::pubsub::PubSubResults;
use serverlab_proto::resp::client::{self, Reply};
use std::io;

/// Channels named in one SUBSCRIBE.
const PER_COMMAND: usize = 1024;
/// The most a confirmation not yet whole may hold.
const CONFIRMATION: usize = 64 * 1024;

pub struct Subscriber<'a> {
    ps: &'a PubSub,
    index: usize,
    local: usize,
    /// The channels it hears, by local number; its place among them.
    channels: Vec<usize>,
    slot_of: std::collections::HashMap<usize, usize>,
    greeting: Greeting,
    order: Order,
    opened: bool,
    closed: bool,
    /// Its connection failed, or its drain ended: nothing more comes.
    over: bool,
    /// Every stream is complete and the counts final.
    done: bool,
    delivered: u64,
    in_window: u64,
    garbled: u64,
}

impl<'a> Subscriber<'a> {
    /// The whole run's subscriber `index`, this process's `local`-th.
    pub fn new(ps: &'a PubSub, index: usize, local: usize, greeting: Greeting) -> Self {
        let channels: Vec<usize> = ps.channels_of(local).collect();
        Subscriber {
            ps,
            index,
            local,
            slot_of: channels.iter().enumerate().map(|(j, &c)| (c, j)).collect(),
            order: Order::new(ps.publishers * channels.len()),
            channels,
            greeting,
            opened: false,
            closed: false,
            over: false,
            done: false,
            delivered: 0,
            in_window: 0,
            garbled: 0,
        }
    }

    pub(crate) fn connect(&mut self) -> bool {
        !std::mem::replace(&mut self.opened, true)
    }

    /// What it subscribes to: its channels, or its pattern.
    fn subscriptions(&self) -> (&'static [u8], Vec<&[u8]>) {
        match &self.ps.patterns {
            Some(p) => (b"PSUBSCRIBE", vec![&p[self.local % self.ps.channels()][..]]),
            None => {
                let names = self.channels.iter().map(|&c| &self.ps.names[c][..]);
                (b"SUBSCRIBE", names.collect())
            }
        }
    }

    /// AUTH and SELECT as asked, then subscribe, reading every
    /// confirmation (blocking, within the connect timeout).
    pub(crate) fn greet(&mut self, stream: &mut dyn crate::driver::Blocking) -> io::Result<()> {
        self.greeting.send(stream)?;
        let (command, names) = self.subscriptions();
        for chunk in names.chunks(PER_COMMAND) {
            let mut wire = Vec::new();
            let mut args = vec![command];
            args.extend_from_slice(chunk);
            client::command(&mut wire, &args);
            stream.write_all(&wire)?;
            confirm(stream, command, chunk)?;
        }
        Ok(())
    }

    /// A message the server sent: timed and checked.
    pub(crate) fn unasked(
        &mut self,
        input: &[u8],
        rx: Received,
        checks: &mut Checks,
    ) -> Result<Option<(usize, Option<Pushed>)>, String> {
        let Some((reply, len)) =
            client::parse(input).map_err(|e| crate::resp::not_resp(&e, input))?
        else {
            return Ok(None);
        };
        let pushed = match self.message(&reply) {
            Ok(m) => self.heard(m, rx, checks),
            Err(e) => {
                self.garbled += 1;
                if checks.enabled {
                    checks.mismatch(format!("pubsub garbled: subscriber {} got {e}", self.index));
                }
                None
            }
        };
        Ok(Some((len, pushed)))
    }

    /// The channel (its slot among this subscriber's) and payload of a
    /// message sent to it, or what else it is.
    fn message<'r>(&self, reply: &Reply<'r>) -> Result<(usize, &'r [u8]), String> {
        let not = || format!("{}, not a message", reply.show());
        let Reply::Array(Some(items)) = reply else {
            return Err(not());
        };
        let (channel, payload) = match (&self.ps.patterns, &items[..]) {
            (None, [Reply::Bulk(Some(b"message")), Reply::Bulk(Some(c)), Reply::Bulk(Some(m))]) => {
                (*c, *m)
            }
            (
                Some(ps),
                [Reply::Bulk(Some(b"pmessage")), Reply::Bulk(Some(p)), Reply::Bulk(Some(c)), Reply::Bulk(Some(m))],
            ) if *p == &ps[self.local % self.ps.channels()][..] => (*c, *m),
            _ => return Err(not()),
        };
        let slot = self
            .ps
            .by_name
            .get(channel)
            .and_then(|c| self.slot_of.get(c));
        match slot {
            Some(&j) => Ok((j, payload)),
            None => Err(format!(
                "a message on {:?}, a channel it does not hear",
                String::from_utf8_lossy(channel)
            )),
        }
    }

    /// A message on its channel `j`: its stamp read and checked, its
    /// place in order.
    fn heard(
        &mut self,
        (j, payload): (usize, &[u8]),
        rx: Received,
        checks: &mut Checks,
    ) -> Option<Pushed> {
        let c = self.channels[j];
        let who = |this: &Self| {
            format!(
                "subscriber {} on {}",
                this.index,
                String::from_utf8_lossy(&this.ps.names[c])
            )
        };
        let stamp = match self.stamped(payload, c) {
            Ok(s) => s,
            Err(e) => {
                self.garbled += 1;
                if checks.enabled {
                    checks.mismatch(format!("pubsub garbled: {} got a message {e}", who(self)));
                }
                return None;
            }
        };
        let (p, seq, sent_ns) = stamp;
        let k = p * self.channels.len() + j;
        checks.checked(u64::from(checks.enabled));
        match self.order.see(k, seq) {
            Seen::InOrder | Seen::Gap(_) => {}
            Seen::Reordered => {
                if checks.enabled {
                    checks.mismatch(format!(
                        "pubsub reordered: {} got message {seq} of publisher {} after a later one",
                        who(self),
                        self.global_publisher(p)
                    ));
                }
            }
            Seen::Duplicated => {
                if checks.enabled {
                    checks.mismatch(format!(
                        "pubsub duplicated: {} got message {seq} of publisher {} again",
                        who(self),
                        self.global_publisher(p)
                    ));
                }
                return None;
            }
        }
        self.delivered += 1;
        self.in_window += u64::from(rx.counted);
        Some(Pushed {
            op: DELIVER,
            sent: self.ps.instant(sent_ns),
        })
    }

    fn global_publisher(&self, local: usize) -> usize {
        self.ps.agent.global(local)
    }

    /// The local publisher, sequence number and send time of a payload on channel
    /// `c`, if it is whole and one of this process's publishers sent it.
    fn stamped(&self, payload: &[u8], c: usize) -> Result<(usize, u64, u64), String> {
        let s = stamp::read(payload)?;
        if s.channel as usize != c {
            return Err(format!("stamped for channel {} (misrouted)", s.channel));
        }
        let Some(p) = self.ps.local_publisher(s.publisher as usize) else {
            return Err(format!(
                "from publisher {}, not one of this run",
                s.publisher
            ));
        };
        if s.seq >= self.ps.sent(p, c) {
            return Err(format!(
                "numbered {} by publisher {}, which never sent it",
                s.seq, s.publisher
            ));
        }
        Ok((p, s.seq, s.sent_ns))
    }

    pub(crate) fn failed(&mut self, failure: &Failure) -> String {
        self.over = true;
        format!("subscriber {}: {failure}", self.index)
    }

    pub(crate) fn label(&self) -> (&'static str, usize) {
        ("subscriber", self.index)
    }

    pub(crate) fn window_closed(&mut self) {
        self.closed = true;
    }

    pub(crate) fn drained(&mut self) {
        self.over = true;
    }

    /// After the window: whether messages published are still to come.
    pub(crate) fn awaiting(&self) -> bool {
        if !self.closed || self.over || self.done {
            return false;
        }
        if !self.ps.stopped() {
            return true;
        }
        !self.all_complete()
    }

    fn all_complete(&self) -> bool {
        (0..self.ps.publishers).all(|p| {
            self.channels.iter().enumerate().all(|(j, &c)| {
                let k = p * self.channels.len() + j;
                self.order.complete(k, self.ps.sent(p, c))
            })
        })
    }

    /// Its figures, and, verifying, what never came.
    pub(crate) fn add_to(&self, r: &mut PubSubResults, checks: &mut Checks) {
        r.delivered += self.delivered;
        r.delivered_in_window += self.in_window;
        r.duplicated += self.order.duplicated;
        r.reordered += self.order.reordered;
        r.garbled += self.garbled;
        let mut lost = self.order.forgotten;
        let mut first = None;
        for p in 0..self.ps.publishers {
            for (j, &c) in self.channels.iter().enumerate() {
                let k = p * self.channels.len() + j;
                let (n, at) = self.order.lost(k, self.ps.sent(p, c));
                lost += n;
                if let (None, Some(seq)) = (first, at) {
                    first = Some((p, c, seq));
                }
            }
        }
        r.lost += lost;
        if let (true, Some((p, c, seq))) = (checks.enabled && lost > 0, first) {
            checks.mismatches(
                lost,
                format!(
                    "pubsub lost: subscriber {} never got {lost} messages published to its \
                     channels (the first: message {seq} of publisher {} on {})",
                    self.index,
                    self.global_publisher(p),
                    String::from_utf8_lossy(&self.ps.names[c])
                ),
            );
        }
    }
}

/// Read one confirmation per name of `command` from `stream`: each
/// `[subscribe|psubscribe, name, count]`, in order.
fn confirm(
    stream: &mut dyn crate::driver::Blocking,
    command: &[u8],
    names: &[&[u8]],
) -> io::Result<()> {
    let kind = command.to_ascii_lowercase();
    let what = String::from_utf8_lossy(command).into_owned();
    let (mut buf, mut chunk) = (Vec::new(), [0u8; 4096]);
    for name in names {
        loop {
            let parsed = client::parse(&buf).map_err(|e| {
                io::Error::new(io::ErrorKind::InvalidData, crate::resp::not_resp(&e, &buf))
            })?;
            if let Some((reply, len)) = parsed {
                let ok = matches!(&reply, Reply::Array(Some(items)) if matches!(&items[..],
                    [Reply::Bulk(Some(k)), Reply::Bulk(Some(n)), Reply::Int(_)]
                        if *k == &kind[..] && n == name));
                if !ok {
                    return Err(io::Error::other(format!(
                        "{what} before the run: the server answered {}, not its confirmation",
                        reply.show()
                    )));
                }
                buf.drain(..len);
                break;
            }
            if buf.len() > CONFIRMATION {
                return Err(io::Error::other(format!("{what}'s confirmation too long")));
            }
            match stream.read(&mut chunk)? {
                0 => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("the server closed the connection before confirming {what}"),
                    ))
                }
                n => buf.extend_from_slice(&chunk[..n]),
            }
        }
    }
    if !buf.is_empty() {
        return Err(io::Error::other(format!(
            "{what} before the run: the server sent more than its confirmations"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Agent;
    use crate::keyspace::ValueSize;
    use crate::resp::pubsub::Publisher;
    use std::time::Instant;

    /// `[message, channel, payload]` on the wire.
    fn frame(channel: &[u8], payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        client::command(&mut out, &[b"message", channel, payload]);
        out
    }

    /// The payloads of a publisher's next `n` PUBLISHes, with their channels.
    fn published(p: &mut Publisher<'_>, n: usize) -> Vec<(usize, Vec<u8>)> {
        (0..n)
            .map(|_| {
                let mut wire = Vec::new();
                let (_, c) = p.request(&mut wire).unwrap();
                let Ok(Some((Reply::Array(Some(items)), _))) = client::parse(&wire) else {
                    panic!("a PUBLISH")
                };
                let Reply::Bulk(Some(m)) = items[2] else {
                    panic!("a payload")
                };
                (c, m.to_vec())
            })
            .collect()
    }

    #[test]
    fn a_subscriber_times_checks_and_counts_what_it_gets() {
        // One publisher, two subscribers, four channels: subscriber 0
        // hears channels 0 and 2, subscriber 1 channels 1 and 3.
        let ps = PubSub::new((1, 2, 4), false, Agent::SOLO);
        let mut p = Publisher::new(&ps, 0, Greeting::default(), ValueSize::Fixed(70), 1);
        let mut s = Subscriber::new(&ps, 1, 0, Greeting::default());
        assert_eq!(s.channels, [0, 2]);
        let msgs = published(&mut p, 5);
        let rx = Received {
            at: Instant::now(),
            counted: true,
        };
        let mut checks = Checks::new(true);
        let mut take = |s: &mut Subscriber<'_>, wire: &[u8]| {
            let (len, pushed) = s.unasked(wire, rx, &mut checks).unwrap().unwrap();
            assert_eq!(len, wire.len());
            pushed
        };
        let name = |c: usize| ps.names[c].clone();
        // Channel 0's first message, in order: timed as a delivery.
        let pushed = take(&mut s, &frame(&name(0), &msgs[0].1)).unwrap();
        assert_eq!(pushed.op, DELIVER);
        assert!(pushed.sent <= Instant::now());
        // Channel 1 is not its: garbled, not timed.
        assert!(take(&mut s, &frame(&name(1), &msgs[1].1)).is_none());
        // Channel 0's again: duplicated, not timed.
        assert!(take(&mut s, &frame(&name(0), &msgs[0].1)).is_none());
        // Channel 2's message sent on channel 0: misrouted.
        assert!(take(&mut s, &frame(&name(0), &msgs[2].1)).is_none());
        // A number its publisher never sent.
        let mut ahead = Vec::new();
        let future = stamp::Stamp {
            publisher: 0,
            channel: 2,
            seq: 9,
            sent_ns: 0,
            len: 64,
        };
        stamp::write(&mut ahead, &future);
        assert!(take(&mut s, &frame(&name(2), &ahead)).is_none());
        // Not a message at all, and a half one.
        assert!(take(&mut s, b":1\r\n").is_none());
        assert_eq!(s.unasked(b"*3\r\n$7\r\nmes", rx, &mut checks), Ok(None));
        assert!(s.unasked(b"%3\r\n", rx, &mut checks).is_err());
        let (_, mismatches, examples) = checks.totals();
        assert_eq!(mismatches, 5, "{examples:?}");
        let said = examples.join("\n");
        for words in [
            "channel it does not hear",
            "pubsub duplicated",
            "misrouted",
            "never sent it",
            "not a message",
        ] {
            assert!(said.contains(words), "{words}: {said}");
        }
        assert_eq!((s.delivered, s.garbled, s.order.duplicated), (1, 4, 1));
        // Channel 2's first message (msgs[2]) and channel 0's second
        // (msgs[4]) never came: lost, counted at the end.
        let mut r = PubSubResults::new((1, 2, 4), false);
        let mut end = Checks::new(true);
        s.add_to(&mut r, &mut end);
        assert_eq!(r.lost, 2);
        assert_eq!(end.totals().1, 2);
        assert!(
            end.totals().2[0].contains("pubsub lost"),
            "{:?}",
            end.totals()
        );
    }

    #[test]
    fn after_the_window_it_awaits_until_everything_sent_has_come() {
        let ps = PubSub::new((1, 1, 1), false, Agent::SOLO);
        let mut p = Publisher::new(&ps, 0, Greeting::default(), ValueSize::Fixed(64), 1);
        let mut s = Subscriber::new(&ps, 1, 0, Greeting::default());
        let msgs = published(&mut p, 2);
        let rx = Received {
            at: Instant::now(),
            counted: false,
        };
        let mut checks = Checks::new(false);
        assert!(!s.awaiting(), "not before the window closes");
        s.window_closed();
        assert!(s.awaiting(), "its publisher has not stopped");
        p.window_closed();
        assert!(s.awaiting(), "two messages to come");
        for (c, m) in &msgs {
            let wire = frame(&ps.names[*c], m);
            s.unasked(&wire, rx, &mut checks).unwrap();
        }
        assert!(!s.awaiting());
    }
}
