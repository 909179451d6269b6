//! The writer: [`Wal`], its appends, and the log thread that makes them
//! durable.
//!
//! Under `os` and `everysec` an append frames its record and writes it to
//! the active segment in the caller's thread (one `write(2)` under the
//! appender lock), so its ticket is committed when `append` returns;
//! `everysec`'s thread `fdatasync`s the active segment once a second.
//!
//! Under `always` an append only frames its record into the pending batch
//! and wakes the log thread. The log thread takes every pending batch at
//! once, writes them, `fdatasync`s, and raises the watermark to the last
//! record written: records appended while an `fsync` runs wait in the next
//! batch, so one `fsync` commits all of them (group commit). The caller's
//! thread never touches the disk.
//!
//! Under `always` with [`Committer::Leader`] there is no log thread: the
//! writer that waits for its ticket commits the pending batches itself
//! when no commit is in flight (see `leader` for how no record is left
//! behind).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::Waker;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::commit::{Commit, Commits, Failure, FailureHook, Ticket};
use crate::dir::{self, DirLock};
use crate::format::{self, Header, Kind, HEADER_LEN, MAX_RECORD};
use crate::replay::{self, ApplyError, Recovery};
use crate::sealed::SealedFile;
use crate::stats::{Counters, Stats};
use crate::vfs::{fault, Fs, FsRef, RealFs};
use crate::{Durability, Error, Recover};

mod leader;

/// How `everysec` spaces its `fsync`s.
const EVERYSEC: Duration = Duration::from_secs(1);

/// Who makes `always`'s records durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Committer {
    /// The log's own thread, woken by each append: group commit across
    /// every thread that appends.
    #[default]
    LogThread,
    /// Whoever calls [`Wal::commit_pending`]: an event loop, once a pass,
    /// after it applied the pass's requests, as Redis commits (one write
    /// and one `fsync` for the pass, in the loop's thread, no hand-off).
    /// Nothing commits until someone calls it.
    Caller,
    /// No log thread: the writer that waits for its ticket leads when no
    /// commit is in flight (it writes and `fsync`s every pending record on
    /// its own thread, then wakes the others it covered); when one is in
    /// flight, it waits for it, and is handed the lead if its record
    /// missed that commit. Waiting ([`Wal::wait`], [`Wal::register`],
    /// [`Wal::commit`]) may therefore block the caller's thread for an
    /// `fsync`.
    Leader,
}

/// How a log is opened.
#[derive(Debug, Clone)]
pub struct Options {
    /// Must not be [`Durability::None`], which keeps no log.
    pub durability: Durability,
    /// What replay does with corruption before a tail.
    pub recover: Recover,
    /// No compaction is due while the files on disk are smaller than this.
    pub compaction_floor: u64,
    /// **Test-only.** Sleep this long before every data `fsync`, to stand in
    /// for a slow disk (a test proves that a connection waiting for its
    /// commit does not stall others). Zero, the default, sleeps not at all.
    /// Applied at open as a layer over [`Options::fs`]
    /// ([`vfs::fault::delay_syncs`](crate::vfs::fault::delay_syncs)).
    pub fsync_delay: Duration,
    /// `always` only: once a record is pending, the log thread waits this
    /// long before it takes the batch, so that more records join it (a
    /// commit delay, PostgreSQL's `commit_delay`). Zero, the default,
    /// takes the batch at once: measured here, waiting did not pay
    /// (docs/durability.md).
    pub commit_delay: Duration,
    /// `always` only: who writes and `fsync`s the pending records.
    pub committer: Committer,
    /// Called once, at once, on the thread that meets the log's failure
    /// (a failed `write` or `fdatasync`, or [`Wal::fail`]): to say so, or
    /// to stop the process. `None`: nothing is called.
    pub on_failure: Option<FailureHook>,
    /// **Test-only.** After this many data `fsync`s succeed, every later
    /// one fails with `EIO`, as a dying disk's would: every file's, a
    /// compaction's sync of the segment it closes among them. `None`, the default,
    /// injects nothing. Applied at open as a layer over [`Options::fs`]
    /// ([`vfs::fault::fail_syncs_after`](crate::vfs::fault::fail_syncs_after)).
    #[doc(hidden)]
    pub fail_syncs_after: Option<u64>,
    /// The file system every file call goes through: [`RealFs`], the
    /// default, in production; a simulated disk in tests
    /// (`vfs::sim::SimFs`, with the `test-fs` feature).
    pub fs: FsRef,
}

impl Options {
    /// Strict recovery, a 64 MiB compaction floor, no injected delay.
    pub fn new(durability: Durability) -> Options {
        Options {
            durability,
            recover: Recover::Strict,
            compaction_floor: 64 << 20,
            fsync_delay: Duration::ZERO,
            commit_delay: Duration::ZERO,
            committer: Committer::LogThread,
            on_failure: None,
            fail_syncs_after: None,
            fs: RealFs::shared(),
        }
    }
}

/// One log segment file; it seals each record as it writes it.
pub(crate) struct Segment {
    pub path: PathBuf,
    pub file: SealedFile,
}

impl Segment {
    /// Creates segment `generation` of the directory salted `salt` and
    /// makes it (and its name) durable. The caller then records it in the
    /// manifest ([`dir::write_manifest`]) before appending to it.
    pub(crate) fn create(
        fs: &dyn Fs,
        dir: &Path,
        generation: u64,
        salt: u64,
    ) -> Result<Segment, Error> {
        let path = dir::log_path(dir, generation);
        let header = Header {
            kind: Kind::Log,
            generation,
            salt,
        };
        let file = dir::create(fs, &path, &header)?;
        file.sync_all().map_err(Error::io(&path))?;
        dir::sync_dir(fs, dir)?;
        let file = SealedFile::new(file, header, HEADER_LEN as u64);
        Ok(Segment { path, file })
    }
}

/// Records framed for one segment, waiting for the log thread.
struct Batch {
    segment: Arc<Segment>,
    buf: Vec<u8>,
    last: u64,
    appended: Vec<Instant>,
}

/// What appenders share, under one lock.
pub(crate) struct Appender {
    pub active: Arc<Segment>,
    next_lsn: u64,
    queue: Vec<Batch>,
    scratch: Vec<u8>,
    unsynced: u64,
    stopping: bool,
    /// While the log thread gathers a group (`run_always`): how many
    /// pending records wake it; 0 when it is not gathering (every append
    /// may wake it).
    wake_at: usize,
}

impl Appender {
    /// The sequence number of the last record appended (0 for none).
    pub(crate) fn last_lsn(&self) -> u64 {
        self.next_lsn - 1
    }
}

/// Everything the `Wal`, its log thread and its compactions share.
pub(crate) struct Shared {
    pub dir: PathBuf,
    pub opts: Options,
    appender: Mutex<Appender>,
    work: Condvar,
    /// Held by whoever takes pending batches until they are committed, so
    /// batches are written and committed in the order they were taken.
    syncing: Mutex<()>,
    /// [`Committer::Leader`]: the highest sequence number an event loop's
    /// waiter has yielded for (see `leader`): a waiter at or below it
    /// leads at once.
    yielded: AtomicU64,
    pub commits: Arc<Commits>,
    pub stats: Counters,
    pub next_generation: AtomicU64,
    pub disk_bytes: AtomicU64,
    pub live_bytes: AtomicU64,
    pub compacting: AtomicBool,
    /// Held as long as anything can still write here: the `Wal`, its log
    /// thread, and a compaction running on another thread.
    _lock: DirLock,
    #[cfg(test)]
    pub crash: crate::compact::CrashHook,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Appender> {
        self.appender.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `fdatasync`s a segment, timed (a delay the test switches' layer
    /// adds is timed as a slow disk's).
    fn sync(&self, segment: &Segment) -> std::io::Result<()> {
        let started = Instant::now();
        let synced = segment.file.sync_data();
        if synced.is_ok() {
            self.stats.fsync_took(started.elapsed());
        }
        synced
    }

    /// [`Wal::register`] under [`Committer::Leader`]: leads when no
    /// commit is in flight, else registers `waker` (see `leader`).
    pub(crate) fn register_or_lead(&self, t: Ticket, waker: &Waker) -> bool {
        leader::register_yielding(self, t, waker)
    }

    /// Whether the waiting caller leads the commits.
    fn leads(&self) -> bool {
        self.opts.committer == Committer::Leader && self.opts.durability == Durability::Always
    }

    /// Fails the log: nothing is appended or committed from now on.
    pub(crate) fn fail(&self, path: &Path, call: &'static str, e: std::io::Error) {
        self.commits.fail(path, call, e);
        // The log thread may be waiting for work: it stops now.
        self.work.notify_all();
    }
}

/// An open write-ahead log: the data directory's lock, the active segment,
/// and (under `everysec` and `always`) the log thread. Share it between
/// threads behind an `Arc`; dropping it drains pending records (and, under
/// `everysec`, syncs them) and releases the directory.
pub struct Wal {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    recovery: Recovery,
}

impl Wal {
    /// Locks `dir` (creating it if needed), replays its snapshot and logs
    /// into `apply` in order, cuts a torn tail, starts a new log segment,
    /// records it in the manifest (`DIR/CURRENT`) and starts (under
    /// `everysec` and `always`) the log thread. Strict recovery refuses
    /// what it cannot vouch for (docs/durability.md, "Recovery").
    pub fn open(
        dir: impl AsRef<Path>,
        opts: Options,
        mut apply: impl FnMut(&[u8]) -> Result<(), ApplyError>,
    ) -> Result<Wal, Error> {
        if opts.durability == Durability::None {
            return Err(Error::NoLog);
        }
        let mut opts = opts;
        // The test switches are layers over the file system, as every
        // injected fault is; taken out of the options, which keep no
        // second copy of them.
        opts.fs = fault::with_switches(
            std::mem::replace(&mut opts.fs, RealFs::shared()),
            opts.fail_syncs_after.take(),
            std::mem::take(&mut opts.fsync_delay),
        );
        let dir = dir.as_ref().to_path_buf();
        let fs = &*opts.fs;
        let lock = dir::lock(fs, &dir)?;
        let replayed = replay::replay(fs, &dir, opts.recover, &mut apply)?;
        let generation = replayed.next_generation;
        let active = Arc::new(Segment::create(fs, &dir, generation, replayed.salt)?);
        dir::write_manifest(fs, &dir, generation, replayed.salt)?;
        let recovery = replayed.recovery;
        let shared = Arc::new(Shared {
            dir,
            appender: Mutex::new(Appender {
                active,
                next_lsn: 1,
                queue: Vec::new(),
                scratch: Vec::new(),
                unsynced: 0,
                stopping: false,
                wake_at: 0,
            }),
            work: Condvar::new(),
            syncing: Mutex::new(()),
            yielded: AtomicU64::new(0),
            commits: Arc::new(Commits::new(opts.on_failure.clone())),
            stats: Counters::new(recovery.records(), recovery.dropped_bytes),
            next_generation: AtomicU64::new(generation + 1),
            disk_bytes: AtomicU64::new(replayed.disk_bytes + HEADER_LEN as u64),
            live_bytes: AtomicU64::new(0),
            compacting: AtomicBool::new(false),
            _lock: lock,
            #[cfg(test)]
            crash: Default::default(),
            opts,
        });
        let thread = spawn_log_thread(&shared)?;
        Ok(Wal {
            shared,
            thread,
            recovery,
        })
    }

    /// What replay found at open.
    pub fn recovery(&self) -> &Recovery {
        &self.recovery
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// Who commits `always`'s records.
    pub fn committer(&self) -> Committer {
        self.shared.opts.committer
    }

    /// The mode the log was opened with.
    pub fn durability(&self) -> Durability {
        self.shared.opts.durability
    }

    /// Appends one record. Under `os` and `everysec` it is written before
    /// this returns and the ticket is already committed; under `always` the
    /// ticket commits when the next `fsync` (the log thread's, or the
    /// committer's) has covered it.
    pub fn append(&self, payload: &[u8]) -> Result<Ticket, Error> {
        if payload.len() > MAX_RECORD as usize {
            return Err(Error::TooLong(payload.len()));
        }
        if let Some(e) = self.shared.commits.failure() {
            return Err(e);
        }
        let ticket = match self.shared.opts.durability {
            Durability::Always => self.enqueue(payload),
            _ => self.write_now(payload)?,
        };
        let framed = format::framed_len(payload.len()) as u64;
        self.shared.stats.appended(1, framed);
        Ok(ticket)
    }

    fn write_now(&self, payload: &[u8]) -> Result<Ticket, Error> {
        let start = Instant::now();
        let mut guard = self.shared.lock();
        let a = &mut *guard;
        a.scratch.clear();
        format::encode_record(payload, &mut a.scratch);
        self.count_on_disk(payload);
        if let Err(e) = (&a.active.file).write_all(&a.scratch) {
            let path = a.active.path.clone();
            drop(guard);
            self.shared.fail(&path, "write", e);
            return Err(self.shared.commits.failure().expect("just failed"));
        }
        let lsn = a.next_lsn;
        a.next_lsn += 1;
        a.unsynced += 1;
        drop(guard);
        // Outside the lock (wakers run foreign code): the watermark only
        // rises, and every lower number was written before this one.
        self.shared.commits.advance(lsn);
        self.shared.stats.committed([start.elapsed()]);
        Ok(Ticket(lsn))
    }

    fn enqueue(&self, payload: &[u8]) -> Ticket {
        let mut a = self.shared.lock();
        let lsn = a.next_lsn;
        a.next_lsn += 1;
        self.count_on_disk(payload);
        let active = Arc::clone(&a.active);
        let batch = match a.queue.last_mut() {
            Some(b) if Arc::ptr_eq(&b.segment, &active) => b,
            _ => {
                a.queue.push(Batch {
                    segment: active,
                    buf: Vec::new(),
                    last: 0,
                    appended: Vec::new(),
                });
                a.queue.last_mut().expect("pushed")
            }
        };
        format::encode_record(payload, &mut batch.buf);
        batch.last = lsn;
        batch.appended.push(Instant::now());
        // Gathering, the log thread wakes once the group is whole.
        let wake = a.wake_at == 0 || pending(&a.queue) >= a.wake_at;
        drop(a);
        if self.shared.opts.committer == Committer::LogThread && wake {
            self.shared.work.notify_one();
        }
        Ticket(lsn)
    }

    /// Under `always`, writes and `fsync`s every pending record in the
    /// calling thread; on return every record appended before the call is
    /// committed, or the log has failed. What [`Committer::Caller`]'s
    /// event loop calls once a pass; harmless under the log thread.
    pub fn commit_pending(&self) {
        if self.shared.opts.durability == Durability::Always {
            let _ = commit_queue(&self.shared);
        }
    }

    /// Counts a record's bytes towards the files a compaction replaces;
    /// called under the appenders' lock, so a compaction's cut (also under
    /// it) splits the count exactly where it splits the records.
    fn count_on_disk(&self, payload: &[u8]) {
        let framed = format::framed_len(payload.len()) as u64;
        self.shared.disk_bytes.fetch_add(framed, Ordering::Relaxed);
    }

    /// The ticket of the record with log sequence number `lsn` (see
    /// [`Ticket::lsn`]), to wait for a record another thread appended.
    pub fn ticket(&self, lsn: u64) -> Ticket {
        Ticket(lsn)
    }

    /// The ticket of the last record appended so far (its sequence number
    /// is 0 when none was): once it commits, so has every record before.
    pub fn last_appended(&self) -> Ticket {
        Ticket(self.shared.lock().last_lsn())
    }

    /// Whether `ticket`'s record has met the mode's promise. Never blocks.
    pub fn is_committed(&self, ticket: Ticket) -> bool {
        self.shared.commits.is_committed(ticket)
    }

    /// `None` while `ticket` waits; `Some(Ok)` once it is committed,
    /// `Some(Err)` when the log failed first (the write must not be
    /// acknowledged). Never blocks.
    pub fn settled(&self, ticket: Ticket) -> Option<Result<(), Error>> {
        self.shared.commits.settled(ticket)
    }

    /// Blocks the calling thread until `ticket` commits; an error when the
    /// log failed first (the write must not be acknowledged). Under
    /// [`Committer::Leader`] the calling thread may commit (and `fsync`)
    /// itself.
    pub fn wait(&self, ticket: Ticket) -> Result<(), Error> {
        if self.shared.leads() {
            return leader::wait(&self.shared, ticket);
        }
        self.shared.commits.wait(ticket)
    }

    /// Asks for `waker` to be woken once `ticket` commits (or the log
    /// fails). False when that has already happened: the waker will not be
    /// called, so look with [`is_committed`](Wal::is_committed) now. True:
    /// it is woken once. Under [`Committer::Leader`] the calling thread may
    /// commit (and `fsync`) first, and the waker may be woken before the
    /// ticket commits, to take the lead: then ask again.
    pub fn register(&self, ticket: Ticket, waker: &Waker) -> bool {
        if self.shared.leads() {
            return self.shared.register_or_lead(ticket, waker);
        }
        self.shared.commits.register(ticket, waker)
    }

    /// A future ready when `ticket` commits; it does not borrow the `Wal`.
    /// Under [`Committer::Leader`] a poll may commit (and `fsync`) in the
    /// polling thread.
    pub fn commit(&self, ticket: Ticket) -> Commit {
        Commit {
            commits: Arc::clone(&self.shared.commits),
            ticket,
            lead: self.shared.leads().then(|| Arc::downgrade(&self.shared)),
        }
    }

    /// A copy of the statistics.
    pub fn stats(&self) -> Stats {
        self.shared.stats.snapshot()
    }

    /// Why the log stopped accepting writes, once it has.
    pub fn failure(&self) -> Option<Arc<Failure>> {
        self.shared.commits.failed().cloned()
    }

    /// Fails the log from outside: a compaction's step that failed (the
    /// disk is not to be trusted with the next record either). Nothing is
    /// appended or committed from now on; the hook is called once.
    pub fn fail(&self, e: Error) {
        let (path, error) = match e {
            Error::Io { path, source } | Error::Dir { path, source } => (path, source),
            other => (
                self.shared.dir.clone(),
                std::io::Error::other(other.to_string()),
            ),
        };
        self.shared.fail(&path, "compaction", error);
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl Drop for Wal {
    fn drop(&mut self) {
        self.commit_pending();
        self.shared.lock().stopping = true;
        self.shared.work.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn spawn_log_thread(shared: &Arc<Shared>) -> Result<Option<JoinHandle<()>>, Error> {
    let body: fn(&Shared) = match shared.opts.durability {
        Durability::Always if shared.opts.committer != Committer::LogThread => return Ok(None),
        Durability::Always => run_always,
        Durability::EverySec => run_everysec,
        Durability::None | Durability::Os => return Ok(None),
    };
    let s = Arc::clone(shared);
    std::thread::Builder::new()
        .name("wal-log".into())
        .spawn(move || body(&s))
        .map(Some)
        .map_err(Error::dir(&shared.dir))
}

/// The longest the log thread gathers a group before it commits.
const MAX_GATHER: Duration = Duration::from_millis(1);

/// Records pending in `queue`.
fn pending(queue: &[Batch]) -> usize {
    queue.iter().map(|b| b.appended.len()).sum()
}

/// `always`: take every pending batch, write, sync, commit; until stopped
/// with nothing pending.
///
/// Lock-step writers come back as a group, a round trip after their
/// replies, but not at one instant: taking the first of them alone would
/// split the group in two that alternate, each `fsync` carrying half
/// (4 records a sync from 8 writers, measured). So while fewer records
/// are pending than the last commit carried, the thread first gathers for
/// at most half the last commit's time (the wait the larger batch saves),
/// woken only once the group is whole; then it commits. A lone writer
/// (the last commit carried one) never waits.
fn run_always(s: &Shared) {
    // What the last commit carried, and how long it took.
    let mut last = (0usize, Duration::ZERO);
    loop {
        {
            let mut a = s.lock();
            while a.queue.is_empty() && !a.stopping {
                a = s.work.wait(a).unwrap_or_else(|e| e.into_inner());
            }
            if a.queue.is_empty() {
                return;
            }
            let until = Instant::now() + (last.1 / 2).min(MAX_GATHER);
            let mut held = false;
            // A failed log commits nothing more: the gather ends at once.
            while pending(&a.queue) < last.0 && !a.stopping && s.commits.failed().is_none() {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                a.wake_at = last.0;
                held = true;
                a = s
                    .work
                    .wait_timeout(a, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            a.wake_at = 0;
            if held {
                s.stats.gathered();
            }
            if !s.opts.commit_delay.is_zero() && !a.stopping && s.commits.failed().is_none() {
                drop(a);
                std::thread::sleep(s.opts.commit_delay);
            }
        }
        let started = Instant::now();
        match commit_queue(s) {
            Some(records) => last = (records, started.elapsed()),
            None => return,
        }
    }
}

/// Takes every pending batch, writes, syncs and commits it, in the calling
/// thread: how many records it committed; `None` once the log has failed
/// (then nothing more is written: these records are never written, their
/// writes never acknowledged).
fn commit_queue(s: &Shared) -> Option<usize> {
    let _syncing = s.syncing.lock().unwrap_or_else(|e| e.into_inner());
    commit_held(s)
}

/// [`commit_queue`] for a caller that holds `syncing`.
fn commit_held(s: &Shared) -> Option<usize> {
    let batches = std::mem::take(&mut s.lock().queue);
    if s.commits.failed().is_some() {
        return None;
    }
    if let Err((path, call, e)) = commit_batches(s, &batches) {
        s.fail(&path, call, e);
        return None;
    }
    Some(pending(&batches))
}

/// A failed call on a file: the file, the call, the error.
type Failed = (PathBuf, &'static str, std::io::Error);

/// Writes the batches in order, one `fdatasync` per run of batches bound
/// for the same segment, and commits each run once it is synced.
fn commit_batches(s: &Shared, batches: &[Batch]) -> Result<(), Failed> {
    let mut rest = batches;
    while let Some(first) = rest.first() {
        let run = rest
            .iter()
            .take_while(|b| Arc::ptr_eq(&b.segment, &first.segment))
            .count();
        let (now, later) = rest.split_at(run);
        let segment = &first.segment;
        let failed = |call| move |e| (segment.path.clone(), call, e);
        let mut file = &segment.file;
        for b in now {
            file.write_all(&b.buf).map_err(failed("write"))?;
        }
        s.sync(segment).map_err(failed("fdatasync"))?;
        let records: usize = now.iter().map(|b| b.appended.len()).sum();
        s.stats.synced(records as u64);
        // Counted before the waiters are released, so that statistics
        // read after a commit returns include it.
        let waits = now
            .iter()
            .flat_map(|b| b.appended.iter().map(Instant::elapsed));
        s.stats.committed(waits);
        s.commits.advance(now[run - 1].last);
        rest = later;
    }
    Ok(())
}

/// `everysec`: once a second, sync the active segment if anything was
/// written since the last sync; once more when stopped.
fn run_everysec(s: &Shared) {
    let mut next = Instant::now() + EVERYSEC;
    loop {
        let (segment, records, stopping) = {
            let mut a = s.lock();
            while !a.stopping && Instant::now() < next {
                let left = next.saturating_duration_since(Instant::now());
                a = s
                    .work
                    .wait_timeout(a, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            (
                Arc::clone(&a.active),
                std::mem::take(&mut a.unsynced),
                a.stopping,
            )
        };
        next = Instant::now() + EVERYSEC;
        if records > 0 {
            if let Err(e) = s.sync(&segment) {
                s.fail(&segment.path, "fdatasync", e);
                return;
            }
            s.stats.synced(records);
        }
        if stopping {
            return;
        }
    }
}
