//! Who runs ready connections: a pool behind a locked queue, a pool behind
//! crossbeam's channel, or a new thread for each ready request — the three
//! reactor strategies.

use super::queue::LockedQueue;
use super::{run_job, Job, Shared};
use crate::listen::Listener;
use crate::shutdown::Phase;
use crate::strategy::{Delays, Listeners, Strategy, Threads};
use crate::Ctx;
use parking_lot::{Condvar, Mutex};
use serverlab_service::Service;
use std::io;
use std::sync::Arc;
use std::thread::JoinHandle;

/// Requests a pool worker answers on one connection before requeueing it.
const POOL_BUDGET: usize = 16;

/// `thread-per-request`.
pub(crate) struct ThreadPerRequest;
/// `pool-locked`.
pub(crate) struct PoolLocked;
/// `pool-lockfree`.
pub(crate) struct PoolLockFree;

impl Strategy for ThreadPerRequest {
    const NAME: &'static str = "thread-per-request";
    const DESCRIBE: &'static str =
        "an event loop hands each ready request to a newly spawned thread";
    const THREADS: Threads = Threads::Unused("a thread per request");
    const LISTENERS: Listeners = Listeners::One;
    const DELAYS: Delays = Delays::OnTheRequestThread;
    const TIMES_WORKERS: bool = true;

    fn run<S: Service>(ctx: Arc<Ctx<S>>, mut listeners: Vec<Listener>) -> io::Result<()> {
        super::run(ctx, listeners.remove(0), Pool::Spawn)
    }
}

impl Strategy for PoolLocked {
    const NAME: &'static str = "pool-locked";
    const DESCRIBE: &'static str =
        "an event loop queues ready connections for N workers; mutex+condvar queue";
    const THREADS: Threads = Threads::Sizes("workers");
    const LISTENERS: Listeners = Listeners::One;
    const DELAYS: Delays = Delays::OnTheRequestThread;
    const TIMES_WORKERS: bool = true;

    fn run<S: Service>(ctx: Arc<Ctx<S>>, mut listeners: Vec<Listener>) -> io::Result<()> {
        super::run(ctx, listeners.remove(0), Pool::Locked)
    }
}

impl Strategy for PoolLockFree {
    const NAME: &'static str = "pool-lockfree";
    const DESCRIBE: &'static str =
        "an event loop queues ready connections for N workers; lock-free queue (crossbeam)";
    const THREADS: Threads = Threads::Sizes("workers");
    const LISTENERS: Listeners = Listeners::One;
    const DELAYS: Delays = Delays::OnTheRequestThread;
    const TIMES_WORKERS: bool = true;

    fn run<S: Service>(ctx: Arc<Ctx<S>>, mut listeners: Vec<Listener>) -> io::Result<()> {
        super::run(ctx, listeners.remove(0), Pool::LockFree)
    }
}

/// The executor a reactor strategy uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pool {
    /// thread-per-request: a new thread per ready request.
    Spawn,
    /// pool-locked: N workers, mutex + condvar FIFO.
    Locked,
    /// pool-lockfree: N workers, crossbeam's channel.
    LockFree,
}

impl Pool {
    /// Requests a run of a connection answers before it yields.
    pub(crate) fn budget(self) -> usize {
        match self {
            Pool::Spawn => 1,
            Pool::Locked | Pool::LockFree => POOL_BUDGET,
        }
    }
}

pub(crate) trait Executor<S: Service>: Send + Sync {
    fn submit(&self, job: Job<S>);
    /// Called on the event loop's timer tick.
    fn tick(&self) {}
    /// Finish queued work and join every thread. Called once every
    /// connection is closed, so nothing is submitted or requeued after.
    fn stop(self: Box<Self>);
}

pub(crate) fn start<S: Service>(
    pool: Pool,
    shared: Arc<Shared<S>>,
) -> io::Result<Box<dyn Executor<S>>> {
    Ok(match pool {
        Pool::Spawn => Box::new(Spawner {
            shared,
            live: Arc::default(),
            deferred: Arc::default(),
        }),
        Pool::Locked => Box::new(LockedPool::start(shared)?),
        Pool::LockFree => Box::new(LockFreePool::start(shared)?),
    })
}

fn spawn_workers(
    n: usize,
    name: &str,
    body: impl Fn() + Send + Sync + 'static,
) -> io::Result<Vec<JoinHandle<()>>> {
    let body = Arc::new(body);
    (0..n)
        .map(|i| {
            let body = body.clone();
            std::thread::Builder::new()
                .name(format!("{name}-{i}"))
                .spawn(move || body())
        })
        .collect()
}

struct LockedPool<S: Service> {
    queue: Arc<LockedQueue<Job<S>>>,
    workers: Vec<JoinHandle<()>>,
}

impl<S: Service> LockedPool<S> {
    fn start(shared: Arc<Shared<S>>) -> io::Result<Self> {
        let queue: Arc<LockedQueue<Job<S>>> = Arc::new(LockedQueue::new());
        let q = queue.clone();
        let workers = spawn_workers(shared.ctx.threads, "worker", move || {
            while let Some(job) = q.pop() {
                if run_job(&shared, &job) {
                    let _ = q.push(job);
                }
            }
        })?;
        Ok(LockedPool { queue, workers })
    }
}

impl<S: Service> Executor<S> for LockedPool<S> {
    fn submit(&self, job: Job<S>) {
        let _ = self.queue.push(job);
    }

    fn stop(self: Box<Self>) {
        self.queue.close();
        self.workers.into_iter().for_each(|w| drop(w.join()));
    }
}

/// pool-lockfree's queue is crossbeam's unbounded channel: pushing and
/// popping are lock-free. Waiting is not: a worker that finds it empty
/// parks, and crossbeam's waker list, which a sender checks to unpark one,
/// is behind a mutex — so with idle workers a push takes a lock, as
/// pool-locked's condition variable does. Under load, with no worker
/// parked, neither side locks.
struct LockFreePool<S: Service> {
    /// `None` tells one worker to stop.
    tx: crossbeam_channel::Sender<Option<Job<S>>>,
    workers: Vec<JoinHandle<()>>,
}

impl<S: Service> LockFreePool<S> {
    fn start(shared: Arc<Shared<S>>) -> io::Result<Self> {
        let (tx, rx) = crossbeam_channel::unbounded::<Option<Job<S>>>();
        let requeue = tx.clone();
        let workers = spawn_workers(shared.ctx.threads, "worker", move || {
            while let Ok(Some(job)) = rx.recv() {
                if run_job(&shared, &job) {
                    let _ = requeue.send(Some(job));
                }
            }
        })?;
        Ok(LockFreePool { tx, workers })
    }
}

impl<S: Service> Executor<S> for LockFreePool<S> {
    fn submit(&self, job: Job<S>) {
        let _ = self.tx.send(Some(job));
    }

    fn stop(self: Box<Self>) {
        for _ in &self.workers {
            let _ = self.tx.send(None);
        }
        self.workers.into_iter().for_each(|w| drop(w.join()));
    }
}

/// Live request threads, so `stop` can wait for them.
type Live = Arc<(Mutex<usize>, Condvar)>;

/// A thread per ready request. When no thread can be made (out of memory
/// or threads), the request is deferred, not run on the event loop (whose
/// thread must never block on a request: a 60 s bucket delay there would
/// stall every connection): the loop's next timer tick tries again.
struct Spawner<S: Service> {
    shared: Arc<Shared<S>>,
    live: Live,
    deferred: Arc<Mutex<Vec<Job<S>>>>,
}

impl<S: Service> Spawner<S> {
    fn spawn(shared: Arc<Shared<S>>, live: Live, deferred: &Arc<Mutex<Vec<Job<S>>>>, job: Job<S>) {
        *live.0.lock() += 1;
        let (s, l, d, j) = (shared.clone(), live.clone(), deferred.clone(), job.clone());
        let spawned = std::thread::Builder::new()
            .name("request".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                if run_job(&s, &j) {
                    // Another request is waiting: it gets its own thread.
                    Spawner::spawn(s, l.clone(), &d, j);
                }
                let mut n = l.0.lock();
                *n -= 1;
                l.1.notify_all();
            });
        if let Err(e) = spawned {
            let mut d = deferred.lock();
            if d.is_empty() {
                crate::warn(&format!(
                    "serverlab: cannot spawn a request thread ({e}); retrying"
                ));
            }
            d.push(job);
            let mut n = live.0.lock();
            *n -= 1;
            live.1.notify_all();
        }
    }
}

impl<S: Service> Executor<S> for Spawner<S> {
    fn submit(&self, job: Job<S>) {
        Spawner::spawn(self.shared.clone(), self.live.clone(), &self.deferred, job);
    }

    fn tick(&self) {
        let jobs = std::mem::take(&mut *self.deferred.lock());
        let aborting = self.shared.ctx.shutdown.phase() == Phase::Aborting;
        for job in jobs {
            if aborting {
                // Past the drain limit a session only resets, at once: safe
                // to run here, and no thread may be available for it.
                while run_job(&self.shared, &job) {}
            } else {
                self.submit(job);
            }
        }
    }

    fn stop(self: Box<Self>) {
        let mut n = self.live.0.lock();
        while *n > 0 {
            self.live.1.wait(&mut n);
        }
    }
}
