//! The difference between two means measured in separate sweeps, with its
//! 95% confidence interval from Welch's t (which does not assume equal
//! variances or equal repetition counts), and whether it is significant.

use crate::stats::{Summary, CONFIDENCE};
use crate::student;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Difference {
    /// mean(a) − mean(b).
    pub diff: f64,
    /// (mean(a) − mean(b)) / mean(b), when mean(b) ≠ 0.
    pub relative: Option<f64>,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    pub ci: (f64, f64),
    pub p: f64,
    /// The interval excludes zero (p < 0.05).
    pub significant: bool,
}

/// None when either side has fewer than two values (no variance estimate).
pub fn difference(a: &Summary, b: &Summary) -> Option<Difference> {
    let (sa, sb) = (a.sd?, b.sd?);
    let (na, nb) = (a.n as f64, b.n as f64);
    let diff = a.mean - b.mean;
    let relative = (b.mean != 0.0).then(|| diff / b.mean);
    let (va, vb) = (sa * sa / na, sb * sb / nb);
    let se = (va + vb).sqrt();
    if se == 0.0 {
        // Both sides constant: the difference is exact.
        return Some(Difference {
            diff,
            relative,
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
        relative,
        df,
        ci: (diff - half, diff + half),
        p,
        significant: diff - half > 0.0 || diff + half < 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        // a = 10, 12, 14: mean 12, var 4; b = 4, 5, 6: mean 5, var 1.
        // va = 4/3, vb = 1/3, se = √(5/3), df = (5/3)² / ((4/3)²/2 + (1/3)²/2)
        // = (25/9) / (17/18) = 50/17.
        let a = Summary::of(&[10.0, 12.0, 14.0]).unwrap();
        let b = Summary::of(&[4.0, 5.0, 6.0]).unwrap();
        let d = difference(&a, &b).unwrap();
        assert_eq!(d.diff, 7.0);
        assert!((d.df - 50.0 / 17.0).abs() < 1e-12);
        let half = student::quantile(0.975, 50.0 / 17.0) * (5.0f64 / 3.0).sqrt();
        assert!((d.ci.0 - (7.0 - half)).abs() < 1e-9);
        assert!((d.ci.1 - (7.0 + half)).abs() < 1e-9);
        assert!(d.significant && d.p < 0.05, "{d:?}");
        assert_eq!(d.relative, Some(1.4));
    }

    #[test]
    fn overlapping_noise_is_not_significant() {
        let a = Summary::of(&[10.0, 14.0, 12.0]).unwrap();
        let b = Summary::of(&[11.0, 13.0, 12.5]).unwrap();
        let d = difference(&a, &b).unwrap();
        assert!(!d.significant && d.p > 0.05, "{d:?}");
        assert!(d.ci.0 < 0.0 && d.ci.1 > 0.0);
    }

    #[test]
    fn needs_two_values_a_side() {
        let a = Summary::of(&[1.0]).unwrap();
        let b = Summary::of(&[1.0, 2.0]).unwrap();
        assert!(difference(&a, &b).is_none());
    }
}
