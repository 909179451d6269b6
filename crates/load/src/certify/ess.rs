//! The effective sample size of correlated samples: n values whose
//! neighbours correlate by ρ (lag 1, as a first-order autoregression)
//! carry as much information about a mean as n·(1−ρ)/(1+ρ) independent
//! ones. Used to widen the quantiles' intervals when consecutive
//! latencies are correlated (a conservative reading for quantiles: the
//! binomial counts behind their ranks inherit the same correlation, at
//! most).

/// The largest correlation taken at its word: past it, the effective
/// size is that of ρ = 0.99 (1/199 of the samples).
pub const MAX_RHO: f64 = 0.99;

/// The effective number of `n` samples with lag-1 correlation `rho`;
/// `n` itself when `rho` ≤ 0 (anti-correlation is not taken to narrow
/// anything).
pub fn effective(n: f64, rho: f64) -> f64 {
    if rho.is_nan() || rho <= 0.0 {
        return n;
    }
    let r = rho.min(MAX_RHO);
    n * (1.0 - r) / (1.0 + r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correlation_shrinks_the_sample() {
        assert_eq!(effective(1000.0, 0.0), 1000.0);
        assert_eq!(effective(1000.0, -0.3), 1000.0);
        assert!((effective(1000.0, 0.5) - 333.333_333_333).abs() < 1e-6);
        assert!((effective(1990.0, 1.0) - 10.0).abs() < 1e-9);
    }
}
