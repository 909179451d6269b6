//! One client of the bucket load: send `<delay>,<bucket>`, check the
//! reply — on a new TCP connection per request (the assignment's client)
//! or all on one (keep-alive). When it sends is the harness's.

use super::ledger::Ack;
use super::BucketLoad;
use crate::checks::Checks;
use crate::driver::{take_line, Failure};
use crate::harness::{Exchange, Received};
use serverlab_proto::bucket::{DelayMode, Reply, Request};
use std::time::{Duration, Instant};

/// A request sent, and when (taken as it was written: its reply cannot
/// come sooner).
pub struct Sent {
    req: Request,
    at: Instant,
}

const ADD: usize = 0;
const READ: usize = 1;
const _: () = assert!(super::OPS.len() == 2);

pub struct BucketClient<'a> {
    cfg: &'a BucketLoad,
    pub(crate) index: usize,
    rng: fastrand::Rng,
    /// A connection failed: this client stops.
    stopped: bool,
    /// Delay units of the requests counted in the window.
    pub(crate) counted_units: u64,
    /// TCP connections opened.
    pub(crate) opened: u64,
    /// Every acknowledged request (only when verifying).
    pub(crate) acks: Vec<Ack>,
}

impl<'a> BucketClient<'a> {
    pub(crate) fn new(cfg: &'a BucketLoad, index: usize) -> Self {
        BucketClient {
            cfg,
            index,
            rng: fastrand::Rng::with_seed(
                cfg.seed ^ (0xB0C_E700 + index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            stopped: false,
            counted_units: 0,
            opened: 0,
            acks: Vec::new(),
        }
    }
}

fn shown(req: &Request) -> String {
    format!("{},{}", req.delay, req.bucket)
}

impl Exchange for BucketClient<'_> {
    type Sent = Sent;

    /// A connection per request, or one kept alive for the whole run;
    /// none after a failure.
    fn connect(&mut self, _now: Instant) -> bool {
        if self.stopped || (self.cfg.keep_alive && self.opened > 0) {
            return false;
        }
        self.opened += 1;
        true
    }

    fn request(&mut self, wire: &mut Vec<u8>) -> Option<(usize, Sent)> {
        let req = Request {
            delay: self.cfg.delay.pick(&mut self.rng),
            bucket: self
                .cfg
                .agent_bucket(self.rng.usize(..self.cfg.agent_buckets())),
        };
        req.encode(wire);
        let op = if req.delay == 0 { READ } else { ADD };
        Some((
            op,
            Sent {
                req,
                at: Instant::now(),
            },
        ))
    }

    fn reply(
        &mut self,
        input: &[u8],
        sent: &Sent,
        rx: Received,
        _checks: &mut Checks,
    ) -> Result<Option<usize>, String> {
        let req = &sent.req;
        let Some((line, len)) = take_line(input)? else {
            return Ok(None);
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
                    "this does not look like a bucket server (it sent {} in answer to {}, not a number)",
                    crate::quoted(line),
                    shown(req)
                ))
            }
        };
        self.too_soon(sent, rx.at)?;
        if rx.counted {
            self.counted_units += req.delay;
        }
        // Checked against every other reply once the run is over.
        if self.cfg.verify {
            self.acks.push(Ack {
                bucket: req.bucket,
                delta: req.delay,
                value,
            });
        }
        Ok(Some(len))
    }

    fn failed(&mut self, failure: &Failure, unanswered: Option<&Sent>) -> String {
        self.stopped = true;
        let unanswered = unanswered.map(|s| &s.req);
        let what = match (failure, unanswered) {
            (Failure::Closed, Some(req)) => format!(
                "the server closed the connection before answering {}",
                shown(req)
            ),
            (Failure::Closed, None) => {
                "the server closed the connection before answering the next request".into()
            }
            (f @ (Failure::Io(_) | Failure::Stalled(_)), Some(req)) => {
                format!("{} got no reply: {f}", shown(req))
            }
            (f, _) => f.to_string(),
        };
        format!("connection {}: {what}", self.index)
    }

    fn label(&self) -> (&'static str, usize) {
        ("connection", self.index)
    }
}

impl BucketClient<'_> {
    /// A reply that came before its request's delay could have passed
    /// (sleeping and spinning servers wait the delay's wall time): the
    /// server did not wait, whatever it answered.
    fn too_soon(&self, sent: &Sent, at: Instant) -> Result<(), String> {
        if self.cfg.delay_mode == DelayMode::Work {
            return Ok(());
        }
        let delay = Duration::from_secs_f64(sent.req.delay as f64 * self.cfg.delay_unit.seconds());
        let took = at.saturating_duration_since(sent.at);
        if took >= delay {
            return Ok(());
        }
        Err(format!(
            "the server answered {} after {:.1} ms, before its delay of {} ms could pass (does \
             it wait the delay? is its --delay-unit the same as this load's?)",
            shown(&sent.req),
            took.as_secs_f64() * 1e3,
            delay.as_millis()
        ))
    }
}
