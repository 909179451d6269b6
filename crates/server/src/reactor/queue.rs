//! The work queue of `pool-locked`: a FIFO behind one mutex, with a
//! condition variable for idle workers. This is the classic design the lab
//! measures against a lock-free queue, so it is written out here rather than
//! borrowed.
//!
//! `push` notifies one waiter after releasing the lock, so the woken worker
//! does not immediately block on the mutex the pusher still holds.

use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;

pub(crate) struct LockedQueue<T> {
    state: Mutex<State<T>>,
    nonempty: Condvar,
}

struct State<T> {
    items: VecDeque<T>,
    closed: bool,
}

impl<T> LockedQueue<T> {
    pub(crate) fn new() -> Self {
        LockedQueue {
            state: Mutex::new(State {
                items: VecDeque::new(),
                closed: false,
            }),
            nonempty: Condvar::new(),
        }
    }

    /// Add to the back. A closed queue refuses and hands the item back.
    pub(crate) fn push(&self, item: T) -> Result<(), T> {
        {
            let mut s = self.state.lock();
            if s.closed {
                return Err(item);
            }
            s.items.push_back(item);
        }
        self.nonempty.notify_one();
        Ok(())
    }

    /// Take from the front, waiting while empty. `None` once the queue is
    /// closed and drained.
    pub(crate) fn pop(&self) -> Option<T> {
        let mut s = self.state.lock();
        loop {
            if let Some(item) = s.items.pop_front() {
                return Some(item);
            }
            if s.closed {
                return None;
            }
            self.nonempty.wait(&mut s);
        }
    }

    /// Refuse new items and wake every waiter; queued items still drain.
    pub(crate) fn close(&self) {
        self.state.lock().closed = true;
        self.nonempty.notify_all();
    }
}

#[cfg(all(test, not(serverlab_loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn fifo_and_close() {
        let q = LockedQueue::new();
        for i in 0..5 {
            q.push(i).unwrap();
        }
        q.close();
        assert_eq!(q.push(9), Err(9));
        let drained: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(drained, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn close_wakes_blocked_consumers() {
        let q = Arc::new(LockedQueue::<u32>::new());
        let waiters: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn({
                    let q = q.clone();
                    move || q.pop()
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(20));
        q.close();
        for w in waiters {
            assert_eq!(w.join().unwrap(), None);
        }
    }

    /// 4 producers and 4 consumers: every item arrives exactly once, and
    /// each producer's items arrive in the order it pushed them.
    #[test]
    fn mpmc_loses_nothing() {
        let q = Arc::new(LockedQueue::new());
        let consumers: Vec<_> = (0..4)
            .map(|_| {
                let q = q.clone();
                std::thread::spawn(move || {
                    std::iter::from_fn(|| q.pop()).collect::<Vec<(u32, u32)>>()
                })
            })
            .collect();
        let producers: Vec<_> = (0..4u32)
            .map(|p| {
                let q = q.clone();
                std::thread::spawn(move || (0..10_000u32).for_each(|i| q.push((p, i)).unwrap()))
            })
            .collect();
        producers.into_iter().for_each(|p| p.join().unwrap());
        q.close();
        let mut all = Vec::new();
        for c in consumers {
            let got = c.join().unwrap();
            for p in 0..4 {
                let mine: Vec<u32> = got.iter().filter(|x| x.0 == p).map(|x| x.1).collect();
                assert!(
                    mine.windows(2).all(|w| w[0] < w[1]),
                    "per-producer order kept"
                );
            }
            all.extend(got);
        }
        all.sort_unstable();
        let want: Vec<(u32, u32)> = (0..4)
            .flat_map(|p| (0..10_000).map(move |i| (p, i)))
            .collect();
        assert_eq!(all, want);
    }
}
