//! One event loop: the slots of one thread, driven until every one is
//! finished — readiness events from epoll, paced slots' wake-ups, the
//! window's deadline, and a periodic sweep for timeouts.

use super::conversation::{Conversation, Failure};
use super::poll::Rule;
use super::slot::Slot;
use super::spin::{Spin, Spun};
use super::token;
use super::wakeups::Wakeups;
use super::Options;
use crate::Progress;
use mio::{Events, Poll};
use std::io;
use std::time::{Duration, Instant};

/// How often timeouts are looked for: they are seconds long, so a sweep
/// over every slot this often costs nothing per request.
const SWEEP: Duration = Duration::from_millis(50);
/// How long replies in flight may take after an interrupted run's window
/// closed.
pub(super) const INTERRUPT_DRAIN: Duration = Duration::from_secs(1);

/// Run `slots` on this thread until every one is finished, recording
/// replies into `sink`, polling for replies as `rule` allows. A failure
/// of the loop itself fails every connection. Returns what its polling
/// came to (the time spent polling in vain, and when it was allowed).
pub(super) fn run_on_this_thread<C: Conversation>(
    slots: &mut [Slot<C>],
    opts: &Options,
    progress: &Progress,
    sink: &mut C::Sink,
    rule: Rule,
) -> Spun {
    let poll = match Poll::new() {
        Ok(p) => p,
        Err(e) => {
            fail_all(slots, &e);
            return Spun::default();
        }
    };
    let wakeups = Wakeups::new(&poll, slots.len());
    let mut lp = EventLoop {
        poll,
        slots,
        opts,
        sink,
        wakeups,
        live: 0,
        waiting: 0,
        stopped: false,
        drain_by: None,
        spin: Spin::new(rule, Instant::now()),
        backlog: Vec::new(),
    };
    match lp.run_until_finished(progress) {
        Ok(()) => lp.spin.spun(Instant::now()),
        Err(e) => {
            fail_all(lp.slots, &e);
            Spun::default()
        }
    }
}

/// Close every unfinished slot's connection with `e` and finish it.
fn fail_all<C: Conversation>(slots: &mut [Slot<C>], e: &io::Error) {
    let now = Instant::now();
    for s in slots.iter_mut().filter(|s| s.finished_at.is_none()) {
        s.close();
        s.client
            .failed(Failure::Io(io::Error::new(e.kind(), e.to_string())), now);
        s.finished_at = Some(now);
    }
}

pub(super) struct EventLoop<'a, C: Conversation> {
    pub(super) poll: Poll,
    pub(super) slots: &'a mut [Slot<C>],
    pub(super) opts: &'a Options,
    pub(super) sink: &'a mut C::Sink,
    pub(super) wakeups: Wakeups,
    /// Slots not finished.
    pub(super) live: usize,
    /// Slots connecting or waiting for replies: while any are, the loop
    /// polls briefly before sleeping ([`Spin`]).
    pub(super) waiting: usize,
    /// The window has closed.
    pub(super) stopped: bool,
    /// Replies in flight fail after this (and it is this long after the
    /// window closed).
    pub(super) drain_by: Option<(Instant, Duration)>,
    spin: Spin,
    /// Slots whose last read stopped with more to read (and whether
    /// their peer had hung up): read again on the next turn, whatever
    /// epoll says.
    backlog: Vec<(usize, bool)>,
}

impl<C: Conversation> EventLoop<'_, C> {
    fn run_until_finished(&mut self, progress: &Progress) -> io::Result<()> {
        self.start(Instant::now())?;
        let mut events = Events::with_capacity(1024);
        let mut next_sweep = Instant::now() + SWEEP;
        loop {
            let now = Instant::now();
            if !self.stopped {
                self.close_window(now, progress);
            }
            if now >= next_sweep {
                self.sweep(now);
                next_sweep = now + SWEEP;
            }
            self.fire_wakeups(now);
            if self.live == 0 {
                return Ok(());
            }
            let polling = self.spin.polling(self.waiting > 0, now);
            let timeout = if self.backlog.is_empty() {
                self.timeout(now, next_sweep, polling)
            } else {
                Duration::ZERO
            };
            match self.poll.poll(&mut events, Some(timeout)) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => other?,
            }
            let polled_at = Instant::now();
            if events.is_empty() {
                self.spin.empty(polling, now);
            } else {
                self.spin.events();
                self.handle(&events, polled_at, progress);
            }
            self.read_backlog(progress);
        }
    }

    /// Read on where the last turn stopped with more to read.
    fn read_backlog(&mut self, progress: &Progress) {
        for (i, hung_up) in std::mem::take(&mut self.backlog) {
            let slot = &self.slots[i];
            if slot.stream.is_none() || slot.connecting {
                continue;
            }
            let now = Instant::now();
            if self.read(i, hung_up, now, progress) {
                self.pump(i, now);
            }
            self.settle(i, now);
        }
    }

    /// Read slot `i`'s replies; false if its connection failed.
    fn read(&mut self, i: usize, hung_up: bool, now: Instant, progress: &Progress) -> bool {
        let slot = &mut self.slots[i];
        match slot.receive(now, hung_up, self.opts.max_reply, self.sink) {
            Ok((n, more)) => {
                progress.add(n);
                if more && !self.backlog.iter().any(|&(b, _)| b == i) {
                    self.backlog.push((i, hung_up));
                }
                true
            }
            Err(f) => {
                self.fail(i, f, now);
                false
            }
        }
    }

    /// Close the window at its deadline, or at once when the run is
    /// interrupted (then replies in flight drain for [`INTERRUPT_DRAIN`]
    /// at most).
    fn close_window(&mut self, now: Instant, progress: &Progress) {
        let drain = self.opts.drain_timeout;
        if progress.interrupted() {
            let brief = drain.map_or(INTERRUPT_DRAIN, |d| d.min(INTERRUPT_DRAIN));
            self.stop(now, Some(brief));
        } else if self.opts.deadline.is_some_and(|d| now >= d) {
            self.stop(now, drain);
        }
    }

    /// Register the connections opened before the loop and let them send;
    /// start the others.
    fn start(&mut self, now: Instant) -> io::Result<()> {
        self.live = self.slots.len();
        for i in 0..self.slots.len() {
            if self.slots[i].register(self.poll.registry(), i)? {
                if let Some(took) = self.slots[i].handshook.take() {
                    self.slots[i].client.handshaken(took, self.sink);
                }
                self.pump(i, now);
            }
            self.settle(i, now);
        }
        Ok(())
    }

    /// Each event of a batch, for the connection it names (if it is
    /// still that slot's).
    fn handle(&mut self, events: &Events, polled_at: Instant, progress: &Progress) {
        for (k, ev) in events.iter().enumerate() {
            // Each event's replies and the requests they free are
            // stamped when it is handled, not when the batch came.
            let now = if k == 0 { polled_at } else { Instant::now() };
            let named = token::decode(ev.token());
            let Some(slot) = self.slots.get(named.index) else {
                continue;
            };
            if slot.stream.is_none() || !named.is_of(slot.generation) {
                continue;
            }
            self.event(named.index, ev, now, progress);
            self.settle(named.index, now);
        }
    }

    /// How long to wait for events: not at all while polling (see
    /// [`Spin`]: the loop comes round often enough to fire paced slots
    /// itself, and the timer is left alone — at high rates that spares a
    /// system call per request); else until the next sweep or the
    /// window's end, while the kernel timer, set to the earliest paced
    /// slot, wakes the loop when that slot is due.
    fn timeout(&mut self, now: Instant, next_sweep: Instant, polling: bool) -> Duration {
        if polling {
            return Duration::ZERO;
        }
        let mut wake = next_sweep;
        if let (false, Some(d)) = (self.stopped, self.opts.deadline) {
            wake = wake.min(d);
        }
        self.wakeups
            .wake_by(now, wake)
            .saturating_duration_since(now)
    }

    /// A readiness event on slot `i`'s connection.
    fn event(&mut self, i: usize, ev: &mio::event::Event, now: Instant, progress: &Progress) {
        if self.slots[i].connecting {
            return self.connected(i, ev, now);
        }
        let slot = &mut self.slots[i];
        if ev.is_writable() {
            if let Err(e) = slot.flush() {
                return self.fail(i, Failure::Io(e), now);
            }
        }
        let hung_up = ev.is_read_closed() || ev.is_error();
        if (ev.is_readable() || hung_up) && !self.read(i, hung_up, now, progress) {
            return;
        }
        self.pump(i, now);
    }

    /// An event on a connection being opened: it opened (and, under TLS,
    /// finished its handshake), or it failed.
    fn connected(&mut self, i: usize, ev: &mio::event::Event, now: Instant) {
        let slot = &mut self.slots[i];
        let Some(stream) = slot.stream.as_mut() else {
            return;
        };
        if !slot.handshaking {
            match stream.take_error() {
                Ok(None) if ev.is_writable() => {}
                Ok(None) => return,
                Ok(Some(e)) | Err(e) => return self.connect_failed(i, e, now),
            }
            if let Err(e) = stream.set_nodelay(true) {
                return self.fail(i, Failure::Io(e), now);
            }
            slot.handshaking = stream.handshaking();
        }
        if slot.handshaking {
            match stream.handshake() {
                Ok(false) => return,
                Ok(true) => {
                    slot.handshaking = false;
                    let took = now.saturating_duration_since(slot.opened_at);
                    slot.client.handshaken(took, self.sink);
                }
                Err(e) => return self.connect_failed(i, e, now),
            }
        }
        self.slots[i].connecting = false;
        self.pump(i, now);
    }

    fn connect_failed(&mut self, i: usize, source: io::Error, now: Instant) {
        let addr = self.opts.addr.clone();
        self.fail(i, Failure::Connect { addr, source }, now)
    }

    /// Let slot `i` send, unless the window has closed.
    pub(super) fn pump(&mut self, i: usize, now: Instant) {
        let slot = &mut self.slots[i];
        if self.stopped || slot.connecting || slot.stream.is_none() {
            return;
        }
        if let Err(e) = slot.pump(now) {
            return self.fail(i, Failure::Io(e), now);
        }
        if let Some(due) = self.slots[i].client.next_due() {
            self.wakeups.schedule(i, due);
        }
    }

    pub(super) fn fail(&mut self, i: usize, failure: Failure, now: Instant) {
        let slot = &mut self.slots[i];
        slot.close();
        slot.client.failed(failure, now);
    }

    /// Paced slots whose time has come (to send, or to connect), all
    /// stamped with the same `now`.
    fn fire_wakeups(&mut self, now: Instant) {
        while let Some(i) = self.wakeups.next_due(now) {
            self.pump(i, now);
            self.settle(i, now);
        }
    }
}
