//! Faults put under the log as layers over any [`Fs`]: the one way the
//! crate injects a fault, whether over the real disk (the hidden
//! `--fail-syncs-after` and `--fsync-delay` flags, which
//! [`Options::fail_syncs_after`](crate::Options::fail_syncs_after) and
//! [`Options::fsync_delay`](crate::Options::fsync_delay) become at open)
//! or over the simulated one (`sim`, which a layer composes with).
//!
//! A layer wraps every file it opens, and acts on its data `fsync`s
//! (`fdatasync`: what commits records); every other call goes straight
//! through. [`fail_syncs_after`] fails each one after the first `n` that
//! succeed with `EIO`, as a dying disk's would; [`delay_syncs`] sleeps
//! before each, a slow disk. Layers stack: `delay_syncs(fail_syncs_after(
//! fs, 3), 2ms)` sleeps, then counts, then syncs.

use std::any::Any;
use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::{Fs, FsFile, FsRef};

/// `EIO`: what a failed sync returns.
const EIO: i32 = 5;

/// What a layer does around each data `fsync` of a file it opened.
trait SyncFault: fmt::Debug + Send + Sync + 'static {
    /// Before the call: an error fails it, and the call is not made.
    fn before(&self) -> io::Result<()>;
    /// After the call failed.
    fn failed(&self) {}
}

/// Every data `fsync` after the first `after` that succeed fails.
#[derive(Debug)]
struct FailAfter {
    after: u64,
    /// Calls let through: those that succeeded, and those in flight.
    ok: AtomicU64,
}

impl SyncFault for FailAfter {
    /// Takes a slot in one atomic step, so that concurrent syncs never
    /// let more than `after` through.
    fn before(&self) -> io::Result<()> {
        let below = |n: u64| (n < self.after).then_some(n + 1);
        match self
            .ok
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, below)
        {
            Ok(_) => Ok(()),
            Err(_) => Err(io::Error::from_raw_os_error(EIO)),
        }
    }

    /// A call the disk failed gives its slot back: only successes count.
    fn failed(&self) {
        self.ok.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Each data `fsync` sleeps first.
#[derive(Debug)]
struct Delay(Duration);

impl SyncFault for Delay {
    fn before(&self) -> io::Result<()> {
        std::thread::sleep(self.0);
        Ok(())
    }
}

/// `inner`, with every data `fsync` after the first `n` that succeed
/// failing with `EIO` (the call is then not made).
pub fn fail_syncs_after(inner: FsRef, n: u64) -> FsRef {
    layer(
        inner,
        FailAfter {
            after: n,
            ok: AtomicU64::new(0),
        },
    )
}

/// `inner`, with every data `fsync` sleeping `delay` first.
pub fn delay_syncs(inner: FsRef, delay: Duration) -> FsRef {
    layer(inner, Delay(delay))
}

/// `fs` with the test switches' layers: the failure under the delay, so
/// that a delayed `fsync` that fails still took its time.
pub(crate) fn with_switches(fs: FsRef, fail_after: Option<u64>, delay: Duration) -> FsRef {
    let fs = match fail_after {
        Some(n) => fail_syncs_after(fs, n),
        None => fs,
    };
    if delay.is_zero() {
        fs
    } else {
        delay_syncs(fs, delay)
    }
}

fn layer(inner: FsRef, fault: impl SyncFault) -> FsRef {
    Arc::new(Layer {
        inner,
        fault: Arc::new(fault),
    })
}

/// A file system with a fault around its files' data `fsync`s.
struct Layer {
    inner: FsRef,
    fault: Arc<dyn SyncFault>,
}

impl fmt::Debug for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} over {:?}", self.fault, self.inner)
    }
}

impl Layer {
    fn wrap(&self, file: Box<dyn FsFile>) -> Box<dyn FsFile> {
        Box::new(LayerFile {
            inner: file,
            fault: Arc::clone(&self.fault),
        })
    }
}

impl Fs for Layer {
    fn create_dir(&self, path: &Path) -> io::Result<()> {
        self.inner.create_dir(path)
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn Any + Send + Sync>> {
        self.inner.lock(path)
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        self.inner.create(path).map(|f| self.wrap(f))
    }

    fn open_write(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        self.inner.open_write(path).map(|f| self.wrap(f))
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.inner.read(path)
    }

    fn read_start(&self, path: &Path, len: usize) -> io::Result<(Vec<u8>, u64)> {
        self.inner.read_start(path, len)
    }

    fn len(&self, path: &Path) -> io::Result<u64> {
        self.inner.len(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.inner.rename(from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        self.inner.remove(path)
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<OsString>> {
        self.inner.list(dir)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.inner.sync_dir(dir)
    }

    fn sync_file(&self, path: &Path) -> io::Result<()> {
        self.inner.sync_file(path)
    }
}

/// A file a [`Layer`] opened.
struct LayerFile {
    inner: Box<dyn FsFile>,
    fault: Arc<dyn SyncFault>,
}

impl FsFile for LayerFile {
    fn write_all(&self, buf: &[u8]) -> io::Result<()> {
        self.inner.write_all(buf)
    }

    fn write_all_at(&self, buf: &[u8], at: u64) -> io::Result<()> {
        self.inner.write_all_at(buf, at)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.fault.before()?;
        let synced = self.inner.sync_data();
        if synced.is_err() {
            self.fault.failed();
        }
        synced
    }

    fn sync_all(&self) -> io::Result<()> {
        self.inner.sync_all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vfs::sim::{At, Call, Fault, SimFs};
    use std::path::PathBuf;
    use std::time::Instant;

    /// `/f`, its name durable.
    fn file(fs: &FsRef) -> Box<dyn FsFile> {
        let f = fs.create(&PathBuf::from("/f")).unwrap();
        fs.sync_dir(Path::new("/")).unwrap();
        f
    }

    #[test]
    fn syncs_fail_after_the_first_n_that_succeed_and_stay_failed() {
        let sim = SimFs::new(1);
        let fs = fail_syncs_after(sim.shared(), 2);
        let f = file(&fs);
        f.write_all(b"one").unwrap();
        f.sync_data().unwrap();
        f.sync_data().unwrap();
        f.write_all(b"two").unwrap();
        for _ in 0..3 {
            assert_eq!(f.sync_data().unwrap_err().raw_os_error(), Some(EIO));
        }
        // The failed calls were never made: the disk holds what the two
        // that succeeded made durable.
        assert_eq!(sim.calls_by_kind()[&Call::SyncData], 2);
        assert_eq!(sim.durable(Path::new("/f")).unwrap(), b"one");
        // Only data syncs count and fail; a whole-file sync goes through.
        f.sync_all().unwrap();
    }

    #[test]
    fn a_sync_the_disk_fails_is_not_counted_as_one_that_succeeded() {
        let sim = SimFs::new(2);
        sim.inject(Fault {
            at: At::Nth(Call::SyncData, 1),
            errno: EIO,
            torn: false,
        });
        let fs = fail_syncs_after(sim.shared(), 1);
        let f = file(&fs);
        assert!(f.sync_data().is_err(), "the disk's own failure");
        f.sync_data().unwrap();
        assert!(f.sync_data().is_err(), "the layer's, after one success");
    }

    #[test]
    fn concurrent_syncs_never_let_more_than_n_through() {
        let sim = SimFs::new(4);
        let fs = fail_syncs_after(sim.shared(), 50);
        let f: Arc<dyn FsFile> = Arc::from(file(&fs));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let f = Arc::clone(&f);
                std::thread::spawn(move || (0..40).filter(|_| f.sync_data().is_ok()).count())
            })
            .collect();
        let ok: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert_eq!(ok, 50);
        assert_eq!(sim.calls_by_kind()[&Call::SyncData], 50);
    }

    #[test]
    fn layers_stack_the_delay_over_the_failure() {
        let sim = SimFs::new(3);
        let delay = Duration::from_millis(20);
        let fs = with_switches(sim.shared(), Some(1), delay);
        let f = file(&fs);
        let start = Instant::now();
        f.sync_data().unwrap();
        assert!(f.sync_data().is_err());
        // Each waited its delay, the failed one too.
        assert!(start.elapsed() >= delay * 2);
        assert!(format!("{fs:?}").contains("Delay"), "{fs:?}");
        let plain = with_switches(sim.shared(), None, Duration::ZERO);
        assert!(format!("{plain:?}").starts_with("SimFs"), "{plain:?}");
    }
}
