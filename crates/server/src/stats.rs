//! Connection statistics kept by every strategy.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Counts are `Relaxed`: statistics, ordered with nothing else. `active`
/// is also the `--max-connections` gate; a race there can admit one
/// connection over the limit for an instant, never unboundedly many.
pub struct ConnStats {
    started: Instant,
    accepted: AtomicU64,
    closed: AtomicU64,
    refused: AtomicU64,
    peak: AtomicU64,
    write_timeouts: AtomicU64,
}

impl Default for ConnStats {
    fn default() -> Self {
        ConnStats {
            started: Instant::now(),
            accepted: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            write_timeouts: AtomicU64::new(0),
        }
    }
}

impl ConnStats {
    pub fn active(&self) -> u64 {
        let closed = self.closed.load(Ordering::Relaxed);
        self.accepted.load(Ordering::Relaxed).saturating_sub(closed)
    }

    /// A connection arrived: admit it unless `max` are already open.
    pub fn admit(&self, max: u64) -> bool {
        if self.active() >= max {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        let now =
            self.accepted.fetch_add(1, Ordering::Relaxed) + 1 - self.closed.load(Ordering::Relaxed);
        self.peak.fetch_max(now, Ordering::Relaxed);
        true
    }

    pub fn closed(&self) {
        self.closed.fetch_add(1, Ordering::Relaxed);
    }

    /// A connection's replies made no progress within the write timeout:
    /// it is being reset (and will be counted `closed` too).
    pub fn write_timed_out(&self) {
        self.write_timeouts.fetch_add(1, Ordering::Relaxed);
    }

    pub fn report(&self) -> serde_json::Value {
        serde_json::json!({
            "uptime_s": (self.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
            "accepted": self.accepted.load(Ordering::Relaxed),
            "closed": self.closed.load(Ordering::Relaxed),
            "peak_active": self.peak.load(Ordering::Relaxed),
            "refused_over_max_connections": self.refused.load(Ordering::Relaxed),
            "reset_write_timeout": self.write_timeouts.load(Ordering::Relaxed),
        })
    }
}
