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

use crate::listen::Listener;
use crate::strategy::{Delays, Listeners, Strategy, Threads};
use crate::{Ctx, ServerConfig};
use serverlab_service::Service;
use std::io;
use std::sync::Arc;
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

    /// A ring per listener, each on its own thread (`listeners.rs`): set
    /// up there (the ring has one submitter, that thread), then served.
    fn run<S: Service>(ctx: Arc<Ctx<S>>, listeners: Vec<Listener>) -> io::Result<()> {
        let set_up = |i: usize| {
            let cpu = ctx.cpus.as_ref().map(|c| c.nth(i));
            let io = sys::Uring::new(&config(ctx.uring_sqpoll, cpu)).map_err(io::Error::other)?;
            Ok((io, sys::EventFd::new()?))
        };
        let serve = |(io, wake), listener| ring::serve(ctx.clone(), listener, io, wake);
        crate::listeners::run_per_listener(&ctx, "uring", listeners, set_up, serve)
    }
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
