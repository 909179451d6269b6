//! Measurement, one recorder per event loop of the driver: latency
//! histograms per operation (and, open loop, service-time histograms and
//! how late requests went), completions per second, and per-second
//! histograms ([`crate::intervals`]). A loop's clients share its recorder
//! on that loop's thread only, so recording costs no synchronisation; the
//! loops' recorders merge once at the end.

use crate::certify::client::ClientShare;
use crate::certify::sample::Sample;
use crate::intervals::Intervals;
use crate::live::{ErrorAt, Handover, Live};
use hdrhistogram::Histogram;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Latencies are recorded in nanoseconds, 3 significant digits, up to an
/// hour (longer ones saturate).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds")
}

/// A request is late when it went out more than this after its intended
/// send time.
pub const LATE: Duration = Duration::from_millis(1);

pub struct OpRecord {
    pub count: u64,
    /// From the intended send time (closed loop: from the send).
    pub latency_ns: Histogram<u64>,
    /// Open loop: from the actual send.
    pub service_ns: Option<Histogram<u64>>,
}

/// When a request's clocks start.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// When it was meant to go: its latency counts from here. Closed loop:
    /// when it went.
    pub intended: Instant,
    /// When its connection had room for it (no earlier than `intended`):
    /// from here on, any wait was the client's own.
    pub ready: Instant,
    /// When it went: its bytes handed to the socket, or its connection
    /// begun when it has one of its own. Its service time counts from here.
    pub sent: Instant,
}

/// How far an open loop's requests fell behind their schedule.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Lag {
    /// Requests sent more than [`LATE`] after their intended time, for any
    /// reason (a busy connection included).
    pub late: u64,
    pub max: Duration,
    /// Requests sent more than [`LATE`] after their connection had room:
    /// the client's own lateness.
    pub own_late: u64,
    pub own_max: Duration,
}

impl Lag {
    fn add(&mut self, t: &Timing) {
        let lag = t.sent.saturating_duration_since(t.intended);
        let own = t.sent.saturating_duration_since(t.ready);
        self.late += u64::from(lag > LATE);
        self.max = self.max.max(lag);
        self.own_late += u64::from(own > LATE);
        self.own_max = self.own_max.max(own);
    }

    pub fn merge(&mut self, o: &Lag) {
        self.late += o.late;
        self.max = self.max.max(o.max);
        self.own_late += o.own_late;
        self.own_max = self.own_max.max(o.own_max);
    }
}

/// The measured window: replies arriving in it are recorded.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    /// When the window opens (the warm-up, if any, is over).
    pub start: Instant,
    /// When it closes, for a timed run.
    pub end: Option<Instant>,
}

impl Span {
    /// Whether a reply received at `done` counts (falls in the window).
    pub fn contains(&self, done: Instant) -> bool {
        done >= self.start && self.end.is_none_or(|e| done < e)
    }

    /// Close the window at `at`, if it would close later (a run
    /// interrupted).
    pub fn close_at(&mut self, at: Instant) {
        self.end = Some(self.end.map_or(at, |end| end.min(at)));
    }

    /// The second of the window `done` falls in.
    pub fn second(&self, done: Instant) -> usize {
        done.saturating_duration_since(self.start).as_secs() as usize
    }
}

pub struct Recorder {
    pub span: Span,
    pub ops: Vec<OpRecord>,
    pub per_second: Vec<u64>,
    /// Replies that arrived after the measured window (drained, and
    /// checked if the run verifies, but not counted).
    pub late: u64,
    /// Of those recorded, messages the server sent unasked (pub/sub
    /// deliveries): no request of the schedule's.
    pub unasked: u64,
    /// Open loop: the schedule's lag over the recorded requests.
    pub lag: Lag,
    pub intervals: Intervals,
    /// A bounded sample of the run for its verdict
    /// ([`crate::certify::sample`]).
    pub sample: Sample,
    /// The client's own share of each latency recorded
    /// ([`crate::certify::client`]).
    pub client: ClientShare,
    /// What the TLS handshakes took (none without TLS).
    pub tls: crate::tls::Handshakes,
    /// Where this loop hands each finished second, when watched.
    live: Option<Arc<Live>>,
    /// Since the last hand-over: requests sent in the window by
    /// operation, errors, the most late request (open loop), in ns.
    live_sent: Vec<u64>,
    live_errors: Vec<ErrorAt>,
    behind_ns: u64,
}

impl Recorder {
    /// A recorder for `ops` operation kinds over `span`; `open`: requests
    /// have intended send times (service times and lag are recorded too).
    pub fn new(ops: usize, span: Span, open: bool) -> Self {
        Recorder {
            span,
            ops: (0..ops)
                .map(|_| OpRecord {
                    count: 0,
                    latency_ns: new_histogram(),
                    service_ns: open.then(new_histogram),
                })
                .collect(),
            per_second: Vec::new(),
            late: 0,
            unasked: 0,
            lag: Lag::default(),
            intervals: Intervals::new(ops, open),
            sample: Sample::default(),
            client: ClientShare::default(),
            tls: Default::default(),
            live: None,
            live_sent: vec![0; ops],
            live_errors: Vec::new(),
            behind_ns: 0,
        }
    }

    /// Hand each finished second to `live`.
    pub fn watched(mut self, live: Option<Arc<Live>>) -> Self {
        self.live = live;
        self
    }

    /// Requests sent in the window (`sent`, by operation) and errors
    /// since the last call, for the next hand-over; `sent` is zeroed and
    /// `errors` emptied. Nothing is kept when no one watches.
    pub fn note(&mut self, sent: &mut [u64], errors: &mut Vec<ErrorAt>) {
        if self.live.is_none() {
            errors.clear();
            return;
        }
        for (a, b) in self.live_sent.iter_mut().zip(sent.iter_mut()) {
            *a += std::mem::take(b);
        }
        self.live_errors.append(errors);
    }

    /// Hand the second under way (and what was noted) to the watcher:
    /// at each new second, and once at the end of the run.
    pub fn hand_over(&mut self) {
        let Some(live) = self.live.clone() else {
            return;
        };
        let before = self.intervals.done.len();
        self.intervals.close();
        live.hand_over(&Handover {
            second: self.intervals.current(),
            seconds: &self.intervals.done[before..],
            sent: &self.live_sent,
            errors: &self.live_errors,
            behind_ns: self.behind_ns,
        });
        self.live_sent.iter_mut().for_each(|n| *n = 0);
        self.live_errors.clear();
        self.behind_ns = 0;
    }

    /// One request of kind `op`, timed by `t`, answered at `done`. Returns
    /// false when it fell outside the window (in the warm-up, or late).
    pub fn record(&mut self, op: usize, t: &Timing, done: Instant) -> bool {
        self.record_as(op, t, done, true)
    }

    /// A message the server sent unasked (a pub/sub delivery), as
    /// [`Recorder::record`] but counted apart ([`Recorder::unasked`]),
    /// not among the requests answered each second.
    pub fn record_unasked(&mut self, op: usize, t: &Timing, done: Instant) -> bool {
        self.record_as(op, t, done, false)
    }

    fn record_as(&mut self, op: usize, t: &Timing, done: Instant, request: bool) -> bool {
        if !self.span.contains(done) {
            self.late += u64::from(done >= self.span.start);
            return false;
        }
        // Into the window: its second, and where the thinned series puts
        // the reply (one subtraction for both).
        let into = done.saturating_duration_since(self.span.start);
        let sec = into.as_secs() as usize;
        if self.live.is_some() {
            self.watch(sec, t);
        }
        if !request {
            self.unasked += 1;
        } else {
            if self.per_second.len() <= sec {
                self.per_second.resize(sec + 1, 0);
            }
            self.per_second[sec] += 1;
        }
        let ns = |from: Instant| done.saturating_duration_since(from).as_nanos().max(1) as u64;
        let latency = ns(t.intended);
        let rec = &mut self.ops[op];
        rec.count += 1;
        rec.latency_ns.saturating_record(latency);
        let service = rec.service_ns.as_mut().map(|h| {
            let v = ns(t.sent);
            h.saturating_record(v);
            v
        });
        if service.is_some() {
            self.lag.add(t);
            if crate::certify::PER_REQUEST {
                let lag = t.sent.saturating_duration_since(t.intended).as_nanos();
                self.sample.lag(lag as u64);
            }
        }
        if crate::certify::PER_REQUEST {
            self.sample.reply(into.as_nanos() as u64, latency);
        }
        self.intervals.record(sec, op, latency, service);
        true
    }

    /// A watched loop's reply in second `sec`: the last second handed
    /// over if this one is new; how late the request went.
    fn watch(&mut self, sec: usize, t: &Timing) {
        if sec != self.intervals.current() {
            self.hand_over();
        }
        let lag = t.sent.saturating_duration_since(t.intended).as_nanos() as u64;
        self.behind_ns = self.behind_ns.max(lag);
    }

    pub fn total(&self) -> u64 {
        self.ops.iter().map(|o| o.count).sum()
    }

    /// Fold another loop's recorder into this one (its per-second
    /// histograms stay where they are: see [`crate::intervals::merge`]).
    pub fn merge(&mut self, other: &Recorder) {
        for (a, b) in self.ops.iter_mut().zip(&other.ops) {
            a.count += b.count;
            a.latency_ns.add(&b.latency_ns).expect("same bounds");
            if let (Some(x), Some(y)) = (a.service_ns.as_mut(), b.service_ns.as_ref()) {
                x.add(y).expect("same bounds");
            }
        }
        if self.per_second.len() < other.per_second.len() {
            self.per_second.resize(other.per_second.len(), 0);
        }
        for (a, b) in self.per_second.iter_mut().zip(&other.per_second) {
            *a += b;
        }
        self.late += other.late;
        self.unasked += other.unasked;
        self.lag.merge(&other.lag);
        self.sample.absorb(&other.sample);
        self.client.merge(&other.client);
        self.tls.merge(&other.tls);
    }

    /// The gap between two consecutive sends of one client, both of
    /// requests recorded (for the verdict's test of the arrivals).
    pub fn send_gap(&mut self, gap: Duration) {
        self.sample.send_gap(gap.as_nanos() as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    fn sent_at(t: Instant) -> Timing {
        Timing {
            intended: t,
            ready: t,
            sent: t,
        }
    }

    #[test]
    fn a_watched_recorder_hands_over_each_second_and_the_last_at_the_end() {
        let t0 = Instant::now();
        let span = Span {
            start: t0,
            end: Some(at(t0, 3000)),
        };
        let live = Arc::new(Live::default());
        live.begin(&["a", "b"], true);
        let mut r = Recorder::new(2, span, true).watched(Some(live.clone()));
        let late = Timing {
            intended: t0,
            ready: t0,
            sent: at(t0, 2),
        };
        r.note(&mut [3, 1], &mut vec![(Some(0), 1)]);
        assert!(r.record(0, &late, at(t0, 100)));
        assert!(r.record(1, &sent_at(t0), at(t0, 900)));
        let seen = |l: &Live| l.read(|t| (t.responses.clone(), t.sent.clone())).unwrap();
        assert_eq!(seen(&live), (vec![0, 0], vec![0, 0]), "second 0 under way");
        // The first reply of second 1 hands second 0 over.
        assert!(r.record(0, &sent_at(t0), at(t0, 1200)));
        assert_eq!(seen(&live), (vec![1, 1], vec![3, 1]));
        live.read(|t| {
            assert_eq!(t.errors[0][1], 1);
            assert_eq!(t.behind_ns, 2_000_000);
            assert_eq!((t.seconds[0].second, t.seconds[0].responses), (0, 2));
        });
        r.hand_over();
        assert_eq!(seen(&live), (vec![2, 1], vec![3, 1]));
        assert_eq!(
            live.read(|t| t.latency[0].len() + t.service[0].len()),
            Some(4)
        );
        // Its per-second histograms are still whole for the results.
        let mut n = 0;
        crate::intervals::merge(vec![r.intervals], |_, view, _, h| {
            n += u64::from(view == crate::intervals::View::Latency) * h.len();
        });
        assert_eq!(n, 3);
    }

    #[test]
    fn an_unwatched_recorder_keeps_nothing_noted() {
        let mut r = Recorder::new(
            1,
            Span {
                start: Instant::now(),
                end: None,
            },
            false,
        );
        let (mut sent, mut errors) = (vec![5], vec![(None, 0)]);
        r.note(&mut sent, &mut errors);
        assert!(errors.is_empty() && r.live_errors.is_empty());
        r.hand_over();
    }

    #[test]
    fn window_and_merge() {
        let t0 = Instant::now();
        let span = Span {
            start: t0,
            end: Some(at(t0, 2000)),
        };
        let mut a = Recorder::new(2, span, false);
        assert!(a.record(0, &sent_at(t0), t0 + Duration::from_micros(50)));
        assert!(a.record(1, &sent_at(t0), at(t0, 1500)));
        assert!(!a.record(1, &sent_at(t0), at(t0, 2000)));
        let mut b = Recorder::new(2, span, false);
        b.record(0, &sent_at(t0), t0 + Duration::from_micros(70));
        a.merge(&b);
        assert_eq!(a.per_second, vec![2, 1]);
        assert_eq!(a.ops[0].count, 2);
        assert_eq!(a.late, 1);
        assert_eq!(a.total(), 3);
        let max_us = a.ops[0].latency_ns.max() as f64 / 1000.0;
        assert!((max_us - 70.0).abs() < 0.1, "{max_us}");
        assert!(a.ops[0].service_ns.is_none());
    }

    #[test]
    fn warm_up_replies_are_neither_recorded_nor_late() {
        let t0 = Instant::now();
        let span = Span {
            start: at(t0, 1000),
            end: None,
        };
        let mut r = Recorder::new(1, span, false);
        assert!(!r.record(0, &sent_at(t0), at(t0, 999)));
        assert!(r.record(0, &sent_at(t0), at(t0, 1000)));
        assert_eq!((r.total(), r.late, r.per_second.clone()), (1, 0, vec![1]));
    }

    #[test]
    fn open_loop_latency_counts_from_the_intended_time() {
        let t0 = Instant::now();
        let span = Span {
            start: t0,
            end: None,
        };
        let mut r = Recorder::new(1, span, true);
        // Meant for 0, its connection free at 100 ms, sent at 103 ms,
        // answered at 110 ms.
        let t = Timing {
            intended: t0,
            ready: at(t0, 100),
            sent: at(t0, 103),
        };
        r.record(0, &t, at(t0, 110));
        let op = &r.ops[0];
        let ms = |h: &Histogram<u64>| (h.max() as f64 / 1e6).round();
        assert_eq!(ms(&op.latency_ns), 110.0);
        assert_eq!(ms(op.service_ns.as_ref().unwrap()), 7.0);
        assert_eq!((r.lag.late, r.lag.own_late), (1, 1));
        assert_eq!(r.lag.max, Duration::from_millis(103));
        assert_eq!(r.lag.own_max, Duration::from_millis(3));
    }
}
