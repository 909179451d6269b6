//! Calibrating `--delay-mode work`: how many iterations of the fixed CPU
//! loop ([`crate::delay::work`]) one second of CPU time buys on this
//! machine, so that a request's delay of one unit costs one unit of CPU.
//!
//! Rounds are timed with the calling thread's CPU clock, not the wall
//! clock: time spent waiting for a core (the machine is busy) does not
//! count, which is what "on an idle core" asks. The fastest round wins,
//! since interference (cache misses, a busy SMT sibling, frequency
//! changes) only ever makes a round slower.

use crate::delay::work;
use std::fmt;
use std::time::Duration;

/// How long a calibration round runs, in CPU time.
const ROUND: Duration = Duration::from_millis(20);
/// Rounds measured; the fastest sets the rate.
const ROUNDS: usize = 5;

/// The result of [`calibrate`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// Iterations of the work loop per second of CPU time.
    pub iterations_per_second: f64,
    /// Iterations in each measured round.
    pub round_iterations: u64,
    /// CPU time of the fastest round.
    pub fastest_round: Duration,
}

impl Calibration {
    /// A calibration with a known rate (tests, or a rate measured before).
    pub fn fixed(iterations_per_second: f64) -> Self {
        Calibration {
            iterations_per_second,
            round_iterations: 0,
            fastest_round: Duration::ZERO,
        }
    }

    /// Nanoseconds of CPU time one iteration costs.
    pub fn ns_per_iteration(&self) -> f64 {
        1e9 / self.iterations_per_second
    }
}

impl fmt::Display for Calibration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:.0} iterations per CPU second ({:.3} ns each; fastest of {ROUNDS} rounds of {} iterations took {:.2} ms of CPU)",
            self.iterations_per_second,
            self.ns_per_iteration(),
            self.round_iterations,
            self.fastest_round.as_secs_f64() * 1e3
        )
    }
}

/// The calling thread's CPU time so far.
fn thread_cpu() -> std::io::Result<Duration> {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)?;
    Ok(Duration::from(t))
}

/// CPU time `n` iterations take on this thread.
fn time(n: u64) -> std::io::Result<Duration> {
    let t0 = thread_cpu()?;
    std::hint::black_box(work(std::hint::black_box(n)));
    Ok(thread_cpu()?.saturating_sub(t0))
}

/// Measure the work loop's rate on the calling thread (about 0.15 s of
/// CPU). Pin the thread first to calibrate on the cores that will serve.
pub fn calibrate() -> std::io::Result<Calibration> {
    // Grow the round until it is long enough to time well.
    let mut n: u64 = 1 << 12;
    let mut took = time(n)?;
    while took < ROUND / 4 {
        n = n.saturating_mul(2);
        took = time(n)?;
    }
    let n = ((n as f64) * ROUND.as_secs_f64() / took.as_secs_f64()).max(1.0) as u64;
    let mut fastest = Duration::MAX;
    for _ in 0..ROUNDS {
        fastest = fastest.min(time(n)?.max(Duration::from_nanos(1)));
    }
    Ok(Calibration {
        iterations_per_second: n as f64 / fastest.as_secs_f64(),
        round_iterations: n,
        fastest_round: fastest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rate is positive and finite, and a calibrated second's worth of
    /// iterations is sane to run (no timing assertion: speed claims belong
    /// in benchmarks).
    #[test]
    fn calibrates_a_positive_rate() {
        let c = calibrate().unwrap();
        assert!(c.iterations_per_second.is_finite() && c.iterations_per_second > 0.0);
        assert!(c.round_iterations > 0);
        assert!(c.fastest_round > Duration::ZERO);
        assert!(c.to_string().contains("iterations per CPU second"));
    }
}
