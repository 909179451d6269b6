//! When paced slots want the loop's attention — to send a request that
//! is due, or to open the connection of one — and the kernel timer that
//! wakes the loop for the earliest of them.
//!
//! The timer has the kernel's resolution. epoll's own timeout counts
//! whole milliseconds (mio rounds a fraction up) and comes late by the
//! thread's timer slack besides: an open loop that slept on it would send
//! requests up to a millisecond or two after they were due, and count
//! that in their latency. A timerfd fires within microseconds, without
//! polling for it.

use super::token::TIMER;
use mio::{Interest, Poll};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::os::fd::{AsFd, AsRawFd};
use std::time::{Duration, Instant};

/// The wake-ups of one loop's slots.
pub(super) struct Wakeups {
    /// (when, slot), earliest first. An entry whose slot has since been
    /// given another time is stale, and skipped.
    queue: BinaryHeap<Reverse<(Instant, usize)>>,
    /// Each slot's wake-up in the queue, if it has one.
    scheduled: Vec<Option<Instant>>,
    /// The kernel timer; None: it could not be made or set (the loop then
    /// wakes on epoll's timeout).
    timer: Option<TimerFd>,
    /// What `timer` is set to.
    timer_at: Option<Instant>,
}

impl Wakeups {
    /// Wake-ups for `slots` slots, with a kernel timer registered with
    /// `poll` (under [`TIMER`]).
    pub(super) fn new(poll: &Poll, slots: usize) -> Self {
        Wakeups {
            queue: BinaryHeap::new(),
            scheduled: vec![None; slots],
            timer: kernel_timer(poll),
            timer_at: None,
        }
    }

    /// Wake slot `i` at `at` (a time it is already scheduled for is not
    /// queued again).
    pub(super) fn schedule(&mut self, i: usize, at: Instant) {
        if self.scheduled[i] != Some(at) {
            self.scheduled[i] = Some(at);
            self.queue.push(Reverse((at, i)));
        }
    }

    /// The next slot whose wake-up has come by `now`, taken off the queue.
    pub(super) fn next_due(&mut self, now: Instant) -> Option<usize> {
        while let Some(&Reverse((at, i))) = self.queue.peek() {
            if at > now {
                return None;
            }
            self.queue.pop();
            if self.scheduled[i] == Some(at) {
                self.scheduled[i] = None;
                return Some(i);
            }
        }
        None
    }

    /// Forget every wake-up (the window has closed).
    pub(super) fn clear(&mut self) {
        self.queue.clear();
        self.scheduled.fill(None);
    }

    /// When the loop must wake at the latest, given that it would wake at
    /// `otherwise`: with a kernel timer (set here to the earliest wake-up)
    /// `otherwise`, as the timer's event wakes it; without one, the
    /// earliest wake-up if sooner.
    pub(super) fn wake_by(&mut self, now: Instant, otherwise: Instant) -> Instant {
        let earliest = self.queue.peek().map(|Reverse((at, _))| *at);
        self.set_timer(earliest, now);
        match (&self.timer, earliest) {
            (None, Some(at)) => otherwise.min(at),
            _ => otherwise,
        }
    }

    /// Set the kernel timer to `at` (after `now`), or clear it.
    fn set_timer(&mut self, at: Option<Instant>, now: Instant) {
        let Some(timer) = self.timer.as_ref() else {
            return;
        };
        if at == self.timer_at {
            return;
        }
        let set = match at {
            // A zero expiration would disarm it: at least a nanosecond.
            Some(at) => {
                let after = at
                    .saturating_duration_since(now)
                    .max(Duration::from_nanos(1));
                let when = Expiration::OneShot(TimeSpec::from_duration(after));
                timer.set(when, TimerSetTimeFlags::empty())
            }
            None => timer.unset(),
        };
        // A timer that cannot be set is a loop that cannot keep time:
        // fall back to epoll's timeout.
        if set.is_err() {
            self.timer = None;
        }
        self.timer_at = at;
    }
}

/// A timerfd registered with `poll`; None if it could not be made.
fn kernel_timer(poll: &Poll) -> Option<TimerFd> {
    let flags = TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC;
    let timer = TimerFd::new(ClockId::CLOCK_MONOTONIC, flags).ok()?;
    let fd = timer.as_fd().as_raw_fd();
    poll.registry()
        .register(&mut mio::unix::SourceFd(&fd), TIMER, Interest::READABLE)
        .ok()?;
    Some(timer)
}
