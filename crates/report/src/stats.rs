//! Summary statistics of one measurement across repetitions: mean,
//! geometric mean, median, min, max, sample standard deviation,
//! coefficient of variation, and a 95% confidence interval that never
//! leaves the positive numbers: Student's t on the logarithms of the
//! values, back-transformed (an interval for the geometric mean), or, for
//! a sample holding a zero, a percentile bootstrap of the mean.
//!
//! Why not the textbook mean ± t·sd/√n: throughput and latency cannot be
//! negative, and at n = 2 or 3 with noisy runs that interval reaches below
//! zero (−34,934 … 211,783 req/s was seen). Runs on a shared machine vary
//! by factors (a run slowed by a neighbour is *half* as fast), which is
//! what a log scale models. Why not the bootstrap everywhere: with 2–5
//! runs the resampled means cannot stray beyond the runs themselves, so
//! its interval is far too narrow (at n = 2 it is just [min, max]).

use crate::student;
use serde::Serialize;

/// The confidence level of every interval in a report.
pub const CONFIDENCE: f64 = 0.95;
/// Fewer successful runs than this get a warning.
pub const MIN_N: usize = 3;
/// Resamples of a bootstrap interval.
const RESAMPLES: usize = 10_000;
/// A fixed seed: the same data give the same report.
const BOOTSTRAP_SEED: u64 = 0x5EED_B007;

/// How a summary's interval was built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Interval {
    /// Student's t on ln(values), back-transformed: a positive,
    /// asymmetric interval for the geometric mean.
    LogT,
    /// Percentile bootstrap of the arithmetic mean (a sample with a zero,
    /// where logarithms fail): within [min, max], so never below zero.
    Bootstrap,
}

/// The mean, sample sd and count of some numbers (raw values or their
/// logarithms): what a t interval or Welch's test needs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Moments {
    pub n: usize,
    pub mean: f64,
    /// n − 1 in the denominator; None for n < 2.
    pub sd: Option<f64>,
}

impl Moments {
    pub fn of(values: &[f64]) -> Moments {
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n.max(1) as f64;
        let sd = (n >= 2).then(|| {
            let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            var.sqrt()
        });
        Moments { n, mean, sd }
    }

    /// Half the width of the 95% t interval of the mean.
    pub fn t_half(&self) -> Option<f64> {
        let sd = self.sd?;
        let df = (self.n - 1) as f64;
        Some(student::quantile(1.0 - (1.0 - CONFIDENCE) / 2.0, df) * sd / (self.n as f64).sqrt())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// The geometric mean, when every value is above zero.
    pub geomean: Option<f64>,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation (n − 1); None for n < 2.
    pub sd: Option<f64>,
    /// Coefficient of variation, sd / mean; None for n < 2 or mean 0.
    pub cv: Option<f64>,
    /// The 95% confidence interval of the centre; None for n < 2.
    pub ci: Option<(f64, f64)>,
    pub interval: Option<Interval>,
    /// Moments of ln(values), when every value is above zero: what
    /// comparisons on the log scale use.
    pub log: Option<Moments>,
}

impl Summary {
    /// None for no values.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let raw = Moments::of(&sorted);
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        let log = (sorted[0] > 0.0).then(|| {
            let logs: Vec<f64> = sorted.iter().map(|v| v.ln()).collect();
            Moments::of(&logs)
        });
        let (ci, interval) = match (&log, n >= 2) {
            (_, false) => (None, None),
            (Some(l), true) => {
                let h = l.t_half().unwrap_or(0.0);
                (
                    Some(((l.mean - h).exp(), (l.mean + h).exp())),
                    Some(Interval::LogT),
                )
            }
            (None, true) => (Some(bootstrap(&sorted)), Some(Interval::Bootstrap)),
        };
        Some(Summary {
            n,
            mean: raw.mean,
            geomean: log.map(|l| l.mean.exp()),
            median,
            min: sorted[0],
            max: sorted[n - 1],
            sd: raw.sd,
            cv: raw
                .sd
                .filter(|_| raw.mean != 0.0)
                .map(|sd| sd / raw.mean.abs()),
            ci,
            interval,
            log,
        })
    }

    /// What the interval is about, and what tables and plots show: the
    /// geometric mean, or the mean where the sample holds a zero.
    pub fn centre(&self) -> f64 {
        match self.interval {
            Some(Interval::Bootstrap) => self.mean,
            _ => self.geomean.unwrap_or(self.mean),
        }
    }

    /// How far the interval reaches from the centre, as a share of it: the
    /// larger side (for a log interval, e^h − 1). None without an interval.
    pub fn relative_half_width(&self) -> Option<f64> {
        let (lo, hi) = self.ci?;
        let c = self.centre();
        (c > 0.0).then(|| ((hi - c).max(c - lo)) / c)
    }

    /// Fewer runs than [`MIN_N`]: an interval from so few is fragile.
    pub fn few(&self) -> bool {
        self.n < MIN_N
    }

    /// The same summary with every value multiplied by `k` > 0 (a unit change).
    pub fn scaled(&self, k: f64) -> Summary {
        Summary {
            n: self.n,
            mean: self.mean * k,
            geomean: self.geomean.map(|g| g * k),
            median: self.median * k,
            min: self.min * k,
            max: self.max * k,
            sd: self.sd.map(|s| s * k.abs()),
            cv: self.cv,
            ci: self.ci.map(|(lo, hi)| (lo * k, hi * k)),
            interval: self.interval,
            log: self.log.map(|l| Moments {
                mean: l.mean + k.ln(),
                ..l
            }),
        }
    }
}

/// The 95% percentile bootstrap interval of the mean of `values`.
fn bootstrap(values: &[f64]) -> (f64, f64) {
    let n = values.len();
    let mut rng = fastrand::Rng::with_seed(BOOTSTRAP_SEED);
    let mut means: Vec<f64> = (0..RESAMPLES)
        .map(|_| (0..n).map(|_| values[rng.usize(..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((q * RESAMPLES as f64) as usize).min(RESAMPLES - 1)];
    let tail = (1.0 - CONFIDENCE) / 2.0;
    (at(tail), at(1.0 - tail))
}

/// The relative half-width of the 95% CI of the centre of `values` (what
/// a sweep's `target_ci` is compared with); None for fewer than 2.
pub fn precision(values: &[f64]) -> Option<f64> {
    Summary::of(values)?.relative_half_width()
}

/// Converts a median absolute deviation into a standard deviation (equal
/// for normal data): a "robust sd".
const MAD_TO_SD: f64 = 1.4826;

/// How many robust sds from the median a run must lie, among `n`, to be
/// flagged: chosen so that a point whose runs differ by normal noise alone
/// has a run flagged at most 5% of the time (the 95th percentile of the
/// largest |z| of n normal values, simulated, rounded up). With 3 runs the
/// MAD is only the smaller gap, so the bar is high; the textbook
/// median ± 3 MAD would flag a fifth to a third of noise-only points at the
/// n a sweep has. None below 3 runs: nothing to judge by.
pub fn outlier_cutoff(n: usize) -> Option<f64> {
    match n {
        0..=2 => None,
        3 => Some(22.0),
        4 | 5 => Some(8.0),
        6 | 7 => Some(6.0),
        8 | 9 => Some(5.0),
        10..=19 => Some(4.5),
        _ => Some(4.0),
    }
}

/// Indices of `values` farther from their median than
/// [`outlier_cutoff`] robust sds, each with its distance in robust sds
/// (signed). On the log scale when every value is above zero (runs vary by
/// factors: half as fast is as far as twice as fast). None are flagged when
/// more than half the values are equal (the MAD is 0: no scale to judge by).
pub fn outliers(values: &[f64]) -> Vec<(usize, f64)> {
    let Some(cutoff) = outlier_cutoff(values.len()) else {
        return vec![];
    };
    let scaled: Vec<f64> = if values.iter().all(|v| *v > 0.0) {
        values.iter().map(|v| v.ln()).collect()
    } else {
        values.to_vec()
    };
    let med = median(&scaled);
    let deviations: Vec<f64> = scaled.iter().map(|v| (v - med).abs()).collect();
    let scale = MAD_TO_SD * median(&deviations);
    if scale <= 0.0 {
        return vec![];
    }
    scaled
        .iter()
        .enumerate()
        .map(|(i, v)| (i, (v - med) / scale))
        .filter(|(_, z)| z.abs() > cutoff)
        .collect()
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn by_hand() {
        // 2, 4, 8: logs ln2·(1, 2, 3), mean 2·ln2 (geometric mean 4), sd ln2;
        // t(0.975, 2) = 4.302652729911275; half = 4.3027·ln2/√3.
        let s = Summary::of(&[8.0, 2.0, 4.0]).unwrap();
        assert_eq!((s.n, s.median, s.min, s.max), (3, 4.0, 2.0, 8.0));
        assert!(close(s.mean, 14.0 / 3.0));
        assert!(close(s.geomean.unwrap(), 4.0) && close(s.centre(), 4.0));
        let sd = ((4.0 - 14.0 / 3.0_f64).powi(2)
            + (2.0 - 14.0 / 3.0_f64).powi(2)
            + (8.0 - 14.0 / 3.0_f64).powi(2))
            / 2.0;
        assert!(close(s.sd.unwrap(), sd.sqrt()));
        assert!(close(s.cv.unwrap(), sd.sqrt() / (14.0 / 3.0)));
        let h = 4.302652729911275 * 2f64.ln() / 3f64.sqrt();
        let (lo, hi) = s.ci.unwrap();
        assert!(
            close(lo, 4.0 * (-h).exp()) && close(hi, 4.0 * h.exp()),
            "{lo} {hi}"
        );
        assert_eq!(s.interval, Some(Interval::LogT));
        assert!(close(s.relative_half_width().unwrap(), h.exp() - 1.0));
    }

    #[test]
    fn intervals_stay_above_zero() {
        // The case that printed −34,934 … 211,783 req/s with mean ± t·sd/√n.
        let s = Summary::of(&[15_550.0, 50_719.0]).unwrap();
        let (lo, hi) = s.ci.unwrap();
        assert!(lo > 0.0 && hi > s.max, "{lo} {hi}");
        // A skewed sample: one run ten times slower.
        let s = Summary::of(&[1000.0, 1100.0, 950.0, 100.0]).unwrap();
        let (lo, hi) = s.ci.unwrap();
        assert!(lo > 0.0 && lo < s.centre() && hi > s.centre(), "{lo} {hi}");
        // A zero: no logarithm; the bootstrap stays within the runs.
        let s = Summary::of(&[0.0, 1000.0, 1200.0]).unwrap();
        assert_eq!(s.interval, Some(Interval::Bootstrap));
        let (lo, hi) = s.ci.unwrap();
        assert!(
            lo >= 0.0 && hi <= 1200.0 && lo < s.mean && s.mean < hi,
            "{lo} {hi}"
        );
        assert_eq!(s.centre(), s.mean);
    }

    #[test]
    fn single_values_and_constants() {
        let one = Summary::of(&[7.0]).unwrap();
        assert_eq!((one.mean, one.sd, one.ci, one.cv), (7.0, None, None, None));
        assert!(one.few());
        assert!(Summary::of(&[]).is_none());
        let s = Summary::of(&[5.0, 5.0, 5.0]).unwrap();
        let (lo, hi) = s.ci.unwrap();
        assert!(close(lo, 5.0) && close(hi, 5.0));
        assert_eq!(Summary::of(&[1.0, 9.0, 3.0, 5.0]).unwrap().median, 4.0);
    }

    #[test]
    fn scaling() {
        let s = Summary::of(&[1000.0, 3000.0]).unwrap();
        let t = s.scaled(1e-3);
        assert!(close(t.mean, 2.0) && close(t.max, 3.0));
        assert!(close(t.sd.unwrap(), 2f64.sqrt()));
        assert!(close(t.geomean.unwrap(), 3f64.sqrt()));
        assert!(close(t.ci.unwrap().1, s.ci.unwrap().1 * 1e-3));
        assert!(close(t.log.unwrap().mean, t.geomean.unwrap().ln()));
        assert_eq!(t.cv, s.cv);
    }

    #[test]
    fn one_wild_value_is_an_outlier() {
        let v = [1000.0, 1040.0, 980.0, 1010.0, 5000.0];
        let out = outliers(&v);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].0, 4);
        assert!(out[0].1 > 3.0);
        assert!(outliers(&[1000.0, 1040.0, 980.0, 1010.0]).is_empty());
        assert!(outliers(&[1.0, 100.0]).is_empty(), "too few to judge");
        assert!(
            outliers(&[5.0, 5.0, 5.0, 6.0]).is_empty(),
            "MAD 0: no scale"
        );
    }

    #[test]
    fn precision_is_the_relative_half_width() {
        assert_eq!(precision(&[1.0]), None);
        let p = precision(&[1000.0, 1000.0, 1000.0]).unwrap();
        assert!(p.abs() < 1e-12);
        let p = precision(&[900.0, 1100.0, 1000.0]).unwrap();
        assert!(p > 0.1 && p < 0.4, "{p}");
    }
}
