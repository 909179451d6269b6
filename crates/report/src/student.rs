//! Student's t distribution: the quantiles confidence intervals use and
//! the tail probability of a t statistic (statrs does the numerics).

use statrs::distribution::{ContinuousCDF, StudentsT};

/// The `p` quantile of Student's t with `df` degrees of freedom (df may be
/// fractional, as Welch's approximation gives).
pub fn quantile(p: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => t.inverse_cdf(p),
        Err(_) => f64::NAN,
    }
}

/// Two-sided p-value of the statistic `t` with `df` degrees of freedom.
pub fn two_sided_p(t: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(d) => (2.0 * d.sf(t.abs())).min(1.0),
        Err(_) => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Published two-sided 95% critical values (any t table).
    #[test]
    fn known_quantiles() {
        let table = [
            (1.0, 12.706204736174698),
            (2.0, 4.302652729911275),
            (3.0, 3.182446305284263),
            (4.0, 2.776445105197793),
            (9.0, 2.262157162740992),
            (29.0, 2.045229642132703),
            (1000.0, 1.962339212679034),
        ];
        for (df, want) in table {
            let got = quantile(0.975, df);
            assert!((got - want).abs() < 1e-6, "df {df}: {got} vs {want}");
        }
        assert!((quantile(0.025, 4.0) + 2.776445105197793).abs() < 1e-6);
    }

    #[test]
    fn p_values() {
        assert!((two_sided_p(2.776445105197793, 4.0) - 0.05).abs() < 1e-6);
        assert!((two_sided_p(0.0, 7.0) - 1.0).abs() < 1e-12);
        assert!(two_sided_p(50.0, 10.0) < 1e-9);
    }
}
