//! A store made of plain, single-threaded state behind locks: which lock
//! guards a key (by its hash), and how that lock is taken to read and to
//! write. Each protocol writes its operations once over [`Guarded`]
//! (`board`, `kv`, `resp`), so a locked store's file states only its lock.

/// Plain state behind one or more locks.
pub(crate) trait Guarded: Send + Sync + 'static {
    /// What one lock guards.
    type State;

    /// The key's hash, which picks the lock guarding the key where there
    /// are several. A store with one lock for everything needs none (the
    /// default). RESP's tables use the hash themselves, so every RESP
    /// store hashes for real.
    fn hash(&self, key: &[u8]) -> u64 {
        let _ = key;
        0
    }

    /// Read, under the lock guarding the keys of hash `h`.
    fn read<R>(&self, h: u64, f: impl FnOnce(&Self::State) -> R) -> R;

    /// Write, under the lock guarding the keys of hash `h`.
    fn write<R>(&self, h: u64, f: impl FnOnce(&mut Self::State) -> R) -> R;

    /// Every lock's state in turn, taken to write (to count or to empty).
    /// One lock (the default): its state.
    fn each(&self, f: &mut dyn FnMut(&mut Self::State)) {
        self.write(0, f);
    }
}
