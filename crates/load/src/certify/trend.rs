//! The Mann–Kendall test of a time-ordered series for a monotone trend:
//! S = Σ_{i<j} sign(x_j − x_i), which under no trend (independent,
//! identically distributed values) has mean 0 and variance
//! (n(n−1)(2n+5) − Σ t(t−1)(2t+5)) / 18 (t: the sizes of groups of tied
//! values), so z = S/√var is close to normal for n ≥ 10. It is Kendall's
//! τ between time and value, and its p-value is scipy's
//! `kendalltau(range(n), x, method='asymptotic')` (no continuity
//! correction). Rank-based: a few huge values (a stall) weigh no more
//! than any others, so it finds latencies that drift, not a single spike.
//! O(n²): for a bounded series (a few thousand points).

/// Below this many values no trend is tested.
pub const FEWEST: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trend {
    /// Σ sign(x_j − x_i) over i < j: positive when values rise.
    pub s: i64,
    /// Kendall's τ-b between time and value, in [−1, 1].
    pub tau: f64,
    pub z: f64,
    /// Two-sided: the chance of a |z| this large with no trend.
    pub p_value: f64,
}

/// The trend of `x` (in time order); `None` below [`FEWEST`] values or
/// when every value is the same.
pub fn mann_kendall(x: &[f64]) -> Option<Trend> {
    let n = x.len();
    if n < FEWEST {
        return None;
    }
    let mut s: i64 = 0;
    for (i, a) in x.iter().enumerate() {
        for b in &x[i + 1..] {
            s += match b.partial_cmp(a) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    let (ties_var, tied_pairs) = ties(x);
    let nf = n as f64;
    let var = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - ties_var) / 18.0;
    let pairs = nf * (nf - 1.0) / 2.0;
    if var <= 0.0 || pairs - tied_pairs <= 0.0 {
        return None;
    }
    let z = s as f64 / var.sqrt();
    Some(Trend {
        s,
        tau: s as f64 / (pairs * (pairs - tied_pairs)).sqrt(),
        z,
        p_value: statrs::function::erf::erfc(z.abs() / std::f64::consts::SQRT_2),
    })
}

/// Σ t(t−1)(2t+5) and Σ t(t−1)/2 over groups of `t` equal values.
fn ties(x: &[f64]) -> (f64, f64) {
    let mut sorted = x.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (mut var, mut pairs) = (0.0, 0.0);
    for group in sorted.chunk_by(|a, b| a == b) {
        let t = group.len() as f64;
        var += t * (t - 1.0) * (2.0 * t + 5.0);
        pairs += t * (t - 1.0) / 2.0;
    }
    (var, pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference: scipy 1.17.1, kendalltau(range(n), x,
    // method='asymptotic') → (statistic, pvalue); S counted by hand.
    const S_PI: i64 = 56;
    const TAU_PI: f64 = 0.134_926_049_726_115_05;
    const P_PI: f64 = 0.313_421_554_094_206_8;
    const TAU_UP: f64 = 0.953_990_232_247_546_4;
    const P_UP: f64 = 7.593_593_100_357_015_5e-22;

    #[test]
    fn matches_kendalls_tau_against_time() {
        // A slow rise under noise, with ties.
        let x = [
            3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 8.0, 9.0, 7.0, 9.0, 3.0, 2.0,
            8.0, 4.0, 6.0, 2.0, 6.0, 4.0, 3.0, 8.0, 3.0, 2.0, 7.0, 9.0, 5.0,
        ];
        let t = mann_kendall(&x).unwrap();
        assert_eq!(t.s, S_PI);
        assert!((t.tau - TAU_PI).abs() < 1e-12, "{t:?}");
        assert!((t.p_value - P_PI).abs() < 1e-9, "{t:?}");
        // A steady rise.
        let up: Vec<f64> = (0..50).map(|i| i as f64 + (i % 3) as f64 * 2.0).collect();
        let t = mann_kendall(&up).unwrap();
        assert!((t.tau - TAU_UP).abs() < 1e-12, "{t:?}");
        assert!((t.p_value / P_UP - 1.0).abs() < 1e-9, "{t:?}");
        assert!(t.s > 0 && t.z > 0.0);
    }

    #[test]
    fn nothing_to_test() {
        assert_eq!(mann_kendall(&[1.0; 9]), None);
        assert_eq!(mann_kendall(&[2.0; 40]), None);
    }
}
