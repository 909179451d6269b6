//! After the run: every client's recorder, checks and errors merged, the
//! measured window, the per-second series padded to it, and a summary per
//! client — the parts of the results that are the same for every protocol.

use super::{Run, Window};
use crate::checks::Checks;
use crate::record::Recorder;
use crate::report::{op_summaries, Results, ThreadSummary, Verification};

/// The run's figures, for a protocol's `finish` (and its results).
#[derive(Debug, Clone, Copy)]
pub struct Measured {
    /// The measured window, in seconds.
    pub duration_s: f64,
    /// Requests answered within it.
    pub requests: u64,
    pub throughput_rps: f64,
    /// From the start until the last client finished, in seconds.
    pub wall_s: f64,
}

pub(super) struct Gathered<E> {
    pub exchanges: Vec<E>,
    pub measured: Measured,
    pub checks: Checks,
    /// Errors, verification and the protocol's part still to fill in.
    pub results: Results,
}

/// Merge `run`'s clients; their errors go to `errors` (after any already
/// there), with a line counting those not kept.
pub(super) fn gather<E: super::Exchange>(
    run: Run<E>,
    ops: &[&str],
    verify: bool,
    window: Window,
    errors: &mut Vec<String>,
) -> Gathered<E> {
    let mut merged = Recorder::new(ops.len(), run.start, None);
    let mut checks = Checks::new(verify);
    let (mut kept, mut count) = (0u64, 0u64);
    let duration_s = window_s(&run, window);
    let seconds = duration_s.ceil() as usize;
    let concurrency = run.clients.len() as u64;
    let mut threads = Vec::with_capacity(run.clients.len());
    let mut exchanges = Vec::with_capacity(run.clients.len());
    for c in run.clients {
        merged.merge(&c.rec);
        checks.merge(c.checks);
        kept += c.errors.kept.len() as u64;
        count += c.errors.count;
        errors.extend(c.errors.kept);
        let (role, index) = c.exchange.label();
        threads.push(ThreadSummary {
            role: role.into(),
            index,
            total: c.rec.total(),
            per_second: padded(&c.rec.per_second, seconds),
            runtime_s: c.runtime.as_secs_f64(),
        });
        exchanges.push(c.exchange);
    }
    if count > kept {
        errors.push(format!("… and {} more errors", count - kept));
    }
    let requests = merged.total();
    let throughput_rps = if duration_s > 0.0 {
        requests as f64 / duration_s
    } else {
        0.0
    };
    let results = Results {
        duration_s,
        requests,
        throughput_rps,
        concurrency,
        operations: op_summaries(&merged, ops, duration_s),
        per_second: padded(&merged.per_second, seconds),
        threads,
        late_replies: merged.late,
        errors: Vec::new(),
        verification: Verification::default(),
        client_cpu: run.client_cpu,
        protocol: None,
    };
    Gathered {
        exchanges,
        measured: Measured {
            duration_s,
            requests,
            throughput_rps,
            wall_s: run.wall.as_secs_f64(),
        },
        checks,
        results,
    }
}

/// The measured window: a timed run's duration; otherwise every reply
/// counts, and the window runs to the last.
fn window_s<E>(run: &Run<E>, window: Window) -> f64 {
    match window {
        Window::Duration(d) => d.as_secs_f64(),
        Window::Requests(_) | Window::Work => run
            .clients
            .iter()
            .filter_map(|c| c.last_reply)
            .max()
            .map_or(0.0, |t| {
                t.saturating_duration_since(run.start).as_secs_f64()
            }),
    }
}

/// A per-second series with a slot for every second of the window.
fn padded(series: &[u64], seconds: usize) -> Vec<u64> {
    let mut out = series.to_vec();
    out.resize(seconds.max(out.len()), 0);
    out
}
