//! Who runs ready connections: a pool behind a locked queue, a pool behind
//! a lock-free queue, or a new thread for each ready request.

use super::queue::LockedQueue;
use super::{run_job, Job, Shared};
use parking_lot::{Condvar, Mutex};
use serverlab_service::Service;
use std::sync::Arc;
use std::thread::JoinHandle;

/// The executor a reactor strategy uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pool {
    /// thread-per-request: a new thread per ready request.
    Spawn,
    /// pool-locked: N workers, mutex + condvar FIFO.
    Locked,
    /// pool-lockfree: N workers, crossbeam's lock-free channel.
    LockFree,
}

pub(crate) trait Executor<S: Service>: Send + Sync {
    fn submit(&self, job: Job<S>);
    /// Finish queued work and join every thread.
    fn stop(self: Box<Self>);
}

pub(crate) fn start<S: Service>(
    pool: Pool,
    shared: Arc<Shared<S>>,
) -> std::io::Result<Box<dyn Executor<S>>> {
    Ok(match pool {
        Pool::Spawn => Box::new(Spawner {
            shared,
            live: Arc::default(),
        }),
        Pool::Locked => Box::new(LockedPool::start(shared)?),
        Pool::LockFree => Box::new(LockFreePool::start(shared)?),
    })
}

fn spawn_workers(
    n: usize,
    name: &str,
    body: impl Fn() + Send + Sync + 'static,
) -> std::io::Result<Vec<JoinHandle<()>>> {
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
    fn start(shared: Arc<Shared<S>>) -> std::io::Result<Self> {
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

struct LockFreePool<S: Service> {
    /// `None` tells one worker to stop.
    tx: crossbeam_channel::Sender<Option<Job<S>>>,
    workers: Vec<JoinHandle<()>>,
}

impl<S: Service> LockFreePool<S> {
    fn start(shared: Arc<Shared<S>>) -> std::io::Result<Self> {
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

    /// Called once every connection is closed, so nothing requeues after
    /// the stop messages.
    fn stop(self: Box<Self>) {
        for _ in &self.workers {
            let _ = self.tx.send(None);
        }
        self.workers.into_iter().for_each(|w| drop(w.join()));
    }
}

/// A thread per ready request; counts live threads so `stop` can wait.
struct Spawner<S: Service> {
    shared: Arc<Shared<S>>,
    live: Arc<(Mutex<usize>, Condvar)>,
}

impl<S: Service> Spawner<S> {
    fn spawn(shared: Arc<Shared<S>>, live: Arc<(Mutex<usize>, Condvar)>, job: Job<S>) {
        *live.0.lock() += 1;
        let (shared2, live2, job2) = (shared.clone(), live.clone(), job.clone());
        let spawned = std::thread::Builder::new()
            .name("request".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                if run_job(&shared2, &job2) {
                    // Another request is waiting: it gets its own thread.
                    Spawner::spawn(shared2, live2.clone(), job2);
                }
                let mut n = live2.0.lock();
                *n -= 1;
                live2.1.notify_all();
            });
        if let Err(e) = spawned {
            // Out of threads: the request must not be lost, so the caller
            // runs it (slowly) itself, and the error is reported.
            eprintln!("serverlab: cannot spawn a request thread ({e}); running it inline");
            while run_job(&shared, &job) {}
            *live.0.lock() -= 1;
            live.1.notify_all();
        }
    }
}

impl<S: Service> Executor<S> for Spawner<S> {
    fn submit(&self, job: Job<S>) {
        Spawner::spawn(self.shared.clone(), self.live.clone(), job);
    }

    fn stop(self: Box<Self>) {
        let mut n = self.live.0.lock();
        while *n > 0 {
            self.live.1.wait(&mut n);
        }
    }
}
