//! Gunther's method ("Guerrilla Capacity Planning", ch. 5): the relative
//! capacity C(N) = X(N)/X(1), with X(1) measured (the mean of the runs at
//! N = 1), turns the law into a quadratic with no constant term,
//! N/C(N) − 1 = σ(N−1) + κN(N−1), fitted by least squares through the
//! origin over every run at N ≠ 1 (those at N = 1 define X(1) and say
//! nothing more); λ = X(1). Where that κ < 0, κ = 0 and σ alone is
//! fitted. The standard errors of σ and κ are the regression's,
//! √(diag((AᵀA)⁻¹) · RSS/(m − k)); of λ, the standard error of the mean
//! at N = 1 where several runs were made there.

use super::lm::{inverse, solve};
use super::{Estimate, Law, StdErrors};

/// A regression's coefficients and their standard errors (the second 0
/// and None with one regressor).
pub(crate) struct Regression {
    pub coef: [f64; 2],
    pub se: [Option<f64>; 2],
}

/// Least squares through the origin of `y` on the first `k` (1 or 2) of
/// rows `[a, b, y]`; None where the regressors are degenerate.
pub(crate) fn through_origin(rows: &[[f64; 3]], k: usize) -> Option<Regression> {
    let mut ata = vec![vec![0.0; k]; k];
    let mut aty = vec![0.0; k];
    for row in rows {
        for i in 0..k {
            aty[i] += row[i] * row[2];
            for j in 0..k {
                ata[i][j] += row[i] * row[j];
            }
        }
    }
    let beta = solve(ata.clone(), aty)?;
    let inv = inverse(&ata)?;
    let rss: f64 = rows
        .iter()
        .map(|r| (r[2] - (0..k).map(|i| beta[i] * r[i]).sum::<f64>()).powi(2))
        .sum();
    let df = rows.len() as f64 - k as f64;
    let se = |i: usize| {
        let v = inv[i][i] * rss / df;
        (i < k && df > 0.0 && v.is_finite() && v >= 0.0).then(|| v.sqrt())
    };
    Some(Regression {
        coef: [beta[0], beta.get(1).copied().unwrap_or(0.0)],
        se: [se(0), if k > 1 { se(1) } else { None }],
    })
}

/// Gunther's fit of `obs`; Err where nothing was measured at N = 1.
pub(crate) fn fit(obs: &[(f64, f64)]) -> Result<Estimate, String> {
    let ones: Vec<f64> = obs.iter().filter(|o| o.0 == 1.0).map(|o| o.1).collect();
    if ones.is_empty() {
        return Err(
            "cannot fit by gcp: nothing measured at N = 1 (Gunther's method \
                    divides by the measured X(1)); use nls or relative"
                .into(),
        );
    }
    let x1 = ones.iter().sum::<f64>() / ones.len() as f64;
    let rows: Vec<[f64; 3]> = obs
        .iter()
        .filter(|o| o.0 != 1.0)
        .map(|&(n, x)| [n - 1.0, n * (n - 1.0), n * x1 / x - 1.0])
        .collect();
    let r = through_origin(&rows, 2)
        .filter(|r| r.coef[1] >= 0.0)
        .or_else(|| through_origin(&rows, 1))
        .ok_or("cannot fit by gcp: the regression is degenerate")?;
    let lambda_se = (ones.len() > 1).then(|| {
        let var = ones.iter().map(|x| (x - x1).powi(2)).sum::<f64>() / (ones.len() - 1) as f64;
        (var / ones.len() as f64).sqrt()
    });
    Ok(Estimate {
        law: Law {
            lambda: x1,
            sigma: r.coef[0],
            kappa: r.coef[1],
        },
        se: StdErrors {
            lambda: lambda_se,
            sigma: r.se[0],
            kappa: r.se[1],
        },
    })
}
