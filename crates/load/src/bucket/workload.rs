//! What the bucket load sends: delays drawn uniformly from a range (or
//! exponentially distributed about a mean), and buckets drawn uniformly
//! from 0..N.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// Delays drawn uniformly from `lo..=hi` units (`--delay 1-3`, or `--delay 5`
/// for a fixed delay), or exponentially distributed with a mean
/// (`--delay exp:1000`: one worker then makes the server an M/M/1 queue,
/// whose response time is known in closed form; docs/measuring.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DelayRange {
    pub lo: u64,
    /// The longest delay (exponential: [`EXP_TAIL`] means, which one draw
    /// in 10⁸ passes; drawn delays are not cut there).
    pub hi: u64,
    /// Exponential delays of this mean, in units, each rounded to a whole
    /// unit and at least 1 (a delay of 0 is a read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exp_mean: Option<u64>,
}

/// How many means an exponential delay's longest is taken to be (for the
/// time a reply may take): e^−18.4 = 10⁻⁸.
pub const EXP_TAIL: u64 = 19;

impl DelayRange {
    /// A fixed delay, or a range.
    pub fn uniform(lo: u64, hi: u64) -> Self {
        DelayRange {
            lo,
            hi,
            exp_mean: None,
        }
    }

    pub fn pick(&self, rng: &mut fastrand::Rng) -> u64 {
        match self.exp_mean {
            Some(mean) => {
                let x = -(1.0 - rng.f64()).ln() * mean as f64;
                (x.round() as u64).max(1)
            }
            None => rng.u64(self.lo..=self.hi),
        }
    }

    /// The mean of the distribution, in units.
    pub fn mean(&self) -> f64 {
        match self.exp_mean {
            Some(mean) => mean as f64,
            None => (self.lo as f64 + self.hi as f64) / 2.0,
        }
    }
}

impl FromStr for DelayRange {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let number = |t: &str| {
            t.parse::<u64>()
                .ok()
                .filter(|_| !t.starts_with('+'))
                .ok_or_else(|| {
                    format!(
                        "'{s}' is not a delay, a range LO-HI or exp:MEAN (examples: 5, 1-3, \
                         exp:1000)"
                    )
                })
        };
        if let Some(mean) = s.strip_prefix("exp:") {
            let mean = number(mean)?;
            if mean == 0 {
                return Err(format!(
                    "'{s}': an exponential delay's mean must be at least 1"
                ));
            }
            return Ok(DelayRange {
                lo: 1,
                hi: mean.saturating_mul(EXP_TAIL),
                exp_mean: Some(mean),
            });
        }
        let range = match s.split_once('-') {
            Some((lo, hi)) => DelayRange::uniform(number(lo)?, number(hi)?),
            None => {
                let d = number(s)?;
                DelayRange::uniform(d, d)
            }
        };
        if range.lo > range.hi {
            return Err(format!("'{s}': the low end is above the high end"));
        }
        Ok(range)
    }
}

impl fmt::Display for DelayRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(mean) = self.exp_mean {
            write!(f, "exp:{mean}")
        } else if self.lo == self.hi {
            write!(f, "{}", self.lo)
        } else {
            write!(f, "{}-{}", self.lo, self.hi)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranges() {
        assert_eq!("1-3".parse(), Ok(DelayRange::uniform(1, 3)));
        assert_eq!("5".parse(), Ok(DelayRange::uniform(5, 5)));
        assert_eq!("0-0".parse(), Ok(DelayRange::uniform(0, 0)));
        for bad in [
            "", "3-1", "a", "1-", "-1", "1-2-3", "+1", "1.5", " 1", "1 -3", "exp:", "exp:0",
            "exp:1.5", "exp:-1", "exp:1-3", "exp",
        ] {
            assert!(bad.parse::<DelayRange>().is_err(), "{bad:?}");
        }
        assert_eq!(DelayRange::uniform(1, 3).to_string(), "1-3");
        assert_eq!(DelayRange::uniform(4, 4).to_string(), "4");
        let exp: DelayRange = "exp:1000".parse().unwrap();
        assert_eq!(
            (exp.exp_mean, exp.hi, exp.mean()),
            (Some(1000), 19_000, 1000.0)
        );
        assert_eq!(exp.to_string(), "exp:1000");
    }

    #[test]
    fn picks_within_range_covering_both_ends() {
        let r = DelayRange::uniform(1, 3);
        let mut rng = fastrand::Rng::with_seed(7);
        let picks: Vec<u64> = (0..1000).map(|_| r.pick(&mut rng)).collect();
        assert!(picks.iter().all(|d| (1..=3).contains(d)));
        for d in 1..=3 {
            assert!(picks.contains(&d));
        }
        assert_eq!(r.mean(), 2.0);
    }

    /// Exponential delays: their mean, and the share past the median and
    /// past twice the mean, as the distribution has them (e^−ln2 = ½,
    /// e^−2 = 13.5%), within a sample's noise.
    #[test]
    fn exponential_delays_have_the_distributions_mean_and_tail() {
        let r: DelayRange = "exp:1000".parse().unwrap();
        let mut rng = fastrand::Rng::with_seed(11);
        let n = 200_000;
        let picks: Vec<u64> = (0..n).map(|_| r.pick(&mut rng)).collect();
        assert!(picks.iter().all(|&d| d >= 1));
        let mean = picks.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean - 1000.0).abs() < 10.0, "{mean}");
        let past = |x: f64| picks.iter().filter(|&&d| d as f64 > x).count() as f64 / n as f64;
        assert!((past(1000.0 * 2f64.ln()) - 0.5).abs() < 0.005);
        assert!((past(2000.0) - (-2f64).exp()).abs() < 0.005);
    }
}
