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
