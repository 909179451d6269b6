//! `uring`: completion-based I/O with io_uring. Every other strategy asks
//! the kernel whether a socket is ready and then makes the read or write
//! itself; this one queues the reads, writes and accepts in a ring shared
//! with the kernel and collects their completions, one system call per
//! loop turn for all of them.
//!
//! Layout: one ring per thread, shared-nothing. Each of the `--threads`
//! threads owns an io_uring, a provided-buffer ring, its own SO_REUSEPORT
//! listener with a multishot accept on it, and every connection that
//! accept yields; nothing about a connection is ever touched by another
//! thread. The only hand-off is delays spent off the ring (`mailbox.rs`).
//! docs/strategies.md argues the choice.
//!
//! Files: `ring.rs` is a thread's loop, `conn.rs` one connection's state
//! between submissions and completions, `sys/` the one module with
//! `unsafe` (the ring, its buffers, and who owns them while the kernel
//! does), `probe.rs` whether io_uring can run here and why not.

// Only `sys` may use `unsafe`; the compiler holds the rest to that.
#![deny(unsafe_code)]

mod conn;
mod mailbox;
mod probe;
mod ring;
#[allow(unsafe_code)]
mod sys;

use crate::strategy::{Delays, Listeners, Strategy, Threads};
use crate::{Ctx, ServerConfig};
use serverlab_service::Service;
use std::io;
use std::net::TcpListener;
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// Submission queue entries per ring.
const ENTRIES: u32 = 1024;
/// Provided buffers per ring, and their size: what one receive completion
/// can carry. Receives are copied out at once, so the pool need only cover
/// the completions of one turn.
const BUFFERS: u16 = 256;
const BUFFER_LEN: u32 = 16 * 1024;
/// How often a ring checks deadlines (and, stopping, the drain limit).
const TICK: Duration = Duration::from_millis(100);
/// How long a ring that submitted replies waits for the next requests in
/// the same system call before it settles for the replies' completions
/// (see `sys::Uring::submit`): a client's round trip, with room to spare.
const SEND_WAIT: Duration = Duration::from_millis(2);

/// `uring`.
pub(crate) struct Uring;

impl Strategy for Uring {
    const NAME: &'static str = "uring";
    const DESCRIBE: &'static str =
        "N io_uring loops, one SO_REUSEPORT listener each: completions, not readiness";
    const THREADS: Threads = Threads::Sizes("rings");
    const LISTENERS: Listeners = Listeners::PerThread;
    const DELAYS: Delays = Delays::OffTheServingThreads;

    fn preflight(cfg: &ServerConfig) -> Result<(), String> {
        probe::check(&config(
            cfg.uring_sqpoll,
            cfg.cpus.as_ref().map(|c| c.nth(0)),
        ))
    }

    fn run<S: Service>(ctx: Arc<Ctx<S>>, listeners: Vec<TcpListener>) -> io::Result<()> {
        let set_up = Arc::new(Barrier::new(listeners.len()));
        let rings: Vec<_> = listeners
            .into_iter()
            .enumerate()
            .map(|(i, listener)| {
                let (ctx, set_up) = (ctx.clone(), set_up.clone());
                std::thread::Builder::new()
                    .name(format!("uring-{i}"))
                    .spawn(move || {
                        let served = serve_ring(&ctx, i, listener, &set_up);
                        if served.is_err() {
                            // Stop the other rings too: the server failed.
                            ctx.shutdown.trigger();
                        }
                        served
                    })
            })
            .collect::<io::Result<_>>()?;
        let mut result = Ok(());
        for r in rings {
            let r = r
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("a ring's thread panicked")));
            result = result.and(r);
        }
        result
    }
}

/// Ring `i`'s thread: pinned, then its ring set up (on this thread: the
/// ring has one submitter, this one) and served. No ring accepts before
/// every ring is set up (`set_up`), so a burst of connections on one
/// cannot take the descriptors another still needs.
fn serve_ring<S: Service>(
    ctx: &Arc<Ctx<S>>,
    i: usize,
    listener: TcpListener,
    set_up: &Barrier,
) -> io::Result<()> {
    let cpu = ctx.cpus.as_ref().map(|c| c.nth(i));
    let ring = (|| -> io::Result<_> {
        if let Some(cpu) = &cpu {
            cpu.pin_current_thread()?;
        }
        let io = sys::Uring::new(&config(ctx.uring_sqpoll, cpu)).map_err(io::Error::other)?;
        Ok((io, sys::EventFd::new()?))
    })();
    if ring.is_err() {
        // Before the others pass the barrier: they see the stop at once.
        ctx.shutdown.trigger();
    }
    set_up.wait();
    let (io, wake) = ring?;
    ring::serve(ctx.clone(), listener, io, wake)
}

/// A ring's setup: with `--cpus`, its thread's one CPU also pins its
/// kernel threads (the submission poller, io-wq workers).
fn config(sqpoll: bool, cpu: Option<serverlab_util::CpuSet>) -> sys::Config {
    let cpu = cpu.map(|c| c.cpus()[0]);
    sys::Config {
        entries: ENTRIES,
        buffers: BUFFERS,
        buffer_len: BUFFER_LEN,
        sqpoll: sqpoll.then_some(cpu),
        workers_on: cpu.map(|c| vec![c]),
        tick: TICK,
        send_wait: SEND_WAIT,
    }
}
