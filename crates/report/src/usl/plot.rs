//! A fit drawn in the report's style ([`crate::chart`]): the measured
//! points, the fitted law, the linear ideal λN, the peak, and where a
//! superlinear law falls back below the ideal, against N on a linear
//! axis. The curve runs past the last point to the peak when
//! the peak lies within [`REACH`] times the most N measured; the ideal
//! stops where it leaves the plot (above the data, which it would
//! otherwise flatten).

use super::Fit;
use crate::chart::{Figure, Marker, Panel, Pt, Series, XScale};

/// How far past the most N measured the curve goes to show its peak.
pub const REACH: f64 = 4.0;
/// Samples of the drawn curve.
const STEPS: usize = 200;
/// The ideal line stops this far above the highest point or curve.
const HEADROOM: f64 = 1.25;

/// The figure of `fit` over `points`, titled `title`.
pub fn figure(points: &[(f64, f64)], fit: &Fit, title: &str) -> Figure {
    let lo = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let most = points.iter().map(|p| p.0).fold(0.0, f64::max);
    // A poor fit marks no peak and no payback: nothing is concluded.
    let peak = fit
        .peak()
        .filter(|(n, _)| *n <= REACH * most && !fit.poor());
    let hi = peak.map_or(most, |(n, _)| n.max(most));
    let measured = points.iter().map(|&(n, x)| bare(n, x));
    let mut all = vec![series("measured", measured, 0, Marker::Circle, false)];
    all.extend(lines(points, fit, (lo, hi)));
    if !fit.poor() {
        all.extend(marks(fit, hi, peak));
    }
    Figure {
        id: "usl-fit".into(),
        title: title.into(),
        x_title: "N".into(),
        x: XScale::Linear { integer: false },
        panels: vec![Panel {
            y_title: "X (throughput)".into(),
            series: all,
            log_y: false,
        }],
    }
}

/// The fitted curve from `lo` to `hi`, and the linear ideal up to where
/// it leaves the plot.
fn lines(points: &[(f64, f64)], fit: &Fit, (lo, hi): (f64, f64)) -> [Series; 2] {
    let law = fit.law;
    let curve: Vec<Pt> = samples(lo, hi)
        .map(|n| bare(n, law.throughput(n)))
        .collect();
    let top = points
        .iter()
        .map(|p| p.1)
        .chain(curve.iter().map(|p| p.y))
        .fold(0.0, f64::max)
        * HEADROOM;
    let ideal_end = (top / law.lambda).min(hi).max(lo);
    let ideal = samples(lo, ideal_end).map(|n| bare(n, law.lambda * n));
    let poor = if fit.poor() {
        format!(" — a poor fit, R² = {:.3}", fit.r2)
    } else {
        String::new()
    };
    let name = format!("USL fit ({}): {}{poor}", fit.method, parameters(fit));
    let mut linear = series("linear ideal λN", ideal, 7, Marker::None, true);
    linear.dashed = true;
    [series(&name, curve, 0, Marker::None, true), linear]
}

/// The payback point of a superlinear law (up to `hi`) and the peak.
fn marks(fit: &Fit, hi: f64, peak: Option<(f64, f64)>) -> Vec<Series> {
    let law = fit.law;
    let mut out = Vec::new();
    if let Some(n) = law.payback().filter(|n| *n <= hi) {
        let name = format!(
            "back below the ideal past N = −σ/κ = {}",
            super::significant(n, 4)
        );
        let at = [bare(n, law.throughput(n))];
        out.push(series(&name, at, 2, Marker::Square, false));
    }
    if let Some((n, x)) = peak {
        let name = format!(
            "peak N* = {}, X(N*) = {}",
            super::significant(n, 4),
            super::significant(x, 4)
        );
        out.push(series(&name, [bare(n, x)], 3, Marker::Diamond, false));
    }
    out
}

/// λ, σ, κ as the legend says them.
fn parameters(fit: &Fit) -> String {
    let l = fit.law;
    format!(
        "λ = {}, σ = {}, κ = {}",
        super::significant(l.lambda, 4),
        super::significant(l.sigma, 3),
        super::significant(l.kappa, 3)
    )
}

/// `STEPS + 1` values from `lo` to `hi`, evenly.
fn samples(lo: f64, hi: f64) -> impl Iterator<Item = f64> {
    (0..=STEPS).map(move |i| lo + (hi - lo) * i as f64 / STEPS as f64)
}

fn bare(x: f64, y: f64) -> Pt {
    Pt {
        x,
        y,
        ci: None,
        n: 1,
        uncertified: false,
    }
}

fn series(
    name: &str,
    points: impl IntoIterator<Item = Pt>,
    color: usize,
    marker: Marker,
    lines: bool,
) -> Series {
    Series {
        name: name.into(),
        points: points.into_iter().collect(),
        lines,
        dashed: false,
        marker,
        color,
        labels: vec![],
    }
}
