//! What the bucket load sends: delays drawn uniformly from a range, and
//! buckets drawn uniformly from 0..N.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// Delays drawn uniformly from `lo..=hi` units (`--delay 1-3`, or `--delay 5`
/// for a fixed delay).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DelayRange {
    pub lo: u64,
    pub hi: u64,
}

impl DelayRange {
    pub fn pick(&self, rng: &mut fastrand::Rng) -> u64 {
        rng.u64(self.lo..=self.hi)
    }

    /// The mean of the distribution, in units.
    pub fn mean(&self) -> f64 {
        (self.lo as f64 + self.hi as f64) / 2.0
    }
}

impl FromStr for DelayRange {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let number = |t: &str| {
            t.parse::<u64>()
                .ok()
                .filter(|_| !t.starts_with('+'))
                .ok_or_else(|| format!("'{s}' is not a delay or a range LO-HI (examples: 5, 1-3)"))
        };
        let range = match s.split_once('-') {
            Some((lo, hi)) => DelayRange {
                lo: number(lo)?,
                hi: number(hi)?,
            },
            None => {
                let d = number(s)?;
                DelayRange { lo: d, hi: d }
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
        if self.lo == self.hi {
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
        assert_eq!("1-3".parse(), Ok(DelayRange { lo: 1, hi: 3 }));
        assert_eq!("5".parse(), Ok(DelayRange { lo: 5, hi: 5 }));
        assert_eq!("0-0".parse(), Ok(DelayRange { lo: 0, hi: 0 }));
        for bad in [
            "", "3-1", "a", "1-", "-1", "1-2-3", "+1", "1.5", " 1", "1 -3",
        ] {
            assert!(bad.parse::<DelayRange>().is_err(), "{bad:?}");
        }
        assert_eq!(DelayRange { lo: 1, hi: 3 }.to_string(), "1-3");
        assert_eq!(DelayRange { lo: 4, hi: 4 }.to_string(), "4");
    }

    #[test]
    fn picks_within_range_covering_both_ends() {
        let r = DelayRange { lo: 1, hi: 3 };
        let mut rng = fastrand::Rng::with_seed(7);
        let picks: Vec<u64> = (0..1000).map(|_| r.pick(&mut rng)).collect();
        assert!(picks.iter().all(|d| (1..=3).contains(d)));
        for d in 1..=3 {
            assert!(picks.contains(&d));
        }
        assert_eq!(r.mean(), 2.0);
    }
}
