//! Replay at open: the newest snapshot, then every later log segment in
//! order, each record handed to the caller. Strict recovery refuses what it
//! cannot vouch for: corruption before the newest segment's tail, a bad end
//! of any older segment, a snapshot that does not end with its trailer, a
//! gap in the generations, a missing snapshot, or a newest segment missing
//! by the manifest's record. `Recover::Truncate` keeps the valid prefix
//! instead and reports each cut. A torn tail of the newest segment is cut
//! in either mode. The files a finished or interrupted compaction left
//! behind are removed.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::dir::{self, Entry};
use crate::format::{self, Bad, End, Header, HeaderError, Kind, SnapshotBad, HEADER_LEN};
use crate::vfs::Fs;
use crate::{Error, Recover};

/// The error a replay callback may return to stop the open.
pub type ApplyError = Box<dyn std::error::Error + Send + Sync>;

/// One thing replay cut, removed or found missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub path: PathBuf,
    /// The byte offset the file was cut at (0 for a file removed whole or
    /// missing).
    pub offset: u64,
    /// The bytes removed from this file.
    pub dropped: u64,
    /// Why.
    pub why: Why,
}

/// Why replay cut or removed a file, or reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// The newest segment's torn tail: cut in either mode.
    TornTail(Bad),
    /// A newest segment whose header never reached the disk (its creation
    /// was not yet in the manifest): removed in either mode.
    TornHeader,
    /// A bad record cut under `Recover::Truncate`: corruption before a
    /// tail, or a bad end of a segment that later ones follow.
    Corrupt(Bad),
    /// A damaged snapshot, cut under `Recover::Truncate` after its last
    /// valid record and given a new trailer.
    Snapshot(SnapshotBad),
    /// A segment removed whole under `Recover::Truncate` because the log
    /// before it is broken at `broken` (a damaged or missing file).
    After { broken: PathBuf },
    /// A file the log needs, missing (under `Recover::Truncate`).
    Missing,
    /// The manifest was missing or damaged; it is rewritten (under
    /// `Recover::Truncate`).
    Manifest,
}

impl fmt::Display for Cut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (path, at) = (self.path.display(), self.offset);
        match &self.why {
            Why::TornTail(bad) => write!(f, "cut {path} at byte {at} (torn tail: {bad})"),
            Why::TornHeader => write!(
                f,
                "removed {path} (its header was cut short as it was created)"
            ),
            Why::Corrupt(bad) => write!(f, "cut {path} at byte {at} (corruption: {bad})"),
            Why::Snapshot(what) => write!(
                f,
                "cut {path} at byte {at} and wrote a new trailer (damaged snapshot: {what})"
            ),
            Why::After { broken } => write!(
                f,
                "removed {path}, {} bytes (the log is broken before it, at {})",
                self.dropped,
                broken.display()
            ),
            Why::Missing => write!(f, "{path} is missing"),
            Why::Manifest => write!(f, "{path} was missing or damaged and is rewritten"),
        }
    }
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
    /// Bytes cut from files (torn tails, truncated corruption, files
    /// removed whole).
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
            write!(f, "; {c}")?;
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
    /// The directory's salt, for the files written from here on.
    pub salt: u64,
}

type Apply<'a> = &'a mut dyn FnMut(&[u8]) -> Result<(), ApplyError>;

/// The directory's files, by name.
struct Found {
    snaps: Vec<u64>,
    logs: Vec<u64>,
    manifest: Option<Result<Header, HeaderError>>,
}

/// What is replayed: the base snapshot and the log segments after it, in
/// order and without a gap.
struct Layout {
    base: Option<u64>,
    logs: Vec<u64>,
}

/// How replay of a log segment ended.
enum Flow {
    Go,
    /// Cut under truncate: the segments after it are dropped.
    Broken,
    /// Its header is damaged, under truncate: it and those after it are
    /// dropped.
    Gone,
}

struct Replay<'a> {
    fs: &'a dyn Fs,
    dir: &'a Path,
    recover: Recover,
    salt: u64,
    /// The generation the manifest records: every segment before it was
    /// synced before the manifest moved past it (0: none).
    sealed_below: u64,
    recovery: Recovery,
    disk_bytes: u64,
}

/// Replays the directory's snapshot and logs into `apply`, in order.
pub(crate) fn replay(
    fs: &dyn Fs,
    dir: &Path,
    recover: Recover,
    apply: Apply<'_>,
) -> Result<Replayed, Error> {
    let found = survey(fs, dir)?;
    let salt = choose_salt(fs, dir, &found)?;
    let mut r = Replay {
        fs,
        dir,
        recover,
        salt,
        sealed_below: 0,
        recovery: Recovery::default(),
        disk_bytes: 0,
    };
    let layout = r.layout(&found)?;
    r.recovery.snapshot = layout.base;
    if let Some(g) = layout.base {
        r.recovery.snapshot_records = r.replay_snapshot(g, apply)?;
    }
    let kept = r.replay_logs(&layout.logs, apply)?;
    // What was replayed is the state the next records build on: every
    // segment the manifest has not sealed is synced before the manifest
    // moves past it, the newest and one a compaction's cut left unsealed
    // (its last sync may have failed: the records replayed from it may be
    // in the page cache only).
    let unsealed = kept
        .iter()
        .filter(|&&g| g >= r.sealed_below || Some(&g) == kept.last());
    for &n in unsealed {
        sync_file(fs, &dir::log_path(dir, n))?;
    }
    let base = layout.base.unwrap_or(0);
    remove_superseded(fs, dir, base, &found.logs, &found.snaps)?;
    Ok(Replayed {
        recovery: r.recovery,
        next_generation: kept.last().map_or(base.max(1), |n| n + 1),
        disk_bytes: r.disk_bytes,
        salt,
    })
}

/// Lists the directory, removing leftover temporary files.
fn survey(fs: &dyn Fs, dir: &Path) -> Result<Found, Error> {
    let mut snaps = Vec::new();
    let mut logs = Vec::new();
    for e in dir::list(fs, dir)? {
        match e {
            Entry::Temp(p) => dir::remove(fs, &p)?,
            Entry::Snapshot(g) => snaps.push(g),
            Entry::Log(g) => logs.push(g),
        }
    }
    snaps.sort_unstable();
    logs.sort_unstable();
    let manifest = dir::read_manifest(fs, dir)?;
    Ok(Found {
        snaps,
        logs,
        manifest,
    })
}

/// The directory's salt: the manifest's, else that of a file already
/// written, else a new one. Refuses a directory an older build wrote.
fn choose_salt(fs: &dyn Fs, dir: &Path, found: &Found) -> Result<u64, Error> {
    let paths = found
        .snaps
        .iter()
        .map(|&g| dir::snapshot_path(dir, g))
        .chain(found.logs.iter().map(|&g| dir::log_path(dir, g)));
    let mut salt = match found.manifest {
        Some(Ok(h)) => Some(h.salt),
        _ => None,
    };
    for path in paths {
        match peek(fs, &path)?.0 {
            Err(HeaderError::Version(v)) if v < format::VERSION => {
                return Err(Error::OldFormat { path, version: v })
            }
            Ok(h) if salt.is_none() => salt = Some(h.salt),
            _ => {}
        }
    }
    Ok(salt.unwrap_or_else(dir::new_salt))
}

/// A file's header (or why it is none) and its length.
fn peek(fs: &dyn Fs, path: &Path) -> Result<(Result<Header, HeaderError>, u64), Error> {
    let (start, len) = dir::read_start(fs, path, HEADER_LEN)?;
    Ok((format::decode_header(&start), len))
}

impl Replay<'_> {
    fn truncating(&self) -> bool {
        self.recover == Recover::Truncate
    }

    fn note(&mut self, path: PathBuf, offset: u64, dropped: u64, why: Why) {
        self.recovery.dropped_bytes += dropped;
        self.recovery.cuts.push(Cut {
            path,
            offset,
            dropped,
            why,
        });
    }

    /// Decides what is replayed: the newest snapshot and the segments from
    /// its generation on, checked against the manifest and for gaps.
    fn layout(&mut self, found: &Found) -> Result<Layout, Error> {
        let manifest = self.manifest(found)?;
        self.sealed_below = manifest.unwrap_or(0);
        let base = found.snaps.last().copied();
        let start = base.unwrap_or(1).max(1);
        let mut logs: Vec<u64> = found.logs.iter().copied().filter(|&g| g >= start).collect();
        self.drop_torn_newest(&mut logs, manifest)?;
        self.check_newest(&logs, manifest, start)?;
        self.check_gaps(&mut logs, base, start)?;
        Ok(Layout { base, logs })
    }

    /// The newest generation the manifest records, if it can be read.
    /// With no manifest, only a directory whose opens all stopped before
    /// writing it (no snapshot, no segment holding a record) opens under
    /// strict recovery.
    fn manifest(&mut self, found: &Found) -> Result<Option<u64>, Error> {
        let path = dir::manifest_path(self.dir);
        let refusal = match found.manifest {
            Some(Ok(h)) => return Ok(Some(h.generation)),
            Some(Err(what)) => Error::BadManifest {
                path: path.clone(),
                what,
            },
            None if self.first_opens_stopped(found)? => return Ok(None),
            None => Error::NoManifest { path: path.clone() },
        };
        if !self.truncating() {
            return Err(refusal);
        }
        self.note(path, 0, 0, Why::Manifest);
        Ok(None)
    }

    /// No snapshot and no segment holding a record: every open so far
    /// stopped before it wrote the manifest, which an open writes before
    /// it returns, so no record was ever appended. (Several such segments:
    /// an open that failed after creating its segment, then another.)
    fn first_opens_stopped(&self, found: &Found) -> Result<bool, Error> {
        if !found.snaps.is_empty() {
            return Ok(false);
        }
        for &g in &found.logs {
            if peek(self.fs, &dir::log_path(self.dir, g))?.1 > HEADER_LEN as u64 {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Removes the newest segment when its header never reached the disk
    /// and the manifest does not record it: a crash while it was created.
    fn drop_torn_newest(
        &mut self,
        logs: &mut Vec<u64>,
        manifest: Option<u64>,
    ) -> Result<(), Error> {
        let Some(&n) = logs.last() else {
            return Ok(());
        };
        let path = dir::log_path(self.dir, n);
        let (header, len) = peek(self.fs, &path)?;
        if header.is_ok() || len > HEADER_LEN as u64 || manifest.is_some_and(|m| n <= m) {
            return Ok(());
        }
        dir::remove(self.fs, &path)?;
        self.note(path, 0, len, Why::TornHeader);
        logs.pop();
        Ok(())
    }

    /// Refuses (or, truncating, reports) a newest segment missing by the
    /// manifest's record.
    fn check_newest(
        &mut self,
        logs: &[u64],
        manifest: Option<u64>,
        start: u64,
    ) -> Result<(), Error> {
        let newest = logs.last().copied().unwrap_or(start - 1);
        let Some(m) = manifest.filter(|&m| newest < m) else {
            return Ok(());
        };
        let path = dir::log_path(self.dir, newest + 1);
        if !self.truncating() {
            return Err(Error::MissingNewest {
                path,
                manifest: dir::manifest_path(self.dir),
                generation: m,
            });
        }
        self.note(path, 0, 0, Why::Missing);
        Ok(())
    }

    /// Refuses (or, truncating, cuts the log at) the first generation
    /// missing from `start` on: a gap, or a missing snapshot when the log
    /// does not start at generation 1.
    fn check_gaps(
        &mut self,
        logs: &mut Vec<u64>,
        base: Option<u64>,
        start: u64,
    ) -> Result<(), Error> {
        let Some(i) = (0..logs.len()).find(|&i| logs[i] != start + i as u64) else {
            return Ok(());
        };
        let (missing, next) = (start + i as u64, logs[i]);
        let (path, refusal) = if base.is_none() && missing == 1 {
            let path = dir::snapshot_path(self.dir, next);
            let first = dir::log_path(self.dir, next);
            (path.clone(), Error::MissingSnapshot { path, first })
        } else {
            let path = dir::log_path(self.dir, missing);
            let next = dir::log_path(self.dir, next);
            (path.clone(), Error::Gap { path, next })
        };
        if !self.truncating() {
            return Err(refusal);
        }
        self.note(path.clone(), 0, 0, Why::Missing);
        self.remove_after(&logs[i..], &path)?;
        logs.truncate(i);
        Ok(())
    }

    /// Removes the segments `gens`, whose log is broken before them at
    /// `broken` (truncating).
    fn remove_after(&mut self, gens: &[u64], broken: &Path) -> Result<(), Error> {
        for &g in gens.iter().rev() {
            let path = dir::log_path(self.dir, g);
            let len = self.fs.len(&path).map_err(Error::io(&path))?;
            dir::remove(self.fs, &path)?;
            self.note(
                path,
                0,
                len,
                Why::After {
                    broken: broken.to_path_buf(),
                },
            );
        }
        if !gens.is_empty() {
            dir::sync_dir(self.fs, self.dir)?;
        }
        Ok(())
    }

    /// Reads a file whole and checks its header: kind and generation as
    /// named, and this directory's salt.
    fn read(
        &self,
        path: &Path,
        kind: Kind,
        generation: u64,
    ) -> Result<(Vec<u8>, Result<Header, Error>), Error> {
        let bytes = self.fs.read(path).map_err(Error::io(path))?;
        let bad = |what| Error::BadHeader {
            path: path.to_path_buf(),
            what,
        };
        let header = match format::decode_header(&bytes) {
            Ok(h) if h.kind != kind || h.generation != generation => {
                Err(bad(HeaderError::Misnamed(h.kind, h.generation)))
            }
            Ok(h) if h.salt != self.salt => Err(bad(HeaderError::Foreign(h.salt))),
            Ok(h) => Ok(h),
            Err(HeaderError::Version(v)) if v < format::VERSION => Err(Error::OldFormat {
                path: path.to_path_buf(),
                version: v,
            }),
            Err(what) => Err(bad(what)),
        };
        Ok((bytes, header))
    }

    /// Replays the snapshot; returns how many records it held. One that
    /// does not end with its trailer is refused, or (truncating) cut after
    /// its last valid record and given a new trailer.
    fn replay_snapshot(&mut self, g: u64, apply: Apply<'_>) -> Result<u64, Error> {
        let path = dir::snapshot_path(self.dir, g);
        let (bytes, header) = self.read(&path, Kind::Snapshot, g)?;
        let header = header?;
        let scan = format::scan(&bytes, &header, HEADER_LEN);
        let damage = format::check_trailer(&bytes, &header, &scan).err();
        if let (Some((offset, what)), false) = (damage, self.truncating()) {
            return Err(Error::Snapshot {
                path,
                offset: offset as u64,
                what,
            });
        }
        apply_records(&path, &bytes, &scan.records, apply)?;
        let count = scan.records.len() as u64;
        if let Some((offset, what)) = damage {
            reseal(self.fs, &path, &header, scan.good_end as u64, count)?;
            let dropped = (bytes.len() - scan.good_end) as u64;
            self.note(path, offset as u64, dropped, Why::Snapshot(what));
        }
        self.disk_bytes += (scan.good_end + format::TRAILER_LEN) as u64;
        Ok(count)
    }

    /// Replays the segments in order; returns those kept (all but the ones
    /// after a segment cut under truncate).
    fn replay_logs(&mut self, logs: &[u64], apply: Apply<'_>) -> Result<Vec<u64>, Error> {
        let tails = self.may_have_torn_tail(logs)?;
        for (i, &g) in logs.iter().enumerate() {
            let path = dir::log_path(self.dir, g);
            match self.replay_log(&path, g, tails[i], apply)? {
                Flow::Go => {}
                Flow::Broken => {
                    self.remove_after(&logs[i + 1..], &path)?;
                    return Ok(logs[..=i].to_vec());
                }
                Flow::Gone => {
                    self.remove_after(&logs[i..], &path)?;
                    return Ok(logs[..i].to_vec());
                }
            }
        }
        Ok(logs.to_vec())
    }

    /// Which segments may end in a torn tail: the newest, and one the
    /// manifest has not sealed when no later segment holds a record (a
    /// crash while a compaction's cut waited for the old segment's last
    /// records: the new segment is still empty).
    fn may_have_torn_tail(&self, logs: &[u64]) -> Result<Vec<bool>, Error> {
        let mut tails = vec![false; logs.len()];
        for (i, &g) in logs.iter().enumerate().rev() {
            tails[i] = g >= self.sealed_below || i + 1 == logs.len();
            let len = peek(self.fs, &dir::log_path(self.dir, g))?.1;
            if len > HEADER_LEN as u64 {
                break;
            }
        }
        Ok(tails)
    }

    /// Replays one segment, adding its records to the count.
    fn replay_log(
        &mut self,
        path: &Path,
        g: u64,
        may_tear: bool,
        apply: Apply<'_>,
    ) -> Result<Flow, Error> {
        let (bytes, header) = self.read(path, Kind::Log, g)?;
        let header = match header {
            Ok(h) => h,
            // A header cut short in a segment the manifest records, or
            // that later ones follow: its creation had been synced.
            Err(_) if bytes.len() <= HEADER_LEN && self.truncating() => return Ok(Flow::Gone),
            Err(_) if bytes.len() <= HEADER_LEN => {
                return Err(Error::TornHeader {
                    path: path.to_path_buf(),
                })
            }
            Err(e) => return Err(e),
        };
        let scan = format::scan(&bytes, &header, HEADER_LEN);
        let why = self.judge(path, may_tear, &scan.end)?;
        apply_records(path, &bytes, &scan.records, apply)?;
        self.recovery.log_records += scan.records.len() as u64;
        self.disk_bytes += scan.good_end as u64;
        let Some(why) = why else {
            return Ok(Flow::Go);
        };
        cut_file(self.fs, path, scan.good_end as u64)?;
        let dropped = (bytes.len() - scan.good_end) as u64;
        let broken = matches!(why, Why::Corrupt(_));
        self.note(path.to_path_buf(), scan.good_end as u64, dropped, why);
        Ok(if broken { Flow::Broken } else { Flow::Go })
    }

    /// Whether a segment is cut (and why), or the open refused. Only the
    /// newest segment can have a torn tail (see `may_have_torn_tail`): an
    /// older one was synced before the manifest moved past it, so a bad end
    /// there is damage.
    fn judge(&self, path: &Path, may_tear: bool, end: &End) -> Result<Option<Why>, Error> {
        let (offset, bad) = match *end {
            End::Clean => return Ok(None),
            End::Tail { bad, .. } if may_tear => return Ok(Some(Why::TornTail(bad))),
            End::Tail { offset, bad } | End::Middle { offset, bad, .. } => (offset, bad),
        };
        if self.truncating() {
            return Ok(Some(Why::Corrupt(bad)));
        }
        let (path, offset) = (path.to_path_buf(), offset as u64);
        Err(match end {
            End::Tail { .. } => Error::DamagedSegment { path, offset, bad },
            _ => Error::Corrupt { path, offset, bad },
        })
    }
}

fn apply_records(
    path: &Path,
    bytes: &[u8],
    records: &[std::ops::Range<usize>],
    apply: Apply<'_>,
) -> Result<(), Error> {
    for r in records {
        apply(&bytes[r.clone()]).map_err(|source| Error::Apply {
            path: path.to_path_buf(),
            offset: (r.start - format::FRAME_LEN) as u64,
            source,
        })?;
    }
    Ok(())
}

/// Removes what a compaction to snapshot `base` made obsolete, when a crash
/// stopped it before it did so itself.
fn remove_superseded(
    fs: &dyn Fs,
    dir: &Path,
    base: u64,
    logs: &[u64],
    snaps: &[u64],
) -> Result<(), Error> {
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
        dir::remove(fs, &p)?;
        removed = true;
    }
    if removed {
        dir::sync_dir(fs, dir)?;
    }
    Ok(())
}

/// Cuts a file at byte `at` and syncs it.
fn cut_file(fs: &dyn Fs, path: &Path, at: u64) -> Result<(), Error> {
    let f = fs.open_write(path).map_err(Error::io(path))?;
    f.set_len(at)
        .and_then(|()| f.sync_all())
        .map_err(Error::io(path))
}

/// Cuts a snapshot after its last valid record (at `at`) and writes a
/// trailer counting the `count` records before it.
fn reseal(fs: &dyn Fs, path: &Path, header: &Header, at: u64, count: u64) -> Result<(), Error> {
    let mut trailer = Vec::new();
    format::encode_trailer(header, at, count, &mut trailer);
    let f = fs.open_write(path).map_err(Error::io(path))?;
    f.set_len(at)
        .and_then(|()| f.write_all_at(&trailer, at))
        .and_then(|()| f.sync_all())
        .map_err(Error::io(path))
}

/// Makes a segment that an earlier process wrote durable before a newer
/// one is created, so that only the newest can ever have a torn tail.
fn sync_file(fs: &dyn Fs, path: &Path) -> Result<(), Error> {
    fs.sync_file(path).map_err(Error::io(path))
}
