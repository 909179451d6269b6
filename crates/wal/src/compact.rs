//! Compaction: replace the log with a snapshot of the live state, without
//! pausing appends.
//!
//! The sequence, each step durable before the next:
//!
//! 1. **Cut.** Create log segment `g` (its header synced, the directory
//!    synced), switch appends to it, and (under `os` and `everysec`) sync
//!    the old segment. Appends from here on go to `g`; the caller captures
//!    the live state *as of the cut* (see [`Wal::begin_compaction`]).
//!    Then, once the old segment is sealed (under `always`: once every
//!    record it takes is committed), record `g` in the manifest
//!    (`CURRENT`, replaced by a synced rename): from here on a bad end of
//!    a segment before `g` is damage, never a torn tail. This part runs at
//!    the start of step 2, off the caller's lock, so appends never wait
//!    for the old segment's last `fsync`.
//! 2. **Snapshot.** Write the state's records to `snap-g.tmp`, then its
//!    trailer (the record count, sealed), and `fsync` it.
//! 3. **Publish.** Rename it to `snap-g.snap`, `fsync` the directory.
//! 4. **Clean.** Remove the segments before `g` and older snapshots,
//!    `fsync` the directory.
//!
//! A crash anywhere recovers: before 3 the old snapshot and every segment
//! (the old ones and `g`, which may be newer than the manifest says) are
//! still there, and the `.tmp` is removed at open; after 3 replay starts
//! from `snap-g.snap` and segment `g`, and removes whatever step 4 had not
//! (in any order: the segments before `g` are not read).

use std::io::{self, BufWriter, Write};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::dir::{self, Entry};
use crate::format::{self, Header, Kind, HEADER_LEN, MAX_RECORD, TRAILER_LEN};
use crate::log::{Segment, Shared};
use crate::vfs::Writer;
use crate::{Durability, Error, Ticket, Wal};

impl Wal {
    /// Tells the log how many bytes the live state would take as a
    /// snapshot (the caller knows; the log does not read its records).
    pub fn set_live_bytes(&self, bytes: u64) {
        self.shared().live_bytes.store(bytes, Ordering::Relaxed);
    }

    /// Bytes on disk that a compaction would replace: the snapshot and
    /// every log segment since.
    pub fn disk_bytes(&self) -> u64 {
        self.shared().disk_bytes.load(Ordering::Relaxed)
    }

    /// True when the files have passed twice the live size and the floor,
    /// and no compaction is running.
    pub fn compaction_due(&self) -> bool {
        let s = self.shared();
        let disk = self.disk_bytes();
        !s.compacting.load(Ordering::Relaxed)
            && disk > s.opts.compaction_floor
            && disk > s.live_bytes.load(Ordering::Relaxed).saturating_mul(2)
    }

    /// Step 1, the cut: a new segment takes every append from here on.
    /// `None` when a compaction is already running.
    ///
    /// The caller must capture its live state exactly as of the cut: call
    /// this while no write is between being applied to the state and being
    /// appended (hold the lock that orders the two), copy or freeze the
    /// state, release, and only then write the snapshot (on any thread).
    /// When every record overwrites (kv PUT and DELETE, RESP SET and DEL),
    /// a state read at any moment after the cut is also correct, since
    /// replaying the new segment's records over it ends in the same state;
    /// records that do not (INCR, APPEND) need the exact cut.
    pub fn begin_compaction(&self) -> Result<Option<Compaction>, Error> {
        let s = self.shared();
        if s.compacting.swap(true, Ordering::AcqRel) {
            return Ok(None);
        }
        let mut c = Compaction {
            shared: Arc::clone(s),
            generation: 0,
            disk_at_cut: 0,
            old_last: Ticket(0),
        };
        c.cut()?;
        Ok(Some(c))
    }
}

/// A compaction between its cut and its snapshot; dropping it unfinished
/// abandons it (the next compaction or open cleans up).
pub struct Compaction {
    shared: Arc<Shared>,
    generation: u64,
    disk_at_cut: u64,
    /// The last record appended to the old segment.
    old_last: Ticket,
}

/// What a finished compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compacted {
    /// The snapshot's generation (and the segment appends went to at the cut).
    pub generation: u64,
    /// Records in the snapshot.
    pub records: u64,
    /// The snapshot file's size.
    pub bytes: u64,
    /// Old segments and snapshots removed.
    pub removed: usize,
}

/// Writes a snapshot's records; given to [`Compaction::write_with`].
pub struct SnapshotWriter {
    out: BufWriter<Writer>,
    header: Header,
    buf: Vec<u8>,
    records: u64,
    bytes: u64,
}

impl SnapshotWriter {
    /// Adds one record of the live state.
    pub fn record(&mut self, payload: &[u8]) -> io::Result<()> {
        if payload.len() > MAX_RECORD as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                Error::TooLong(payload.len()),
            ));
        }
        self.buf.clear();
        format::encode_sealed(payload, &self.header, self.bytes, &mut self.buf);
        self.out.write_all(&self.buf)?;
        self.records += 1;
        self.bytes += self.buf.len() as u64;
        Ok(())
    }

    /// Ends the snapshot with its trailer: the record count, sealed.
    fn finish(&mut self) -> io::Result<()> {
        self.buf.clear();
        format::encode_trailer(&self.header, self.bytes, self.records, &mut self.buf);
        self.out.write_all(&self.buf)?;
        self.bytes += TRAILER_LEN as u64;
        Ok(())
    }
}

impl Compaction {
    /// The generation of the snapshot this compaction writes.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    fn cut(&mut self) -> Result<(), Error> {
        let s = &self.shared;
        // The generation is spent only once its segment exists: a cut that
        // fails to create it leaves the number to the next one, or the
        // directory would have a gap that strict recovery refuses.
        // (Compactions run one at a time: `compacting`.)
        let g = s.next_generation.load(Ordering::Acquire);
        self.generation = g;
        let salt = s.salt();
        let segment = Arc::new(Segment::create(&*s.opts.fs, &s.dir, g, salt)?);
        s.next_generation.store(g + 1, Ordering::Release);
        s.checkpoint()?;
        let old = {
            let mut a = s.lock();
            self.disk_at_cut = s.disk_bytes.fetch_add(HEADER_LEN as u64, Ordering::AcqRel);
            self.old_last = Ticket(a.last_lsn());
            std::mem::replace(&mut a.active, segment)
        };
        if s.opts.durability != Durability::Always {
            old.file.sync_data().map_err(Error::io(&old.path))?;
        }
        s.checkpoint()
    }

    /// Steps 2 to 4 with the snapshot's records from an iterator.
    pub fn write_snapshot<I>(self, records: I) -> Result<Compacted, Error>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        self.write_with(|w| records.into_iter().try_for_each(|r| w.record(r.as_ref())))
    }

    /// The end of step 1: once the old segment is sealed (every record it
    /// takes written and synced), the manifest records `g` as the newest
    /// segment.
    fn record_cut(&self) -> Result<(), Error> {
        let s = &self.shared;
        if s.opts.durability == Durability::Always {
            s.commits.wait(self.old_last)?;
        }
        dir::write_manifest(&*s.opts.fs, &s.dir, self.generation, s.salt())?;
        s.checkpoint()
    }

    /// Steps 2 to 4 with a closure that writes the snapshot's records.
    pub fn write_with(
        self,
        write: impl FnOnce(&mut SnapshotWriter) -> io::Result<()>,
    ) -> Result<Compacted, Error> {
        self.record_cut()?;
        let s = &self.shared;
        let fs = &*s.opts.fs;
        let tmp = dir::temp_path(&s.dir, self.generation);
        let header = Header {
            kind: Kind::Snapshot,
            generation: self.generation,
            salt: s.salt(),
        };
        let file = dir::create(fs, &tmp, &header)?;
        let mut w = SnapshotWriter {
            out: BufWriter::new(Writer(file)),
            header,
            buf: Vec::new(),
            records: 0,
            bytes: HEADER_LEN as u64,
        };
        s.checkpoint()?;
        write(&mut w)
            .and_then(|()| w.finish())
            .map_err(Error::io(&tmp))?;
        let Writer(file) = w
            .out
            .into_inner()
            .map_err(|e| Error::io(&tmp)(e.into_error()))?;
        s.checkpoint()?;
        file.sync_all().map_err(Error::io(&tmp))?;
        s.checkpoint()?;
        let path = dir::snapshot_path(&s.dir, self.generation);
        fs.rename(&tmp, &path).map_err(Error::io(&path))?;
        s.checkpoint()?;
        dir::sync_dir(fs, &s.dir)?;
        s.checkpoint()?;
        let removed = self.remove_superseded()?;
        s.disk_bytes.fetch_add(w.bytes, Ordering::AcqRel);
        s.disk_bytes.fetch_sub(self.disk_at_cut, Ordering::AcqRel);
        s.stats.compacted();
        Ok(Compacted {
            generation: self.generation,
            records: w.records,
            bytes: w.bytes,
            removed,
        })
    }

    fn remove_superseded(&self) -> Result<usize, Error> {
        let s = &self.shared;
        let fs = &*s.opts.fs;
        let mut removed = 0;
        for e in dir::list(fs, &s.dir)? {
            let path = match e {
                Entry::Log(g) if g < self.generation => dir::log_path(&s.dir, g),
                Entry::Snapshot(g) if g < self.generation => dir::snapshot_path(&s.dir, g),
                _ => continue,
            };
            dir::remove(fs, &path)?;
            removed += 1;
            s.checkpoint()?;
        }
        dir::sync_dir(fs, &s.dir)?;
        Ok(removed)
    }
}

impl Drop for Compaction {
    fn drop(&mut self) {
        self.shared.compacting.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests;

/// The test-only hook that stops a compaction after its n-th step, as a
/// crash there would.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct CrashHook {
    after: std::sync::atomic::AtomicUsize,
    steps: std::sync::atomic::AtomicUsize,
}

#[cfg(test)]
impl CrashHook {
    /// Stop at the `k`-th step from now (counting from 1).
    pub(crate) fn after_more(&self, k: usize) {
        let now = self.steps.load(Ordering::Acquire);
        self.after.store(now + k, Ordering::Release);
    }
}

impl Shared {
    /// The directory's salt, as the active segment's header has it.
    fn salt(&self) -> u64 {
        self.lock().active.file.header().salt
    }

    /// A step of the compaction is done; under test, maybe "crash" here.
    fn checkpoint(&self) -> Result<(), Error> {
        #[cfg(test)]
        {
            let n = self.crash.steps.fetch_add(1, Ordering::AcqRel) + 1;
            if self.crash.after.load(Ordering::Acquire) == n {
                return Err(Error::SimulatedCrash);
            }
        }
        Ok(())
    }
}
