//! When a client's requests may go out: the load model. Closed loop, a
//! connection sends as soon as it has room (up to `pipeline` requests in
//! flight); throttled, it also waits for its slot, one every 1/throttle s
//! from the start. The same for every protocol: a protocol says what to
//! send, never when.

use serde::Serialize;
use std::time::{Duration, Instant};

/// The load-model settings every protocol's configuration carries
/// (flattened into its JSON `config`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pacing {
    /// Requests in flight per connection (1: lock-step).
    pub pipeline: usize,
    /// Requests per second per connection; 0: as fast as replies come.
    pub throttle: f64,
}

impl Default for Pacing {
    fn default() -> Self {
        Pacing {
            pipeline: 1,
            throttle: 0.0,
        }
    }
}

impl Pacing {
    /// The load model as results name it.
    pub fn model(&self) -> &'static str {
        if self.throttle > 0.0 {
            "closed-loop, throttled"
        } else {
            "closed-loop"
        }
    }
}

/// One client's pacing at run time.
#[derive(Debug, Clone)]
pub(crate) struct Pacer {
    /// One request per `interval`, counted from `start`; None: no slots.
    interval: Option<Duration>,
    start: Instant,
    issued: u32,
}

impl Pacer {
    pub(crate) fn new(pacing: &Pacing, start: Instant) -> Self {
        Pacer {
            interval: (pacing.throttle > 0.0)
                .then(|| Duration::from_secs_f64(1.0 / pacing.throttle)),
            start,
            issued: 0,
        }
    }

    /// Slots count from `start` (set once every connection is open).
    pub(crate) fn restart(&mut self, start: Instant) {
        self.start = start;
        self.issued = 0;
    }

    /// When the next request may go, if not as soon as there is room.
    pub(crate) fn due(&self) -> Option<Instant> {
        self.interval.map(|iv| self.start + iv * self.issued)
    }

    /// A request went out.
    pub(crate) fn issued(&mut self) {
        self.issued = self.issued.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttle_slots_count_from_the_start() {
        let t0 = Instant::now();
        let free = Pacer::new(&Pacing::default(), t0);
        assert_eq!(free.due(), None);
        let mut p = Pacer::new(
            &Pacing {
                pipeline: 1,
                throttle: 100.0,
            },
            t0,
        );
        assert_eq!(p.due(), Some(t0));
        p.issued();
        p.issued();
        assert_eq!(p.due(), Some(t0 + Duration::from_millis(20)));
        let t1 = t0 + Duration::from_secs(1);
        p.restart(t1);
        assert_eq!(p.due(), Some(t1));
    }
}
