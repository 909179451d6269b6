//! The Anderson–Darling test of a sample against the exponential
//! distribution whose mean is the sample's own (Stephens 1974, the case
//! scipy's `anderson(x, dist='expon')` implements): whether an open
//! loop's actual gaps between sends were exponential, as `--arrivals
//! poisson` asked.

/// Significance levels of [`critical_values`], in percent.
pub const LEVELS_PERCENT: [f64; 5] = [15.0, 10.0, 5.0, 2.5, 1.0];
/// The critical values for the exponential with an estimated mean,
/// before the small-sample correction (D'Agostino and Stephens,
/// *Goodness-of-Fit Techniques*, 1986, table 4.14; scipy's since 1.x).
const STEPHENS: [f64; 5] = [0.916, 1.062, 1.321, 1.591, 1.959];

/// The A² statistic of `x` (non-negative; values of 0 count as the
/// smallest positive double, as a gap of no time) against the
/// exponential of `x`'s mean. `None` for fewer than 2 values or a mean
/// of 0.
pub fn statistic(x: &[f64]) -> Option<f64> {
    let n = x.len();
    if n < 2 {
        return None;
    }
    let mean = x.iter().sum::<f64>() / n as f64;
    if !mean.is_finite() || mean <= 0.0 {
        return None;
    }
    let mut z: Vec<f64> = x.iter().map(|v| v.max(f64::MIN_POSITIVE) / mean).collect();
    z.sort_by(f64::total_cmp);
    // ln F(z) = ln(1 − e^−z); ln(1 − F(z)) = −z.
    let log_cdf = |v: f64| (-(-v).exp_m1()).ln();
    let sum: f64 = (1..=n)
        .map(|i| (2 * i - 1) as f64 * (log_cdf(z[i - 1]) - z[n - i]))
        .sum();
    Some(-(n as f64) - sum / n as f64)
}

/// The critical values of A² for `n` values at [`LEVELS_PERCENT`]:
/// Stephens's, over (1 + 0.6/n).
pub fn critical_values(n: usize) -> [f64; 5] {
    STEPHENS.map(|c| c / (1.0 + 0.6 / n as f64))
}

/// Lancet's verdict: the sample passes as exponential when A² is under
/// twice the 1% critical value (a lenient bound: a schedule kept by a
/// real client is never exactly exponential).
pub fn passes(a2: f64, n: usize) -> bool {
    a2 < 2.0 * critical_values(n)[4]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 20 exponential draws of mean 1 (numpy's `default_rng(7)
    /// .exponential(1.0, 20)`, rounded to 4 places) and 20 evenly spaced
    /// values.
    const EXPONENTIAL: [f64; 20] = [
        0.7075, 1.0252, 0.5685, 0.8951, 0.2065, 3.3836, 0.0098, 2.8092, 0.5753, 0.3005, 0.5411,
        0.3121, 0.8998, 1.0737, 1.8843, 0.2221, 3.1447, 0.7359, 0.3484, 0.8836,
    ];
    // scipy 1.17.1: anderson(EXPONENTIAL, dist='expon').statistic, and
    // anderson(even(), …); critical_values for n = 20 (rounded by scipy
    // to 3 places).
    const A2_EXPONENTIAL: f64 = 0.505_182_431_688_517_4;
    const A2_EVEN: f64 = 8.245_611_844_347_675;
    const CRITICAL_20: [f64; 5] = [0.889, 1.031, 1.283, 1.545, 1.902];

    fn even() -> Vec<f64> {
        (1..=20).map(|i| 1.0 + i as f64 / 100.0).collect()
    }

    #[test]
    fn the_statistic_and_critical_values_match_scipy() {
        let a = statistic(&EXPONENTIAL).unwrap();
        assert!((a - A2_EXPONENTIAL).abs() < 1e-9, "{a}");
        let b = statistic(&even()).unwrap();
        assert!((b - A2_EVEN).abs() < 1e-9, "{b}");
        let c = critical_values(20);
        for (got, want) in c.iter().zip(CRITICAL_20) {
            assert!((got - want).abs() <= 5e-4, "{c:?}");
        }
        assert!(passes(a, 20));
        assert!(!passes(b, 20));
    }

    #[test]
    fn too_little_to_test() {
        assert_eq!(statistic(&[1.0]), None);
        assert_eq!(statistic(&[0.0, 0.0]), None);
        assert!(statistic(&[0.0, 1.0, 2.0]).unwrap().is_finite());
    }
}
