//! Replay at open: the newest snapshot, then every later log segment in
//! order, each record handed to the caller; torn tails cut, corruption
//! before a tail refused (or cut, under `Recover::Truncate`), and the files
//! a finished or interrupted compaction left behind removed.

use std::fmt;
use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};

use crate::dir::{self, Entry};
use crate::format::{self, Bad, End, HeaderError, Kind, HEADER_LEN};
use crate::{Error, Recover};

/// The error a replay callback may return to stop the open.
pub type ApplyError = Box<dyn std::error::Error + Send + Sync>;

/// One place where replay cut a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub path: PathBuf,
    /// The byte offset the file was cut at.
    pub offset: u64,
    /// The bytes removed from this file.
    pub dropped: u64,
    /// Why the record at `offset` was bad.
    pub bad: Bad,
    /// True for a torn tail; false for corruption cut under
    /// `Recover::Truncate`.
    pub tail: bool,
}

/// What replay found: the startup line's numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    /// The snapshot replayed first, by generation, if any.
    pub snapshot: Option<u64>,
    /// Records read from that snapshot.
    pub snapshot_records: u64,
    /// Records read from log segments after it.
    pub log_records: u64,
    /// Bytes cut from files (torn tails, truncated corruption, log files
    /// with a torn header, which are removed: their cut is at offset 0).
    pub dropped_bytes: u64,
    /// Each cut, in the order met.
    pub cuts: Vec<Cut>,
}

impl Recovery {
    /// Every record replayed, snapshot and log.
    pub fn records(&self) -> u64 {
        self.snapshot_records + self.log_records
    }
}

impl fmt::Display for Recovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "replayed {} records", self.records())?;
        if let Some(g) = self.snapshot {
            write!(f, " ({} from snapshot {g})", self.snapshot_records)?;
        }
        write!(f, ", dropped {} bytes", self.dropped_bytes)?;
        for c in &self.cuts {
            let why = if c.tail { "torn tail" } else { "corruption" };
            write!(
                f,
                "; cut {} at byte {} ({why}: {})",
                c.path.display(),
                c.offset,
                c.bad
            )?;
        }
        Ok(())
    }
}

/// The outcome of replay, with what the writer needs to carry on.
pub(crate) struct Replayed {
    pub recovery: Recovery,
    /// The generation of the next log segment to create.
    pub next_generation: u64,
    /// Bytes on disk that the next compaction would replace.
    pub disk_bytes: u64,
}

type Apply<'a> = &'a mut dyn FnMut(&[u8]) -> Result<(), ApplyError>;

/// Replays the directory's snapshot and logs into `apply`, in order.
pub(crate) fn replay(dir: &Path, recover: Recover, apply: Apply<'_>) -> Result<Replayed, Error> {
    let entries = dir::list(dir)?;
    let mut snaps = Vec::new();
    let mut logs = Vec::new();
    for e in entries {
        match e {
            Entry::Temp(p) => dir::remove(&p)?,
            Entry::Snapshot(g) => snaps.push(g),
            Entry::Log(g) => logs.push(g),
        }
    }
    snaps.sort_unstable();
    logs.sort_unstable();
    let base = snaps.last().copied();
    let mut out = Replayed {
        recovery: Recovery {
            snapshot: base,
            ..Recovery::default()
        },
        next_generation: 1 + logs.iter().chain(&snaps).max().copied().unwrap_or(0),
        disk_bytes: 0,
    };
    if let Some(g) = base {
        let path = dir::snapshot_path(dir, g);
        let n = replay_file(&path, Kind::Snapshot, g, recover, &mut out, apply)?;
        out.recovery.snapshot_records = n;
    }
    let base = base.unwrap_or(0);
    for &g in logs.iter().filter(|&&g| g >= base) {
        let path = dir::log_path(dir, g);
        out.recovery.log_records += replay_file(&path, Kind::Log, g, recover, &mut out, apply)?;
    }
    remove_superseded(dir, base, &logs, &snaps)?;
    Ok(out)
}

/// Removes what a compaction to snapshot `base` made obsolete, when a crash
/// stopped it before it did so itself.
fn remove_superseded(dir: &Path, base: u64, logs: &[u64], snaps: &[u64]) -> Result<(), Error> {
    let old_logs = logs
        .iter()
        .filter(|&&g| g < base)
        .map(|&g| dir::log_path(dir, g));
    let old_snaps = snaps
        .iter()
        .filter(|&&g| g < base)
        .map(|&g| dir::snapshot_path(dir, g));
    let mut removed = false;
    for p in old_logs.chain(old_snaps) {
        dir::remove(&p)?;
        removed = true;
    }
    if removed {
        dir::sync_dir(dir)?;
    }
    Ok(())
}

/// Replays one file; returns how many records it held.
fn replay_file(
    path: &Path,
    kind: Kind,
    generation: u64,
    recover: Recover,
    out: &mut Replayed,
    apply: Apply<'_>,
) -> Result<u64, Error> {
    let bytes = fs::read(path).map_err(Error::io(path))?;
    match format::decode_header(&bytes) {
        Ok(h) if h.kind == kind && h.generation == generation => {}
        Ok(h) => {
            return Err(bad_header(
                path,
                HeaderError::Misnamed(h.kind, h.generation),
            ))
        }
        // A log whose header never fully reached the disk was cut while it
        // was created: it holds no record.
        Err(_) if kind == Kind::Log && bytes.len() <= HEADER_LEN => {
            dir::remove(path)?;
            out.recovery.dropped_bytes += bytes.len() as u64;
            out.recovery.cuts.push(Cut {
                path: path.to_path_buf(),
                offset: 0,
                dropped: bytes.len() as u64,
                bad: Bad::Torn,
                tail: true,
            });
            return Ok(0);
        }
        Err(what) => return Err(bad_header(path, what)),
    }
    let scan = format::scan(&bytes, HEADER_LEN);
    let cut = judge(path, kind, recover, &scan.end)?;
    for r in &scan.records {
        apply(&bytes[r.clone()]).map_err(|source| Error::Apply {
            path: path.to_path_buf(),
            offset: (r.start - format::FRAME_LEN) as u64,
            source,
        })?;
    }
    if let Some((bad, tail)) = cut {
        cut_file(path, scan.good_end as u64, bytes.len() as u64)?;
        let dropped = (bytes.len() - scan.good_end) as u64;
        out.recovery.dropped_bytes += dropped;
        out.recovery.cuts.push(Cut {
            path: path.to_path_buf(),
            offset: scan.good_end as u64,
            dropped,
            bad,
            tail,
        });
    }
    out.disk_bytes += scan.good_end as u64;
    Ok(scan.records.len() as u64)
}

/// Whether the file is cut (and whether as a tail), or the open refused.
/// A snapshot was synced before it was renamed into place, so it has no
/// torn tail: any bad record in it is corruption.
fn judge(
    path: &Path,
    kind: Kind,
    recover: Recover,
    end: &End,
) -> Result<Option<(Bad, bool)>, Error> {
    let (offset, bad, tail) = match *end {
        End::Clean => return Ok(None),
        End::Tail { offset, bad } => (offset, bad, kind == Kind::Log),
        End::Middle { offset, bad, .. } => (offset, bad, false),
    };
    if tail || recover == Recover::Truncate {
        return Ok(Some((bad, tail)));
    }
    Err(Error::Corrupt {
        path: path.to_path_buf(),
        offset: offset as u64,
        bad,
    })
}

fn cut_file(path: &Path, at: u64, len: u64) -> Result<(), Error> {
    if at == len {
        return Ok(());
    }
    let f = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(Error::io(path))?;
    f.set_len(at)
        .and_then(|()| f.sync_all())
        .map_err(Error::io(path))
}

fn bad_header(path: &Path, what: HeaderError) -> Error {
    Error::BadHeader {
        path: path.to_path_buf(),
        what,
    }
}
