//! The distribution-free 95% confidence interval of a quantile, from
//! order statistics (Le Boudec, *Performance Evaluation of Computer and
//! Communication Systems*, §2.2.1): of `n` independent samples, the
//! number below the true p-quantile is Binomial(n, p), so the interval
//! between the j-th and k-th smallest samples holds it with probability
//! P(j ≤ B < k). The ranks come from the binomial itself when it is
//! small or skewed ([`exact_ranks`]) and from its normal approximation
//! when it is large ([`normal_ranks`], Lancet's way); the values are read
//! off the same histogram the percentile comes from.
//!
//! Too few samples: when no rank j ≥ 1 or no rank k ≤ n gives the
//! coverage — the interval would reach past the smallest or largest
//! sample. Then there is no interval (`None`). For the exact ranks that
//! happens below [`fewest`] samples (368 for p99, 3,688 for p99.9,
//! 36,887 for p99.99).

use hdrhistogram::Histogram;
use statrs::distribution::{Binomial, DiscreteCDF};

/// The two-sided coverage of every interval.
pub const COVERAGE: f64 = 0.95;
/// The normal quantile of 1 − (1 − [`COVERAGE`]) / 2.
pub const Z95: f64 = 1.959_963_984_540_054;
/// The binomial's variance n·p·(1−p) from which its normal
/// approximation is used: past it the skew is negligible.
pub const NORMAL_FROM_VARIANCE: f64 = 1000.0;

/// Order statistics, 1-based: the interval is [lo-th, hi-th smallest].
pub type Ranks = (u64, u64);

/// The ranks by the normal approximation of the binomial:
/// j = ⌊np − 1.96·√(np(1−p))⌋, k = ⌈np + 1.96·√(np(1−p))⌉ + 1
/// (Le Boudec, Theorem 2.1's large-n form). `None` when j < 1 or k > n.
pub fn normal_ranks(n: u64, p: f64) -> Option<Ranks> {
    let np = n as f64 * p;
    let half = Z95 * (np * (1.0 - p)).sqrt();
    let lo = (np - half).floor();
    let hi = (np + half).ceil() + 1.0;
    (lo >= 1.0 && hi <= n as f64).then_some((lo as u64, hi as u64))
}

/// The exact ranks: j the largest with P(B ≤ j−1) ≤ 0.025, k the
/// smallest with P(B ≤ k−1) ≥ 0.975, B ~ Binomial(n, p); then
/// P(j ≤ B < k) ≥ 0.95. `None` when there is no such j ≥ 1 or k ≤ n.
pub fn exact_ranks(n: u64, p: f64) -> Option<Ranks> {
    if n == 0 || !(0.0..1.0).contains(&p) || p == 0.0 {
        return None;
    }
    let b = Binomial::new(p, n).ok()?;
    let tail = (1.0 - COVERAGE) / 2.0;
    // The smallest m with F(m) ≥ q (F is nondecreasing, F(n) = 1).
    let ppf = |q: f64| {
        let (mut lo, mut hi) = (0u64, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if b.cdf(mid) >= q {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    };
    // j − 1 is the largest m with F(m) ≤ tail: one below the smallest
    // with F(m) > tail.
    let first_above = {
        let m = ppf(tail);
        if b.cdf(m) > tail {
            m
        } else {
            m + 1
        }
    };
    let lo = first_above;
    let hi = ppf(1.0 - tail) + 1;
    (lo >= 1 && hi <= n).then_some((lo, hi))
}

/// The ranks for `n` samples: exact while the binomial is small or
/// skewed, normal past [`NORMAL_FROM_VARIANCE`].
pub fn ranks(n: u64, p: f64) -> Option<Ranks> {
    if n as f64 * p * (1.0 - p) >= NORMAL_FROM_VARIANCE {
        normal_ranks(n, p)
    } else {
        exact_ranks(n, p)
    }
}

/// The ranks among `n` samples that carry only `n_eff` samples' worth of
/// information (correlated ones, [`super::ess`]): the ranks for `n_eff`
/// scaled out to `n`, rounded outwards.
pub fn effective_ranks(n: u64, n_eff: f64, p: f64) -> Option<Ranks> {
    if n_eff >= n as f64 {
        return ranks(n, p);
    }
    let m = n_eff.floor() as u64;
    let (lo, hi) = ranks(m, p)?;
    let scale = n as f64 / m as f64;
    let lo = ((lo as f64 * scale).floor() as u64).max(1);
    let hi = ((hi as f64 * scale).ceil() as u64).min(n);
    Some((lo, hi))
}

/// The fewest samples for which the p-quantile has an exact interval:
/// (1−p)ⁿ ≤ 0.025 and pⁿ ≤ 0.025.
pub fn fewest(p: f64) -> u64 {
    let tail = (1.0 - COVERAGE) / 2.0;
    let worst = p.max(1.0 - p);
    (tail.ln() / worst.ln()).ceil() as u64
}

/// The k-th smallest value recorded in `h` (1-based), as
/// `value_at_quantile` reads it (the highest value of its bucket, as
/// the percentiles are).
pub fn order_statistic(h: &Histogram<u64>, k: u64) -> u64 {
    let n = h.len();
    // (k − ½)/n: its ceiling times n is k, whatever the rounding.
    h.value_at_quantile((k as f64 - 0.5) / n as f64)
}

/// The 95% interval of `h`'s p-quantile, as values of `h`; `n_eff`:
/// the samples' effective number, when fewer than recorded. `None` when
/// too few.
pub fn interval(h: &Histogram<u64>, p: f64, n_eff: Option<f64>) -> Option<(u64, u64)> {
    let n = h.len();
    let (lo, hi) = match n_eff {
        Some(e) => effective_ranks(n, e, p)?,
        None => ranks(n, p)?,
    };
    Some((order_statistic(h, lo), order_statistic(h, hi)))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference ranks from scipy 1.x:
    //   from scipy.stats import binom
    //   j = binom.ppf(0.025, n, p); k = binom.ppf(0.975, n, p) + 1
    // (j: the largest j with F(j−1) ≤ 0.025 — scipy's ppf is the smallest
    // m with F(m) ≥ q, and none of these F(m) equals 0.025 exactly).
    #[test]
    fn exact_ranks_match_scipys_binomial_quantiles() {
        let cases = [
            (10, 0.5, Some((2, 9))),
            (100, 0.5, Some((40, 61))),
            (100, 0.9, Some((84, 96))),
            (1000, 0.99, Some((983, 997))),
            (400, 0.99, Some((392, 400))),
            (10_000, 0.999, Some((9983, 9997))),
            (100_000, 0.9999, Some((99983, 99997))),
            (367, 0.99, None),
            (368, 0.99, Some((360, 368))),
            (5, 0.5, None),
        ];
        for (n, p, want) in cases {
            assert_eq!(exact_ranks(n, p), want, "n={n} p={p}");
        }
    }

    // Reference: the same formula in numpy,
    //   np.floor(n*p - 1.959963984540054*np.sqrt(n*p*(1-p))),
    //   np.ceil(n*p + 1.959963984540054*np.sqrt(n*p*(1-p))) + 1
    #[test]
    fn normal_ranks_follow_le_boudecs_formula() {
        assert_eq!(normal_ranks(1_000_000, 0.5), Some((499020, 500981)));
        assert_eq!(normal_ranks(1_000_000, 0.99), Some((989804, 990197)));
        assert_eq!(normal_ranks(100, 0.99), None);
        assert_eq!(ranks(1_000_000, 0.99), normal_ranks(1_000_000, 0.99));
        assert_eq!(ranks(1000, 0.99), exact_ranks(1000, 0.99));
    }

    #[test]
    fn the_fewest_samples_for_an_interval() {
        assert_eq!(
            (fewest(0.99), fewest(0.999), fewest(0.9999)),
            (368, 3688, 36887)
        );
        assert_eq!(fewest(0.5), 6);
        for p in [0.5, 0.9, 0.99, 0.999] {
            assert!(exact_ranks(fewest(p), p).is_some(), "{p}");
            assert!(exact_ranks(fewest(p) - 1, p).is_none(), "{p}");
        }
    }

    #[test]
    fn fewer_effective_samples_widen_the_ranks() {
        let whole = ranks(10_000, 0.99).unwrap();
        let third = effective_ranks(10_000, 3_333.3, 0.99).unwrap();
        assert!(
            third.0 < whole.0 && third.1 > whole.1,
            "{whole:?} {third:?}"
        );
        assert_eq!(effective_ranks(10_000, 20_000.0, 0.99), Some(whole));
        assert_eq!(effective_ranks(1_000, 300.0, 0.99), None);
    }

    #[test]
    fn the_interval_is_read_off_the_histogram_around_its_percentile() {
        let mut h = crate::record::new_histogram();
        // 1..=1000 µs, one sample each.
        for us in 1..=1000u64 {
            h.record(us * 1000).unwrap();
        }
        assert_eq!(order_statistic(&h, 1), h.value_at_quantile(0.0001));
        // The 983rd and 997th smallest: 983 µs and 997 µs, to the
        // histogram's 3 digits.
        let (lo, hi) = interval(&h, 0.99, None).unwrap();
        assert_eq!((lo / 1000, hi / 1000), (983, 997));
        let p99 = h.value_at_quantile(0.99);
        assert!(lo <= p99 && p99 <= hi);
        assert_eq!(interval(&h, 0.999, None), None);
    }
}
