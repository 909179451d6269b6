//! A simulated disk that keeps what a real one promises and nothing more,
//! loses power on demand, and fails the calls a test chooses, in memory.
//!
//! **What is durable.** Each file has its *durable* bytes (on the disk)
//! and its *volatile* bytes (the page cache, what reads see). A write
//! changes the volatile bytes; `fdatasync` or `fsync` of the file makes
//! them durable. Each directory has durable and volatile entries: a
//! create, rename or remove changes the volatile entries, and only an
//! `fsync` of the directory makes them durable; a file's own `fsync`
//! does not make its name durable. A directory made with `create_dir` is
//! an entry of its parent like any other.
//!
//! **Power loss** ([`SimFs::power_loss`], or [`SimFs::crash_at`] a chosen
//! call) drops everything volatile: each directory's entries go back to
//! their last synced state (a directory whose own entry is lost goes with
//! everything in it), each file's bytes to its durable bytes, except that,
//! as a real disk may, a file that was only appended to since its last
//! sync may keep a random prefix of the appended bytes ([`Loss::Prefix`]),
//! or a prefix followed by zeroes, a size that reached the disk before
//! the data did ([`Loss::ZeroTail`]). Until [`SimFs::power_on`], every
//! call fails with `EIO`; after it, files opened before the loss stay
//! dead (`EIO`) and locks are free, as for a new process.
//!
//! **Failures** ([`SimFs::inject`]): the n-th call, or the n-th call of a
//! kind, fails with an errno of the test's choice (`EIO`, `ENOSPC`), and
//! its effect is absent; with [`Fault::torn`], a failed write leaves a
//! random strict prefix of its bytes in the page cache (a short write
//! before the error), and a failed `fdatasync`/`fsync` drops the file's
//! unsynced bytes from the page cache (PostgreSQL's "fsyncgate": the
//! kernel marked the pages clean although they never reached the disk, and
//! evicted them).
//!
//! Everything random comes from the seed given to [`SimFs::new`], so a
//! single-threaded workload replays exactly.

use std::any::Any;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{Fs, FsFile};

/// `EIO`, for [`Fault::errno`].
pub const EIO: i32 = 5;
/// `ENOSPC`, for [`Fault::errno`].
pub const ENOSPC: i32 = 28;
const ENOTDIR: i32 = 20;

/// The kinds of call, to count them and to choose which one fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Call {
    CreateDir,
    Lock,
    Create,
    OpenWrite,
    Read,
    Len,
    Rename,
    Remove,
    List,
    SyncDir,
    SyncFile,
    Write,
    SetLen,
    SyncData,
    SyncAll,
}

impl Call {
    /// Every kind.
    pub const ALL: [Call; 15] = [
        Call::CreateDir,
        Call::Lock,
        Call::Create,
        Call::OpenWrite,
        Call::Read,
        Call::Len,
        Call::Rename,
        Call::Remove,
        Call::List,
        Call::SyncDir,
        Call::SyncFile,
        Call::Write,
        Call::SetLen,
        Call::SyncData,
        Call::SyncAll,
    ];
}

/// Which call: counted from 1 since the disk was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// The n-th call of any kind.
    Call(u64),
    /// The n-th call of this kind.
    Nth(Call, u64),
}

/// A call to fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    pub at: At,
    /// What it returns: [`EIO`] or [`ENOSPC`] (any errno works).
    pub errno: i32,
    /// A failed write leaves a random strict prefix of its bytes; a failed
    /// sync drops the file's unsynced bytes from the page cache.
    pub torn: bool,
}

/// A fault that fired: the call, its number, the file, the fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fired {
    pub call: Call,
    pub n: u64,
    pub path: PathBuf,
    pub fault: Fault,
}

/// What a power loss keeps of a file appended to since its last sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Loss {
    /// Nothing: the file is its durable bytes.
    #[default]
    All,
    /// A random prefix of the appended bytes (none to all).
    Prefix,
    /// A random prefix, then zeroes up to a random length within the
    /// appended bytes.
    ZeroTail,
}

/// A simulated disk; clones share it.
#[derive(Clone)]
pub struct SimFs {
    state: Arc<Mutex<State>>,
}

impl fmt::Debug for SimFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.state();
        write!(f, "SimFs({} calls, power {})", s.calls, !s.off)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    File(u64),
    Dir,
}

#[derive(Default)]
struct Dir {
    durable: BTreeMap<OsString, Node>,
    entries: BTreeMap<OsString, Node>,
}

#[derive(Default)]
struct Inode {
    durable: Vec<u8>,
    data: Vec<u8>,
}

struct State {
    dirs: BTreeMap<PathBuf, Dir>,
    inodes: HashMap<u64, Inode>,
    next_ino: u64,
    locks: HashSet<PathBuf>,
    /// Bumped by each power loss: handles of an older epoch are dead.
    epoch: u64,
    off: bool,
    calls: u64,
    per_kind: HashMap<Call, u64>,
    faults: Vec<Fault>,
    fired: Vec<Fired>,
    crash: Option<At>,
    loss: Loss,
    rng: u64,
}

impl SimFs {
    /// An empty disk holding only the root directory `/`, durable.
    pub fn new(seed: u64) -> SimFs {
        let mut dirs = BTreeMap::new();
        dirs.insert(PathBuf::from("/"), Dir::default());
        SimFs {
            state: Arc::new(Mutex::new(State {
                dirs,
                inodes: HashMap::new(),
                next_ino: 1,
                locks: HashSet::new(),
                epoch: 0,
                off: false,
                calls: 0,
                per_kind: HashMap::new(),
                faults: Vec::new(),
                fired: Vec::new(),
                crash: None,
                loss: Loss::All,
                rng: seed ^ 0x9e37_79b9_7f4a_7c15,
            })),
        }
    }

    /// This disk as the crate's file system.
    pub fn shared(&self) -> super::FsRef {
        Arc::new(self.clone())
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Fails a call (see [`Fault`]).
    pub fn inject(&self, fault: Fault) {
        self.state().faults.push(fault);
    }

    /// Forgets the faults not yet fired and the planned crash.
    pub fn clear_faults(&self) {
        let mut s = self.state();
        s.faults.clear();
        s.crash = None;
    }

    /// Loses power when call `at` arrives, before it runs (it fails).
    pub fn crash_at(&self, at: At) {
        self.state().crash = Some(at);
    }

    /// What a power loss keeps of unsynced appends.
    pub fn set_loss(&self, loss: Loss) {
        self.state().loss = loss;
    }

    /// Loses power now.
    pub fn power_loss(&self) {
        self.state().power_loss();
    }

    /// Whether the power is off (lost, and not yet back on).
    pub fn is_off(&self) -> bool {
        self.state().off
    }

    /// Powers the disk back on, for a new process: calls work again,
    /// files opened before stay dead, every lock is free.
    pub fn power_on(&self) {
        self.state().off = false;
    }

    /// Calls made so far (those refused while the power was off too).
    pub fn calls(&self) -> u64 {
        self.state().calls
    }

    /// Calls made so far, by kind.
    pub fn calls_by_kind(&self) -> BTreeMap<Call, u64> {
        self.state()
            .per_kind
            .iter()
            .map(|(&k, &n)| (k, n))
            .collect()
    }

    /// The faults that fired, in order.
    pub fn fired(&self) -> Vec<Fired> {
        self.state().fired.clone()
    }

    /// The durable bytes of `path` as a power loss now would find its name
    /// and data (before any [`Loss`] keeps more), if it has durable name.
    pub fn durable(&self, path: &Path) -> Option<Vec<u8>> {
        let s = self.state();
        let (parent, name) = split(path).ok()?;
        match s.dirs.get(&parent)?.durable.get(&name)? {
            Node::File(ino) => Some(s.inodes[ino].durable.clone()),
            Node::Dir => None,
        }
    }
}

fn err(errno: i32) -> io::Error {
    io::Error::from_raw_os_error(errno)
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("{}", path.display()))
}

/// `path`'s directory and name.
fn split(path: &Path) -> io::Result<(PathBuf, OsString)> {
    match (path.parent(), path.file_name()) {
        (Some(p), Some(n)) => Ok((p.to_path_buf(), n.to_owned())),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: no parent", path.display()),
        )),
    }
}

impl State {
    fn random(&mut self) -> u64 {
        // splitmix64
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A random number in `0..=n`.
    fn upto(&mut self, n: usize) -> usize {
        (self.random() % (n as u64 + 1)) as usize
    }

    /// Counts a call and decides its fate: `Err` when the power is off (or
    /// goes off now, or `epoch` is an older one), `Ok(Some)` when it is to
    /// fail, `Ok(None)` when it runs.
    fn begin(&mut self, call: Call, path: &Path, epoch: u64) -> io::Result<Option<Fault>> {
        self.calls += 1;
        let nth = {
            let n = self.per_kind.entry(call).or_default();
            *n += 1;
            *n
        };
        if self.off || epoch != self.epoch {
            return Err(err(EIO));
        }
        let calls = self.calls;
        let hit = move |at: At| match at {
            At::Call(k) => k == calls,
            At::Nth(c, k) => c == call && k == nth,
        };
        if self.crash.is_some_and(hit) {
            self.power_loss();
            return Err(err(EIO));
        }
        let Some(i) = self.faults.iter().position(|f| hit(f.at)) else {
            return Ok(None);
        };
        let fault = self.faults.remove(i);
        self.fired.push(Fired {
            call,
            n: self.calls,
            path: path.to_path_buf(),
            fault,
        });
        Ok(Some(fault))
    }

    fn power_loss(&mut self) {
        self.off = true;
        self.epoch += 1;
        self.crash = None;
        self.locks.clear();
        for d in self.dirs.values_mut() {
            d.entries = d.durable.clone();
        }
        self.drop_lost_dirs();
        let mut inos: Vec<u64> = self.inodes.keys().copied().collect();
        inos.sort_unstable();
        let live = self.live_inodes();
        for ino in inos {
            if live.contains(&ino) {
                self.revert(ino);
            } else {
                self.inodes.remove(&ino);
            }
        }
    }

    /// A file's bytes after a power loss: its durable bytes, and what
    /// [`Loss`] keeps of bytes appended since.
    fn revert(&mut self, ino: u64) {
        let i = &self.inodes[&ino];
        let durable = i.durable.len();
        let extra = if i.data.starts_with(&i.durable) {
            i.data.len() - durable
        } else {
            0
        };
        let (keep, zeroes) = self.kept(extra);
        let i = self.inodes.get_mut(&ino).expect("listed");
        // (`keep` is 0 unless the file was only appended to: its bytes may
        // be shorter than its durable ones, truncated or created anew.)
        let appended = i.data.get(durable..durable + keep).unwrap_or(&[]).to_vec();
        i.data.clone_from(&i.durable);
        i.data.extend_from_slice(&appended);
        i.data.resize(durable + keep + zeroes, 0);
    }

    /// How many of `extra` unsynced appended bytes a power loss keeps, and
    /// how many zeroes follow them.
    fn kept(&mut self, extra: usize) -> (usize, usize) {
        match self.loss {
            Loss::All => (0, 0),
            Loss::Prefix => (self.upto(extra), 0),
            Loss::ZeroTail => {
                let k = self.upto(extra);
                (k, self.upto(extra - k))
            }
        }
    }

    /// Removes each directory whose own entry is gone (parents sort first).
    fn drop_lost_dirs(&mut self) {
        let paths: Vec<PathBuf> = self.dirs.keys().cloned().collect();
        for p in paths {
            let Ok((parent, name)) = split(&p) else {
                continue; // the root
            };
            let kept = self
                .dirs
                .get(&parent)
                .is_some_and(|d| d.entries.get(&name) == Some(&Node::Dir));
            if !kept {
                self.dirs.remove(&p);
            }
        }
    }

    fn live_inodes(&self) -> HashSet<u64> {
        let mut live = HashSet::new();
        for d in self.dirs.values() {
            for n in d.entries.values().chain(d.durable.values()) {
                if let Node::File(i) = n {
                    live.insert(*i);
                }
            }
        }
        live
    }

    fn dir(&mut self, path: &Path) -> io::Result<&mut Dir> {
        if !self.dirs.contains_key(path) && self.node(path).is_ok() {
            return Err(err(ENOTDIR));
        }
        self.dirs.get_mut(path).ok_or_else(|| not_found(path))
    }

    fn node(&self, path: &Path) -> io::Result<Node> {
        let (parent, name) = split(path)?;
        self.dirs
            .get(&parent)
            .and_then(|d| d.entries.get(&name).copied())
            .ok_or_else(|| not_found(path))
    }

    fn file(&self, path: &Path) -> io::Result<u64> {
        match self.node(path)? {
            Node::File(ino) => Ok(ino),
            Node::Dir => Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                format!("{}", path.display()),
            )),
        }
    }

    /// Makes the file `path` if missing; empties it when `truncate`.
    fn make_file(&mut self, path: &Path, truncate: bool) -> io::Result<u64> {
        let (parent, name) = split(path)?;
        if let Ok(ino) = self.file(path) {
            if truncate {
                self.inodes.get_mut(&ino).expect("linked").data.clear();
            }
            return Ok(ino);
        }
        self.dir(&parent)?;
        let ino = self.next_ino;
        self.next_ino += 1;
        self.inodes.insert(ino, Inode::default());
        let d = self.dir(&parent)?;
        d.entries.insert(name, Node::File(ino));
        Ok(ino)
    }

    /// Makes `ino`'s page cache durable, or, for a failed sync, fails.
    fn sync(&mut self, ino: u64, fault: Option<Fault>) -> io::Result<()> {
        let i = self
            .inodes
            .get_mut(&ino)
            .expect("open files keep their inode");
        match fault {
            None => {
                i.durable.clone_from(&i.data);
                Ok(())
            }
            Some(f) => {
                if f.torn {
                    i.data.clone_from(&i.durable);
                }
                Err(err(f.errno))
            }
        }
    }
}

/// The current epoch, for a call that takes no open file.
fn now(s: &State) -> u64 {
    s.epoch
}

impl Fs for SimFs {
    fn create_dir(&self, path: &Path) -> io::Result<()> {
        let mut s = self.state();
        let e = now(&s);
        if let Some(f) = s.begin(Call::CreateDir, path, e)? {
            return Err(err(f.errno));
        }
        let (parent, name) = split(path)?;
        if s.node(path).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{}", path.display()),
            ));
        }
        s.dir(&parent)?.entries.insert(name, Node::Dir);
        s.dirs.insert(path.to_path_buf(), Dir::default());
        Ok(())
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn Any + Send + Sync>> {
        let mut s = self.state();
        let e = now(&s);
        if let Some(f) = s.begin(Call::Lock, path, e)? {
            return Err(err(f.errno));
        }
        s.make_file(path, false)?;
        if !s.locks.insert(path.to_path_buf()) {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(Box::new(SimLock {
            state: Arc::clone(&self.state),
            path: path.to_path_buf(),
            epoch: e,
        }))
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        let mut s = self.state();
        let e = now(&s);
        if let Some(f) = s.begin(Call::Create, path, e)? {
            return Err(err(f.errno));
        }
        let ino = s.make_file(path, true)?;
        Ok(self.handle(path, ino, e))
    }

    fn open_write(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        let mut s = self.state();
        let e = now(&s);
        if let Some(f) = s.begin(Call::OpenWrite, path, e)? {
            return Err(err(f.errno));
        }
        let ino = s.file(path)?;
        Ok(self.handle(path, ino, e))
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let mut s = self.state();
        let e = now(&s);
        if let Some(f) = s.begin(Call::Read, path, e)? {
            return Err(err(f.errno));
        }
        let ino = s.file(path)?;
        Ok(s.inodes[&ino].data.clone())
    }

    fn read_start(&self, path: &Path, len: usize) -> io::Result<(Vec<u8>, u64)> {
        let mut s = self.state();
        let e = now(&s);
        if let Some(f) = s.begin(Call::Read, path, e)? {
            return Err(err(f.errno));
        }
        let data = &s.inodes[&s.file(path)?].data;
        Ok((data[..len.min(data.len())].to_vec(), data.len() as u64))
    }

    fn len(&self, path: &Path) -> io::Result<u64> {
        let mut s = self.state();
        let e = now(&s);
        if let Some(f) = s.begin(Call::Len, path, e)? {
            return Err(err(f.errno));
        }
        let ino = s.file(path)?;
        Ok(s.inodes[&ino].data.len() as u64)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut s = self.state();
        let e = now(&s);
        if let Some(f) = s.begin(Call::Rename, from, e)? {
            return Err(err(f.errno));
        }
        let node = s.node(from)?;
        let ((fp, fname), (tp, tname)) = (split(from)?, split(to)?);
        s.dir(&tp)?;
        s.dir(&fp)?.entries.remove(&fname);
        s.dir(&tp)?.entries.insert(tname, node);
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut s = self.state();
        let e = now(&s);
        if let Some(f) = s.begin(Call::Remove, path, e)? {
            return Err(err(f.errno));
        }
        s.file(path)?;
        let (parent, name) = split(path)?;
        s.dir(&parent)?.entries.remove(&name);
        Ok(())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<OsString>> {
        let mut s = self.state();
        let e = now(&s);
        if let Some(f) = s.begin(Call::List, dir, e)? {
            return Err(err(f.errno));
        }
        Ok(s.dir(dir)?.entries.keys().cloned().collect())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut s = self.state();
        let e = now(&s);
        if let Some(f) = s.begin(Call::SyncDir, dir, e)? {
            return Err(err(f.errno));
        }
        let d = s.dir(dir)?;
        d.durable = d.entries.clone();
        Ok(())
    }

    fn sync_file(&self, path: &Path) -> io::Result<()> {
        let mut s = self.state();
        let e = now(&s);
        let fault = s.begin(Call::SyncFile, path, e)?;
        let ino = s.file(path)?;
        s.sync(ino, fault)
    }
}

impl SimFs {
    fn handle(&self, path: &Path, ino: u64, epoch: u64) -> Box<dyn FsFile> {
        Box::new(SimFile {
            state: Arc::clone(&self.state),
            path: path.to_path_buf(),
            ino,
            epoch,
            pos: Mutex::new(0),
        })
    }
}

/// A lock held until dropped (or until the power goes).
struct SimLock {
    state: Arc<Mutex<State>>,
    path: PathBuf,
    epoch: u64,
}

impl Drop for SimLock {
    fn drop(&mut self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.epoch == self.epoch {
            s.locks.remove(&self.path);
        }
    }
}

/// An open file of the simulated disk.
struct SimFile {
    state: Arc<Mutex<State>>,
    path: PathBuf,
    ino: u64,
    epoch: u64,
    pos: Mutex<u64>,
}

impl SimFile {
    fn begin(&self, call: Call) -> io::Result<(MutexGuard<'_, State>, Option<Fault>)> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let fault = s.begin(call, &self.path, self.epoch)?;
        Ok((s, fault))
    }

    /// Writes `buf` at `at` in the page cache (zero-filling a gap).
    fn put(s: &mut State, ino: u64, buf: &[u8], at: usize) {
        let data = &mut s.inodes.get_mut(&ino).expect("open").data;
        if data.len() < at + buf.len() {
            data.resize(at + buf.len(), 0);
        }
        data[at..at + buf.len()].copy_from_slice(buf);
    }
}

impl FsFile for SimFile {
    fn write_all(&self, buf: &[u8]) -> io::Result<()> {
        let (mut s, fault) = self.begin(Call::Write)?;
        let mut pos = self.pos.lock().unwrap_or_else(|e| e.into_inner());
        let at = *pos as usize;
        let (len, result) = match fault {
            None => (buf.len(), Ok(())),
            Some(f) if f.torn && !buf.is_empty() => (s.upto(buf.len() - 1), Err(err(f.errno))),
            Some(f) => (0, Err(err(f.errno))),
        };
        Self::put(&mut s, self.ino, &buf[..len], at);
        *pos += len as u64;
        result
    }

    fn write_all_at(&self, buf: &[u8], at: u64) -> io::Result<()> {
        let (mut s, fault) = self.begin(Call::Write)?;
        if let Some(f) = fault {
            return Err(err(f.errno));
        }
        Self::put(&mut s, self.ino, buf, at as usize);
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let (mut s, fault) = self.begin(Call::SetLen)?;
        if let Some(f) = fault {
            return Err(err(f.errno));
        }
        let data = &mut s.inodes.get_mut(&self.ino).expect("open").data;
        data.resize(len as usize, 0);
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        let (mut s, fault) = self.begin(Call::SyncData)?;
        s.sync(self.ino, fault)
    }

    fn sync_all(&self) -> io::Result<()> {
        let (mut s, fault) = self.begin(Call::SyncAll)?;
        s.sync(self.ino, fault)
    }
}

#[cfg(test)]
mod tests;
