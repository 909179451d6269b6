//! A service's write-ahead log: writes applied and appended in one order,
//! and the ticket a connection's reply waits for.
//!
//! A write is applied to the store and appended to the log under one lock
//! (`order`), so the log holds writes in the order the store saw them,
//! even for two connections writing the same key; reads never take it.
//! Under `always` an append only frames the record into the pending batch,
//! so the lock is held for a copy, not for the disk; under `os` and
//! `everysec` the log's own appender lock is held for the `write(2)`
//! anyway. The connection keeps the write's [`Logged`] and the session
//! holds its reply until the ticket commits (docs/durability.md).

use parking_lot::Mutex;
use serverlab_wal::{Ticket, Wal};
use std::sync::Arc;

/// What a connection's last logged write came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Logged {
    /// Appended: its reply waits until this ticket commits.
    Ticket(Ticket),
    /// Applied but not appended (the log failed, or the record is over its
    /// limit): the reply must never be sent.
    Failed,
}

impl Logged {
    /// The later of two writes' outcomes on one connection: a failure
    /// sticks, otherwise the higher ticket (which commits after the lower).
    pub fn then(self, later: Logged) -> Logged {
        match (self, later) {
            (Logged::Ticket(a), Logged::Ticket(b)) => Logged::Ticket(a.max(b)),
            _ => Logged::Failed,
        }
    }
}

/// An open log and the lock that orders writes into it.
pub struct Durable {
    wal: Arc<Wal>,
    order: Mutex<()>,
}

impl Durable {
    pub fn new(wal: Wal) -> Durable {
        Durable {
            wal: Arc::new(wal),
            order: Mutex::new(()),
        }
    }

    pub fn wal(&self) -> &Arc<Wal> {
        &self.wal
    }

    /// Applies a write and appends its record, in the one order; `record`
    /// is given what `apply` returned and `None` means nothing changed
    /// (nothing is appended).
    pub fn write<T>(
        &self,
        apply: impl FnOnce() -> T,
        record: impl FnOnce(&T, &mut Vec<u8>) -> bool,
    ) -> (T, Option<Logged>) {
        let mut payload = Vec::new();
        let _order = self.order.lock();
        let done = apply();
        if !record(&done, &mut payload) {
            return (done, None);
        }
        let logged = match self.wal.append(&payload) {
            Ok(t) => Logged::Ticket(t),
            Err(e) => {
                eprintln!("serverlab: a write could not be logged: {e}");
                Logged::Failed
            }
        };
        (done, Some(logged))
    }
}

impl Durable {
    /// A compaction's cut made while no write is between its store and
    /// its log (under the lock that orders them), with `copy` of the state
    /// as of that cut, taken under the same lock: the exact state the new
    /// segment's records continue from, for services whose records do not
    /// all overwrite. Writes wait for the cut and the copy; reads do not.
    /// `None` when no compaction is due or one is already running.
    pub fn cut<T>(
        &self,
        copy: impl FnOnce() -> T,
    ) -> Result<Option<(serverlab_wal::Compaction, T)>, serverlab_wal::Error> {
        if !self.wal.compaction_due() {
            return Ok(None);
        }
        let _order = self.order.lock();
        Ok(self.wal.begin_compaction()?.map(|c| (c, copy())))
    }

    /// The log's statistics for a service's report: records, bytes,
    /// `fsync`s, records per `fsync`, commit latency, what replay found.
    pub fn report(&self) -> serde_json::Value {
        let s = self.wal.stats();
        let per = &s.records_per_fsync;
        let us = |ns: u64| ns as f64 / 1000.0;
        let commit = &s.commit_ns;
        serde_json::json!({
            "mode": serverlab_util::Named::name(self.wal.durability()),
            "dir": self.wal.dir().display().to_string(),
            "records": s.records,
            "bytes": s.bytes,
            "fsyncs": s.fsyncs,
            "records_per_fsync": {
                "mean": s.mean_records_per_fsync(),
                "median": per.value_at_quantile(0.5),
                "p99": per.value_at_quantile(0.99),
                "max": per.max(),
            },
            "commit_us": {
                "count": commit.len(),
                "median": us(commit.value_at_quantile(0.5)),
                "p99": us(commit.value_at_quantile(0.99)),
                "max": us(commit.max()),
            },
            "recovered_records": s.recovered,
            "dropped_bytes": s.dropped_bytes,
            "compactions": s.compactions,
        })
    }
}
