//! Spearman's rank correlation, and the rank autocorrelation of a
//! time-ordered series at a lag: whether one latency says anything about
//! the next (a stall holds up the requests behind it). Ranks, not
//! values: one huge latency does not make a correlation.

/// Two-sided significance of [`significant`]: 1%.
pub const ALPHA: f64 = 0.01;
/// The normal quantile of 1 − [`ALPHA`]/2.
const Z: f64 = 2.575_829_303_548_901;

/// Spearman's ρ of paired values: Pearson's correlation of their ranks
/// (ties given their average rank). `None` for fewer than 3 pairs or
/// when either side is constant.
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len().min(b.len());
    if n < 3 {
        return None;
    }
    pearson(&ranks(&a[..n]), &ranks(&b[..n]))
}

/// 1-based ranks, ties averaged.
fn ranks(x: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&i, &j| x[i].total_cmp(&x[j]));
    let mut r = vec![0.0; x.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && x[order[j]] == x[order[i]] {
            j += 1;
        }
        // Ranks i+1 ..= j share their average.
        let avg = (i + 1 + j) as f64 / 2.0;
        for &k in &order[i..j] {
            r[k] = avg;
        }
        i = j;
    }
    r
}

/// The rank correlation of `x` with itself `lag` values later.
pub fn autocorrelation(x: &[f64], lag: usize) -> Option<f64> {
    if lag == 0 || lag >= x.len() {
        return None;
    }
    spearman(&x[..x.len() - lag], &x[lag..])
}

/// The |ρ| over `n` pairs past which independent values are correlated
/// by chance only [`ALPHA`] of the time (ρ·√(n−1) is close to standard
/// normal under independence).
pub fn threshold(n: usize) -> f64 {
    Z / ((n.max(2) - 1) as f64).sqrt()
}

/// Whether ρ over `n` pairs is significant at [`ALPHA`].
pub fn significant(rho: f64, n: usize) -> bool {
    rho.abs() > threshold(n)
}

/// The first lag from 1 to `max_lag` at which `x`'s rank
/// autocorrelation is not significant; `None` when every lag up to
/// there is (or there are too few values to tell). The ranks are the
/// whole series' (each lag then costs O(n), not a sort; for thousands of
/// values the difference from ranking each pair of slices apart is
/// negligible).
pub fn first_independent_lag(x: &[f64], max_lag: usize) -> Option<usize> {
    let r = ranks(x);
    (1..=max_lag.min(x.len().saturating_sub(3))).find(|&lag| {
        pearson(&r[..r.len() - lag], &r[lag..]).is_some_and(|rho| !significant(rho, x.len() - lag))
    })
}

/// The integrated autocorrelation time of `x`, in values: 1 + 2·Σ ρ_j
/// over the lags j from 1 until the first (at most `max_lag`) at which
/// the rank autocorrelation is not significantly positive (Geyer's
/// initial positive sequence, in ranks). `x` carries the information of
/// about len/τ independent values — fewer than a lag-1 reading says
/// where the correlation lasts long (a queue's busy periods).
pub fn integrated_time(x: &[f64], max_lag: usize) -> f64 {
    let r = ranks(x);
    let mut tau = 1.0;
    for lag in 1..=max_lag.min(x.len().saturating_sub(3)) {
        match pearson(&r[..r.len() - lag], &r[lag..]) {
            Some(rho) if rho > 0.0 && significant(rho, x.len() - lag) => tau += 2.0 * rho,
            _ => break,
        }
    }
    tau
}

/// Pearson's correlation of paired values.
fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len().min(b.len()) as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        let (dx, dy) = (x - ma, y - mb);
        sab += dx * dy;
        saa += dx * dx;
        sbb += dy * dy;
    }
    (saa > 0.0 && sbb > 0.0).then(|| sab / (saa * sbb).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference: scipy 1.17.1, spearmanr(a, b).statistic and
    // spearmanr(a[:-1], a[1:]).statistic.
    const RHO_AB: f64 = 0.141_579_686_364_015_7;
    const RHO_A_LAG1: f64 = -0.006_993_025_991_587_448;

    #[test]
    fn matches_scipys_spearman() {
        let a = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 8.0];
        let b = [2.0, 7.0, 1.0, 8.0, 2.0, 8.0, 1.0, 8.0, 2.0, 8.0, 4.0, 5.0];
        let rho = spearman(&a, &b).unwrap();
        assert!((rho - RHO_AB).abs() < 1e-12, "{rho}");
        let lag1 = autocorrelation(&a, 1).unwrap();
        assert!((lag1 - RHO_A_LAG1).abs() < 1e-12, "{lag1}");
        assert_eq!(spearman(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
    }

    #[test]
    fn a_series_that_moves_slowly_is_correlated_until_its_period() {
        // A random walk's steps apart: correlated at every small lag.
        let mut rng = fastrand::Rng::with_seed(3);
        let mut v = 0.0;
        let walk: Vec<f64> = (0..2000)
            .map(|_| {
                v += rng.f64() - 0.5;
                v
            })
            .collect();
        assert!(significant(autocorrelation(&walk, 1).unwrap(), 1999));
        // Blocks of 8 equal-ish values: correlated up to lag 7, not past
        // the block (the lags past 8 compare different blocks).
        let values: Vec<f64> = (0..500).map(|_| rng.f64()).collect();
        let blocks: Vec<f64> = (0..4000)
            .map(|i| values[i / 8] + rng.f64() * 1e-6)
            .collect();
        let lag = first_independent_lag(&blocks, 100).unwrap();
        assert!((8..=10).contains(&lag), "{lag}");
        let noise: Vec<f64> = (0..2000).map(|_| rng.f64()).collect();
        assert_eq!(first_independent_lag(&noise, 100), Some(1));
        // Blocks of 8: ρ_j = 1 − j/8 up to lag 7, so τ = 1 + 2·3.5 = 8;
        // independent values: 1.
        let tau = integrated_time(&blocks, 100);
        assert!((7.0..9.0).contains(&tau), "{tau}");
        assert_eq!(integrated_time(&noise, 100), 1.0);
        assert!((threshold(10_001) - 0.025_758).abs() < 1e-5);
    }
}
