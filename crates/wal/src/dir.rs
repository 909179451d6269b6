//! The data directory: its lock, its file names, and the file-system steps
//! (create, sync, rename, remove) that every other part composes.
//!
//! ```text
//! DIR/LOCK                       flock'ed exclusively while a Wal is open
//! DIR/CURRENT                    the manifest: the newest log segment's
//!                                generation and the directory's salt
//! DIR/CURRENT.tmp                a manifest being written (removed at open)
//! DIR/wal-<gen as 16 hex>.log    a log segment
//! DIR/snap-<gen as 16 hex>.snap  the state before log segment <gen>
//! DIR/snap-<gen as 16 hex>.tmp   a snapshot being written (removed at open)
//! ```

use std::any::Any;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::format::{self, encode_header, Header, HeaderError, Kind};
use crate::vfs::{Fs, FsFile};
use crate::Error;

/// The lock file's name inside the data directory.
pub const LOCK_FILE: &str = "LOCK";
/// The manifest's name inside the data directory.
pub const MANIFEST_FILE: &str = "CURRENT";
const MANIFEST_TEMP: &str = "CURRENT.tmp";

/// Holds the directory's lock until dropped.
pub(crate) struct DirLock {
    _lock: Box<dyn Any + Send + Sync>,
}

/// Creates `dir` if needed and takes its lock, refusing a directory another
/// opener holds. The name of `dir` is made durable (its parent synced) at
/// every open, not only when it is created: an open that created it and
/// failed before the sync is followed by one that finds it there.
pub(crate) fn lock(fs: &dyn Fs, dir: &Path) -> Result<DirLock, Error> {
    create_dir_all(fs, dir).map_err(Error::dir(dir))?;
    let parent = parent_of(dir);
    fs.sync_dir(parent).map_err(Error::dir(parent))?;
    let path = dir.join(LOCK_FILE);
    match fs.lock(&path) {
        Ok(lock) => Ok(DirLock { _lock: lock }),
        Err(e) if e.kind() == ErrorKind::WouldBlock => Err(Error::InUse {
            dir: dir.to_path_buf(),
            lock: path,
        }),
        Err(e) => Err(Error::Dir { path, source: e }),
    }
}

/// Creates `dir` and any missing parents, as `std::fs::create_dir_all`
/// does, and makes each new parent's name durable (its own parent
/// synced), or a power loss could take the directory, and every write
/// acknowledged in it, away: a directory's own `fsync` does not make its
/// name durable. ([`lock`] syncs the parent of `dir` itself.)
fn create_dir_all(fs: &dyn Fs, dir: &Path) -> std::io::Result<()> {
    let made = match fs.create_dir(dir) {
        Err(e) if e.kind() == ErrorKind::NotFound => match dir.parent() {
            Some(parent) if parent != dir && !parent.as_os_str().is_empty() => {
                create_dir_all(fs, parent)?;
                fs.sync_dir(parent_of(parent))?;
                fs.create_dir(dir)
            }
            _ => Err(e),
        },
        other => other,
    };
    match made {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// The directory holding `path` (`.` for a bare name).
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A file of the directory, by what its name says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    Log(u64),
    Snapshot(u64),
    Temp(PathBuf),
}

pub(crate) fn log_path(dir: &Path, generation: u64) -> PathBuf {
    dir.join(format!("wal-{generation:016x}.log"))
}

pub(crate) fn snapshot_path(dir: &Path, generation: u64) -> PathBuf {
    dir.join(format!("snap-{generation:016x}.snap"))
}

pub(crate) fn temp_path(dir: &Path, generation: u64) -> PathBuf {
    dir.join(format!("snap-{generation:016x}.tmp"))
}

pub(crate) fn manifest_path(dir: &Path) -> PathBuf {
    dir.join(MANIFEST_FILE)
}

fn parse_name(name: &str) -> Option<Entry> {
    if name == MANIFEST_TEMP {
        return Some(Entry::Temp(PathBuf::from(name)));
    }
    let hex = |s: &str| (s.len() == 16).then(|| u64::from_str_radix(s, 16).ok())?;
    if let Some(g) = name
        .strip_prefix("wal-")
        .and_then(|s| s.strip_suffix(".log"))
    {
        return hex(g).map(Entry::Log);
    }
    let rest = name.strip_prefix("snap-")?;
    if let Some(g) = rest.strip_suffix(".snap") {
        return hex(g).map(Entry::Snapshot);
    }
    rest.strip_suffix(".tmp")
        .and_then(hex)
        .map(|_| Entry::Temp(PathBuf::from(name)))
}

/// The directory's log files, snapshots and leftover temporary files.
pub(crate) fn list(fs: &dyn Fs, dir: &Path) -> Result<Vec<Entry>, Error> {
    let mut out = Vec::new();
    for name in fs.list(dir).map_err(Error::dir(dir))? {
        match name.to_str().and_then(parse_name) {
            Some(Entry::Temp(p)) => out.push(Entry::Temp(dir.join(p))),
            Some(e) => out.push(e),
            None => {}
        }
    }
    Ok(out)
}

/// Makes the directory's entries (creations, renames, removals) durable.
pub(crate) fn sync_dir(fs: &dyn Fs, dir: &Path) -> Result<(), Error> {
    fs.sync_dir(dir).map_err(Error::dir(dir))
}

/// Creates a new file holding just a header, not yet synced.
pub(crate) fn create(fs: &dyn Fs, path: &Path, header: &Header) -> Result<Box<dyn FsFile>, Error> {
    let f = fs.create(path).map_err(Error::io(path))?;
    f.write_all(&encode_header(header.kind, header.generation, header.salt))
        .map_err(Error::io(path))?;
    Ok(f)
}

/// Records `generation` as the newest log segment created, durably: the
/// manifest is written to a temporary name, synced, renamed into place,
/// and the directory synced.
pub(crate) fn write_manifest(
    fs: &dyn Fs,
    dir: &Path,
    generation: u64,
    salt: u64,
) -> Result<(), Error> {
    let tmp = dir.join(MANIFEST_TEMP);
    let header = Header {
        kind: Kind::Manifest,
        generation,
        salt,
    };
    create(fs, &tmp, &header)?
        .sync_all()
        .map_err(Error::io(&tmp))?;
    let path = manifest_path(dir);
    fs.rename(&tmp, &path).map_err(Error::io(&path))?;
    sync_dir(fs, dir)
}

/// The manifest, if the directory has one; what is wrong with it, if it is
/// not one.
pub(crate) fn read_manifest(
    fs: &dyn Fs,
    dir: &Path,
) -> Result<Option<Result<Header, HeaderError>>, Error> {
    let path = manifest_path(dir);
    match fs.read(&path) {
        Ok(bytes) => Ok(Some(format::decode_header(&bytes).and_then(|h| {
            if h.kind == Kind::Manifest && bytes.len() == format::HEADER_LEN {
                Ok(h)
            } else {
                Err(HeaderError::Misnamed(h.kind, h.generation))
            }
        }))),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&path)(e)),
    }
}

/// A new directory's salt: random, from the standard library's per-process
/// hash keys, mixed with the time and process id. It keeps payloads from
/// passing for records; it is not a secret against anyone who can read the
/// files.
pub(crate) fn new_salt() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    h.write_u128(now.as_nanos());
    h.write_u32(std::process::id());
    h.finish()
}

/// The first `len` bytes of a file (fewer when it is shorter), and its
/// length.
pub(crate) fn read_start(fs: &dyn Fs, path: &Path, len: usize) -> Result<(Vec<u8>, u64), Error> {
    fs.read_start(path, len).map_err(Error::io(path))
}

/// Removes a file; one already gone is fine.
pub(crate) fn remove(fs: &dyn Fs, path: &Path) -> Result<(), Error> {
    match fs.remove(path) {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(Error::io(path)(e)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let d = Path::new("/d");
        let name = |p: PathBuf| p.file_name().unwrap().to_str().unwrap().to_owned();
        assert_eq!(parse_name(&name(log_path(d, 0x2a))), Some(Entry::Log(0x2a)));
        assert_eq!(
            parse_name(&name(snapshot_path(d, 7))),
            Some(Entry::Snapshot(7))
        );
        assert!(matches!(
            parse_name(&name(temp_path(d, 7))),
            Some(Entry::Temp(_))
        ));
        assert_eq!(parse_name("wal-12.log"), None);
        assert_eq!(parse_name("LOCK"), None);
        assert_eq!(parse_name("CURRENT"), None);
        assert!(matches!(parse_name("CURRENT.tmp"), Some(Entry::Temp(_))));
        assert_eq!(parse_name("wal-zzzzzzzzzzzzzzzz.log"), None);
    }
}
