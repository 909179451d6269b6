//! A loop per listener, each on a thread of its own, for the strategies
//! that run one loop per SO_REUSEPORT listener (`shared-nothing`,
//! `uring`): each thread is pinned to its CPU (under `--cpus`), sets its
//! loop up there (a runtime, a ring), waits until every loop is set up,
//! then serves its listener. No loop accepts before every loop is set up,
//! so a burst of connections on one cannot take the descriptors another
//! still needs (its epoll and eventfd, its ring).
//!
//! A loop that fails — pinning, setting up, serving, or a panic — stops
//! the whole server: the other loops drain their connections and finish,
//! and the server returns the first loop's error.

use crate::listen::Listener;
use crate::Ctx;
use parking_lot::{Condvar, Mutex};
use serverlab_service::Service;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Run a loop per listener, threads named `{name}-{i}`: `set_up(i)` on
/// loop `i`'s thread, once it is pinned, then `serve` with its listener
/// once every loop is set up. Returns when every loop has finished.
pub(crate) fn run_per_listener<S: Service, L>(
    ctx: &Ctx<S>,
    name: &str,
    listeners: Vec<Listener>,
    set_up: impl Fn(usize) -> io::Result<L> + Sync,
    serve: impl Fn(L, Listener) -> io::Result<()> + Sync,
) -> io::Result<()> {
    let group = Group {
        ctx,
        name,
        waiting: Mutex::new(listeners.len()),
        all_set_up: Condvar::new(),
        failed: Mutex::new(None),
    };
    let count = listeners.len();
    std::thread::scope(|scope| {
        for (i, listener) in listeners.into_iter().enumerate() {
            let (group, set_up, serve) = (&group, &set_up, &serve);
            let spawned = std::thread::Builder::new()
                .name(format!("{name}-{i}"))
                .spawn_scoped(scope, move || group.run(i, listener, set_up, serve));
            if let Err(e) = spawned {
                // The loops not started never arrive: count them set up,
                // so the started ones see the stop and finish.
                group.fail(e);
                group.arrive(count - i);
                break;
            }
        }
    });
    match group.failed.into_inner() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The loops of one server.
struct Group<'a, S> {
    ctx: &'a Ctx<S>,
    name: &'a str,
    /// Loops not yet set up (or failed to be).
    waiting: Mutex<usize>,
    all_set_up: Condvar,
    /// The first loop's failure.
    failed: Mutex<Option<io::Error>>,
}

impl<S: Service> Group<'_, S> {
    /// Loop `i`'s thread.
    fn run<L>(
        &self,
        i: usize,
        listener: Listener,
        set_up: impl Fn(usize) -> io::Result<L>,
        serve: impl Fn(L, Listener) -> io::Result<()>,
    ) {
        let ready = self.caught(i, || {
            if let Some(cpus) = &self.ctx.cpus {
                cpus.nth(i).pin_current_thread()?;
            }
            set_up(i)
        });
        // Failed before the others pass the barrier: they see the stop at
        // once.
        let ready = ready.map_err(|e| self.fail(e));
        self.arrive(1);
        self.wait_for_all();
        if let Ok(ready) = ready {
            if let Err(e) = self.caught(i, || serve(ready, listener)) {
                self.fail(e);
            }
        }
    }

    /// A panic is a failure like any other: the server stops.
    fn caught<T>(&self, i: usize, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        catch_unwind(AssertUnwindSafe(f))
            .unwrap_or_else(|_| Err(io::Error::other(format!("{}-{i} panicked", self.name))))
    }

    /// A loop failed: the whole server stops, with the first error.
    fn fail(&self, e: io::Error) {
        self.failed.lock().get_or_insert(e);
        self.ctx.shutdown.trigger();
    }

    fn arrive(&self, loops: usize) {
        let mut waiting = self.waiting.lock();
        *waiting -= loops;
        if *waiting == 0 {
            self.all_set_up.notify_all();
        }
    }

    fn wait_for_all(&self) {
        let mut waiting = self.waiting.lock();
        while *waiting > 0 {
            self.all_set_up.wait(&mut waiting);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_server::start;
    use crate::{Listeners, ServerConfig, StrategyKind};
    use serverlab_util::{CpuSet, Named};
    use std::net::TcpStream;
    use std::time::Duration;

    /// One loop cannot pin its thread (its CPU is not one this process may
    /// use): the whole server stops, with that error, without being asked
    /// — under every strategy with a loop per listener.
    #[test]
    fn a_loop_that_fails_stops_the_whole_server_with_its_error() {
        let allowed = CpuSet::allowed().unwrap();
        let Some(bad) = (0..1024).rev().find(|c| !allowed.cpus().contains(c)) else {
            return; // every CPU number is allowed: none to fail on
        };
        let cpus = CpuSet::parse_unchecked(&format!("{},{bad}", allowed.cpus()[0])).unwrap();
        for &strategy in StrategyKind::ALL {
            if strategy.listeners() != Listeners::PerThread {
                continue;
            }
            let mut cfg = ServerConfig::new(
                "127.0.0.1:0".parse::<std::net::SocketAddr>().unwrap(),
                strategy,
            );
            cfg.threads = Some(2);
            cfg.cpus = Some(cpus.clone());
            if let Err(why) = cfg.preflight() {
                eprintln!("skipped: {why}");
                continue;
            }
            let (addr, _stop, done) = start(cfg);
            let outcome = done
                .recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| {
                    panic!("{strategy}: the server still runs, though a loop failed")
                });
            let err = outcome.expect_err("a loop failed");
            assert_eq!(err.raw_os_error(), Some(libc::EINVAL), "{strategy}: {err}");
            assert!(
                TcpStream::connect(addr).is_err(),
                "{strategy}: no loop serves on once the server has stopped"
            );
        }
    }
}
