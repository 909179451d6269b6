//! The file system under the log: every call the crate makes on a file or
//! a directory goes through [`Fs`] and [`FsFile`], so that a test can put
//! a simulated disk under it (`sim`, with the `test-fs` feature) that
//! loses power and fails calls on purpose, as LazyFS does for real
//! programs. The faults a test puts under a disk, simulated or real,
//! are layers over any [`Fs`] (`fault`).
//!
//! Production uses [`RealFs`]: each method is the one `std` call (one
//! system call, or the loop `write_all` makes) the crate made before the
//! layer existed; the layer adds a virtual call, no system call.

use std::any::Any;
use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use nix::fcntl::{Flock, FlockArg};

pub mod fault;
#[cfg(any(test, feature = "test-fs"))]
pub mod sim;

/// The calls the log makes on directories and whole files.
pub trait Fs: fmt::Debug + Send + Sync {
    /// Creates the directory `path`; its parent must exist. An existing
    /// one is `AlreadyExists`, a missing parent `NotFound`.
    fn create_dir(&self, path: &Path) -> io::Result<()>;
    /// Opens (creating it if needed) and locks the file `path`
    /// exclusively, without waiting: `WouldBlock` when another holds it.
    /// The lock is held until the returned guard is dropped.
    fn lock(&self, path: &Path) -> io::Result<Box<dyn Any + Send + Sync>>;
    /// Creates `path` empty (truncating one already there), for writing.
    fn create(&self, path: &Path) -> io::Result<Box<dyn FsFile>>;
    /// Opens the existing file `path` for writing, at its start.
    fn open_write(&self, path: &Path) -> io::Result<Box<dyn FsFile>>;
    /// The whole of the file `path`.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// The first `len` bytes of `path` (fewer when it is shorter) and its
    /// length.
    fn read_start(&self, path: &Path, len: usize) -> io::Result<(Vec<u8>, u64)>;
    /// The length of the file `path`.
    fn len(&self, path: &Path) -> io::Result<u64>;
    /// Renames `from` to `to`, replacing `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes the file `path`.
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// The names in the directory `dir`.
    fn list(&self, dir: &Path) -> io::Result<Vec<OsString>>;
    /// `fsync`s the directory `dir`: its entries (creations, renames,
    /// removals) become durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Opens `path` read-only and `fsync`s it.
    fn sync_file(&self, path: &Path) -> io::Result<()>;
}

/// An open file.
pub trait FsFile: Send + Sync {
    /// Writes every byte of `buf` at the file's position, which moves
    /// past them.
    fn write_all(&self, buf: &[u8]) -> io::Result<()>;
    /// Writes every byte of `buf` at byte `at`; the position stays.
    fn write_all_at(&self, buf: &[u8], at: u64) -> io::Result<()>;
    /// Truncates or extends the file to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// `fdatasync`: the file's data becomes durable.
    fn sync_data(&self) -> io::Result<()>;
    /// `fsync`: the file's data and metadata become durable (not its name,
    /// which is its directory's).
    fn sync_all(&self) -> io::Result<()>;
}

/// A shared handle on a file system, as [`Options`](crate::Options)
/// holds it.
pub type FsRef = Arc<dyn Fs>;

/// The real file system: `std::fs` and `flock`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

impl RealFs {
    /// The real file system, shared.
    pub fn shared() -> FsRef {
        Arc::new(RealFs)
    }
}

impl Fs for RealFs {
    fn create_dir(&self, path: &Path) -> io::Result<()> {
        fs::create_dir(path)
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn Any + Send + Sync>> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => Ok(Box::new(lock)),
            Err((_, errno)) => Err(errno.into()),
        }
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        let f = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(path)?;
        Ok(Box::new(f))
    }

    fn open_write(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        Ok(Box::new(OpenOptions::new().write(true).open(path)?))
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        fs::read(path)
    }

    fn read_start(&self, path: &Path, len: usize) -> io::Result<(Vec<u8>, u64)> {
        let f = File::open(path)?;
        let size = f.metadata()?.len();
        let mut start = Vec::with_capacity(len);
        f.take(len as u64).read_to_end(&mut start)?;
        Ok((start, size))
    }

    fn len(&self, path: &Path) -> io::Result<u64> {
        Ok(fs::metadata(path)?.len())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<OsString>> {
        fs::read_dir(dir)?
            .map(|e| e.map(|e| e.file_name()))
            .collect()
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }

    fn sync_file(&self, path: &Path) -> io::Result<()> {
        File::open(path)?.sync_all()
    }
}

impl FsFile for File {
    fn write_all(&self, buf: &[u8]) -> io::Result<()> {
        let mut f = self;
        Write::write_all(&mut f, buf)
    }

    fn write_all_at(&self, buf: &[u8], at: u64) -> io::Result<()> {
        FileExt::write_all_at(self, buf, at)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        File::set_len(self, len)
    }

    fn sync_data(&self) -> io::Result<()> {
        File::sync_data(self)
    }

    fn sync_all(&self) -> io::Result<()> {
        File::sync_all(self)
    }
}

/// An [`FsFile`] as an `io::Write`, for a `BufWriter`.
pub(crate) struct Writer(pub Box<dyn FsFile>);

impl Write for Writer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write_all(buf).map(|()| buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
