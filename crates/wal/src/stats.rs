//! What the log counts: records and bytes appended, `fsync`s and how many
//! records each one made durable, how long a write waited for its commit,
//! and what replay found at start.

use std::sync::Mutex;
use std::time::Duration;

use hdrhistogram::Histogram;

/// A copy of the log's statistics.
#[derive(Debug, Clone)]
pub struct Stats {
    /// Records appended since open (replayed records are not counted).
    pub records: u64,
    /// Bytes appended since open, frames included.
    pub bytes: u64,
    /// Data `fsync`s (`fdatasync`) of records, by whichever thread
    /// commits (the log thread, a ring, a leading writer); the compaction's own
    /// syncs of new files and the directory are not counted.
    pub fsyncs: u64,
    /// Records made durable by each data `fsync`: group commit shows as a
    /// mean above one.
    pub records_per_fsync: Histogram<u64>,
    /// Nanoseconds from `append` until the record met the mode's promise
    /// (on disk under `always`; written under `os` and `everysec`).
    pub commit_ns: Histogram<u64>,
    /// Nanoseconds each successful data `fsync` took (the log thread's,
    /// as counted in `fsyncs`).
    pub fsync_ns: Histogram<u64>,
    /// Records replayed at open (snapshot and log together).
    pub recovered: u64,
    /// Bytes cut from the log at open.
    pub dropped_bytes: u64,
    /// Compactions finished since open.
    pub compactions: u64,
    /// `always`, the log thread: commits it held to gather more records
    /// first (a lone writer's never is).
    pub gathers: u64,
}

/// The longest commit wait recorded as itself; longer ones as an hour.
const HOUR_NS: u64 = 3_600_000_000_000;

/// A histogram of 1..=`high` at 3 significant figures. Its bounds are set
/// here, not grown: an auto-resizing histogram (`Histogram::new`) does not
/// grow under `saturating_record`, which clamps to its initial top (2).
fn bounded(high: u64) -> Histogram<u64> {
    Histogram::new_with_bounds(1, high, 3).expect("valid bounds")
}

impl Stats {
    fn new() -> Stats {
        Stats {
            records: 0,
            bytes: 0,
            fsyncs: 0,
            records_per_fsync: bounded(u64::from(u32::MAX)),
            commit_ns: bounded(HOUR_NS),
            fsync_ns: bounded(HOUR_NS),
            recovered: 0,
            dropped_bytes: 0,
            compactions: 0,
            gathers: 0,
        }
    }

    /// The mean number of records per data `fsync` (0 when none ran).
    pub fn mean_records_per_fsync(&self) -> f64 {
        if self.records_per_fsync.is_empty() {
            0.0
        } else {
            self.records_per_fsync.mean()
        }
    }
}

/// The live statistics, shared by appenders and the log thread.
pub(crate) struct Counters(Mutex<Stats>);

impl Counters {
    pub(crate) fn new(recovered: u64, dropped_bytes: u64) -> Counters {
        let mut s = Stats::new();
        s.recovered = recovered;
        s.dropped_bytes = dropped_bytes;
        Counters(Mutex::new(s))
    }

    pub(crate) fn snapshot(&self) -> Stats {
        self.lock().clone()
    }

    pub(crate) fn appended(&self, records: u64, bytes: u64) {
        let mut s = self.lock();
        s.records += records;
        s.bytes += bytes;
    }

    pub(crate) fn synced(&self, records: u64) {
        let mut s = self.lock();
        s.fsyncs += 1;
        s.records_per_fsync.saturating_record(records);
    }

    /// A data `fsync` succeeded after `took`.
    pub(crate) fn fsync_took(&self, took: Duration) {
        let ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.lock().fsync_ns.saturating_record(ns.max(1));
    }

    pub(crate) fn committed(&self, waits: impl IntoIterator<Item = Duration>) {
        let mut s = self.lock();
        for w in waits {
            let ns = u64::try_from(w.as_nanos()).unwrap_or(u64::MAX);
            s.commit_ns.saturating_record(ns.max(1));
        }
    }

    /// The log thread held a commit to gather more records.
    pub(crate) fn gathered(&self) {
        self.lock().gathers += 1;
    }

    pub(crate) fn compacted(&self) {
        self.lock().compactions += 1;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Stats> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
