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
#![forbid(unsafe_code)]
// A test reads as one story; the 60-line limit is for the code under test.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod board;
pub mod bucket;
pub mod certify;
pub mod checks;
pub mod conn;
pub mod driver;
pub mod endpoint;
pub mod env;
pub mod harness;
pub mod http;
pub mod intervals;
pub mod keyspace;
pub mod kv;
pub mod live;
pub mod merge;
pub mod output;
pub mod record;
pub mod report;
pub mod resp;
pub mod results;
pub mod thresholds;
pub mod tls;

pub use endpoint::Endpoint;
pub use harness::run;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// What a run shares with those watching it while it goes: the requests
/// completed so far (for a live display), and a request to end it early
/// (Ctrl-C).
#[derive(Default)]
pub struct Progress {
    done: AtomicU64,
    interrupt: Arc<AtomicBool>,
    /// Where the loops hand over each second, when someone watches.
    live: Option<Arc<live::Live>>,
}

impl Progress {
    /// A run watched through `live` (its loops hand it their seconds).
    pub fn watched(live: Arc<live::Live>) -> Progress {
        Progress {
            live: Some(live),
            ..Progress::default()
        }
    }

    pub fn live(&self) -> Option<&Arc<live::Live>> {
        self.live.as_ref()
    }

    pub fn add(&self, n: u64) {
        // Relaxed: a display counter, ordered with nothing.
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// The flag that ends the run early once set (a signal handler may
    /// set it): the window closes at once, replies in flight drain
    /// briefly, and the run reports what it measured, marked interrupted.
    pub fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.interrupt.clone()
    }

    /// End the run early, as the flag does.
    pub fn interrupt(&self) {
        self.interrupt.store(true, Ordering::Relaxed);
    }

    pub fn interrupted(&self) -> bool {
        // Relaxed: a flag polled by each loop; nothing is published
        // through it.
        self.interrupt.load(Ordering::Relaxed)
    }
}

/// Why a run could not produce a result. Each says its cause once (no
/// `source` repeated after the message).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot connect to {addr}: {error}")]
    Connect {
        addr: endpoint::Endpoint,
        error: std::io::Error,
    },
    /// A reply no server of the protocol would send.
    #[error("this does not look like a {protocol} server (it sent {sent})")]
    WrongProtocol {
        protocol: &'static str,
        /// The start of what it sent, quoted ([`quoted`]).
        sent: String,
    },
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A split load's agent with nothing of something to run.
    #[error(transparent)]
    Unfed(#[from] harness::Unfed),
}

impl LoadError {
    /// What a failed connection to `addr` is, for `map_err`.
    pub fn connecting(addr: &endpoint::Endpoint) -> impl FnOnce(std::io::Error) -> LoadError + '_ {
        move |error| LoadError::Connect {
            addr: addr.clone(),
            error,
        }
    }
}

/// The start of what a server sent, quoted and escaped, for an error
/// that says what arrived.
pub fn quoted(bytes: &[u8]) -> String {
    const SHOWN: usize = 40;
    let more = if bytes.len() > SHOWN { "…" } else { "" };
    format!(
        "{:?}{more}",
        String::from_utf8_lossy(&bytes[..bytes.len().min(SHOWN)])
    )
}
