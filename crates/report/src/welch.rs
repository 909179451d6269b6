//! Whether two measurements differ: Welch's t-test (no assumption of equal
//! variances or equal repetition counts) on the logarithms of the runs'
//! values, so the result is a ratio with its 95% confidence interval, with
//! Hedges' g as the effect size. Samples holding a zero (no logarithm) are
//! compared on the raw values instead, as a difference.

use crate::stats::{Moments, Summary, CONFIDENCE};
use crate::student;
use serde::Serialize;

/// mean(a) − mean(b) of two samples, Welch's way.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Difference {
    pub diff: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    pub ci: (f64, f64),
    pub p: f64,
    /// The interval excludes zero (p < 0.05).
    pub significant: bool,
}

/// None when either side has fewer than two values (no variance estimate).
pub fn difference(a: &Moments, b: &Moments) -> Option<Difference> {
    let (sa, sb) = (a.sd?, b.sd?);
    let (na, nb) = (a.n as f64, b.n as f64);
    let diff = a.mean - b.mean;
    let (va, vb) = (sa * sa / na, sb * sb / nb);
    let se = (va + vb).sqrt();
    if se == 0.0 {
        // Both sides constant: the difference is exact.
        return Some(Difference {
            diff,
            df: f64::INFINITY,
            ci: (diff, diff),
            p: if diff == 0.0 { 1.0 } else { 0.0 },
            significant: diff != 0.0,
        });
    }
    let df = (va + vb).powi(2) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let half = student::quantile(1.0 - (1.0 - CONFIDENCE) / 2.0, df) * se;
    let p = student::two_sided_p(diff / se, df);
    Some(Difference {
        diff,
        df,
        ci: (diff - half, diff + half),
        p,
        significant: diff - half > 0.0 || diff + half < 0.0,
    })
}

/// Hedges' g: the difference of the means in pooled standard deviations,
/// corrected for small samples (×(1 − 3/(4(na + nb) − 9))). About 0.2 is
/// small, 0.8 large; None when neither side varies.
pub fn hedges_g(a: &Moments, b: &Moments) -> Option<f64> {
    let (sa, sb) = (a.sd?, b.sd?);
    let (na, nb) = (a.n as f64, b.n as f64);
    let pooled = (((na - 1.0) * sa * sa + (nb - 1.0) * sb * sb) / (na + nb - 2.0)).sqrt();
    if pooled == 0.0 {
        return None;
    }
    let correction = 1.0 - 3.0 / (4.0 * (na + nb) - 9.0);
    Some((a.mean - b.mean) / pooled * correction)
}

/// How two summaries were compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Scale {
    /// On ln(values): the estimate is the ratio of geometric means.
    Log,
    /// On the values (a side holds a zero): the estimate is a difference.
    Raw,
}

/// This against other: Welch's test and the effect size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Contrast {
    pub scale: Scale,
    /// this / other (Log) or this − other (Raw).
    pub estimate: f64,
    /// Its 95% confidence interval.
    pub ci: (f64, f64),
    pub p: f64,
    pub significant: bool,
    /// Hedges' g, on the same scale as the test.
    pub g: Option<f64>,
}

impl Contrast {
    /// The relative change this − other, as a share of other.
    pub fn change(&self, other_centre: f64) -> Option<f64> {
        match self.scale {
            Scale::Log => Some(self.estimate - 1.0),
            Scale::Raw => (other_centre != 0.0).then(|| self.estimate / other_centre),
        }
    }
}

/// None when a side has fewer than two runs.
pub fn contrast(a: &Summary, b: &Summary) -> Option<Contrast> {
    match (&a.log, &b.log) {
        (Some(la), Some(lb)) => {
            let d = difference(la, lb)?;
            Some(Contrast {
                scale: Scale::Log,
                estimate: d.diff.exp(),
                ci: (d.ci.0.exp(), d.ci.1.exp()),
                p: d.p,
                significant: d.significant,
                g: hedges_g(la, lb),
            })
        }
        _ => {
            let (ra, rb) = (raw(a), raw(b));
            let d = difference(&ra, &rb)?;
            Some(Contrast {
                scale: Scale::Raw,
                estimate: d.diff,
                ci: d.ci,
                p: d.p,
                significant: d.significant,
                g: hedges_g(&ra, &rb),
            })
        }
    }
}

fn raw(s: &Summary) -> Moments {
    Moments {
        n: s.n,
        mean: s.mean,
        sd: s.sd,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(values: &[f64]) -> Moments {
        Moments::of(values)
    }

    #[test]
    fn by_hand() {
        // a = 10, 12, 14: mean 12, var 4; b = 4, 5, 6: mean 5, var 1.
        // va = 4/3, vb = 1/3, se = √(5/3), df = (5/3)² / ((4/3)²/2 + (1/3)²/2)
        // = (25/9) / (17/18) = 50/17.
        let d = difference(&m(&[10.0, 12.0, 14.0]), &m(&[4.0, 5.0, 6.0])).unwrap();
        assert_eq!(d.diff, 7.0);
        assert!((d.df - 50.0 / 17.0).abs() < 1e-12);
        let half = student::quantile(0.975, 50.0 / 17.0) * (5.0f64 / 3.0).sqrt();
        assert!((d.ci.0 - (7.0 - half)).abs() < 1e-9);
        assert!((d.ci.1 - (7.0 + half)).abs() < 1e-9);
        assert!(d.significant && d.p < 0.05, "{d:?}");
        // Pooled sd √((2·4 + 2·1)/4) = √2.5; correction 1 − 3/15 = 0.8.
        let g = hedges_g(&m(&[10.0, 12.0, 14.0]), &m(&[4.0, 5.0, 6.0])).unwrap();
        assert!((g - 7.0 / 2.5f64.sqrt() * 0.8).abs() < 1e-12);
    }

    #[test]
    fn overlapping_noise_is_not_significant() {
        let d = difference(&m(&[10.0, 14.0, 12.0]), &m(&[11.0, 13.0, 12.5])).unwrap();
        assert!(!d.significant && d.p > 0.05, "{d:?}");
        assert!(d.ci.0 < 0.0 && d.ci.1 > 0.0);
    }

    #[test]
    fn needs_two_values_a_side() {
        assert!(difference(&m(&[1.0]), &m(&[1.0, 2.0])).is_none());
    }

    #[test]
    fn contrasts_are_ratios_on_the_log_scale() {
        let a = Summary::of(&[2000.0, 2100.0, 1900.0]).unwrap();
        let b = Summary::of(&[1000.0, 1050.0, 950.0]).unwrap();
        let c = contrast(&a, &b).unwrap();
        assert_eq!(c.scale, Scale::Log);
        assert!((c.estimate - 2.0).abs() < 1e-3, "{c:?}");
        assert!(c.ci.0 > 1.0 && c.ci.1 > c.estimate && c.significant);
        assert!((c.change(b.centre()).unwrap() - 1.0).abs() < 1e-3);
        assert!(c.g.unwrap() > 5.0);
        let zero = Summary::of(&[0.0, 1000.0, 1100.0]).unwrap();
        let c = contrast(&zero, &b).unwrap();
        assert_eq!(c.scale, Scale::Raw);
        assert!(c.estimate < 0.0);
    }
}
