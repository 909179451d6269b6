//! An open-loop client's schedule: the intended send time of each of its
//! requests, at its share of the run's total rate. Constant arrivals are
//! evenly spaced, and the clients' schedules interleave so that the run's
//! requests are too; Poisson arrivals have exponential gaps, drawn per
//! client, so the run's (the sum of independent Poisson processes) is a
//! Poisson process at the total rate.

use serde::Serialize;
use serverlab_util::Named;
use std::fmt;
use std::time::{Duration, Instant};

/// How the gaps between intended send times are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Arrivals {
    /// Every gap 1/rate: the steady load of wrk2.
    #[default]
    Constant,
    /// Exponential gaps of mean 1/rate: independent arrivals, as from
    /// many users (mutilate's default), bursts included.
    Poisson,
}

impl Named for Arrivals {
    const WHAT: &'static str = "arrival process";
    const ALL: &'static [Self] = &[Arrivals::Constant, Arrivals::Poisson];

    fn name(self) -> &'static str {
        match self {
            Arrivals::Constant => "constant",
            Arrivals::Poisson => "poisson",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Arrivals::Constant => "evenly spaced: one request every 1/rate",
            Arrivals::Poisson => "independent arrivals: exponential gaps of mean 1/rate",
        }
    }
}

serverlab_util::named_enum_impls!(Arrivals);

impl Serialize for Arrivals {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// One client's intended send times.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    start: Instant,
    /// The next intended send time, in nanoseconds from `start`.
    next_ns: f64,
    /// Where the gaps have got to: nanoseconds from `start` at a
    /// constant rate; on a ramp, requests due so far (the ramp's clock).
    at: f64,
    gap: Gap,
    /// The rate ramps (`--stages`): `at` counts requests, due when the
    /// ramp has asked for that many.
    ramp: Option<Ramp>,
}

#[derive(Debug, Clone)]
enum Gap {
    /// The k-th request is due at `first + k × gap`: computed, not summed,
    /// so millions of gaps do not drift.
    Constant {
        first: f64,
        gap: f64,
        k: u64,
    },
    Poisson {
        mean_ns: f64,
        rng: fastrand::Rng,
    },
}

impl Schedule {
    /// Client `index` of `clients`, sharing `rate` requests per second
    /// from `start`. `seed` makes Poisson gaps repeatable.
    pub(crate) fn new(
        arrivals: Arrivals,
        rate: f64,
        index: usize,
        clients: usize,
        seed: u64,
        start: Instant,
    ) -> Self {
        let clients = clients.max(1) as f64;
        // Each client's gap is `clients` times the run's.
        let mean_ns = 1e9 * clients / rate;
        match arrivals {
            // Client k starts k run-gaps in, so together they send one
            // request every 1/rate.
            Arrivals::Constant => {
                let first = mean_ns * index as f64 / clients;
                Schedule {
                    start,
                    next_ns: first,
                    at: first,
                    ramp: None,
                    gap: Gap::Constant {
                        first,
                        gap: mean_ns,
                        k: 0,
                    },
                }
            }
            Arrivals::Poisson => {
                let mut rng = fastrand::Rng::with_seed(
                    seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                );
                let first = exponential(&mut rng, mean_ns);
                Schedule {
                    start,
                    next_ns: first,
                    at: first,
                    ramp: None,
                    gap: Gap::Poisson { mean_ns, rng },
                }
            }
        }
    }

    /// Client `index` of `clients` on `ramp`: its requests are the
    /// run's `index`-th, `index + clients`-th, … (constant), or a
    /// Poisson process of mean gap `clients` requests, each due when the
    /// ramp has asked for that many (a Poisson process of the ramp's
    /// rate, over all clients).
    pub(crate) fn ramped(
        arrivals: Arrivals,
        ramp: Ramp,
        index: usize,
        clients: usize,
        seed: u64,
        start: Instant,
    ) -> Self {
        // At 1e9 requests per second a nanosecond is a request: the
        // gaps count requests.
        let mut s = Schedule::new(arrivals, 1e9, index, clients, seed, start);
        s.next_ns = ramp.due_s(s.at) * 1e9;
        s.ramp = Some(ramp);
        s
    }

    /// The same schedule counted from `start` (set once every connection
    /// is open).
    pub(crate) fn restart(&mut self, start: Instant) {
        self.start = start;
    }

    /// When the next request is meant to go.
    pub(crate) fn due(&self) -> Instant {
        // A ramp that ends at rate 0 asks for nothing more: due never (a
        // century on, past any window).
        self.start + Duration::from_nanos(self.next_ns.min(NEVER_NS) as u64)
    }

    /// The next request went (or was given up): move on to the one after.
    pub(crate) fn advance(&mut self) {
        match &mut self.gap {
            Gap::Constant { first, gap, k } => {
                *k += 1;
                self.at = *first + *k as f64 * *gap;
            }
            Gap::Poisson { mean_ns, rng } => self.at += exponential(rng, *mean_ns),
        }
        self.next_ns = match &self.ramp {
            None => self.at,
            Some(r) => r.due_s(self.at) * 1e9,
        };
    }
}

/// A due time past any run, in nanoseconds.
const NEVER_NS: f64 = 100.0 * 365.0 * 86_400.0 * 1e9;

/// `--stages 10s:1k,30s:20k,10s:0`: the open loop's rate ramps linearly
/// from where it is (the `--rate` given, else 0) to each stage's target
/// over the stage's time, as k6's ramping-arrival-rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Stages(pub Vec<Stage>);

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stage {
    pub duration: Duration,
    /// Requests per second at the stage's end.
    pub target_rps: f64,
}

impl Stages {
    /// Every stage's time, added: how long the run's window is.
    pub fn total(&self) -> Duration {
        self.0.iter().map(|s| s.duration).sum()
    }
}

impl std::str::FromStr for Stages {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let mut stages = Vec::new();
        for part in text.split(',') {
            let (d, r) = part.trim().split_once(':').ok_or_else(|| {
                format!("'{part}' is not DURATION:RATE (example: --stages 10s:1k,30s:20k,10s:0)")
            })?;
            let duration = serverlab_util::duration::parse(d.trim())?;
            let target_rps = match r.trim() {
                "0" => 0.0,
                r => super::rates::parse_rate(r)?,
            };
            stages.push(Stage {
                duration,
                target_rps,
            });
        }
        Ok(Stages(stages))
    }
}

impl fmt::Display for Stages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(f, "{sep}{}s:{}", s.duration.as_secs_f64(), s.target_rps)?;
        }
        Ok(())
    }
}

impl Serialize for Stages {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A rate that moves linearly between points in time: an open loop's
/// rate through its stages, after a warm-up held at the starting rate.
#[derive(Debug, Clone)]
pub(crate) struct Ramp {
    segments: Vec<Segment>,
}

/// From `t0` for `d` seconds the rate goes from `r0` to `r1`; `n0`
/// requests were due before it.
#[derive(Debug, Clone, Copy)]
struct Segment {
    t0: f64,
    d: f64,
    r0: f64,
    r1: f64,
    n0: f64,
}

impl Segment {
    fn n1(&self) -> f64 {
        self.n0 + self.d * (self.r0 + self.r1) / 2.0
    }

    /// Requests due `x` seconds into it.
    fn count_in(&self, x: f64) -> f64 {
        let slope = (self.r1 - self.r0) / self.d;
        self.r0 * x + slope * x * x / 2.0
    }
}

impl Ramp {
    /// From `start_rps`, held for `hold_s` (the warm-up), then through
    /// `stages`.
    pub(crate) fn new(start_rps: f64, hold_s: f64, stages: &Stages) -> Self {
        let mut segments: Vec<Segment> = Vec::new();
        let (mut t, mut r, mut n) = (0.0, start_rps, 0.0);
        let legs = std::iter::once((hold_s, start_rps)).chain(
            stages
                .0
                .iter()
                .map(|s| (s.duration.as_secs_f64(), s.target_rps)),
        );
        for (d, to) in legs.filter(|&(d, _)| d > 0.0) {
            let seg = Segment {
                t0: t,
                d,
                r0: r,
                r1: to,
                n0: n,
            };
            (t, r, n) = (t + d, to, seg.n1());
            segments.push(seg);
        }
        segments.push(Segment {
            t0: t,
            d: f64::INFINITY,
            r0: r,
            r1: r,
            n0: n,
        });
        Ramp { segments }
    }

    /// Requests due by `t` seconds from the start.
    pub(crate) fn count_at(&self, t: f64) -> f64 {
        let i = self.segments.partition_point(|s| s.t0 <= t).max(1) - 1;
        let s = &self.segments[i];
        if s.d.is_infinite() {
            return s.n0 + s.r0 * (t - s.t0);
        }
        s.n0 + s.count_in((t - s.t0).clamp(0.0, s.d))
    }

    /// When the `n`-th request (counting from 0) is due, in seconds from
    /// the start; infinite when the ramp never asks for it.
    pub(crate) fn due_s(&self, n: f64) -> f64 {
        let i = self.segments.partition_point(|s| s.n0 <= n).max(1) - 1;
        let s = &self.segments[i];
        let left = n - s.n0;
        if s.d.is_infinite() {
            return if s.r0 > 0.0 {
                s.t0 + left / s.r0
            } else {
                f64::INFINITY
            };
        }
        if left >= s.n1() - s.n0 {
            // Past a segment that asks for nothing (rate 0 to 0).
            return s.t0 + s.d;
        }
        // r0·x + a·x² = left, a = slope/2: the root that is ≥ 0, in the
        // form that holds as the slope goes to 0.
        let a = (s.r1 - s.r0) / s.d / 2.0;
        let disc = (s.r0 * s.r0 + 4.0 * a * left).max(0.0);
        let den = s.r0 + disc.sqrt();
        if den <= 0.0 {
            return s.t0;
        }
        s.t0 + (2.0 * left / den).min(s.d)
    }

    /// The mean rate asked from `from` to `to` seconds.
    pub(crate) fn mean_rps(&self, from: f64, to: f64) -> f64 {
        if to <= from {
            return 0.0;
        }
        (self.count_at(to) - self.count_at(from)) / (to - from)
    }
}

/// An exponential draw of mean `mean`: −ln U for U uniform in (0, 1].
fn exponential(rng: &mut fastrand::Rng, mean: f64) -> f64 {
    -(1.0 - rng.f64()).ln() * mean
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gaps between a schedule's first `n` intended times, in ns.
    fn gaps(s: &mut Schedule, n: usize) -> Vec<f64> {
        let mut last = s.due();
        (0..n)
            .map(|_| {
                s.advance();
                let next = s.due();
                let gap = (next - last).as_nanos() as f64;
                last = next;
                gap
            })
            .collect()
    }

    fn mean_and_cv(v: &[f64]) -> (f64, f64) {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var.sqrt() / mean)
    }

    #[test]
    fn poisson_gaps_have_a_coefficient_of_variation_near_one() {
        let t0 = Instant::now();
        // One client of four at 20 000 req/s: a gap of 200 µs on average.
        let mut s = Schedule::new(Arrivals::Poisson, 20_000.0, 1, 4, 7, t0);
        let (mean, cv) = mean_and_cv(&gaps(&mut s, 10_000));
        assert!((0.9..=1.1).contains(&cv), "cv {cv}");
        assert!((mean - 200_000.0).abs() < 10_000.0, "mean gap {mean} ns");
    }

    #[test]
    fn constant_gaps_are_equal_and_clients_interleave() {
        let t0 = Instant::now();
        let mut s = Schedule::new(Arrivals::Constant, 1000.0, 0, 1, 1, t0);
        let (mean, cv) = mean_and_cv(&gaps(&mut s, 1000));
        assert!((mean - 1e6).abs() < 1.0 && cv < 1e-3, "{mean} {cv}");
        // Four clients at 1000 req/s in all: each every 4 ms, 1 ms apart.
        let firsts: Vec<Duration> = (0..4)
            .map(|k| Schedule::new(Arrivals::Constant, 1000.0, k, 4, 1, t0).due() - t0)
            .collect();
        let ms = |m| Duration::from_millis(m);
        assert_eq!(firsts, [ms(0), ms(1), ms(2), ms(3)]);
        let mut s = Schedule::new(Arrivals::Constant, 1000.0, 3, 4, 1, t0);
        s.advance();
        assert_eq!(s.due() - t0, ms(7));
    }

    #[test]
    fn a_schedule_does_not_drift_over_a_million_gaps() {
        let t0 = Instant::now();
        // 3 clients at 7 req/s: gaps of 428.571… ms that do not round evenly.
        let mut s = Schedule::new(Arrivals::Constant, 7.0, 0, 3, 1, t0);
        for _ in 0..1_000_000 {
            s.advance();
        }
        let want = 1e6 * 3.0 / 7.0;
        let got = (s.due() - t0).as_secs_f64();
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
    }

    #[test]
    fn stages_parse_and_ramp_linearly() {
        let st: Stages = "10s:1k,30s:20k,10s:0".parse().unwrap();
        assert_eq!(st.total(), Duration::from_secs(50));
        assert_eq!(st.to_string(), "10s:1000,30s:20000,10s:0");
        for bad in ["10s", "x:1k", "10s:-5", "10s:fast", ""] {
            assert!(bad.parse::<Stages>().is_err(), "{bad}");
        }
        // From 0, held 0 for a 1 s warm-up, to 1000/s over 10 s: 5000
        // requests; then 1000 → 20 000 over 30 s: 315 000 more; then 100 000
        // down to 0.
        let r = Ramp::new(0.0, 1.0, &st);
        assert_eq!(r.count_at(1.0), 0.0);
        assert!((r.count_at(11.0) - 5000.0).abs() < 1e-6);
        assert!((r.count_at(41.0) - 320_000.0).abs() < 1e-6);
        assert!((r.count_at(51.0) - 420_000.0).abs() < 1e-6);
        // It asks for nothing after ending at 0.
        assert_eq!(r.count_at(60.0), r.count_at(51.0));
        assert!(r.due_s(420_001.0).is_infinite());
        for n in [0.0, 1.0, 4999.5, 5000.0, 123_456.0, 369_999.0] {
            let t = r.due_s(n);
            assert!((r.count_at(t) - n).abs() < 1e-3, "{n}: {t}");
        }
        assert!((r.mean_rps(1.0, 11.0) - 500.0).abs() < 1e-9);
        // A rate held past the stages carries on.
        let on = Ramp::new(100.0, 0.0, &"2s:300".parse().unwrap());
        assert!((on.due_s(400.0 + 300.0) - 3.0).abs() < 1e-9);
    }

    #[test]
    fn intended_sends_follow_the_ramp_second_by_second() {
        let t0 = Instant::now();
        let st: Stages = "3s:600,2s:600,3s:0".parse().unwrap();
        let clients = 7;
        let mut per_second = [0u64; 9];
        for arrivals in [Arrivals::Constant, Arrivals::Poisson] {
            per_second = [0; 9];
            for k in 0..clients {
                let ramp = Ramp::new(0.0, 0.0, &st);
                let mut s = Schedule::ramped(arrivals, ramp, k, clients, 9, t0);
                while s.due() < t0 + Duration::from_secs(9) {
                    per_second[(s.due() - t0).as_secs() as usize] += 1;
                    s.advance();
                }
            }
            if arrivals == Arrivals::Constant {
                // Exactly the ramp's count, to one request per client.
                let want = [100.0, 300.0, 500.0, 600.0, 600.0, 500.0, 300.0, 100.0, 0.0];
                for (sec, (&got, &want)) in per_second.iter().zip(&want).enumerate() {
                    assert!((got as f64 - want).abs() <= clients as f64, "{sec}: {got}");
                }
            }
        }
        // Poisson: the ramp's count within its noise (3.3 sd) per second.
        let want = [100.0, 300.0, 500.0, 600.0, 600.0, 500.0, 300.0, 100.0, 0.0];
        for (sec, (&got, &want)) in per_second.iter().zip(&want).enumerate() {
            let sd = f64::sqrt(want);
            assert!((got as f64 - want).abs() <= 3.3 * sd + 1.0, "{sec}: {got}");
        }
    }

    #[test]
    fn arrivals_by_name() {
        assert_eq!("poisson".parse::<Arrivals>(), Ok(Arrivals::Poisson));
        assert!("bursty"
            .parse::<Arrivals>()
            .unwrap_err()
            .contains("constant, poisson"));
    }
}
