//! When the event loop scans its connections' deadlines: at most once per
//! tick, however often it wakes. A busy loop wakes for every batch of
//! events; scanning every connection each time would cost work in
//! proportion to the connections open, idle ones included, per request.

use std::time::{Duration, Instant};

pub(crate) struct Ticker {
    every: Duration,
    next: Instant,
}

impl Ticker {
    /// The first scan falls due one tick after `now`.
    pub(crate) fn new(every: Duration, now: Instant) -> Self {
        Ticker {
            every,
            next: now + every,
        }
    }

    /// How long the loop may wait for events before a scan is due.
    pub(crate) fn wait(&self, now: Instant) -> Duration {
        self.next.saturating_duration_since(now)
    }

    /// Whether a scan is due at `now`; if so, the next falls due one tick
    /// later.
    pub(crate) fn due(&mut self, now: Instant) -> bool {
        if now < self.next {
            return false;
        }
        self.next = now + self.every;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_one_scan_per_tick() {
        let tick = Duration::from_millis(100);
        let t0 = Instant::now();
        let mut t = Ticker::new(tick, t0);
        assert_eq!(t.wait(t0), tick);
        // Many wakeups within the tick: no scan.
        for ms in [0, 1, 50, 99] {
            assert!(!t.due(t0 + Duration::from_millis(ms)), "at {ms} ms");
        }
        assert_eq!(
            t.wait(t0 + Duration::from_millis(60)),
            Duration::from_millis(40)
        );
        assert!(t.due(t0 + tick));
        assert!(!t.due(t0 + tick), "once");
        // A late wakeup scans once, and the next tick counts from it.
        let late = t0 + Duration::from_millis(350);
        assert_eq!(t.wait(late), Duration::ZERO);
        assert!(t.due(late));
        assert!(!t.due(late + Duration::from_millis(99)));
        assert!(t.due(late + tick));
    }
}
