//! An open-loop client's schedule: the intended send time of each of its
//! requests, at its share of the run's total rate. Constant arrivals are
//! evenly spaced, and the clients' schedules interleave so that the run's
//! requests are too; Poisson arrivals have exponential gaps, drawn per
//! client, so the run's (the sum of independent Poisson processes) is a
//! Poisson process at the total rate.

use serde::Serialize;
use serverlab_util::Named;
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
    gap: Gap,
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
                    gap: Gap::Poisson { mean_ns, rng },
                }
            }
        }
    }

    /// The same schedule counted from `start` (set once every connection
    /// is open).
    pub(crate) fn restart(&mut self, start: Instant) {
        self.start = start;
    }

    /// When the next request is meant to go.
    pub(crate) fn due(&self) -> Instant {
        self.start + Duration::from_nanos(self.next_ns as u64)
    }

    /// The next request went (or was given up): move on to the one after.
    pub(crate) fn advance(&mut self) {
        match &mut self.gap {
            Gap::Constant { first, gap, k } => {
                *k += 1;
                self.next_ns = *first + *k as f64 * *gap;
            }
            Gap::Poisson { mean_ns, rng } => self.next_ns += exponential(rng, *mean_ns),
        }
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
    fn arrivals_by_name() {
        assert_eq!("poisson".parse::<Arrivals>(), Ok(Arrivals::Poisson));
        assert!("bursty"
            .parse::<Arrivals>()
            .unwrap_err()
            .contains("constant, poisson"));
    }
}
