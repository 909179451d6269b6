//! What every server counts the same way, whatever its protocol: its
//! connections, its service time and its workers' busy time. The server
//! records into it, the final statistics report it beside the protocol's
//! own, and a protocol that reports statistics on the wire (kv's
//! `/_/stats`) reads it, so every view shows the same numbers.

use crate::busy::BusyTimes;
use crate::service_time::ServiceTimes;
use crate::stats::Counters;
use crate::Service;
use serverlab_util::server_stats::{Connections, ServerStats};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Connections and service time; each service holds one (see
/// [`Service::common`]).
#[derive(Default)]
pub struct Common {
    pub connections: ConnCounters,
    pub times: ServiceTimes,
    /// Reactor workers' busy time per request.
    pub busy: BusyTimes,
    /// Bytes read from and written to every connection.
    pub bytes: ByteCounts,
}

/// Bytes read from and written to connections, counted by the server at
/// each read and write (one relaxed add on the thread's own stripe:
/// nothing shared between threads); read by `serve --metrics`.
#[derive(Default)]
pub struct ByteCounts(Counters<2>);

const RECEIVED: usize = 0;
const SENT: usize = 1;

impl ByteCounts {
    /// `n` bytes were read from a connection.
    #[inline]
    pub fn received(&self, n: usize) {
        self.0.add(RECEIVED, n as u64);
    }

    /// `n` bytes were written to a connection.
    #[inline]
    pub fn sent(&self, n: usize) {
        self.0.add(SENT, n as u64);
    }

    /// Bytes read so far.
    pub fn total_received(&self) -> u64 {
        self.0.get(RECEIVED)
    }

    /// Bytes written so far.
    pub fn total_sent(&self) -> u64 {
        self.0.get(SENT)
    }
}

impl Common {
    /// The typed statistics with `protocol` beside them.
    pub fn stats(&self, protocol: serde_json::Value) -> ServerStats {
        ServerStats {
            connections: self.connections.snapshot(),
            service_time_us: self.times.snapshot(),
            worker_busy_us: self.busy.snapshot(),
            protocol,
        }
    }
}

/// A service's final statistics: the common part and its own report.
pub fn final_stats<S: Service>(svc: &S) -> ServerStats {
    svc.common().stats(svc.report())
}

/// Connection counts. `Relaxed` throughout: statistics, ordered with
/// nothing else. `active` is also the `--max-connections` gate; a race
/// there can admit one connection over the limit for an instant, never
/// unboundedly many.
pub struct ConnCounters {
    started: Instant,
    accepted: AtomicU64,
    closed: AtomicU64,
    refused: AtomicU64,
    evicted: AtomicU64,
    shed: AtomicU64,
    peak: AtomicU64,
    write_timeouts: AtomicU64,
    delays_abandoned: AtomicU64,
    unanswered_on_reset: AtomicU64,
}

impl Default for ConnCounters {
    fn default() -> Self {
        ConnCounters {
            started: Instant::now(),
            accepted: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            shed: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            write_timeouts: AtomicU64::new(0),
            delays_abandoned: AtomicU64::new(0),
            unanswered_on_reset: AtomicU64::new(0),
        }
    }
}

impl ConnCounters {
    /// Admitted connections open now.
    pub fn active(&self) -> u64 {
        let closed = self.closed.load(Ordering::Relaxed);
        self.accepted.load(Ordering::Relaxed).saturating_sub(closed)
    }

    /// Connections admitted so far.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }

    /// A connection arrived: admit it unless `max` are already open
    /// (then the caller evicts another, or refuses it and counts that).
    pub fn admit(&self, max: u64) -> bool {
        if self.active() >= max {
            return false;
        }
        self.admit_over_max();
        true
    }

    /// Admit a connection whatever is open: another was just evicted for
    /// it, and is closing.
    pub fn admit_over_max(&self) {
        let now =
            self.accepted.fetch_add(1, Ordering::Relaxed) + 1 - self.closed.load(Ordering::Relaxed);
        self.peak.fetch_max(now, Ordering::Relaxed);
    }

    /// A connection was closed at once: `--max-connections` were open and
    /// none was idle to evict.
    pub fn refused(&self) {
        self.refused.fetch_add(1, Ordering::Relaxed);
    }

    /// An idle connection was evicted to admit a new one (it is counted
    /// `closed` when it has closed).
    pub fn evicted(&self) {
        self.evicted.fetch_add(1, Ordering::Relaxed);
    }

    /// A connection was accepted with the spare descriptor and closed at
    /// once: the process was out of file descriptors.
    pub fn shed(&self) {
        self.shed.fetch_add(1, Ordering::Relaxed);
    }

    /// An admitted connection is closed.
    pub fn closed(&self) {
        self.closed.fetch_add(1, Ordering::Relaxed);
    }

    /// A connection's replies made no progress within the write timeout:
    /// it is being reset (and will be counted `closed` too).
    pub fn write_timed_out(&self) {
        self.write_timeouts.fetch_add(1, Ordering::Relaxed);
    }

    /// A request's delay was begun and abandoned (its client had gone, or
    /// the drain limit passed): the request was never applied.
    pub fn delay_abandoned(&self) {
        self.delays_abandoned.fetch_add(1, Ordering::Relaxed);
    }

    /// A connection was reset with `n` applied requests whose replies were
    /// not all written.
    pub fn unanswered_on_reset(&self, n: u64) {
        self.unanswered_on_reset.fetch_add(n, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> Connections {
        Connections {
            uptime_s: (self.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
            accepted: self.accepted.load(Ordering::Relaxed),
            closed: self.closed.load(Ordering::Relaxed),
            peak_active: self.peak.load(Ordering::Relaxed),
            refused_over_max_connections: self.refused.load(Ordering::Relaxed),
            evicted_idle: self.evicted.load(Ordering::Relaxed),
            shed_out_of_fds: self.shed.load(Ordering::Relaxed),
            reset_write_timeout: self.write_timeouts.load(Ordering::Relaxed),
            delays_abandoned: self.delays_abandoned.load(Ordering::Relaxed),
            unanswered_on_reset: self.unanswered_on_reset.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_up_to_the_limit_and_counts() {
        let c = ConnCounters::default();
        assert!(c.admit(2));
        assert!(c.admit(2));
        assert!(!c.admit(2), "two are open");
        c.refused();
        c.closed();
        assert!(c.admit(2));
        c.write_timed_out();
        c.delay_abandoned();
        c.unanswered_on_reset(3);
        c.evicted();
        c.admit_over_max();
        c.shed();
        let s = c.snapshot();
        assert_eq!((s.accepted, s.closed, s.peak_active), (4, 1, 3), "{s:?}");
        assert_eq!(s.refused_over_max_connections, 1);
        assert_eq!((s.evicted_idle, s.shed_out_of_fds), (1, 1));
        assert_eq!(s.reset_write_timeout, 1);
        assert_eq!((s.delays_abandoned, s.unanswered_on_reset), (1, 3));
        assert_eq!(c.active(), 3);
    }
}
