//! The Universal Scalability Law (Gunther) fitted to throughput against
//! cores (or any load N): X(N) = λN / (1 + σ(N−1) + κN(N−1)), where λ is
//! the throughput of one core, σ the contention (the share of the work
//! that queues for something shared: it flattens the curve) and κ the
//! coherency cost (the crosstalk every pair of cores pays: it makes the
//! curve fall after its peak N* = √((1−σ)/κ)).
//!
//! Three methods ([`Method`]):
//! - `nls`, the default, as the field computes it (R's `usl` package from
//!   version 2, usl4j, Go's `usl`): nonlinear least squares on X over
//!   every observation, λ, σ and κ free, solved by Levenberg–Marquardt
//!   (usl/lm.rs), with standard errors from the Jacobian as R's `nls` gives
//!   them, √(diag((JᵀJ)⁻¹) · RSS/(n−3)).
//! - `relative`: least squares on relative residuals (X − X̂)/X over each
//!   core count's geometric mean, so a point at 1 core and one at 16
//!   weigh alike (this report's estimator before `nls`).
//! - `gcp`: Gunther's own ("Guerrilla Capacity Planning"): the
//!   capacity C(N) = X(N)/X(1) with X(1) measured (the mean at N = 1), and
//!   the quadratic N/C − 1 = σ(N−1) + κN(N−1) fitted through the origin;
//!   λ = X(1) (usl/gcp.rs).
//!
//! Every method keeps κ ≥ 0 and allows σ < 0: a superlinear series
//! (Gunther, Puglia and Tomasette, "Hadoop Superlinear Scalability", ACM
//! Queue 2015), which stays above the linear ideal λN until N = −σ/κ. A
//! fit with σ ≥ 1 (a second core never helps) is refused. The intervals
//! come from refitting runs resampled within each core count (a
//! bootstrap), when there are repetitions (and at most
//! [`BOOTSTRAP_LIMIT`] runs).

mod gcp;
mod lm;
pub mod plot;
pub mod table;

use serverlab_util::Named;

/// A fitted law.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Law {
    pub lambda: f64,
    pub sigma: f64,
    pub kappa: f64,
}

/// σ or κ this close to 0 is 0 (the bound, up to the solver's rounding).
pub const NEGLIGIBLE: f64 = 1e-9;

impl Law {
    /// The throughput the law predicts at `n` cores.
    pub fn throughput(&self, n: f64) -> f64 {
        self.lambda * n / self.denominator(n)
    }

    /// 1 + σ(N−1) + κN(N−1).
    pub fn denominator(&self, n: f64) -> f64 {
        1.0 + self.sigma * (n - 1.0) + self.kappa * n * (n - 1.0)
    }

    /// Where the throughput peaks, N* = √((1−σ)/κ); None where κ = 0 (it
    /// never falls).
    pub fn peak(&self) -> Option<f64> {
        (self.kappa > 0.0 && self.sigma < 1.0).then(|| ((1.0 - self.sigma) / self.kappa).sqrt())
    }

    /// σ < 0: each core adds more than one core's throughput.
    pub fn superlinear(&self) -> bool {
        self.sigma < -NEGLIGIBLE
    }

    /// Where a superlinear law falls back below the linear ideal λN:
    /// X(N) < λN exactly when σ(N−1) + κN(N−1) > 0, that is when
    /// (N−1)(σ + κN) is positive, so past N = −σ/κ. None unless σ < 0 and
    /// κ > 0 (with κ = 0 it never does).
    pub fn payback(&self) -> Option<f64> {
        (self.superlinear() && self.kappa > 0.0).then(|| -self.sigma / self.kappa)
    }

    /// Amdahl's limit on the speedup, 1/σ, where σ > 0 (the law with κ = 0
    /// tends to λ/σ).
    pub fn amdahl(&self) -> Option<f64> {
        (self.sigma > NEGLIGIBLE).then(|| 1.0 / self.sigma)
    }
}

/// How the law is fitted (module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    #[default]
    Nls,
    Relative,
    Gcp,
}

impl Named for Method {
    const WHAT: &'static str = "fit method";
    const ALL: &'static [Method] = &[Method::Nls, Method::Relative, Method::Gcp];

    fn name(self) -> &'static str {
        match self {
            Method::Nls => "nls",
            Method::Relative => "relative",
            Method::Gcp => "gcp",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Method::Nls => {
                "nonlinear least squares on X, λ σ κ free, as R's usl, usl4j and Go's usl; the default"
            }
            Method::Relative => {
                "least squares on relative residuals (X − X̂)/X over each N's geometric mean"
            }
            Method::Gcp => {
                "Gunther's: C(N) = X(N)/X(1) with X(1) measured, N/C − 1 fitted through the origin"
            }
        }
    }
}

serverlab_util::named_enum_impls!(Method);

/// Standard errors of the parameters, where the method gives one: `nls`
/// and `relative` from the Jacobian (√(diag((JᵀJ)⁻¹) · RSS/(n−3)), the
/// weighted residuals for `relative`); `gcp` σ and κ from its regression,
/// λ = X(1) as the standard error of the mean at N = 1 (several runs
/// there only).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StdErrors {
    pub lambda: Option<f64>,
    pub sigma: Option<f64>,
    pub kappa: Option<f64>,
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
    pub method: Method,
    pub se: StdErrors,
    /// The share of the variance of X, over every run, the law explains.
    pub r2: f64,
    /// None with a single run per core count.
    pub intervals: Option<Intervals>,
    /// The runs fitted.
    pub observations: usize,
}

impl Fit {
    /// The peak and the throughput there.
    pub fn peak(&self) -> Option<(f64, f64)> {
        self.law.peak().map(|n| (n, self.law.throughput(n)))
    }

    /// R² below [`POOR_R2`] (or not a number): the law does not describe
    /// the points, and nothing is concluded from it.
    pub fn poor(&self) -> bool {
        self.r2.is_nan() || self.r2 < POOR_R2
    }
}

/// A fit explaining less than this share of the variance of X is poor
/// (docs/experiments.md): its residuals are a third of X's spread
/// (√0.1 ≈ 0.32) or more, where every published fit and every synthetic
/// series with a few percent of noise gives 0.98 or above.
pub const POOR_R2: f64 = 0.9;

/// The signs of the residuals X − X̂ (each N's mean), in order of N, and
/// how many runs of one sign they make: a law that fits leaves signs in
/// random order; few long runs (+ + + − − − + + +) are a bend in the data
/// the law does not follow (the Wald–Wolfowitz runs test).
#[derive(Debug, Clone, PartialEq)]
pub struct Residuals {
    /// +1, −1 (or 0) per distinct N, in order of N.
    pub signs: Vec<i8>,
    pub runs: usize,
    /// The runs expected where the signs fall at random.
    pub expected: f64,
    /// (runs − expected) / sd; None with one sign alone.
    pub z: Option<f64>,
}

/// z below this: fewer runs than chance gives (one-sided 2.5%).
const RUNS_Z: f64 = -1.96;
/// At most this many signs are printed.
const SIGNS_SHOWN: usize = 64;

impl Residuals {
    /// Fewer runs of one sign than chance gives: a systematic pattern.
    pub fn systematic(&self) -> bool {
        self.z.is_some_and(|z| z < RUNS_Z)
    }

    /// The signs as `+−−+`, where there are few enough to print.
    pub fn pattern(&self) -> Option<String> {
        let sign = |s: &i8| match s {
            1 => '+',
            -1 => '−',
            _ => '0',
        };
        (self.signs.len() <= SIGNS_SHOWN).then(|| self.signs.iter().map(sign).collect())
    }

    /// A sentence: the signs, their runs, and whether they look random.
    pub fn describe(&self) -> String {
        let signs = self
            .pattern()
            .map_or_else(String::new, |p| format!("{p}: "));
        let verdict = if self.systematic() {
            "systematic: the points bend in a way the law does not follow"
        } else {
            "no pattern beyond chance"
        };
        format!(
            "residuals by N: {signs}{} run{} of one sign over {} N, {} expected by chance; {verdict}",
            self.runs,
            if self.runs == 1 { "" } else { "s" },
            self.signs.len(),
            significant(self.expected, 3)
        )
    }
}

/// The residuals' signs of `law` over `series` (the runs at each N), by N.
pub fn residuals(law: &Law, series: &[Cores]) -> Residuals {
    let mut by_n: Vec<(f64, f64)> = series
        .iter()
        .map(|c| {
            let mean = c.runs.iter().sum::<f64>() / c.runs.len() as f64;
            (c.n, mean - law.throughput(c.n))
        })
        .collect();
    by_n.sort_by(|a, b| a.0.total_cmp(&b.0));
    let signs: Vec<i8> = by_n
        .iter()
        .map(|&(_, r)| match r {
            r if r > 0.0 => 1,
            r if r < 0.0 => -1,
            _ => 0,
        })
        .collect();
    let runs = signs.windows(2).filter(|w| w[0] != w[1]).count() + usize::from(!signs.is_empty());
    let plus = signs.iter().filter(|&&s| s > 0).count() as f64;
    let minus = signs.len() as f64 - plus;
    let total = signs.len() as f64;
    let expected = if total > 0.0 {
        1.0 + 2.0 * plus * minus / total
    } else {
        0.0
    };
    let var = (expected - 1.0) * (expected - 2.0) / (total - 1.0);
    let z = (plus > 0.0 && minus > 0.0 && var > 0.0).then(|| (runs as f64 - expected) / var.sqrt());
    Residuals {
        signs,
        runs,
        expected,
        z,
    }
}

/// A method's estimate: the law and its standard errors.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Estimate {
    law: Law,
    se: StdErrors,
}

/// Fewer core counts than this cannot be fitted (three parameters).
pub const MIN_POINTS: usize = 3;
/// Resamples for the intervals (a fixed seed: the same data give the same
/// report).
const RESAMPLES: usize = 200;
const SEED: u64 = 0x05C4_1AB1;
/// Past this many runs there are no bootstrap intervals: 200 refits of a
/// million runs take minutes, and the standard errors say as much there.
pub const BOOTSTRAP_LIMIT: usize = 10_000;

/// Fit `series` (one entry per core count) by the default method; Err
/// says why it cannot be.
pub fn fit(series: &[Cores]) -> Result<Fit, String> {
    fit_with(series, Method::default())
}

/// Fit `series` by `method`.
pub fn fit_with(series: &[Cores], method: Method) -> Result<Fit, String> {
    let series: Vec<&Cores> = series.iter().filter(|c| !c.runs.is_empty()).collect();
    let obs = observations(&series);
    let groups: Vec<Group> = series.iter().map(|c| Group::of(c.n, &c.runs)).collect();
    let est = estimate(&obs, &groups, method, None)?;
    Ok(Fit {
        law: est.law,
        method,
        se: est.se,
        r2: r_squared(&est.law, &obs),
        intervals: intervals(&series, method, est.law),
        observations: obs.len(),
    })
}

/// Fit points (N, X), where an N may repeat (repetitions), by `method`.
pub fn fit_points(points: &[(f64, f64)], method: Method) -> Result<Fit, String> {
    fit_with(&group(points), method)
}

/// The first [`MIN_POINTS`] distinct N of `ns` (all of them where there
/// are fewer), sorted: one pass, whether N are few or a million.
pub fn distinct_n(ns: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut seen: Vec<f64> = Vec::with_capacity(MIN_POINTS);
    for n in ns {
        if !seen.contains(&n) {
            seen.push(n);
            if seen.len() == MIN_POINTS {
                break;
            }
        }
    }
    seen.sort_by(f64::total_cmp);
    seen
}

/// Hashes an N by its bits, by one multiplication (SipHash, the
/// default, costs more than the fit over a million N).
#[derive(Default)]
struct BitsHasher(u64);

impl std::hash::Hasher for BitsHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Points (N, X) as runs per N, in the order each N first appears (a
/// hash by N's bits: linear in the points).
pub fn group(points: &[(f64, f64)]) -> Vec<Cores> {
    let mut out: Vec<Cores> = Vec::new();
    let mut at: std::collections::HashMap<u64, usize, std::hash::BuildHasherDefault<BitsHasher>> =
        std::collections::HashMap::default();
    for &(n, x) in points {
        // 0.0 and -0.0 are one N.
        let key = (n + 0.0).to_bits();
        match at.get(&key) {
            Some(&i) => out[i].runs.push(x),
            None => {
                at.insert(key, out.len());
                out.push(Cores { n, runs: vec![x] });
            }
        }
    }
    out
}

/// The runs at one N, summed up for the least squares: on X, Σ (X − X̂)²
/// over the runs is Σ (X − mean)² (`within`) plus count · (mean − X̂)²,
/// so each iteration costs one term per N, not per run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Group {
    pub n: f64,
    pub count: f64,
    pub mean: f64,
    pub within: f64,
    /// The geometric mean (`relative` fits these).
    pub geomean: f64,
}

impl Group {
    fn of(n: f64, runs: &[f64]) -> Group {
        let count = runs.len() as f64;
        let mean = if runs.len() == 1 {
            runs[0]
        } else {
            runs.iter().sum::<f64>() / count
        };
        let within = if runs.len() == 1 {
            0.0
        } else {
            runs.iter().map(|x| (x - mean).powi(2)).sum()
        };
        Group {
            n,
            count,
            mean,
            within,
            geomean: geomean(runs),
        }
    }

    /// Each N's geometric mean, weighing one.
    fn centre(&self) -> Group {
        Group {
            count: 1.0,
            mean: self.geomean,
            within: 0.0,
            ..*self
        }
    }
}

/// Every run as a point (N, X).
fn observations(series: &[&Cores]) -> Vec<(f64, f64)> {
    series
        .iter()
        .flat_map(|c| c.runs.iter().map(move |&x| (c.n, x)))
        .collect()
}

/// The law through `obs` (the same runs as `groups`) by `method` (a
/// resample's fit starts from `hint`), or why it cannot be.
fn estimate(
    obs: &[(f64, f64)],
    groups: &[Group],
    method: Method,
    hint: Option<Law>,
) -> Result<Estimate, String> {
    fittable(obs, groups)?;
    let est = match method {
        Method::Nls => lm::fit(groups, lm::Weights::Absolute, hint),
        Method::Relative => {
            let centres: Vec<Group> = groups.iter().map(Group::centre).collect();
            lm::fit(&centres, lm::Weights::Relative, hint)
        }
        Method::Gcp => gcp::fit(obs),
    }?;
    physical(&est.law, groups)?;
    Ok(est)
}

/// Three core counts or more, every one and every throughput positive.
fn fittable(obs: &[(f64, f64)], groups: &[Group]) -> Result<(), String> {
    let ns = distinct_n(groups.iter().map(|g| g.n));
    if ns.len() < MIN_POINTS {
        return Err(format!(
            "cannot fit: {} core count{} measured, the law needs {MIN_POINTS}",
            ns.len(),
            if ns.len() == 1 { "" } else { "s" }
        ));
    }
    match obs
        .iter()
        .find(|p| !(p.0 > 0.0 && p.1 > 0.0 && p.0.is_finite() && p.1.is_finite()))
    {
        Some((n, x)) => Err(format!(
            "cannot fit: a throughput of {x} at {n} (N and X must be positive)"
        )),
        None => Ok(()),
    }
}

/// σ < 1, and a positive denominator everywhere between the fewest and
/// the most cores measured.
fn physical(law: &Law, groups: &[Group]) -> Result<(), String> {
    if ![law.lambda, law.sigma, law.kappa]
        .iter()
        .all(|v| v.is_finite())
    {
        return Err("cannot fit: the least squares did not converge".into());
    }
    if law.sigma >= 1.0 {
        return Err(format!(
            "cannot fit: non-physical (σ = {:.2} ≥ 1: a second core never helps, \
             the law does not describe this series)",
            law.sigma
        ));
    }
    let lo = groups.iter().map(|g| g.n).fold(f64::INFINITY, f64::min);
    let hi = groups.iter().map(|g| g.n).fold(0.0, f64::max);
    // The denominator is a parabola in N with its lowest point here.
    let vertex = if law.kappa > 0.0 {
        ((law.kappa - law.sigma) / (2.0 * law.kappa)).clamp(lo, hi)
    } else {
        lo
    };
    match [lo, hi, vertex]
        .into_iter()
        .find(|&n| law.denominator(n) <= 0.0)
    {
        Some(n) => Err(format!(
            "cannot fit: non-physical (σ = {:.3} makes 1 + σ(N−1) + κN(N−1) ≤ 0 at N = {n:.1}: \
             unbounded throughput)",
            law.sigma
        )),
        None => Ok(()),
    }
}

/// 1 − SS_res / SS_tot over `points`.
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
fn intervals(series: &[&Cores], method: Method, law: Law) -> Option<Intervals> {
    let runs: usize = series.iter().map(|c| c.runs.len()).sum();
    if series.iter().all(|c| c.runs.len() < 2) || runs > BOOTSTRAP_LIMIT {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(SEED);
    let mut laws = Vec::with_capacity(RESAMPLES);
    let (mut resample, mut runs) = (Vec::new(), Vec::new());
    for _ in 0..RESAMPLES {
        resample.clear();
        let groups: Vec<Group> = series
            .iter()
            .map(|c| {
                runs.clear();
                runs.extend((0..c.runs.len()).map(|_| c.runs[rng.usize(..c.runs.len())]));
                resample.extend(runs.iter().map(|&x| (c.n, x)));
                Group::of(c.n, &runs)
            })
            .collect();
        if let Ok(est) = estimate(&resample, &groups, method, Some(law)) {
            laws.push(est.law);
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

/// `v` to `digits` significant digits: plain between 0.001 and 10⁷,
/// scientific beyond (`0.02773`, `89.99523`, `1.044e-4`).
pub fn significant(v: f64, digits: usize) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let magnitude = v.abs().log10().floor() as i64;
    if !(-3..7).contains(&magnitude) {
        return format!("{v:.prec$e}", prec = digits.saturating_sub(1));
    }
    let decimals = (digits as i64 - 1 - magnitude).max(0) as usize;
    format!("{v:.decimals$}")
}

/// A share as a percentage to three significant digits (`2.77%`).
fn share(v: f64) -> String {
    format!("{}%", significant(100.0 * v, 3))
}

/// The law in words, a sentence: what σ and κ do to the curve, and where
/// (`contention σ = 2.77% flattens it; coherency κ = 0.0104% makes it
/// fall after N* = 96.5`).
pub fn in_words(law: &Law) -> String {
    let sigma = if law.superlinear() {
        format!(
            "superlinear: σ = {} < 0, each of the first cores adds more than one core's throughput",
            significant(law.sigma, 3)
        )
    } else if law.sigma > NEGLIGIBLE {
        format!(
            "contention σ = {} flattens it (towards {}× one core's throughput)",
            share(law.sigma),
            significant(1.0 / law.sigma, 3)
        )
    } else {
        "no contention (σ = 0)".to_string()
    };
    let kappa = match (law.peak(), law.payback()) {
        (Some(peak), Some(back)) => format!(
            "coherency κ = {} brings it back below the linear ideal past N = {} (−σ/κ) \
             and makes it fall after N* = {}",
            share(law.kappa),
            significant(back, 3),
            significant(peak, 3)
        ),
        (Some(peak), None) => format!(
            "coherency κ = {} makes it fall after N* = {}",
            share(law.kappa),
            significant(peak, 3)
        ),
        _ if law.superlinear() => {
            "no coherency cost (κ = 0): it stays above the linear ideal at every N".into()
        }
        _ => "no coherency cost (κ = 0): it never falls".into(),
    };
    format!("{sigma}; {kappa}")
}

#[cfg(test)]
mod tests;
