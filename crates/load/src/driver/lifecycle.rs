//! A connection's life in the event loop: after anything happened on a
//! slot, close a connection that has done its work, open the next one or
//! finish the slot; end the window; fail connections that took too long
//! to open or to answer.

use super::conversation::{Conversation, Failure};
use super::event_loop::EventLoop;
use std::io;
use std::time::{Duration, Instant};

impl<C: Conversation> EventLoop<'_, C> {
    /// After anything happened on slot `i`: close a connection that has
    /// done its work, open the next one, or finish the slot; keep the
    /// counts of live and waiting slots right.
    pub(super) fn settle(&mut self, i: usize, now: Instant) {
        while self.slots[i].finished_at.is_none() {
            if self.slots[i].stream.is_some() && !self.may_close(i) {
                break;
            }
            self.slots[i].close();
            if !self.reconnect(i, now) {
                break;
            }
        }
        self.count_waiting(i);
    }

    /// Whether slot `i`'s connection is to close: idle, with its work
    /// done or the window closed; or still opening when the window closed.
    fn may_close(&self, i: usize) -> bool {
        let slot = &self.slots[i];
        let idle = slot.client.in_flight() == 0 && !slot.connecting;
        (idle && (self.stopped || slot.client.connection_done()))
            || (self.stopped && slot.connecting)
    }

    /// Slot `i` has no connection: open its next one now, schedule it for
    /// later, or finish the slot. True: the open failed at once, so try
    /// again (the conversation has heard of the failure).
    fn reconnect(&mut self, i: usize, now: Instant) -> bool {
        let stopped = self.stopped;
        let slot = &mut self.slots[i];
        if let Some(at) = slot.client.connect_at().filter(|&t| t > now && !stopped) {
            self.wakeups.schedule(i, at);
            return false;
        }
        if stopped || !slot.client.connect(now) {
            slot.finished_at = Some(now);
            self.live -= 1;
            return false;
        }
        let registry = self.poll.registry();
        match slot.open(&self.opts.addr, registry, i, now) {
            Ok(()) => false,
            Err(source) => {
                let addr = self.opts.addr.clone();
                self.fail(i, Failure::Connect { addr, source }, now);
                true
            }
        }
    }

    /// Count slot `i` among the waiting while it is connecting or has
    /// requests in flight.
    fn count_waiting(&mut self, i: usize) {
        let slot = &mut self.slots[i];
        let busy = slot.finished_at.is_none() && (slot.connecting || slot.client.in_flight() > 0);
        if busy != slot.busy {
            slot.busy = busy;
            if busy {
                self.waiting += 1;
            } else {
                self.waiting -= 1;
            }
        }
    }

    /// The window has closed: nothing more is sent or opened; slots finish
    /// as their last replies come.
    /// Replies still in flight `drain` later fail.
    pub(super) fn stop(&mut self, now: Instant, drain: Option<Duration>) {
        self.stopped = true;
        self.drain_by = drain.map(|d| (now + d, d));
        self.wakeups.clear();
        for i in 0..self.slots.len() {
            let idle = self.slots[i].client.in_flight() == 0;
            self.slots[i].client.window_closed(now, self.sink);
            // A connection that starts waiting only now (a subscriber
            // awaiting what was published before the end) is timed from
            // now, not from the last message it heard.
            if idle && self.slots[i].client.in_flight() > 0 {
                self.slots[i].progress_at = now;
            }
            if self.slots[i].finished_at.is_none() {
                self.slots[i].stopped_at = Some(now);
                self.settle(i, now);
            }
        }
    }

    /// Fail connections that took too long to open or to answer.
    pub(super) fn sweep(&mut self, now: Instant) {
        let drained = self
            .drain_by
            .and_then(|(by, drain)| (now >= by).then_some(drain));
        for i in 0..self.slots.len() {
            if let Some(f) = self.overdue(i, now, drained) {
                self.fail(i, f, now);
                self.settle(i, now);
            } else if self.stopped && self.slots[i].finished_at.is_none() {
                // A conversation may stop waiting without an event on its
                // connection (a subscriber whose messages all came while
                // others' publishers still stopped): it closes here.
                self.settle(i, now);
            }
        }
    }

    /// Why slot `i`'s connection has taken too long, if it has: to open,
    /// to answer, or to answer within the drain (`drained`: its length,
    /// once it is over).
    fn overdue(&self, i: usize, now: Instant, drained: Option<Duration>) -> Option<Failure> {
        let s = &self.slots[i];
        if s.finished_at.is_some() || s.stream.is_none() {
            return None;
        }
        if s.connecting {
            return (now - s.opened_at >= self.opts.connect_timeout).then(|| Failure::Connect {
                addr: self.opts.addr.clone(),
                source: io::ErrorKind::TimedOut.into(),
            });
        }
        if s.client.in_flight() == 0 {
            return None;
        }
        if let Some(drain) = drained {
            return Some(Failure::Stalled(format!(
                "no reply within {} s after the end of the run (is the server stuck? if it is \
                 only slow, pass a longer --reply-timeout)",
                drain.as_secs_f64()
            )));
        }
        self.opts
            .reply_timeout
            .filter(|&t| now - s.progress_at >= t)
            .map(|t| Failure::Stalled(super::no_reply_within(t)))
    }
}
