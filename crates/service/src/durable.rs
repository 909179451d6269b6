//! A service's write-ahead log: writes logged and applied in one order,
//! the ticket a connection's reply waits for, and what keeps a reply from
//! showing a write that a crash or a failing disk can take back.
//!
//! **Log, then apply.** A write's record is appended before the write is
//! applied to the store, both under one lock (`order`), so the log holds
//! writes in the order the store saw them, even for two connections
//! writing the same key; reads never take it. A log that has failed
//! refuses the record, and the write is then never applied: the store
//! holds no write the log refused. Under `always` an append only frames
//! the record into the pending batch, so the lock is held for a copy, not
//! for the disk; under `os` and `everysec` the log's own appender lock is
//! held for the `write(2)` anyway.
//!
//! **No reply shows what a crash can lose** (`always`). A write's reply
//! waits for its record's commit; so does a read's reply, for the commit
//! of the last write applied to what it read before it read
//! ([`Durable::read`]): Redis sends nothing an event loop's pass computed
//! before that pass's `fsync`, and this is the same promise kept per key.
//! Each write marks its keys' slots in a table of [`SLOTS`] with its
//! ticket before it is applied (a whole-keyspace write, FLUSHALL, marks
//! them all at once); a read waits for the highest mark of its keys'
//! slots, a read of the whole keyspace (DBSIZE) for the last write of
//! all. Keys that share a slot only make a read wait longer, never less.
//!
//! **A failing disk stops the writes.** When the log fails, writes applied
//! to the store whose records never committed (the batch whose `fsync`
//! failed, under `always`) are taken back from the store, newest first,
//! before anything else is read or written ([`Durable::write`] keeps what
//! undoes each until its commit); their replies, and any reply computed
//! while they were in the store, are never sent. From then on the store
//! holds exactly what is on disk, reads serve it, and every write is
//! refused with the failure (docs/durability.md).

use parking_lot::{Mutex, MutexGuard};
use serverlab_wal::{Durability, Failure, Ticket, Wal};
use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// What the replies a connection has not yet sent wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Logged {
    /// A write's record (or, for a read, the last write it may have seen):
    /// the replies wait until this ticket commits, and are never sent if
    /// the log fails first.
    Ticket(Ticket),
}

impl Logged {
    /// The later of two: the higher ticket (which commits after the lower).
    pub fn then(self, later: Logged) -> Logged {
        let (Logged::Ticket(a), Logged::Ticket(b)) = (self, later);
        Logged::Ticket(a.max(b))
    }

    /// `before` followed by `later`, either of which may be absent.
    pub fn merge(before: Option<Logged>, later: Option<Logged>) -> Option<Logged> {
        match (before, later) {
            (Some(a), Some(b)) => Some(a.then(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The slots of the table of writes in flight (a power of two).
pub const SLOTS: usize = 4096;

/// What a request reads or writes, as the barrier sees it.
#[derive(Debug, Clone, Copy)]
pub enum Touch<'a> {
    /// One key.
    Key(&'a [u8]),
    /// Several keys.
    Keys(&'a [&'a [u8]]),
    /// The whole keyspace (FLUSHALL, DBSIZE).
    Every,
    /// No data (PING, CLIENT): nothing to wait for.
    Nothing,
}

impl Touch<'_> {
    fn each(&self, mut f: impl FnMut(&[u8])) {
        match *self {
            Touch::Key(k) => f(k),
            Touch::Keys(ks) => ks.iter().for_each(|k| f(k)),
            Touch::Every | Touch::Nothing => {}
        }
    }
}

/// The last write applied to each slot of keys, and to the whole keyspace.
struct Seen {
    slots: Box<[AtomicU64]>,
    /// The last whole-keyspace write (FLUSHALL): every key's mark.
    every: AtomicU64,
    /// The last write of all.
    last: AtomicU64,
    hasher: foldhash::fast::FixedState,
}

impl Seen {
    fn new() -> Seen {
        Seen {
            slots: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
            every: AtomicU64::new(0),
            last: AtomicU64::new(0),
            hasher: foldhash::fast::FixedState::with_seed(0x5e4e_41ab),
        }
    }

    fn slot(&self, key: &[u8]) -> &AtomicU64 {
        let h = self.hasher.hash_one(key) as usize;
        &self.slots[h & (SLOTS - 1)]
    }

    /// Marks what a write touches with its ticket, before it is applied:
    /// a reader that sees the write then sees the mark (sequenced before
    /// the store's release of the write, acquired with its read).
    fn mark(&self, touch: Touch, lsn: u64) {
        self.last.fetch_max(lsn, Ordering::SeqCst);
        if let Touch::Every = touch {
            self.every.fetch_max(lsn, Ordering::SeqCst);
        }
        let mut first = true;
        touch.each(|k| {
            if first || !crate::sim::planted(crate::sim::Mutant::ForgetOneKey) {
                self.slot(k).fetch_max(lsn, Ordering::SeqCst);
            }
            first = false;
        });
    }

    /// The last write a read of `touch`, just made, may have seen.
    fn seen(&self, touch: Touch) -> u64 {
        match touch {
            Touch::Nothing => 0,
            Touch::Every => self.last.load(Ordering::SeqCst),
            _ => {
                let mut m = self.every.load(Ordering::SeqCst);
                touch.each(|k| m = m.max(self.slot(k).load(Ordering::SeqCst)));
                m
            }
        }
    }
}

/// Puts back what one write changed in the store.
pub type Undo = Box<dyn FnOnce() + Send>;

/// A write the log refused: it was not applied.
#[derive(Debug, Clone)]
pub enum Refused {
    /// The log has failed: no write is taken from now on (the reason).
    Failed(String),
    /// This write's record is over the log's limit; others go on.
    TooLong(String),
}

impl Refused {
    fn failed(f: &Failure) -> Refused {
        Refused::Failed(format!("the write-ahead log failed: {f}"))
    }
}

/// Writes appended under `always` whose commit has not been seen yet, with
/// what undoes each; held under the lock that orders writes.
#[derive(Default)]
struct Pending {
    undo: VecDeque<(Ticket, Undo)>,
}

/// An open log and the lock that orders writes into it.
pub struct Durable {
    wal: Arc<Wal>,
    order: Mutex<Pending>,
    /// `always`: the tickets of the writes applied, by what they touched.
    seen: Seen,
    /// The writes the failure left uncommitted have been taken back.
    rolled_back: AtomicBool,
}

impl Durable {
    pub fn new(wal: Wal) -> Durable {
        Durable {
            wal: Arc::new(wal),
            order: Mutex::new(Pending::default()),
            seen: Seen::new(),
            rolled_back: AtomicBool::new(false),
        }
    }

    pub fn wal(&self) -> &Arc<Wal> {
        &self.wal
    }

    /// Whether writes keep what undoes them (`always`: a failed `fsync`
    /// leaves applied writes uncommitted).
    pub fn undoes(&self) -> bool {
        self.wal.durability() == Durability::Always
    }

    /// Logs a write of `touch`, then applies it, in the one order. `record` encodes
    /// the write's record and says whether there is one (false: the write
    /// changes nothing, and is applied unlogged); `undo` (called only when
    /// [`Durable::undoes`], before `apply`) says how to take the write back
    /// if its record never commits. A log that has failed refuses the
    /// record: nothing is applied, and the reason is returned.
    pub fn write<T>(
        &self,
        touch: Touch,
        record: impl FnOnce(&mut Vec<u8>) -> bool,
        undo: impl FnOnce() -> Undo,
        apply: impl FnOnce() -> T,
    ) -> Result<(T, Option<Logged>), Refused> {
        let mut payload = Vec::new();
        let mut order = self.order.lock();
        if let Some(f) = self.wal.failure() {
            self.roll_back(&mut order, &f);
            return Err(Refused::failed(&f));
        }
        if !record(&mut payload) {
            // Nothing to log (a DELETE of a missing key), but what it found
            // may be another write's, not yet on disk: wait as a read does.
            let wait = self.undoes().then(|| self.waits_for(touch)).flatten();
            return Ok((apply(), wait));
        }
        let ticket = match self.wal.append(&payload) {
            Ok(t) => t,
            Err(serverlab_wal::Error::Failed(f)) => {
                self.roll_back(&mut order, &f);
                return Err(Refused::failed(&f));
            }
            Err(e) => return Err(Refused::TooLong(e.to_string())),
        };
        #[cfg(test)]
        between::run();
        if self.undoes() {
            let wal = &self.wal;
            while order
                .undo
                .front()
                .is_some_and(|(t, _)| wal.is_committed(*t))
            {
                order.undo.pop_front();
            }
            order.undo.push_back((ticket, undo()));
            self.seen.mark(touch, ticket.lsn());
            // A lock-free store's count (DBSIZE) is read without ordering:
            // the fence keeps the mark before the write for such a reader.
            fence(Ordering::SeqCst);
        }
        Ok((apply(), Some(Logged::Ticket(ticket))))
    }

    /// Runs a request that writes nothing (a read of `touch`) and says what
    /// its reply waits for: under `always`, the commit of the last write
    /// applied to what it read, if that is not yet on disk. After a
    /// failure, the writes that never committed are taken back first: the
    /// read sees only what is on disk.
    pub fn read<T>(&self, touch: Touch, read: impl FnOnce() -> T) -> (T, Option<Logged>) {
        if !self.undoes() {
            return (read(), None);
        }
        if let Some(f) = self.wal.failure() {
            if !self.rolled_back.load(Ordering::Acquire) {
                self.roll_back(&mut self.order.lock(), &f);
            }
            return (read(), None);
        }
        let done = read();
        fence(Ordering::SeqCst);
        (done, self.waits_for(touch))
    }

    /// What a reply that has read `touch` waits for, the log failed or
    /// not (`always`; `None` otherwise): for a service that takes back the
    /// uncommitted writes itself, whose store may still hold them after a
    /// failure: such a reply then waits for a commit that never comes, and
    /// is never sent.
    pub(crate) fn waits(&self, touch: Touch) -> Option<Logged> {
        if !self.undoes() {
            return None;
        }
        fence(Ordering::SeqCst);
        self.waits_for(touch)
    }

    /// What a reply that has read `touch` waits for: the last write marked
    /// on it, if that is not yet on disk.
    fn waits_for(&self, touch: Touch) -> Option<Logged> {
        if crate::sim::planted(crate::sim::Mutant::ReadSkipsWait) {
            return None;
        }
        let last = self.seen.seen(touch);
        let wait = (last > 0).then(|| self.wal.ticket(last));
        wait.filter(|&t| !self.wal.is_committed(t))
            .map(Logged::Ticket)
    }

    /// Takes back, newest first, every write whose record the failure left
    /// uncommitted; once.
    fn roll_back(&self, order: &mut MutexGuard<'_, Pending>, f: &Failure) {
        if self.rolled_back.load(Ordering::Acquire) {
            return;
        }
        while let Some((t, undo)) = order.undo.pop_back() {
            if t.lsn() > f.committed {
                undo();
            }
        }
        self.rolled_back.store(true, Ordering::Release);
    }

    /// Why the log refuses writes, once it does.
    pub fn failure(&self) -> Option<Arc<Failure>> {
        self.wal.failure()
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

    /// A compaction's cut for services whose records all overwrite (kv),
    /// made without holding writes back, then settled: each write is
    /// appended and applied under the lock that orders them, taken here
    /// once after the cut, so once this returns every write whose record
    /// went to the old segment is in the state too, and a copy read from
    /// now on holds it. (Read without the wait, a copy could miss a write
    /// between its append and its apply, whose record the compaction then
    /// deletes with the old segment: acknowledged, and lost at the next
    /// restart.) Writes after the cut are in the new segment: replayed
    /// over the copy they end in the same state, whatever of them it
    /// holds. `None` when no compaction is due or one is already running.
    pub fn cut_settled(&self) -> Result<Option<serverlab_wal::Compaction>, serverlab_wal::Error> {
        if !self.wal.compaction_due() {
            return Ok(None);
        }
        let cut = self.wal.begin_compaction()?;
        if cut.is_some() {
            drop(self.order.lock());
        }
        Ok(cut)
    }

    /// The log's statistics for a service's report: records, bytes,
    /// `fsync`s, records per `fsync`, commit latency, what replay found,
    /// and the failure that stopped it, if one did.
    pub fn stats(&self) -> DurabilityStats {
        let s = self.wal.stats();
        let per = &s.records_per_fsync;
        let us = |ns: u64| ns as f64 / 1000.0;
        let commit = &s.commit_ns;
        DurabilityStats {
            mode: serverlab_util::Named::name(self.wal.durability()),
            dir: self.wal.dir().display().to_string(),
            records: s.records,
            bytes: s.bytes,
            fsyncs: s.fsyncs,
            records_per_fsync: RecordsPerFsync {
                mean: s.mean_records_per_fsync(),
                median: per.value_at_quantile(0.5),
                p99: per.value_at_quantile(0.99),
                max: per.max(),
            },
            commit_us: CommitUs {
                count: commit.len(),
                median: us(commit.value_at_quantile(0.5)),
                p99: us(commit.value_at_quantile(0.99)),
                max: us(commit.max()),
            },
            recovered_records: s.recovered,
            dropped_bytes: s.dropped_bytes,
            compactions: s.compactions,
            failed: self.wal.failure().map(|f| FailedLog {
                file: f.path.display().to_string(),
                call: f.call,
                error: f.error.to_string(),
                committed_lsn: f.committed,
            }),
        }
    }
}

/// A log's statistics, in a service's (`durability`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DurabilityStats {
    /// `--durability`.
    pub mode: &'static str,
    /// `--data-dir`.
    pub dir: String,
    /// Records appended since open.
    pub records: u64,
    /// Bytes appended since open, frames included.
    pub bytes: u64,
    /// Data `fsync`s by the log.
    pub fsyncs: u64,
    pub records_per_fsync: RecordsPerFsync,
    pub commit_us: CommitUs,
    /// Records replayed at open.
    pub recovered_records: u64,
    /// Bytes cut from the log at open.
    pub dropped_bytes: u64,
    /// Compactions finished since open.
    pub compactions: u64,
    /// The failure that stopped the log (`null` while none has).
    pub failed: Option<FailedLog>,
}

/// Records each data `fsync` made durable.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RecordsPerFsync {
    pub mean: f64,
    pub median: u64,
    pub p99: u64,
    pub max: u64,
}

/// Microseconds from a record's append until it met the mode's promise.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CommitUs {
    pub count: u64,
    pub median: f64,
    pub p99: f64,
    pub max: f64,
}

/// The call that failed and stopped the log.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FailedLog {
    /// The file it was made on.
    pub file: String,
    /// The call (`fdatasync`, `write`, …).
    pub call: &'static str,
    pub error: String,
    /// The last record known durable.
    pub committed_lsn: u64,
}

/// Test-only: a pause between a write's append and its apply, on the
/// thread that sets it, where a compaction's cut may fall.
#[cfg(test)]
pub(crate) mod between {
    use std::cell::RefCell;

    thread_local! {
        static HOOK: RefCell<Option<Box<dyn FnOnce()>>> = RefCell::new(None);
    }

    /// `f` runs inside this thread's next logged write, after its record
    /// is appended and before it is applied.
    pub(crate) fn set(f: impl FnOnce() + 'static) {
        HOOK.with(|h| *h.borrow_mut() = Some(Box::new(f)));
    }

    pub(super) fn run() {
        if let Some(f) = HOOK.with(|h| h.borrow_mut().take()) {
            f();
        }
    }
}
