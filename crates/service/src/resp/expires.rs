//! Keys with a deadline (EXPIRE, SET … EX): one table per database,
//! striped by key so commands on different keys rarely share a lock.
//!
//! A key past its deadline is deleted when a command touches it (lazily:
//! the command then sees no key) and by the active expirer, a thread that
//! wakes every [`ACTIVE_EVERY`] and deletes every key whose deadline has
//! passed (each stripe keeps its deadlines in order, so it reads only the
//! expired ones). While no key of a database has a deadline, its commands
//! skip the table altogether (one atomic load); while some do, a fast
//! command holds the stripe of each key it touches for its whole step, so
//! neither the expirer nor a lazy deletion can delete a key between the
//! command's check and its write.
//!
//! Deadlines are milliseconds since the Unix epoch, as Redis keeps them
//! (and as the log records them: `PEXPIREAT`).

use parking_lot::{Mutex, MutexGuard};
use serverlab_store::resp::RespStore;
use std::collections::{BTreeSet, HashMap};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const STRIPES: usize = 16;

/// How often the active expirer runs (Redis's `hz 10`).
pub(crate) const ACTIVE_EVERY: Duration = Duration::from_millis(100);

/// Milliseconds since the Unix epoch, now (the simulation's clock, when
/// it set one: [`crate::sim`]).
pub(crate) fn now_ms() -> i64 {
    if let Some(ms) = crate::sim::clock() {
        return ms;
    }
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[derive(Default)]
struct Stripe {
    at: HashMap<Box<[u8]>, i64>,
    order: BTreeSet<(i64, Box<[u8]>)>,
}

impl Stripe {
    fn set(&mut self, key: &[u8], when: i64) -> bool {
        let new = match self.at.insert(key.into(), when) {
            Some(old) => {
                self.order.remove(&(old, key.into()));
                false
            }
            None => true,
        };
        self.order.insert((when, key.into()));
        new
    }

    fn remove(&mut self, key: &[u8]) -> Option<i64> {
        let old = self.at.remove(key)?;
        self.order.remove(&(old, key.into()));
        Some(old)
    }
}

/// One database's deadlines.
pub(crate) struct Expires {
    hasher: foldhash::fast::RandomState,
    stripes: Box<[Mutex<Stripe>]>,
    /// Keys with a deadline, all stripes together.
    count: AtomicUsize,
}

impl Default for Expires {
    fn default() -> Self {
        Expires {
            hasher: Default::default(),
            stripes: (0..STRIPES).map(|_| Mutex::default()).collect(),
            count: AtomicUsize::new(0),
        }
    }
}

/// The stripes of some keys, held (in stripe order: no two holders wait
/// on each other).
pub(crate) struct Held<'a> {
    expires: &'a Expires,
    guards: Vec<(usize, MutexGuard<'a, Stripe>)>,
}

impl Expires {
    fn stripe_of(&self, key: &[u8]) -> usize {
        (self.hasher.hash_one(key) >> 32) as usize % STRIPES
    }

    /// No key has a deadline.
    pub(crate) fn is_empty(&self) -> bool {
        self.count.load(Ordering::Acquire) == 0
    }

    pub(crate) fn len(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// Holds the stripes of `keys`.
    pub(crate) fn hold<'a>(&'a self, keys: impl IntoIterator<Item = &'a [u8]>) -> Held<'a> {
        let mut idx: Vec<usize> = keys.into_iter().map(|k| self.stripe_of(k)).collect();
        idx.sort_unstable();
        idx.dedup();
        let guards = idx
            .into_iter()
            .map(|i| (i, self.stripes[i].lock()))
            .collect();
        Held {
            expires: self,
            guards,
        }
    }

    /// Holds every stripe.
    pub(crate) fn hold_all(&self) -> Held<'_> {
        Held {
            expires: self,
            guards: self.stripes.iter().map(|s| s.lock()).enumerate().collect(),
        }
    }

    /// The key's deadline.
    pub(crate) fn get(&self, key: &[u8]) -> Option<i64> {
        if self.is_empty() {
            return None;
        }
        self.stripes[self.stripe_of(key)]
            .lock()
            .at
            .get(key)
            .copied()
    }

    pub(crate) fn set(&self, key: &[u8], when: i64) {
        self.hold([key]).set(key, when)
    }

    pub(crate) fn remove(&self, key: &[u8]) -> Option<i64> {
        if self.is_empty() {
            return None;
        }
        self.hold([key]).remove(key)
    }

    /// Every deadline (a copy, for a snapshot or an image).
    pub(crate) fn all(&self) -> Vec<(Box<[u8]>, i64)> {
        let held = self.hold_all();
        held.guards
            .iter()
            .flat_map(|(_, g)| g.at.iter().map(|(k, &w)| (k.clone(), w)))
            .collect()
    }

    /// Forgets every deadline (FLUSHDB).
    pub(crate) fn clear(&self) {
        let mut held = self.hold_all();
        for (_, g) in held.guards.iter_mut() {
            **g = Stripe::default();
        }
        self.count.store(0, Ordering::Release);
    }

    /// Deletes from `store` every key whose deadline has passed, each
    /// handed to `gone`; how many.
    pub(crate) fn active(
        &self,
        store: &dyn RespStore,
        now: i64,
        gone: &mut dyn FnMut(&[u8]),
    ) -> usize {
        if self.is_empty() {
            return 0;
        }
        let mut n = 0;
        for s in self.stripes.iter() {
            let mut g = s.lock();
            while let Some((when, key)) = g.order.first().cloned() {
                if when > now {
                    break;
                }
                g.remove(&key);
                store.del(&key);
                gone(&key);
                n += 1;
            }
        }
        self.count.fetch_sub(n, Ordering::AcqRel);
        n
    }

    /// The keys whose deadline has passed, still there, at most `limit`
    /// of them (for a command alone or the expirer to delete and log):
    /// only those are copied.
    pub(crate) fn due(&self, now: i64, limit: usize) -> Vec<Box<[u8]>> {
        if self.is_empty() {
            return Vec::new();
        }
        let mut due = Vec::new();
        for s in self.stripes.iter() {
            let room = limit - due.len();
            if room == 0 {
                break;
            }
            let g = s.lock();
            due.extend(
                g.order
                    .iter()
                    .take_while(|(w, _)| *w <= now)
                    .take(room)
                    .map(|(_, k)| k.clone()),
            );
        }
        due
    }

    /// Whether any of `keys` (every key: `None`) is past its deadline.
    pub(crate) fn any_due(&self, keys: Option<&[&[u8]]>, now: i64) -> bool {
        if self.is_empty() {
            return false;
        }
        match keys {
            None => self
                .stripes
                .iter()
                .any(|s| s.lock().order.first().is_some_and(|(w, _)| *w <= now)),
            Some(keys) => {
                let mut h = self.hold(keys.iter().copied());
                keys.iter().any(|k| h.get(k).is_some_and(|w| w <= now))
            }
        }
    }

    /// The mean time to live left of the keys with one, in milliseconds
    /// (INFO keyspace's `avg_ttl`), 0 for none.
    pub(crate) fn avg_ttl(&self, now: i64) -> i64 {
        let all = self.all();
        if all.is_empty() {
            return 0;
        }
        let sum: i64 = all.iter().map(|(_, w)| (w - now).max(0)).sum();
        sum / all.len() as i64
    }
}

impl Held<'_> {
    fn stripe(&mut self, key: &[u8]) -> &mut Stripe {
        let i = self.expires.stripe_of(key);
        let at = self
            .guards
            .iter()
            .position(|(j, _)| *j == i)
            .expect("the key's stripe is held");
        &mut self.guards[at].1
    }

    pub(crate) fn get(&mut self, key: &[u8]) -> Option<i64> {
        self.stripe(key).at.get(key).copied()
    }

    pub(crate) fn set(&mut self, key: &[u8], when: i64) {
        if self.stripe(key).set(key, when) {
            self.expires.count.fetch_add(1, Ordering::AcqRel);
        }
    }

    pub(crate) fn remove(&mut self, key: &[u8]) -> Option<i64> {
        let old = self.stripe(key).remove(key);
        if old.is_some() {
            self.expires.count.fetch_sub(1, Ordering::AcqRel);
        }
        old
    }

    pub(crate) fn expire_if_due(&mut self, store: &dyn RespStore, key: &[u8], now: i64) -> bool {
        match self.get(key) {
            Some(when) if when <= now => {
                self.remove(key);
                store.del(key);
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverlab_proto::resp::SetCond;

    #[test]
    fn a_key_past_its_deadline_is_deleted_lazily_or_actively() {
        let store = serverlab_store::resp::new(serverlab_store::StoreKind::Sharded).unwrap();
        let e = Expires::default();
        for k in [&b"a"[..], b"b", b"c"] {
            store.set(k, b"v", SetCond::Always);
        }
        e.set(b"a", 100);
        e.set(b"b", 200);
        e.set(b"c", 300);
        e.set(b"c", 400);
        assert_eq!(e.len(), 3);
        assert!(!e.hold([&b"a"[..]]).expire_if_due(&*store, b"a", 99));
        assert!(e.hold([&b"a"[..]]).expire_if_due(&*store, b"a", 100));
        assert!(!store.exists(b"a"));
        assert_eq!(
            e.active(&*store, 300, &mut |_| ()),
            1,
            "b only: c was moved to 400"
        );
        assert!(!store.exists(b"b") && store.exists(b"c"));
        assert_eq!(e.get(b"c"), Some(400));
        assert_eq!(e.avg_ttl(300), 100);
        assert_eq!(e.remove(b"c"), Some(400));
        assert!(e.is_empty());
    }
}
