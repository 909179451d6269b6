//! What a run shows while it goes (`load --metrics`, `--progress`): each
//! event loop hands over its finished second — the per-second histograms
//! it keeps anyway ([`crate::intervals`]), the requests its clients sent
//! and the errors they met in it, how late its requests went — to one
//! shared [`Live`], under a lock taken once a second per loop, never per
//! request. The totals count the measured window only (the warm-up is
//! left out, as in the results), so after the run they equal the
//! results' counts.

use crate::driver::Failure;
use crate::intervals::{Second, View};
use crate::record::new_histogram;
use hdrhistogram::Histogram;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Instant;

/// The causes an error is counted under (`serverlab_load_errors_total`).
pub const CAUSES: [&str; 5] = ["connect", "closed", "io", "reply", "stalled"];

/// `f`'s index in [`CAUSES`].
pub fn cause(f: &Failure) -> usize {
    match f {
        Failure::Connect { .. } => 0,
        Failure::Closed => 1,
        Failure::Io(_) => 2,
        Failure::Reply(_) => 3,
        Failure::Stalled(_) => 4,
    }
}

/// An error as a loop hands it over: the operation that was unanswered
/// (`None`: nothing was in flight) and its cause's index.
pub type ErrorAt = (Option<usize>, usize);

/// One second of the window, over every loop that has handed it over.
#[derive(Debug, Clone)]
pub struct SecondSeen {
    pub second: usize,
    pub responses: u64,
    pub errors: u64,
    /// Latency (from the intended send time), every operation, in ns.
    pub latency: Histogram<u64>,
    /// How late the latest requests went, at most, in ns (open loop).
    pub behind_ns: u64,
}

/// The run's totals since the window opened.
#[derive(Debug, Clone)]
pub struct Totals {
    pub ops: Vec<String>,
    /// An open loop: latency counts from the intended send time, and
    /// service times and lateness are kept.
    pub open: bool,
    /// The rate this process was asked for (open loop).
    pub requested_rate: Option<f64>,
    /// When the window opened, and how long it lasts (a timed run).
    pub window: Option<(Instant, Option<f64>)>,
    pub sent: Vec<u64>,
    pub responses: Vec<u64>,
    /// Errors by (operation, or `ops.len()` for none) and cause.
    pub errors: Vec<[u64; CAUSES.len()]>,
    pub latency: Vec<Histogram<u64>>,
    pub service: Vec<Histogram<u64>>,
    /// How late the generator is: the latest second's most late request.
    pub behind_ns: u64,
    behind_second: Option<usize>,
    /// The last few seconds, oldest first.
    pub seconds: VecDeque<SecondSeen>,
}

/// Seconds kept for a live view.
const SECONDS_KEPT: usize = 8;

impl Totals {
    fn new(ops: &[&str], open: bool) -> Totals {
        let n = ops.len();
        Totals {
            ops: ops.iter().map(|s| s.to_string()).collect(),
            open,
            requested_rate: None,
            window: None,
            sent: vec![0; n],
            responses: vec![0; n],
            errors: vec![[0; CAUSES.len()]; n + 1],
            latency: (0..n).map(|_| new_histogram()).collect(),
            service: (0..n).map(|_| new_histogram()).collect(),
            behind_ns: 0,
            behind_second: None,
            seconds: VecDeque::new(),
        }
    }

    fn second(&mut self, second: usize) -> &mut SecondSeen {
        let at = self.seconds.iter().position(|s| s.second == second);
        let i = at.unwrap_or_else(|| {
            let i = self
                .seconds
                .iter()
                .position(|s| s.second > second)
                .unwrap_or(self.seconds.len());
            self.seconds.insert(
                i,
                SecondSeen {
                    second,
                    responses: 0,
                    errors: 0,
                    latency: new_histogram(),
                    behind_ns: 0,
                },
            );
            i
        });
        &mut self.seconds[i]
    }

    /// One loop's second `second`.
    fn add(&mut self, h: &Handover<'_>) {
        let ops = self.ops.len();
        for s in h.seconds {
            let hist = match s.view {
                View::Latency => &mut self.latency[s.op],
                View::Service => &mut self.service[s.op],
            };
            for &(v, n) in &s.buckets {
                hist.saturating_record_n(v, n);
            }
            if s.view == View::Latency {
                self.responses[s.op] += s.buckets.iter().map(|b| b.1).sum::<u64>();
            }
        }
        for (a, b) in self.sent.iter_mut().zip(h.sent) {
            *a += b;
        }
        for &(op, cause) in h.errors {
            self.errors[op.unwrap_or(ops).min(ops)][cause] += 1;
        }
        // The latest second's lag, over the loops that handed it over.
        match self.behind_second {
            Some(k) if k > h.second => {}
            Some(k) if k == h.second => self.behind_ns = self.behind_ns.max(h.behind_ns),
            _ => (self.behind_ns, self.behind_second) = (h.behind_ns, Some(h.second)),
        }
        let seen = self.second(h.second);
        for s in h.seconds.iter().filter(|s| s.view == View::Latency) {
            for &(v, n) in &s.buckets {
                seen.latency.saturating_record_n(v, n);
                seen.responses += n;
            }
        }
        seen.errors += h.errors.len() as u64;
        seen.behind_ns = seen.behind_ns.max(h.behind_ns);
        while self.seconds.len() > SECONDS_KEPT {
            self.seconds.pop_front();
        }
    }
}

/// What one loop hands over at the end of a second.
pub struct Handover<'a> {
    pub second: usize,
    pub seconds: &'a [Second],
    pub sent: &'a [u64],
    pub errors: &'a [ErrorAt],
    pub behind_ns: u64,
}

/// The totals every loop hands its seconds to.
#[derive(Debug, Default)]
pub struct Live {
    totals: Mutex<Option<Totals>>,
}

impl Live {
    /// A run of operations `ops` begins (a search's or scan's later steps
    /// add to the same totals).
    pub fn begin(&self, ops: &[&str], open: bool) {
        let mut t = self.totals.lock().expect("live totals");
        if t.is_none() {
            *t = Some(Totals::new(ops, open));
        }
    }

    /// The window opened at `start`, `length_s` long, at `rate` (open loop).
    pub fn window(&self, start: Instant, length_s: Option<f64>, rate: Option<f64>) {
        if let Some(t) = self.totals.lock().expect("live totals").as_mut() {
            t.window = Some((start, length_s));
            t.requested_rate = rate;
            // A search's or scan's next step counts its seconds afresh.
            t.seconds.clear();
            t.behind_second = None;
        }
    }

    pub fn hand_over(&self, h: &Handover<'_>) {
        if let Some(t) = self.totals.lock().expect("live totals").as_mut() {
            t.add(h);
        }
    }

    /// The totals so far (`None` before the run began).
    pub fn read<T>(&self, f: impl FnOnce(&Totals) -> T) -> Option<T> {
        self.totals.lock().expect("live totals").as_ref().map(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_add_up_by_operation_and_second() {
        let live = Live::default();
        live.begin(&["GET", "PUT"], true);
        let second = |op, view, n| Second {
            second: 3,
            view,
            op,
            buckets: vec![(1000, n)],
        };
        let seconds = [
            second(0, View::Latency, 5),
            second(1, View::Latency, 2),
            second(1, View::Service, 2),
        ];
        for behind in [7, 3] {
            live.hand_over(&Handover {
                second: 3,
                seconds: &seconds,
                sent: &[6, 2],
                errors: &[(Some(1), 2), (None, 0)],
                behind_ns: behind,
            });
        }
        live.read(|t| {
            assert_eq!(
                (t.responses.clone(), t.sent.clone()),
                (vec![10, 4], vec![12, 4])
            );
            assert_eq!((t.errors[1][2], t.errors[2][0]), (2, 2));
            assert_eq!(t.service[1].len(), 4);
            let s = &t.seconds[0];
            assert_eq!(
                (s.second, s.responses, s.errors, s.behind_ns),
                (3, 14, 4, 7)
            );
        })
        .unwrap();
    }
}
