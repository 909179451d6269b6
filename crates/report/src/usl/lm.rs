//! Levenberg–Marquardt for the law's three parameters p = (λ, σ, κ), on
//! weighted residuals w·(X − X̂): w = 1 is least squares on X (`nls`),
//! w = 1/X least squares on relative residuals (`relative`).
//!
//! Each step solves (JᵀJ + μ·diag(JᵀJ)) δ = Jᵀr (Marquardt's scaling, so
//! λ ≈ 100 and κ ≈ 10⁻⁴ are alike to it), J the gradient of w·X̂; μ
//! shrinks after a step that lowers the sum of squares and grows until
//! one does. It stops when no parameter moves by more than 10⁻¹³ of
//! itself. A step to a point where a denominator 1 + σ(N−1) + κN(N−1) is
//! not positive is refused like one that raises the sum.
//!
//! κ ≥ 0 by an active set: the optimum with λ, σ and κ free where its κ ≥
//! 0 (the lowest of those reached from each start); else the optimum on
//! the bound, κ = 0 with λ and σ free. Starts: R's `usl` (λ = max X/N,
//! σ = 0.01, κ = 10⁻⁴) and the linearised law for two guesses of λ; a
//! bootstrap resample starts from the full data's fit alone.

use super::{gcp, Estimate, Group, Law, StdErrors};

/// How residuals are weighed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Weights {
    /// X − X̂.
    Absolute,
    /// (X − X̂)/X.
    Relative,
}

/// (λ, σ, κ).
type Params = [f64; 3];

const MAX_ITERATIONS: usize = 1000;
const MAX_DAMPING: f64 = 1e16;
/// A step below this share of each parameter (or 10⁻¹⁶ absolute) ends it.
const STEP_TOLERANCE: f64 = 1e-13;

/// The observations, grouped by N, and their weights.
struct Problem<'a> {
    obs: &'a [Group],
    weights: Weights,
}

impl Problem<'_> {
    fn weight(&self, x: f64) -> f64 {
        match self.weights {
            Weights::Absolute => 1.0,
            Weights::Relative => 1.0 / x,
        }
    }

    /// The weighted sum of squares over every run; None where a
    /// denominator is not positive.
    fn rss(&self, p: &Params) -> Option<f64> {
        let (mut sum, mut within) = (0.0, 0.0);
        for g in self.obs {
            let (n, x) = (g.n, g.mean);
            let d = denominator(p, n);
            if d.is_nan() || d <= 0.0 {
                return None;
            }
            let r = self.weight(x) * (x - p[0] * n / d);
            sum += g.count * r * r;
            within += g.within;
        }
        let sum = sum + within;
        sum.is_finite().then_some(sum)
    }

    /// How many runs.
    fn runs(&self) -> f64 {
        self.obs.iter().map(|g| g.count).sum()
    }

    /// JᵀJ and Jᵀr over the parameters in `free`: each N's run count
    /// times its weighted residual w(X − X̂) at the runs' mean, and the
    /// gradient of w·X̂ over (λ, σ, κ). One plain loop over fixed arrays
    /// (a million N in seconds, even unoptimised).
    fn normal(&self, p: &Params, free: &[usize]) -> (Vec<Vec<f64>>, Vec<f64>) {
        let (mut a, mut g) = ([[0.0f64; 3]; 3], [0.0f64; 3]);
        for obs in self.obs {
            let (n, x, count) = (obs.n, obs.mean, obs.count);
            let w = self.weight(x);
            let d = denominator(p, n);
            let d_lambda = n / d;
            let d_sigma = -p[0] * n * (n - 1.0) / (d * d);
            let d_kappa = d_sigma * n;
            let r = w * (x - p[0] * d_lambda);
            let grad = [w * d_lambda, w * d_sigma, w * d_kappa];
            // Unrolled: ranges cost more than the sums in a debug build.
            let c = [count * grad[0], count * grad[1], count * grad[2]];
            let [g0, g1, g2] = &mut g;
            *g0 += c[0] * r;
            *g1 += c[1] * r;
            *g2 += c[2] * r;
            let [a0, a1, a2] = &mut a;
            *a0 = add(*a0, c[0], grad);
            *a1 = add(*a1, c[1], grad);
            *a2 = add(*a2, c[2], grad);
        }
        let a = free
            .iter()
            .map(|&i| free.iter().map(|&j| a[i][j]).collect())
            .collect();
        (a, free.iter().map(|&i| g[i]).collect())
    }
}

/// `row` plus `c` times `grad`, term by term.
fn add(row: [f64; 3], c: f64, grad: [f64; 3]) -> [f64; 3] {
    [
        row[0] + c * grad[0],
        row[1] + c * grad[1],
        row[2] + c * grad[2],
    ]
}

fn denominator(p: &Params, n: f64) -> f64 {
    1.0 + p[1] * (n - 1.0) + p[2] * n * (n - 1.0)
}

/// The least-squares law through `obs` weighed by `weights`, with κ ≥ 0;
/// Err where no start leads anywhere.
pub(crate) fn fit(obs: &[Group], weights: Weights, hint: Option<Law>) -> Result<Estimate, String> {
    let problem = Problem { obs, weights };
    let starts = starts(obs, hint);
    let best = |free: &[usize], kappa: Option<f64>| {
        starts
            .iter()
            .filter_map(|s| minimise(&problem, [s[0], s[1], kappa.unwrap_or(s[2])], free))
            .filter(|(p, cost)| p.iter().all(|v| v.is_finite()) && cost.is_finite())
            .filter(|(p, _)| p[2] >= 0.0)
            .min_by(|a, b| a.1.total_cmp(&b.1))
    };
    let (p, _) = best(&[0, 1, 2], None)
        .or_else(|| best(&[0, 1], Some(0.0)))
        .ok_or("cannot fit: the least squares found no law with a positive denominator")?;
    Ok(Estimate {
        law: Law {
            lambda: p[0],
            sigma: p[1],
            kappa: p[2],
        },
        se: standard_errors(&problem, &p),
    })
}

/// Where the search starts (module documentation).
fn starts(obs: &[Group], hint: Option<Law>) -> Vec<Params> {
    let per_core = obs.iter().map(|g| g.mean / g.n).fold(0.0, f64::max);
    let lowest = obs
        .iter()
        .min_by(|a, b| a.n.total_cmp(&b.n))
        .map_or(per_core, |g| g.mean / g.n);
    if let Some(l) = hint {
        return vec![[l.lambda, l.sigma, l.kappa.max(0.0)]];
    }
    let mut out = vec![[per_core, 0.01, 1e-4]];
    for lambda in [per_core, lowest] {
        // N·λ/X − 1 = σ(N−1) + κN(N−1): linear in σ and κ for a given λ.
        let rows: Vec<[f64; 3]> = obs
            .iter()
            .map(|g| [g.n - 1.0, g.n * (g.n - 1.0), g.n * lambda / g.mean - 1.0])
            .collect();
        if let Some(r) = gcp::through_origin(&rows, 2) {
            out.push([lambda, r.coef[0], r.coef[1].max(0.0)]);
        }
    }
    out
}

/// Levenberg–Marquardt from `start` over the parameters in `free`: the
/// point reached and its sum of squares; None where `start` has a
/// denominator that is not positive.
fn minimise(problem: &Problem, start: Params, free: &[usize]) -> Option<(Params, f64)> {
    let mut p = start;
    let mut cost = problem.rss(&p)?;
    let mut damping = 1e-3;
    for _ in 0..MAX_ITERATIONS {
        let (a, g) = problem.normal(&p, free);
        let Some((next, next_cost, step)) =
            damped_step(problem, (&p, cost), free, (&a, &g), &mut damping)
        else {
            break;
        };
        (p, cost) = (next, next_cost);
        let small = |i: usize| step[i].abs() <= STEP_TOLERANCE * p[i].abs() + 1e-16;
        if cost == 0.0 || (0..3).all(small) {
            break;
        }
    }
    Some((p, cost))
}

/// The step from `at` that lowers the sum (or keeps it: near the optimum
/// the sums differ by less than their rounding), raising the damping
/// until one does; the point, its sum and the step. None where none does.
fn damped_step(
    problem: &Problem,
    (p, cost): (&Params, f64),
    free: &[usize],
    (a, g): (&[Vec<f64>], &[f64]),
    damping: &mut f64,
) -> Option<(Params, f64, Params)> {
    while *damping < MAX_DAMPING {
        let mut m = a.to_vec();
        for (i, row) in m.iter_mut().enumerate() {
            row[i] += *damping * a[i][i];
        }
        if let Some(delta) = solve(m, g.to_vec()) {
            let (mut trial, mut step) = (*p, [0.0; 3]);
            for (k, &i) in free.iter().enumerate() {
                trial[i] += delta[k];
                step[i] = delta[k];
            }
            if let Some(c) = problem.rss(&trial).filter(|c| *c <= cost) {
                *damping = (*damping / 3.0).max(1e-12);
                return Some((trial, c, step));
            }
        }
        *damping *= 4.0;
    }
    None
}

/// √(diag((JᵀJ)⁻¹) · RSS/(n − 3)) with J over all three parameters at `p`
/// (as R's `nls` and `usl` give them, a bound or not); None where n ≤ 3
/// or JᵀJ is singular.
fn standard_errors(problem: &Problem, p: &Params) -> StdErrors {
    let df = problem.runs() - 3.0;
    let (Some(rss), true) = (problem.rss(p), df > 0.0) else {
        return StdErrors::default();
    };
    let (a, _) = problem.normal(p, &[0, 1, 2]);
    let Some(inv) = inverse(&a) else {
        return StdErrors::default();
    };
    let se = |i: usize| {
        let v = inv[i][i] * rss / df;
        (v.is_finite() && v >= 0.0).then(|| v.sqrt())
    };
    StdErrors {
        lambda: se(0),
        sigma: se(1),
        kappa: se(2),
    }
}

/// The solution of `a x = b` (a small dense system), scaled to a unit
/// diagonal first (the parameters differ by orders of magnitude), by
/// Gaussian elimination with partial pivoting; None where singular.
pub(crate) fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let k = b.len();
    let scale: Vec<f64> = (0..k)
        .map(|i| match a[i][i] {
            d if d > 0.0 && d.is_finite() => 1.0 / d.sqrt(),
            _ => 1.0,
        })
        .collect();
    for i in 0..k {
        b[i] *= scale[i];
        for j in 0..k {
            a[i][j] *= scale[i] * scale[j];
        }
    }
    for col in 0..k {
        let pivot = (col..k).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-14 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let pivot_row = a[col].clone();
        for row in col + 1..k {
            let f = a[row][col] / pivot_row[col];
            for (v, p) in a[row][col..].iter_mut().zip(&pivot_row[col..]) {
                *v -= f * p;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = vec![0.0; k];
    for i in (0..k).rev() {
        let tail: f64 = (i + 1..k).map(|j| a[i][j] * x[j]).sum();
        x[i] = (b[i] - tail) / a[i][i];
    }
    let x: Vec<f64> = x.iter().zip(&scale).map(|(v, s)| v * s).collect();
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// The inverse of a small symmetric positive matrix, column by column.
pub(crate) fn inverse(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let k = a.len();
    let columns: Option<Vec<Vec<f64>>> = (0..k)
        .map(|c| {
            solve(
                a.to_vec(),
                (0..k).map(|i| f64::from(u8::from(i == c))).collect(),
            )
        })
        .collect();
    let columns = columns?;
    Some(
        (0..k)
            .map(|i| (0..k).map(|j| columns[j][i]).collect())
            .collect(),
    )
}
