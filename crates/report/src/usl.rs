//! The Universal Scalability Law (Gunther) fitted to throughput against
//! cores: X(N) = λN / (1 + σ(N−1) + κN(N−1)), where λ is the throughput of
//! one core, σ the contention (the share of the work that queues for
//! something shared: it flattens the curve) and κ the coherency cost
//! (the crosstalk every pair of cores pays: it makes the curve fall after
//! its peak N* = √((1−σ)/κ)).
//!
//! The fit is least squares on relative residuals, (X − X̂)/X, so that a
//! point at 1 core and one at 16 weigh alike, over λ, σ and κ with σ, κ ≥
//! 0: λ has a closed form for given σ and κ, and σ = u², κ = v² are
//! searched over a grid and then by Nelder–Mead. It fits the points'
//! centres (geometric means); the intervals come from refitting runs
//! resampled within each core count (a bootstrap), when there are
//! repetitions.

/// A fitted law.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Law {
    pub lambda: f64,
    pub sigma: f64,
    pub kappa: f64,
}

impl Law {
    /// The throughput the law predicts at `n` cores.
    pub fn throughput(&self, n: f64) -> f64 {
        self.lambda * shape(self.sigma, self.kappa, n)
    }

    /// Where the throughput peaks, N* = √((1−σ)/κ); None where κ = 0 (it
    /// never falls).
    pub fn peak(&self) -> Option<f64> {
        (self.kappa > 0.0 && self.sigma < 1.0).then(|| ((1.0 - self.sigma) / self.kappa).sqrt())
    }
}

/// N / (1 + σ(N−1) + κN(N−1)): the law without λ.
fn shape(sigma: f64, kappa: f64, n: f64) -> f64 {
    n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// The runs measured at one core count.
#[derive(Debug, Clone, PartialEq)]
pub struct Cores {
    pub n: f64,
    /// Throughput of each run.
    pub runs: Vec<f64>,
}

/// 95% intervals of the parameters, from the bootstrap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Intervals {
    pub lambda: (f64, f64),
    pub sigma: (f64, f64),
    pub kappa: (f64, f64),
    /// Of the peak, where every resample has one.
    pub peak: Option<(f64, f64)>,
}

/// A series' fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub law: Law,
    /// The share of the centres' variance the law explains.
    pub r2: f64,
    /// None with a single run per core count.
    pub intervals: Option<Intervals>,
}

impl Fit {
    /// The peak and the throughput there.
    pub fn peak(&self) -> Option<(f64, f64)> {
        self.law.peak().map(|n| (n, self.law.throughput(n)))
    }
}

/// Fewer core counts than this cannot be fitted (three parameters).
pub const MIN_POINTS: usize = 3;
/// Resamples for the intervals (a fixed seed: the same data give the same
/// report).
const RESAMPLES: usize = 200;
const SEED: u64 = 0x05C4_1AB1;
/// A speedup this far above linear is beyond what the law describes.
const SUPERLINEAR: f64 = 1.1;

/// Fit `series` (one entry per core count); Err says why it cannot be.
pub fn fit(series: &[Cores]) -> Result<Fit, String> {
    let series: Vec<&Cores> = series.iter().filter(|c| !c.runs.is_empty()).collect();
    let centres: Vec<(f64, f64)> = series.iter().map(|c| (c.n, geomean(&c.runs))).collect();
    let law = fit_centres(&centres)?;
    let r2 = r_squared(&law, &centres);
    Ok(Fit {
        law,
        r2,
        intervals: intervals(&series),
    })
}

/// The law through points (cores, throughput), or why it cannot be.
pub fn fit_centres(points: &[(f64, f64)]) -> Result<Law, String> {
    let mut ns: Vec<f64> = points.iter().map(|p| p.0).collect();
    ns.sort_by(f64::total_cmp);
    ns.dedup();
    if ns.len() < MIN_POINTS {
        return Err(format!(
            "cannot fit: {} core count{} measured, the law needs {MIN_POINTS}",
            ns.len(),
            if ns.len() == 1 { "" } else { "s" }
        ));
    }
    if points
        .iter()
        .any(|p| !(p.1 > 0.0 && p.1.is_finite() && p.0 >= 1.0))
    {
        return Err("cannot fit: a throughput of 0".into());
    }
    superlinear(points)?;
    let law = search(points);
    if law.sigma >= 1.0 {
        return Err(format!(
            "cannot fit: non-physical (σ = {:.2} ≥ 1: a second core never helps, \
             the law does not describe this series)",
            law.sigma
        ));
    }
    Ok(law)
}

/// A speedup well above linear: the law (σ, κ ≥ 0) cannot describe it.
fn superlinear(points: &[(f64, f64)]) -> Result<(), String> {
    let lowest = points
        .iter()
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .expect("3 points");
    let per_core = lowest.1 / lowest.0;
    match points.iter().find(|(n, x)| *x > SUPERLINEAR * per_core * n) {
        Some((n, x)) => Err(format!(
            "cannot fit: non-physical (superlinear: {:.2}× the throughput of {} at {n} cores; \
             the law has σ, κ ≥ 0)",
            x / lowest.1,
            lowest.0
        )),
        None => Ok(()),
    }
}

/// λ that best fits `points` for given σ and κ (relative residuals), and
/// the sum of the squared relative residuals.
fn profile(points: &[(f64, f64)], sigma: f64, kappa: f64) -> (f64, f64) {
    let fs: Vec<f64> = points
        .iter()
        .map(|&(n, x)| shape(sigma, kappa, n) / x)
        .collect();
    let lambda = fs.iter().sum::<f64>() / fs.iter().map(|f| f * f).sum::<f64>();
    let sse = fs.iter().map(|f| (1.0 - lambda * f).powi(2)).sum();
    (lambda, sse)
}

/// The best σ, κ ≥ 0: the best of a grid, refined by Nelder–Mead over
/// (√σ, √κ).
fn search(points: &[(f64, f64)]) -> Law {
    const SIGMAS: [f64; 9] = [0.0, 0.001, 0.01, 0.03, 0.1, 0.3, 0.6, 1.0, 2.0];
    const KAPPAS: [f64; 9] = [0.0, 1e-5, 1e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3];
    let cost = |u: f64, v: f64| profile(points, u * u, v * v).1;
    let mut best = (f64::INFINITY, 0.0, 0.0);
    for s in SIGMAS {
        for k in KAPPAS {
            let c = cost(s.sqrt(), k.sqrt());
            if c < best.0 {
                best = (c, s.sqrt(), k.sqrt());
            }
        }
    }
    let (u, v) = nelder_mead(&|p: [f64; 2]| cost(p[0], p[1]), [best.1, best.2]);
    let (sigma, kappa) = (u * u, v * v);
    Law {
        lambda: profile(points, sigma, kappa).0,
        sigma,
        kappa,
    }
}

/// The minimum of `f` near `start` (Nelder–Mead, standard coefficients).
fn nelder_mead(f: &dyn Fn([f64; 2]) -> f64, start: [f64; 2]) -> (f64, f64) {
    let step = |x: f64| 0.1 * x.abs().max(0.05);
    let mut s: Vec<([f64; 2], f64)> = [
        start,
        [start[0] + step(start[0]), start[1]],
        [start[0], start[1] + step(start[1])],
    ]
    .iter()
    .map(|&p| (p, f(p)))
    .collect();
    for _ in 0..2000 {
        s.sort_by(|a, b| a.1.total_cmp(&b.1));
        if (s[2].1 - s[0].1).abs() <= 1e-15 * (1.0 + s[0].1.abs()) {
            break;
        }
        let c = [(s[0].0[0] + s[1].0[0]) / 2.0, (s[0].0[1] + s[1].0[1]) / 2.0];
        let at = |t: f64| [c[0] + t * (s[2].0[0] - c[0]), c[1] + t * (s[2].0[1] - c[1])];
        let r = at(-1.0);
        let fr = f(r);
        if fr < s[0].1 {
            let e = at(-2.0);
            let fe = f(e);
            s[2] = if fe < fr { (e, fe) } else { (r, fr) };
        } else if fr < s[1].1 {
            s[2] = (r, fr);
        } else {
            let k = at(if fr < s[2].1 { -0.5 } else { 0.5 });
            let fk = f(k);
            if fk < s[2].1.min(fr) {
                s[2] = (k, fk);
            } else {
                shrink(&mut s, f);
            }
        }
    }
    s.sort_by(|a, b| a.1.total_cmp(&b.1));
    (s[0].0[0], s[0].0[1])
}

/// Every vertex halfway towards the best.
fn shrink(s: &mut [([f64; 2], f64)], f: &dyn Fn([f64; 2]) -> f64) {
    let best = s[0].0;
    for v in s.iter_mut().skip(1) {
        let p = [(v.0[0] + best[0]) / 2.0, (v.0[1] + best[1]) / 2.0];
        *v = (p, f(p));
    }
}

/// 1 − SS_res / SS_tot over the centres.
fn r_squared(law: &Law, points: &[(f64, f64)]) -> f64 {
    let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
    let total: f64 = points.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let residual: f64 = points
        .iter()
        .map(|&(n, x)| (x - law.throughput(n)).powi(2))
        .sum();
    if total > 0.0 {
        1.0 - residual / total
    } else {
        1.0
    }
}

fn geomean(v: &[f64]) -> f64 {
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

/// The 2.5th and 97.5th percentiles of refits to runs resampled within
/// each core count; None unless some core count has several runs.
fn intervals(series: &[&Cores]) -> Option<Intervals> {
    if series.iter().all(|c| c.runs.len() < 2) {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(SEED);
    let mut laws = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        let centres: Vec<(f64, f64)> = series
            .iter()
            .map(|c| {
                let pick: Vec<f64> = (0..c.runs.len())
                    .map(|_| c.runs[rng.usize(..c.runs.len())])
                    .collect();
                (c.n, geomean(&pick))
            })
            .collect();
        if let Ok(law) = fit_centres(&centres) {
            laws.push(law);
        }
    }
    if laws.len() < RESAMPLES / 2 {
        return None;
    }
    let range = |get: &dyn Fn(&Law) -> f64| {
        let mut v: Vec<f64> = laws.iter().map(get).collect();
        v.sort_by(f64::total_cmp);
        let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        (at(0.025), at(0.975))
    };
    let peaks = laws.iter().all(|l| l.peak().is_some());
    Some(Intervals {
        lambda: range(&|l| l.lambda),
        sigma: range(&|l| l.sigma),
        kappa: range(&|l| l.kappa),
        peak: peaks.then(|| range(&|l| l.peak().unwrap_or(f64::INFINITY))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs from the law at `ns`, `reps` each, within ±3% of it.
    fn synthetic(law: Law, ns: &[f64], reps: usize, seed: u64) -> Vec<Cores> {
        let mut rng = fastrand::Rng::with_seed(seed);
        ns.iter()
            .map(|&n| Cores {
                n,
                runs: (0..reps)
                    .map(|_| law.throughput(n) * (1.0 + 0.06 * (rng.f64() - 0.5)))
                    .collect(),
            })
            .collect()
    }

    fn within(got: f64, want: f64, share: f64) -> bool {
        (got - want).abs() <= share * want
    }

    /// Every core count from 1 to 32, 3 runs each, within ±3%: σ and κ
    /// within 10%, the peak within a core, over 20 noise draws each. (With
    /// 1 to 16 cores the same noise moves κ by up to 15–23% where the peak
    /// lies at or past 16: the data, not the fit, then say less.)
    #[test]
    fn known_laws_are_recovered_through_3_percent_noise() {
        let ns: Vec<f64> = (1..=32).map(f64::from).collect();
        let laws = [
            (1000.0, 0.1, 0.004),
            (250_000.0, 0.2, 0.02),
            (1.7e6, 0.3, 0.01),
            (1e6, 0.05, 0.002),
        ];
        for (i, &(lambda, sigma, kappa)) in laws.iter().enumerate() {
            let law = Law {
                lambda,
                sigma,
                kappa,
            };
            for seed in 0..20 {
                let fit = fit(&synthetic(law, &ns, 3, 17 * i as u64 + seed)).unwrap();
                let got = fit.law;
                assert!(
                    within(got.sigma, sigma, 0.1),
                    "{law:?} seed {seed}: {got:?}"
                );
                assert!(
                    within(got.kappa, kappa, 0.1),
                    "{law:?} seed {seed}: {got:?}"
                );
                assert!(within(got.lambda, lambda, 0.05), "{law:?}: {got:?}");
                let (peak, want) = (got.peak().unwrap(), law.peak().unwrap());
                assert!((peak - want).abs() <= 1.0, "peak {peak} vs {want}");
                assert!(fit.r2 > 0.9, "{}", fit.r2);
                let iv = fit.intervals.unwrap();
                assert!(iv.sigma.0 <= got.sigma && got.sigma <= iv.sigma.1, "{iv:?}");
                assert!(iv.kappa.0 <= got.kappa && got.kappa <= iv.kappa.1, "{iv:?}");
            }
        }
    }

    #[test]
    fn a_linear_series_has_neither_contention_nor_coherency() {
        let series: Vec<Cores> = [1.0, 2.0, 4.0, 8.0]
            .iter()
            .map(|&n| Cores {
                n,
                runs: vec![5000.0 * n],
            })
            .collect();
        let fit = fit(&series).unwrap();
        assert!(
            fit.law.sigma < 1e-6 && fit.law.kappa < 1e-8,
            "{:?}",
            fit.law
        );
        assert!(within(fit.law.lambda, 5000.0, 1e-6), "{:?}", fit.law);
        assert_eq!(fit.law.peak(), None);
        assert!(fit.r2 > 0.999_999);
        assert_eq!(fit.intervals, None, "one run per point: no interval");
    }

    #[test]
    fn too_few_points_or_a_non_physical_fit_cannot_be_fitted() {
        let two = [(1.0, 100.0), (2.0, 190.0)];
        let e = fit_centres(&two).unwrap_err();
        assert!(
            e.starts_with("cannot fit") && e.contains("2 core counts"),
            "{e}"
        );
        // The same core count twice is still one.
        let e = fit_centres(&[(1.0, 1.0), (1.0, 1.1), (2.0, 2.0)]).unwrap_err();
        assert!(e.contains("2 core counts"), "{e}");
        // Superlinear: 3× per doubling.
        let e = fit_centres(&[(1.0, 100.0), (2.0, 300.0), (4.0, 900.0)]).unwrap_err();
        assert!(
            e.contains("non-physical") && e.contains("superlinear"),
            "{e}"
        );
        // Each added core costs: σ ≥ 1.
        let e = fit_centres(&[(1.0, 100.0), (2.0, 40.0), (4.0, 20.0), (8.0, 10.0)]).unwrap_err();
        assert!(e.contains("non-physical") && e.contains("σ"), "{e}");
        assert!(fit(&[]).is_err());
    }

    /// The figures measured on 16 cores (rwlock store, uring, pipelined):
    /// a peak near 2 cores.
    #[test]
    fn the_measured_rwlock_collapse_peaks_near_two_cores() {
        let fit =
            fit_centres(&[(1.0, 1.73e6), (2.0, 2.26e6), (4.0, 1.76e6), (8.0, 1.23e6)]).unwrap();
        let peak = fit.peak().unwrap();
        assert!((1.5..3.0).contains(&peak), "{fit:?} peak {peak}");
    }
}
