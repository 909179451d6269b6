//! One client of the bucket load, in a closed loop on the event-loop
//! driver: send `<delay>,<bucket>`, wait for the reply, repeat — on a new
//! TCP connection per request (the assignment's client) or all on one
//! (keep-alive).

use super::ledger::Ack;
use super::{BucketLoad, OPS};
use crate::driver::{take_line, Client, Failure};
use crate::record::Recorder;
use serverlab_proto::bucket::{Reply, Request};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const ADD: usize = 0;
const READ: usize = 1;
const _: () = assert!(OPS.len() == 2);

pub(crate) struct BucketClient<'a> {
    cfg: &'a BucketLoad,
    /// Requests left to claim across all clients (`--requests`); None
    /// when the run is bounded by its duration.
    budget: Option<&'a AtomicU64>,
    pub(crate) index: usize,
    rng: fastrand::Rng,
    window: Option<Duration>,
    /// The request claimed for a connection being opened, with its start:
    /// with a connection per request, the connection's setup is part of
    /// the request's latency, as the assignment's client experiences it.
    claimed: Option<(Request, Instant)>,
    /// The request sent and not yet answered, with its start.
    in_flight: Option<(Request, Instant)>,
    /// No request is left to claim.
    exhausted: bool,
    /// A connection failed: this client stops.
    stopped: bool,
    pub(crate) rec: Recorder,
    /// Delay units of the requests the recorder counted.
    pub(crate) counted_units: u64,
    /// TCP connections opened.
    pub(crate) opened: u64,
    /// Every acknowledged request (only when verifying).
    pub(crate) acks: Vec<Ack>,
    pub(crate) error: Option<String>,
    /// When this client received its last reply.
    pub(crate) finished: Instant,
}

impl<'a> BucketClient<'a> {
    pub(crate) fn new(
        cfg: &'a BucketLoad,
        index: usize,
        budget: Option<&'a AtomicU64>,
        window: Option<Duration>,
        start: Instant,
    ) -> Self {
        BucketClient {
            cfg,
            budget,
            index,
            rng: fastrand::Rng::with_seed(
                cfg.seed ^ (0xB0C_E700 + index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            window,
            claimed: None,
            in_flight: None,
            exhausted: false,
            stopped: false,
            rec: Recorder::new(OPS.len(), start, window),
            counted_units: 0,
            // A keep-alive client's one connection is opened before the run.
            opened: u64::from(cfg.keep_alive),
            acks: Vec::new(),
            error: None,
            finished: start,
        }
    }

    /// Count the window from `start` (set once every connection is open).
    pub(crate) fn restart(&mut self, start: Instant) {
        self.rec = Recorder::new(OPS.len(), start, self.window);
        self.finished = start;
    }

    /// Claim the right to send one more request, and draw it.
    fn claim(&mut self) -> Option<Request> {
        // Relaxed: a counter that hands out tickets; nothing else is
        // published through it.
        let granted = self.budget.is_none_or(|left| {
            left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok()
        });
        if !granted {
            self.exhausted = true;
            return None;
        }
        Some(Request {
            delay: self.cfg.delay.pick(&mut self.rng),
            bucket: self.rng.u64(0..self.cfg.buckets),
        })
    }
}

fn shown(req: Request) -> String {
    format!("{},{}", req.delay, req.bucket)
}

impl Client for BucketClient<'_> {
    /// With a connection per request: claim the next request, whose clock
    /// starts now. Keep-alive connections are opened before the run.
    fn connect(&mut self, now: Instant) -> bool {
        if self.cfg.keep_alive || self.stopped {
            return false;
        }
        let Some(req) = self.claim() else {
            return false;
        };
        self.claimed = Some((req, now));
        self.opened += 1;
        true
    }

    fn fill(&mut self, wire: &mut Vec<u8>, now: Instant) -> usize {
        if self.in_flight.is_some() {
            return 0;
        }
        let next = if self.cfg.keep_alive {
            if self.exhausted {
                return 0;
            }
            self.claim().map(|req| (req, now))
        } else {
            self.claimed.take()
        };
        let Some((req, sent)) = next else {
            return 0;
        };
        req.encode(wire);
        self.in_flight = Some((req, sent));
        1
    }

    fn take(&mut self, input: &[u8], now: Instant) -> Result<Option<usize>, String> {
        let Some((line, len)) = take_line(input)? else {
            return Ok(None);
        };
        let Some((req, sent)) = self.in_flight.take() else {
            return Err("a reply to no request".into());
        };
        let value = match Reply::parse(line) {
            Some(Reply::Value(v)) => v,
            Some(Reply::Err(reason)) => {
                return Err(format!(
                    "the server answered ERR {} to {}",
                    String::from_utf8_lossy(reason),
                    shown(req)
                ))
            }
            None => {
                return Err(format!(
                    "the server answered {:?} to {}, not a number",
                    String::from_utf8_lossy(&line[..line.len().min(80)]),
                    shown(req)
                ))
            }
        };
        self.finished = now;
        let op = if req.delay == 0 { READ } else { ADD };
        if self.rec.record(op, sent, now) {
            self.counted_units += req.delay;
        }
        if self.cfg.verify {
            self.acks.push(Ack {
                bucket: req.bucket,
                delta: req.delay,
                value,
            });
        }
        Ok(Some(len))
    }

    fn in_flight(&self) -> usize {
        usize::from(self.in_flight.is_some())
    }

    /// A connection per request is done once its request is answered; a
    /// keep-alive one when no request is left.
    fn connection_done(&self) -> bool {
        self.in_flight.is_none()
            && if self.cfg.keep_alive {
                self.exhausted
            } else {
                self.claimed.is_none()
            }
    }

    fn failed(&mut self, failure: Failure, _now: Instant) {
        self.stopped = true;
        self.claimed = None;
        let what = match (failure, self.in_flight.take()) {
            (Failure::Closed, Some((req, _))) => format!(
                "the server closed the connection before answering {}",
                shown(req)
            ),
            (Failure::Closed, None) => {
                "the server closed the connection before answering the next request".into()
            }
            (f @ (Failure::Io(_) | Failure::Stalled(_)), Some((req, _))) => {
                format!("{} got no reply: {f}", shown(req))
            }
            (f, _) => f.to_string(),
        };
        self.error = Some(format!("connection {}: {what}", self.index));
    }
}
