//! Load generation: workloads that drive a server, recorders that measure
//! it, verification that checks every reply, and sinks that print results.
//!
//! Every protocol's load runs on one [`harness`]: it owns the run (the
//! load model — closed loop, or open loop on a schedule — the warm-up and
//! the window, recording, merging, the report, capacity searches and
//! scans) on the event-loop [`driver`] (one loop per client CPU
//! multiplexing non-blocking connections), and a protocol supplies only
//! its clients, its setup and its final checks ([`harness::Protocol`]).
//! Every event loop records into its own [`record::Recorder`]; they merge
//! once at the end.

pub mod board;
pub mod bucket;
pub mod checks;
pub mod conn;
pub mod driver;
pub mod env;
pub mod harness;
pub mod intervals;
pub mod kv;
pub mod output;
pub mod record;
pub mod report;

pub use harness::run;

use std::sync::atomic::{AtomicU64, Ordering};

/// Requests completed so far, for a live progress display.
#[derive(Default)]
pub struct Progress {
    done: AtomicU64,
}

impl Progress {
    pub fn add(&self, n: u64) {
        // Relaxed: a display counter, ordered with nothing.
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }
}

/// Why a run could not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}
