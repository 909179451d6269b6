//! A lock-free board: readers never block and never take a lock.
//!
//! Topics live in a fixed array of insert-only chains (a topic, once
//! created, is never removed, so there is nothing to reclaim while the
//! store lives). Each topic's messages are a [`Log`]: dense ids from one
//! `fetch_add`, published in order. Creation order for LIST is one more
//! `Log` of topic pointers.
//!
//! Invariants and orderings:
//! - Chain insert: a node is fully built (name, empty log, `next` = the head
//!   it saw) before a `compare_exchange(AcqRel)` makes it the bucket head;
//!   readers walk chains with `Acquire` loads, so they see built nodes.
//!   When two posters create one topic at once, exactly one CAS wins; the
//!   loser finds the winner's node on its retry and frees its own.
//! - The winner appends the topic to the creation log and then sets
//!   `listed` (`Release`). Every POST waits (`Acquire`) for `listed` before
//!   returning, so LIST shows a topic before any POST to it is answered.
//! - Ids and COUNT follow from [`Log`]: after `post` returns `k`,
//!   `count > k` and `read(k)` returns the message.

use super::log::Log;
use super::thin::{Owned, ThinBytes};
use super::BoardStore;
use crate::sync::{AtomicBool, AtomicPtr, Ordering, Spin};
use std::hash::BuildHasher;

/// Seeded per store against collision attacks (foldhash, as the RESP
/// stores: a topic's SipHash was a tenth of a pipelined request's
/// instructions, docs/strategies.md); fixed under loom, whose model must be
/// deterministic.
#[cfg(not(serverlab_loom))]
type RandomState = foldhash::fast::RandomState;
#[cfg(serverlab_loom)]
type RandomState = std::hash::BuildHasherDefault<std::collections::hash_map::DefaultHasher>;
use std::ptr;

const BUCKETS: usize = if cfg!(serverlab_loom) { 2 } else { 1 << 14 };

struct Topic {
    name: Box<[u8]>,
    hash: u64,
    next: *mut Topic,
    listed: AtomicBool,
    /// One allocation per message (see [`ThinBytes`]).
    messages: Log<ThinBytes>,
}

/// A creation-log entry: a topic owned by its chain, which the log only
/// points at (no allocation, and nothing to free).
struct Listed(*const Topic);

// SAFETY: topics are shared read-only (apart from atomics) and live as long
// as the store, which outlives its creation log.
unsafe impl Send for Listed {}
// SAFETY: as above.
unsafe impl Sync for Listed {}

// SAFETY: the pointer is a chain node's, non-null and aligned, alive until
// the store drops (after its logs); `free` releases nothing, since the
// chain owns the node.
unsafe impl Owned for Listed {
    type Target = Topic;

    fn into_raw(self) -> *mut u8 {
        self.0.cast_mut().cast()
    }

    unsafe fn get<'a>(p: *mut u8) -> &'a Topic {
        // SAFETY: a live chain node (the caller's contract, and see above).
        unsafe { &*p.cast::<Topic>() }
    }

    unsafe fn free(_p: *mut u8) {}
}

pub struct LockFreeBoard {
    hasher: RandomState,
    buckets: Box<[AtomicPtr<Topic>]>,
    created: Log<Listed>,
}

// SAFETY: topics are immutable after publication except through atomics;
// raw pointers are to nodes owned by the store and freed only on drop.
unsafe impl Send for LockFreeBoard {}
// SAFETY: as for Send: shared access mutates only through atomics, and
// readers follow pointers published with Release, loaded with Acquire.
unsafe impl Sync for LockFreeBoard {}

impl Default for LockFreeBoard {
    fn default() -> Self {
        LockFreeBoard {
            hasher: RandomState::default(),
            buckets: (0..BUCKETS)
                .map(|_| AtomicPtr::new(ptr::null_mut()))
                .collect(),
            created: Log::new(),
        }
    }
}

impl LockFreeBoard {
    fn bucket(&self, hash: u64) -> &AtomicPtr<Topic> {
        &self.buckets[hash as usize % BUCKETS]
    }

    /// Walk a chain from `node` up to (not including) `stop`.
    fn find_in(
        &self,
        mut node: *mut Topic,
        stop: *mut Topic,
        hash: u64,
        name: &[u8],
    ) -> Option<&Topic> {
        while node != stop {
            // SAFETY: chain nodes are published by an AcqRel CAS after
            // being fully built, and live as long as the store (`&self`).
            let t = unsafe { &*node };
            if t.hash == hash && &*t.name == name {
                return Some(t);
            }
            node = t.next;
        }
        None
    }

    fn find(&self, name: &[u8]) -> Option<&Topic> {
        let hash = self.hasher.hash_one(name);
        self.find_in(
            self.bucket(hash).load(Ordering::Acquire),
            ptr::null_mut(),
            hash,
            name,
        )
    }

    /// The topic, created if need be; returns once it is listed.
    fn find_or_create(&self, name: &[u8]) -> &Topic {
        let hash = self.hasher.hash_one(name);
        let bucket = self.bucket(hash);
        let mut head = bucket.load(Ordering::Acquire);
        if let Some(t) = self.find_in(head, ptr::null_mut(), hash, name) {
            return wait_listed(t);
        }
        let fresh = Box::into_raw(Box::new(Topic {
            name: name.into(),
            hash,
            next: head,
            listed: AtomicBool::new(false),
            messages: Log::new(),
        }));
        loop {
            match bucket.compare_exchange(head, fresh, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    // SAFETY: we just published `fresh`; it lives as long as the store.
                    let t = unsafe { &*fresh };
                    self.created.append(Listed(fresh));
                    t.listed.store(true, Ordering::Release);
                    return t;
                }
                Err(now) => {
                    // Someone pushed onto this chain: look only at what is new.
                    if let Some(t) = self.find_in(now, head, hash, name) {
                        // SAFETY: `fresh` was never shared.
                        drop(unsafe { Box::from_raw(fresh) });
                        return wait_listed(t);
                    }
                    head = now;
                    // SAFETY: `fresh` is still private to this thread.
                    unsafe { (*fresh).next = head };
                }
            }
        }
    }
}

/// Wait until the topic's creator has put it in the creation log.
fn wait_listed(t: &Topic) -> &Topic {
    let spin = Spin::new();
    while !t.listed.load(Ordering::Acquire) {
        spin.wait();
    }
    t
}

impl BoardStore for LockFreeBoard {
    fn post(&self, topic: &[u8], message: &[u8]) -> u64 {
        self.find_or_create(topic)
            .messages
            .append(ThinBytes::new(message))
    }

    fn message(&self, topic: &[u8], id: u64, found: &mut dyn FnMut(&[u8])) -> bool {
        let message = self.find(topic).and_then(|t| t.messages.get(id));
        message.map(found).is_some()
    }

    fn count(&self, topic: &[u8]) -> u64 {
        self.find(topic).map_or(0, |t| t.messages.len())
    }

    fn topics(&self) -> usize {
        self.created.len() as usize
    }

    fn list_part(&self, from: usize, end: usize, budget: usize, out: &mut Vec<u8>) -> usize {
        let end = end.min(self.created.len() as usize);
        let names = (from.min(end)..end).map(|i| {
            let topic = self.created.get(i as u64).expect("published");
            &*topic.name
        });
        super::push_entries(names, from, budget, out)
    }
}

impl Drop for LockFreeBoard {
    fn drop(&mut self) {
        for bucket in self.buckets.iter() {
            let mut node = bucket.load(Ordering::Acquire);
            while !node.is_null() {
                // SAFETY: `&mut self`; every chain node came from Box::into_raw.
                let t = unsafe { Box::from_raw(node) };
                node = t.next;
            }
        }
    }
}

#[cfg(all(test, serverlab_loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    /// Two posters create the same topic at once: one node wins, ids are
    /// 0 and 1, LIST shows the topic once, and a concurrent reader never
    /// sees a COUNT it cannot READ.
    #[test]
    fn concurrent_create_same_topic() {
        loom::model(|| {
            let board = Arc::new(LockFreeBoard::default());
            let posters: Vec<_> = [&b"a"[..], b"b"]
                .into_iter()
                .map(|m| {
                    let board = board.clone();
                    loom::thread::spawn(move || {
                        let id = board.post(b"t", m);
                        let mut out = Vec::new();
                        board.list(&mut out);
                        assert_eq!(out, b"@t");
                        assert!(board.count(b"t") > id);
                        id
                    })
                })
                .collect();
            let n = board.count(b"t");
            for id in 0..n {
                assert!(board.read(b"t", id, &mut Vec::new()));
            }
            let ids: Vec<u64> = posters.into_iter().map(|p| p.join().unwrap()).collect();
            assert_eq!(ids.iter().sum::<u64>(), 1);
            let mut out = Vec::new();
            assert!(board.read(b"t", ids[0], &mut out));
            assert_eq!(out, b"a");
        });
    }

    /// Two topics created at once land in LIST in the order their creation
    /// appends were published, each exactly once.
    #[test]
    fn concurrent_create_two_topics() {
        loom::model(|| {
            let board = Arc::new(LockFreeBoard::default());
            let t = {
                let board = board.clone();
                loom::thread::spawn(move || board.post(b"x", b"1"))
            };
            assert_eq!(board.post(b"y", b"2"), 0);
            assert_eq!(t.join().unwrap(), 0);
            let mut out = Vec::new();
            board.list(&mut out);
            assert!(out == b"@x#@y" || out == b"@y#@x", "{:?}", out);
        });
    }
}
