//! Publish/subscribe, as Redis 7.0 serves it over RESP2: SUBSCRIBE,
//! UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, PUBSUB, and RESET
//! (which leaves subscribe mode among the rest it resets).
//!
//! Delivery: each subscribed connection has an [`Outbox`], a queue of
//! encoded messages shared with the [`Registry`]. PUBLISH encodes each
//! message once (per channel, and per matching pattern) and appends it to
//! every subscriber's outbox, all under the registry's lock: a message
//! reaches each subscription exactly once, and one publisher's messages
//! arrive in the order it published them. Appending to an empty outbox
//! wakes the waker its connection left there ([`Service::pushes`]), so a
//! subscriber idle on another thread, core or ring is run to write it.
//! The connection takes its outbox whole: before each command it runs
//! (so a reply follows the messages published before it), and whenever it
//! would wait for input with every reply written.
//!
//! A subscriber that does not read must not hold anyone up: its outbox is
//! bounded as Redis bounds a pub/sub client's output
//! (`client-output-buffer-limit pubsub 32mb 8mb 60`, here [`Limits`]).
//! Past the hard limit, or past the soft one for longer than its time, the
//! outbox is emptied and marked cut, counted, and the connection closes at
//! its next step.
//!
//! [`Service::pushes`]: crate::Service::pushes

use super::{Args, RespConn, RespService};
use crate::{After, Pushes};
use parking_lot::Mutex;
use serverlab_proto::resp::{glob, reply, Name};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Waker;
use std::time::{Duration, Instant};

/// How far a subscriber may fall behind: bytes of messages published to
/// it and not yet taken by its connection. 0: no bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Past this, it is cut off at once.
    pub hard: usize,
    /// Past this for longer than `soft_for`, it is cut off.
    pub soft: usize,
    pub soft_for: Duration,
}

impl Default for Limits {
    /// Redis's `client-output-buffer-limit pubsub 32mb 8mb 60`.
    fn default() -> Self {
        Limits {
            hard: 32 << 20,
            soft: 8 << 20,
            soft_for: Duration::from_secs(60),
        }
    }
}

/// One subscribed connection's messages not yet taken.
#[derive(Default)]
pub(crate) struct Outbox {
    q: Mutex<Queue>,
}

#[derive(Default)]
struct Queue {
    bytes: Vec<u8>,
    /// Since when it has held more than the soft limit.
    soft_since: Option<Instant>,
    /// Cut off: it takes no more, and its connection closes.
    cut: bool,
    /// Woken when a message arrives in an empty queue, or it is cut.
    waker: Option<Waker>,
}

/// Who is subscribed to what: by channel, and by pattern.
#[derive(Default)]
pub(crate) struct Registry {
    channels: HashMap<Box<[u8]>, Subscribers>,
    patterns: HashMap<Box<[u8]>, Subscribers>,
}

/// A channel's (or pattern's) subscribers, by connection id.
type Subscribers = HashMap<u64, Arc<Outbox>>;

/// The service's side: the registry, the limits, and the counts.
#[derive(Default)]
pub(crate) struct PubSub {
    reg: Mutex<Registry>,
    pub(crate) limits: Limits,
    /// Subscribers cut off for falling behind.
    cut: AtomicU64,
    /// Messages delivered (to one subscription each).
    delivered: AtomicU64,
    /// `notify-keyspace-events`' flags ([`super::notify`]).
    pub(crate) notify: std::sync::atomic::AtomicU32,
    /// MONITOR's connections: each line goes to their outboxes, bounded
    /// as a subscriber's are.
    monitors: Mutex<Subscribers>,
    /// How many there are: the one load a command pays when none is.
    monitoring: AtomicUsize,
}

/// One connection's side: what it is subscribed to (each with the order
/// it was subscribed in, for an UNSUBSCRIBE of all), and its outbox.
#[derive(Default)]
pub(crate) struct Subs {
    channels: HashMap<Box<[u8]>, u64>,
    patterns: HashMap<Box<[u8]>, u64>,
    next: u64,
    outbox: Option<Arc<Outbox>>,
    /// MONITOR ran (until RESET).
    monitor: bool,
}

impl Subs {
    /// Subscriptions, channels and patterns together.
    pub(crate) fn count(&self) -> usize {
        self.channels.len() + self.patterns.len()
    }

    /// In subscribe mode: only the pub/sub commands, PING, QUIT and RESET
    /// are served.
    pub(crate) fn active(&self) -> bool {
        self.count() > 0
    }

    /// Channels, and patterns, subscribed to.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.channels.len(), self.patterns.len())
    }

    /// MONITOR ran on it.
    pub(crate) fn monitoring(&self) -> bool {
        self.monitor
    }

    /// It is sent what others do: subscribed, or a monitor.
    pub(crate) fn listening(&self) -> bool {
        self.active() || self.monitor
    }

    fn outbox(&mut self) -> Arc<Outbox> {
        self.outbox.get_or_insert_with(Arc::default).clone()
    }
}

/// Which of the two kinds of subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Channel,
    Pattern,
}

impl Kind {
    fn mine(self, s: &mut Subs) -> &mut HashMap<Box<[u8]>, u64> {
        match self {
            Kind::Channel => &mut s.channels,
            Kind::Pattern => &mut s.patterns,
        }
    }

    fn all(self, r: &mut Registry) -> &mut HashMap<Box<[u8]>, Subscribers> {
        match self {
            Kind::Channel => &mut r.channels,
            Kind::Pattern => &mut r.patterns,
        }
    }

    fn words(self) -> (&'static [u8], &'static [u8]) {
        match self {
            Kind::Channel => (b"subscribe", b"unsubscribe"),
            Kind::Pattern => (b"psubscribe", b"punsubscribe"),
        }
    }
}

impl Registry {
    fn add(&mut self, kind: Kind, name: &[u8], id: u64, outbox: &Arc<Outbox>) {
        kind.all(self)
            .entry(name.into())
            .or_default()
            .insert(id, outbox.clone());
    }

    fn remove(&mut self, kind: Kind, name: &[u8], id: u64) {
        let all = kind.all(self);
        if let Some(subs) = all.get_mut(name) {
            subs.remove(&id);
            if subs.is_empty() {
                all.remove(name);
            }
        }
    }
}

impl PubSub {
    /// Subscribers cut off so far for falling behind.
    pub(crate) fn cut_count(&self) -> u64 {
        self.cut.load(Ordering::Relaxed)
    }

    /// Messages delivered so far (one per subscription reached).
    pub(crate) fn delivered(&self) -> u64 {
        self.delivered.load(Ordering::Relaxed)
    }

    /// Channels with subscribers, and patterns subscribed to.
    pub(crate) fn sizes(&self) -> (usize, usize) {
        let r = self.reg.lock();
        (r.channels.len(), r.patterns.len())
    }

    /// PUBLISH: delivers `msg` to `channel`'s subscribers, then to those of
    /// every pattern it matches; how many subscriptions it reached.
    ///
    /// The subscribers to wake are woken after the registry's lock is
    /// released: a wake can be a system call (a socket pair's write, an
    /// eventfd), and ten thousand of them under the lock would hold up
    /// every other publish, subscription and close meanwhile.
    pub(crate) fn publish(&self, channel: &[u8], msg: &[u8]) -> usize {
        let mut wake = Vec::new();
        let n = self.publish_locked(channel, msg, &mut wake);
        wake.into_iter().for_each(Waker::wake);
        n
    }

    fn publish_locked(&self, channel: &[u8], msg: &[u8], wake: &mut Vec<Waker>) -> usize {
        let reg = self.reg.lock();
        let mut n = 0;
        if let Some(subs) = reg.channels.get(channel) {
            let mut m = Vec::with_capacity(channel.len() + msg.len() + 40);
            reply::array(&mut m, 3);
            reply::bulk(&mut m, b"message");
            reply::bulk(&mut m, channel);
            reply::bulk(&mut m, msg);
            n += self.deliver(subs, &m, wake);
        }
        for (pattern, subs) in &reg.patterns {
            if glob::matches_exact(pattern, channel) {
                let mut m = Vec::with_capacity(pattern.len() + channel.len() + msg.len() + 50);
                reply::array(&mut m, 4);
                reply::bulk(&mut m, b"pmessage");
                reply::bulk(&mut m, pattern);
                reply::bulk(&mut m, channel);
                reply::bulk(&mut m, msg);
                n += self.deliver(subs, &m, wake);
            }
        }
        self.delivered.fetch_add(n as u64, Ordering::Relaxed);
        n
    }

    /// Appends `m` to each subscriber's outbox; the wakers of those whose
    /// outbox was empty (or who were cut off) go to `wake`.
    fn deliver(&self, subs: &Subscribers, m: &[u8], wake: &mut Vec<Waker>) -> usize {
        let now = Instant::now();
        for outbox in subs.values() {
            let mut q = outbox.q.lock();
            if q.cut {
                continue;
            }
            let was_empty = q.bytes.is_empty();
            q.bytes.extend_from_slice(m);
            if self.behind(&mut q, now) {
                q.cut = true;
                q.bytes = Vec::new();
                self.cut.fetch_add(1, Ordering::Relaxed);
            } else if !was_empty {
                continue;
            }
            if let Some(w) = &q.waker {
                wake.push(w.clone());
            }
        }
        subs.len()
    }

    /// Whether a queue is past the limits.
    fn behind(&self, q: &mut Queue, now: Instant) -> bool {
        let (l, held) = (&self.limits, q.bytes.len());
        if l.hard > 0 && held > l.hard {
            return true;
        }
        if l.soft == 0 || held <= l.soft {
            q.soft_since = None;
            return false;
        }
        let since = *q.soft_since.get_or_insert(now);
        now.duration_since(since) > l.soft_for
    }

    /// What a connection was sent (see [`crate::Service::pushes`]).
    pub(crate) fn pushes(
        &self,
        subs: &Subs,
        out: Option<&mut Vec<u8>>,
        waker: Option<&Waker>,
    ) -> Pushes {
        let Some(outbox) = subs.outbox.as_ref() else {
            return Pushes::None;
        };
        let mut q = outbox.q.lock();
        if q.cut {
            return Pushes::Cut;
        }
        if let Some(out) = out {
            take(&mut q, out);
            if subs.listening() {
                if let Some(w) = waker.filter(|w| !q.waker.as_ref().is_some_and(|k| k.will_wake(w)))
                {
                    q.waker = Some(w.clone());
                }
            }
        }
        if subs.listening() {
            Pushes::Listening
        } else {
            Pushes::None
        }
    }

    /// Appends a connection's waiting messages to `out`; false if it is
    /// cut off.
    pub(crate) fn drain(&self, subs: &Subs, out: &mut Vec<u8>) -> bool {
        match subs.outbox.as_ref() {
            Some(outbox) => {
                let mut q = outbox.q.lock();
                take(&mut q, out);
                !q.cut
            }
            None => true,
        }
    }

    /// SUBSCRIBE or PSUBSCRIBE: each name in turn, each answered with the
    /// subscriptions' count after it.
    fn subscribe<'a>(
        &self,
        kind: Kind,
        conn: &mut RespConn,
        names: impl Iterator<Item = &'a [u8]>,
        out: &mut Vec<u8>,
    ) {
        let outbox = conn.subs.outbox();
        for name in names {
            let subs = &mut conn.subs;
            if !kind.mine(subs).contains_key(name) {
                let seq = subs.next;
                subs.next += 1;
                kind.mine(subs).insert(name.into(), seq);
                self.reg.lock().add(kind, name, conn.id, &outbox);
            }
            confirm(out, kind.words().0, Some(name), conn.subs.count());
        }
    }

    /// UNSUBSCRIBE or PUNSUBSCRIBE: the names given, or (none given)
    /// every one of the kind, in the order subscribed; with none at all,
    /// one reply with a nil name. Messages published before a name is
    /// dropped come before its reply.
    fn unsubscribe(&self, kind: Kind, conn: &mut RespConn, names: Vec<&[u8]>, out: &mut Vec<u8>) {
        let names: Vec<Box<[u8]>> = if names.is_empty() {
            let mut mine: Vec<_> = kind.mine(&mut conn.subs).iter().collect();
            mine.sort_by_key(|(_, seq)| **seq);
            mine.into_iter().map(|(n, _)| n.clone()).collect()
        } else {
            names.into_iter().map(Into::into).collect()
        };
        if names.is_empty() {
            return confirm(out, kind.words().1, None, conn.subs.count());
        }
        for name in names {
            if kind.mine(&mut conn.subs).remove(&name).is_some() {
                self.reg.lock().remove(kind, &name, conn.id);
                self.drain(&conn.subs, out);
            }
            confirm(out, kind.words().1, Some(&name), conn.subs.count());
        }
    }

    /// Whether any connection is a monitor (one relaxed load).
    pub(crate) fn monitored(&self) -> bool {
        self.monitoring.load(Ordering::Relaxed) > 0
    }

    /// MONITOR: the connection is sent every command run from now on
    /// (false: it already was).
    pub(crate) fn monitor(&self, id: u64, subs: &mut Subs) -> bool {
        if subs.monitor {
            return false;
        }
        subs.monitor = true;
        let outbox = subs.outbox();
        self.monitors.lock().insert(id, outbox);
        self.monitoring.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// A command's line, to every monitor (woken after the lock is
    /// released, as a publish's subscribers are).
    pub(crate) fn feed(&self, line: &[u8]) {
        let mut wake = Vec::new();
        self.deliver(&self.monitors.lock(), line, &mut wake);
        wake.into_iter().for_each(Waker::wake);
    }

    /// Drops every subscription of a connection (RESET, or it closed),
    /// its monitor, and what its outbox holds.
    pub(crate) fn forget(&self, id: u64, subs: &mut Subs) {
        if subs.active() {
            let mut reg = self.reg.lock();
            for (n, _) in subs.channels.drain() {
                reg.remove(Kind::Channel, &n, id);
            }
            for (n, _) in subs.patterns.drain() {
                reg.remove(Kind::Pattern, &n, id);
            }
        }
        if std::mem::take(&mut subs.monitor) {
            self.monitors.lock().remove(&id);
            self.monitoring.fetch_sub(1, Ordering::Relaxed);
        }
        if let Some(outbox) = subs.outbox.take() {
            let mut q = outbox.q.lock();
            q.bytes = Vec::new();
            q.waker = None;
        }
    }

    /// PUBSUB CHANNELS, NUMSUB, NUMPAT, SHARDCHANNELS, SHARDNUMSUB, HELP
    /// (the subcommand and its arity checked when parsed).
    fn introspect(&self, a: &Args, out: &mut Vec<u8>) {
        let sub = a.arg(1).to_ascii_lowercase();
        match &sub[..] {
            b"channels" | b"shardchannels" if a.count() > 3 => {
                let msg = format!(
                    "ERR unknown subcommand or wrong number of arguments for '{}'. Try PUBSUB HELP.",
                    super::c_str(a.arg(1), 128)
                );
                reply::error(out, msg.as_bytes())
            }
            b"channels" => {
                let reg = self.reg.lock();
                let pattern = a.try_arg(2);
                let names: Vec<&[u8]> = reg
                    .channels
                    .keys()
                    .map(|k| &k[..])
                    .filter(|k| pattern.is_none_or(|p| glob::matches_exact(p, k)))
                    .collect();
                reply::array(out, names.len());
                names.iter().for_each(|n| reply::bulk(out, n));
            }
            b"numsub" => {
                let reg = self.reg.lock();
                reply::array(out, (a.count() - 2) * 2);
                for ch in a.from(2) {
                    reply::bulk(out, ch);
                    reply::int(out, reg.channels.get(ch).map_or(0, |s| s.len()) as i64);
                }
            }
            b"numpat" => reply::int(out, self.reg.lock().patterns.len() as i64),
            // No shard channels are served: none has subscribers.
            b"shardchannels" => reply::array(out, 0),
            b"shardnumsub" => {
                reply::array(out, (a.count() - 2) * 2);
                for ch in a.from(2) {
                    reply::bulk(out, ch);
                    reply::int(out, 0);
                }
            }
            _ => help(out),
        }
    }
}

/// Moves a queue's messages to `out`.
fn take(q: &mut Queue, out: &mut Vec<u8>) {
    if !q.bytes.is_empty() {
        out.extend_from_slice(&q.bytes);
        q.bytes.clear();
        if q.bytes.capacity() > 64 * 1024 {
            q.bytes = Vec::new();
        }
        q.soft_since = None;
    }
}

/// `*3 $<word> $<name> :<count>`; a nil name where there is none.
fn confirm(out: &mut Vec<u8>, word: &[u8], name: Option<&[u8]>, count: usize) {
    reply::array(out, 3);
    reply::bulk(out, word);
    match name {
        Some(n) => reply::bulk(out, n),
        None => reply::null(out),
    }
    reply::int(out, count as i64);
}

/// PUBSUB HELP, as Redis 7.0 words it.
fn help(out: &mut Vec<u8>) {
    const LINES: [&str; 14] = [
        "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a <pattern> (default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level channel(s)",
        "HELP",
        "    Prints this help.",
    ];
    reply::array(out, LINES.len());
    LINES.iter().for_each(|l| reply::simple(out, l.as_bytes()));
}

/// The error a subscribed connection's command other than the pub/sub
/// ones, PING, QUIT and RESET gets: `full` is its name, with its
/// subcommand for a container (`client|id`).
pub(crate) fn refused(full: &str, exec: bool, out: &mut Vec<u8>) {
    let why = format!(
        "Can't execute '{full}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
    );
    let msg = if exec {
        format!("EXECABORT Transaction discarded because of: {why}")
    } else {
        format!("ERR {why}")
    };
    reply::error(out, msg.as_bytes());
}

/// PING in subscribe mode: a message, `pong` and the argument (empty if
/// none), as Redis answers it over RESP2.
pub(crate) fn pong(a: &Args, m: Option<serverlab_proto::resp::Span>, out: &mut Vec<u8>) {
    reply::array(out, 2);
    reply::bulk(out, b"pong");
    reply::bulk(out, m.map_or(&b""[..], |m| a.get(m)));
}

/// Whether `name` is served here (its row's family).
pub(crate) fn is_pubsub(name: Name) -> bool {
    name.facts().family == serverlab_proto::resp::name::Family::PubSub
}

/// Whether a subscribed connection may run `name`.
pub(crate) fn allowed(name: Name) -> bool {
    use Name::*;
    matches!(
        name,
        Subscribe | Unsubscribe | PSubscribe | PUnsubscribe | Ping | Quit | Reset
    )
}

/// A command's full name as Redis names it in errors: a container's with
/// its subcommand (`client|id`), in lower case.
pub(crate) fn full_name(name: Name, a: &Args) -> String {
    use Name::*;
    let f = name.facts().name;
    match name {
        Client | Config | Command | Object | Memory | Function | PubSub if a.count() > 1 => {
            format!(
                "{f}|{}",
                String::from_utf8_lossy(&a.arg(1).to_ascii_lowercase())
            )
        }
        _ => f.to_owned(),
    }
}

/// Runs a command of the pub/sub family and appends its reply.
pub(crate) fn run(
    svc: &RespService,
    conn: &mut RespConn,
    name: Name,
    input: &[u8],
    out: &mut Vec<u8>,
) -> After {
    let ps = &svc.pubsub;
    let framer = std::mem::take(&mut conn.framer);
    let a = Args {
        framer: &framer,
        input,
    };
    match name {
        Name::Subscribe => ps.subscribe(Kind::Channel, conn, a.from(1), out),
        Name::PSubscribe => ps.subscribe(Kind::Pattern, conn, a.from(1), out),
        Name::Unsubscribe => ps.unsubscribe(Kind::Channel, conn, a.from(1).collect(), out),
        Name::PUnsubscribe => ps.unsubscribe(Kind::Pattern, conn, a.from(1).collect(), out),
        Name::Publish => reply::int(out, ps.publish(a.arg(1), a.arg(2)) as i64),
        Name::PubSub => ps.introspect(&a, out),
        _ => unreachable!("{name:?} is no pub/sub command"),
    }
    conn.framer = framer;
    After::Continue
}

#[cfg(test)]
mod tests;
