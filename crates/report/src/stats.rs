//! Summary statistics of one measurement across repetitions: mean,
//! median, min, max, sample standard deviation and a 95% confidence
//! interval for the mean from Student's t (right for small n, where the
//! normal z = 1.96 would claim too much certainty).

use crate::student;
use serde::Serialize;

/// The confidence level of every interval in a report.
pub const CONFIDENCE: f64 = 0.95;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation (n − 1); None for n < 2.
    pub sd: Option<f64>,
    /// 95% confidence interval for the mean; None for n < 2.
    pub ci: Option<(f64, f64)>,
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
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        let (sd, ci) = if n >= 2 {
            let var = sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let sd = var.sqrt();
            let half = student::quantile(1.0 - (1.0 - CONFIDENCE) / 2.0, (n - 1) as f64) * sd
                / (n as f64).sqrt();
            (Some(sd), Some((mean - half, mean + half)))
        } else {
            (None, None)
        };
        Some(Summary {
            n,
            mean,
            median,
            min: sorted[0],
            max: sorted[n - 1],
            sd,
            ci,
        })
    }

    /// Half the width of the confidence interval.
    pub fn ci_half(&self) -> Option<f64> {
        self.ci.map(|(lo, hi)| (hi - lo) / 2.0)
    }

    /// The same summary with every value multiplied by `k` (unit changes).
    pub fn scaled(&self, k: f64) -> Summary {
        Summary {
            n: self.n,
            mean: self.mean * k,
            median: self.median * k,
            min: self.min * k,
            max: self.max * k,
            sd: self.sd.map(|s| s * k.abs()),
            ci: self.ci.map(|(lo, hi)| {
                let (a, b) = (lo * k, hi * k);
                (a.min(b), a.max(b))
            }),
        }
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
        // mean 4, deviations -2 0 2 → variance 8/2 = 4, sd 2;
        // t(0.975, 2) = 4.302652729911275, half = 4.3026…·2/√3.
        let s = Summary::of(&[6.0, 2.0, 4.0]).unwrap();
        assert_eq!(
            (s.n, s.mean, s.median, s.min, s.max),
            (3, 4.0, 4.0, 2.0, 6.0)
        );
        assert!(close(s.sd.unwrap(), 2.0));
        let half = 4.302652729911275 * 2.0 / 3f64.sqrt();
        let (lo, hi) = s.ci.unwrap();
        assert!(close(lo, 4.0 - half) && close(hi, 4.0 + half), "{lo} {hi}");
    }

    #[test]
    fn even_count_median_and_single_value() {
        assert_eq!(Summary::of(&[1.0, 9.0, 3.0, 5.0]).unwrap().median, 4.0);
        let one = Summary::of(&[7.0]).unwrap();
        assert_eq!((one.mean, one.sd, one.ci), (7.0, None, None));
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn identical_values_have_a_zero_width_interval() {
        let s = Summary::of(&[5.0, 5.0, 5.0]).unwrap();
        assert_eq!(s.ci, Some((5.0, 5.0)));
    }

    #[test]
    fn scaling() {
        let s = Summary::of(&[1000.0, 3000.0]).unwrap().scaled(1e-3);
        assert!(close(s.mean, 2.0) && close(s.max, 3.0));
        assert!(close(s.sd.unwrap(), 2f64.sqrt()));
    }
}
