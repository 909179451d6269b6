//! When a client's requests may go out: the load model. Closed loop, a
//! connection sends as soon as it has room (up to `pipeline` requests in
//! flight); throttled, it also waits for its slot, one every 1/throttle s
//! from the start. Open loop, every request has an intended send time
//! from a schedule at the run's total rate ([`super::schedule`]): it goes
//! then, or as soon as its connection has room, and its latency counts
//! from the intended time. The same for every protocol: a protocol says
//! what to send, never when.

use super::schedule::{Arrivals, Ramp, Schedule, Stages};
use serde::Serialize;
use std::time::{Duration, Instant};

/// The load-model settings every protocol's configuration carries
/// (flattened into its JSON `config`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pacing {
    /// Requests in flight per connection (1: lock-step).
    pub pipeline: usize,
    /// Requests per second per connection; 0: as fast as replies come.
    pub throttle: f64,
    /// Open loop: requests per second over all connections, each with an
    /// intended send time. None: closed loop.
    pub rate: Option<f64>,
    /// How an open loop's intended send times are spaced.
    pub arrivals: Arrivals,
    /// Seconds at the start of a timed run whose replies are not recorded.
    pub warmup_s: f64,
    /// Open loop: the rate ramps through these after the warm-up (which
    /// holds `rate`, the starting rate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stages: Option<Stages>,
}

impl Default for Pacing {
    fn default() -> Self {
        Pacing {
            pipeline: 1,
            throttle: 0.0,
            rate: None,
            arrivals: Arrivals::Constant,
            warmup_s: 0.0,
            stages: None,
        }
    }
}

impl Pacing {
    /// The load model as results name it.
    pub fn model(&self) -> &'static str {
        match (self.is_open(), self.arrivals) {
            (true, Arrivals::Constant) if self.stages.is_some() => "open-loop, constant, ramped",
            (true, Arrivals::Poisson) if self.stages.is_some() => "open-loop, poisson, ramped",
            (true, Arrivals::Constant) => "open-loop, constant",
            (true, Arrivals::Poisson) => "open-loop, poisson",
            (false, _) if self.throttle > 0.0 => "closed-loop, throttled",
            (false, _) => "closed-loop",
        }
    }

    /// Whether requests follow a schedule (and have a latency from it): a
    /// rate, or stages (which ramp from the rate, else from 0).
    pub fn is_open(&self) -> bool {
        self.rate.is_some() || self.stages.is_some()
    }

    /// Whether the sends are meant to come at random (an open loop's
    /// Poisson arrivals): only then does the verdict test the gaps
    /// between them, and only then are they kept.
    pub fn random_arrivals(&self) -> bool {
        self.is_open() && self.arrivals == Arrivals::Poisson
    }

    pub fn warmup(&self) -> Duration {
        Duration::from_secs_f64(self.warmup_s.max(0.0))
    }

    /// An open loop's rate asked over the first `window_s` of the
    /// window: the rate, or on a ramp its mean over those seconds.
    pub fn asked_rps(&self, window_s: f64) -> Option<f64> {
        match self.ramp() {
            None => self.rate,
            Some(r) => {
                let w = self.warmup().as_secs_f64();
                Some(r.mean_rps(w, w + window_s))
            }
        }
    }

    /// The requests a ramp asks for in each second of the window (the
    /// last one perhaps part of a second), over `window_s`; None
    /// without one.
    pub fn asked_per_second(&self, window_s: f64) -> Option<Vec<f64>> {
        let r = self.ramp()?;
        let w = self.warmup().as_secs_f64();
        let seconds = window_s.ceil() as usize;
        Some(
            (0..seconds)
                .map(|s| {
                    let from = w + s as f64;
                    let to = w + (s as f64 + 1.0).min(window_s);
                    r.count_at(to) - r.count_at(from)
                })
                .collect(),
        )
    }

    /// The ramp through the stages, if any (from the start: the warm-up
    /// holds the starting rate).
    pub(crate) fn ramp(&self) -> Option<Ramp> {
        let stages = self.stages.as_ref()?;
        let start = self.rate.unwrap_or(0.0);
        Some(Ramp::new(start, self.warmup().as_secs_f64(), stages))
    }
}

/// One client's pacing at run time.
#[derive(Debug, Clone)]
pub(crate) enum Pacer {
    /// Closed loop: as soon as there is room.
    Free,
    /// Closed loop, throttled: one slot every `interval` from `start`.
    Slots {
        interval: Duration,
        start: Instant,
        issued: u32,
    },
    /// Open loop.
    Open(Schedule),
}

impl Pacer {
    /// Client `index` of `clients`, from `start`.
    pub(crate) fn new(
        pacing: &Pacing,
        index: usize,
        clients: usize,
        seed: u64,
        start: Instant,
    ) -> Self {
        if let (Some(ramp), true) = (pacing.ramp(), pacing.is_open()) {
            let s = Schedule::ramped(pacing.arrivals, ramp, index, clients, seed, start);
            return Pacer::Open(s);
        }
        match pacing.rate {
            Some(rate) => Pacer::Open(Schedule::new(
                pacing.arrivals,
                rate,
                index,
                clients,
                seed,
                start,
            )),
            None if pacing.throttle > 0.0 => Pacer::Slots {
                interval: Duration::from_secs_f64(1.0 / pacing.throttle),
                start,
                issued: 0,
            },
            None => Pacer::Free,
        }
    }

    /// Slots and schedules count from `start` (set once every connection
    /// is open).
    pub(crate) fn restart(&mut self, at: Instant) {
        match self {
            Pacer::Free => {}
            Pacer::Slots { start, issued, .. } => {
                *start = at;
                *issued = 0;
            }
            Pacer::Open(s) => s.restart(at),
        }
    }

    /// When the next request may go (open loop: is meant to go), if not
    /// as soon as there is room.
    pub(crate) fn due(&self) -> Option<Instant> {
        match self {
            Pacer::Free => None,
            Pacer::Slots {
                interval,
                start,
                issued,
            } => Some(*start + *interval * *issued),
            Pacer::Open(s) => Some(s.due()),
        }
    }

    /// A request went out.
    pub(crate) fn issued(&mut self) {
        match self {
            Pacer::Free => {}
            Pacer::Slots { issued, .. } => *issued = issued.saturating_add(1),
            Pacer::Open(s) => s.advance(),
        }
    }

    /// Latency counts from the intended send time.
    pub(crate) fn is_open(&self) -> bool {
        matches!(self, Pacer::Open(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttle_slots_count_from_the_start() {
        let t0 = Instant::now();
        let free = Pacer::new(&Pacing::default(), 0, 1, 1, t0);
        assert_eq!(free.due(), None);
        let throttled = Pacing {
            throttle: 100.0,
            ..Pacing::default()
        };
        let mut p = Pacer::new(&throttled, 0, 1, 1, t0);
        assert_eq!(p.due(), Some(t0));
        p.issued();
        p.issued();
        assert_eq!(p.due(), Some(t0 + Duration::from_millis(20)));
        let t1 = t0 + Duration::from_secs(1);
        p.restart(t1);
        assert_eq!(p.due(), Some(t1));
    }

    #[test]
    fn the_model_is_named_by_rate_arrivals_and_throttle() {
        let mut p = Pacing::default();
        assert_eq!(p.model(), "closed-loop");
        p.throttle = 5.0;
        assert_eq!(p.model(), "closed-loop, throttled");
        p.throttle = 0.0;
        p.rate = Some(1000.0);
        assert_eq!(p.model(), "open-loop, constant");
        p.arrivals = Arrivals::Poisson;
        assert_eq!(p.model(), "open-loop, poisson");
        let open = Pacer::new(&p, 0, 2, 1, Instant::now());
        assert!(open.is_open() && open.due().is_some());
    }

    /// Stages alone make an open loop ramping from 0, as `--stages`
    /// without `--rate` does: the model, the pacer and the rate asked
    /// agree (they read the rate alone, and called it a closed loop).
    #[test]
    fn stages_without_a_rate_are_an_open_loop_from_zero() {
        let p = Pacing {
            stages: Some("2s:100".parse().unwrap()),
            ..Pacing::default()
        };
        assert!(p.is_open());
        assert_eq!(p.model(), "open-loop, constant, ramped");
        let open = Pacer::new(&p, 0, 1, 1, Instant::now());
        assert!(open.is_open());
        // From 0 to 100/s over 2 s: 50/s on the mean.
        assert!((p.asked_rps(2.0).unwrap() - 50.0).abs() < 1e-9);
        let with_rate = Pacing {
            rate: Some(0.0),
            ..p.clone()
        };
        assert_eq!(with_rate.asked_rps(2.0), p.asked_rps(2.0));
    }
}
