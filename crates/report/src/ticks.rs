//! Axis ticks: round steps from zero, whole-number and log₂ x axes padded
//! by half a step, and a coordinate with exactly those ticks (plotters' own
//! picks its own, and drops custom label formatters when wrapped).

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use std::ops::Range;

/// Tick values from 0 to a round number at or above `max`: 1, 2 or 5 × 10ⁿ
/// steps, about five of them.
pub fn nice_ticks(max: f64) -> Vec<f64> {
    if !(max.is_finite() && max > 0.0) {
        return vec![0.0, 1.0];
    }
    let step = nice_step(max / 5.0);
    let n = (max / step).ceil() as usize;
    (0..=n.max(1)).map(|i| i as f64 * step).collect()
}

/// The smallest 1, 2 or 5 × 10ⁿ at or above `raw`.
fn nice_step(raw: f64) -> f64 {
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

/// A linear (or log₂) f64 axis from `lo` to `hi` whose grid lines and
/// labels sit at `ticks` only.
#[derive(Debug, Clone)]
pub struct Ticked {
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<f64>,
    /// Positions by log₂ of the value (values must be positive).
    pub log: bool,
}

impl Ticked {
    fn pos(&self, v: f64) -> f64 {
        if self.log {
            v.max(f64::MIN_POSITIVE).log2()
        } else {
            v
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let (lo, hi) = (self.pos(self.lo), self.pos(self.hi));
        let span = if hi > lo { hi - lo } else { 1.0 };
        let frac = (self.pos(*value) - lo) / span;
        limit.0 + (frac * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Bold points carry the labels; no light grid in between.
        if hint.weight().allow_light_points() {
            vec![]
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

/// Ticks for values in `min..=max`: from 0, unless the values sit far from
/// it (min above half of max), then from a round step below `min`.
pub fn nice_range_ticks(min: f64, max: f64) -> Vec<f64> {
    let from_zero = nice_ticks(max);
    if !(min.is_finite() && min > 0.5 * max) {
        return from_zero;
    }
    let ticks = nice_ticks(max - min);
    let step = ticks.get(1).copied().unwrap_or(1.0);
    let start = (min / step).floor() * step;
    let n = ((max - start) / step).ceil() as usize;
    (0..=n.max(1)).map(|i| start + i as f64 * step).collect()
}

/// Up to this many whole numbers get a tick each.
const MAX_INTEGER_TICKS: f64 = 12.0;

/// A linear x axis over `xs`, padded by half a tick step on each side so
/// no point sits on the frame. `integer`: ticks at whole numbers only
/// (every one, when there are few).
pub fn x_ticks(xs: &[f64], integer: bool) -> Ticked {
    let (min, max) = min_max(xs).unwrap_or((0.0, 1.0));
    // Wider whole-number ranges get round steps of 5 or more: whole too.
    let ticks: Vec<f64> = if integer && max - min <= MAX_INTEGER_TICKS {
        (min.floor() as i64..=max.ceil() as i64)
            .map(|i| i as f64)
            .collect()
    } else {
        nice_range_ticks(min, max)
    };
    let step = match ticks.as_slice() {
        [a, b, ..] => b - a,
        _ => 1.0,
    };
    let first = ticks.first().copied().unwrap_or(min);
    let last = ticks.last().copied().unwrap_or(max);
    // An axis from 0 with every point above it has room enough already:
    // no stretch of negative values.
    let lo = if first == 0.0 && min > 0.0 {
        0.0
    } else {
        first.min(min - step / 2.0)
    };
    Ticked {
        lo,
        hi: last.max(max + step / 2.0),
        ticks,
        log: false,
    }
}

/// A log₂ x axis ticked at the values in `xs` (all positive), padded by
/// half the smallest doubling on each side.
pub fn log_ticks(xs: &[f64]) -> Ticked {
    let mut ticks: Vec<f64> = xs.iter().copied().filter(|x| *x > 0.0).collect();
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    let (min, max) = min_max(&ticks).unwrap_or((1.0, 2.0));
    let ratio = ticks
        .windows(2)
        .map(|w| w[1] / w[0])
        .fold(f64::INFINITY, f64::min);
    let half = if ratio.is_finite() {
        ratio.sqrt()
    } else {
        2f64.sqrt()
    };
    Ticked {
        lo: min / half,
        hi: max * half,
        ticks,
        log: true,
    }
}

/// A logarithmic y axis over positive `values`: ticks at 1, 2 and 5 × 10ⁿ
/// (only 1 × 10ⁿ past three decades), from the tick at or below the
/// smallest value to the one at or above the largest. None without a
/// positive value.
pub fn log_y_ticks(values: &[f64]) -> Option<Ticked> {
    let (min, max) = min_max(
        &values
            .iter()
            .copied()
            .filter(|v| *v > 0.0)
            .collect::<Vec<_>>(),
    )?;
    let (first, last) = (min.log10().floor() as i32, max.log10().ceil() as i32);
    let steps: &[f64] = if last - first > 3 {
        &[1.0]
    } else {
        &[1.0, 2.0, 5.0]
    };
    let all: Vec<f64> = (first..=last)
        .flat_map(|d| steps.iter().map(move |m| m * 10f64.powi(d)))
        .collect();
    // Float-safe comparisons: 3 × 0.1 is not quite 0.3.
    let lo = all
        .iter()
        .copied()
        .rev()
        .find(|t| *t <= min * (1.0 + 1e-9))?;
    let hi = all.iter().copied().find(|t| *t >= max * (1.0 - 1e-9))?;
    let hi = if hi > lo { hi } else { lo * 2.0 };
    Some(Ticked {
        lo,
        hi,
        ticks: all.into_iter().filter(|t| *t >= lo && *t <= hi).collect(),
        log: true,
    })
}

/// Whether positive values look like a doubling series (1, 2, 4, 8 or 32,
/// 2048): each at least 1.9 times the one before, and the range at least
/// 4-fold. Such an axis reads best on a log scale.
pub fn is_geometric(values: &[f64]) -> bool {
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v.len() >= 2
        && v[0] > 0.0
        && v.windows(2).all(|w| w[1] / w[0] >= 1.9)
        && v[v.len() - 1] / v[0] >= 4.0
}

fn min_max(xs: &[f64]) -> Option<(f64, f64)> {
    let finite = xs.iter().copied().filter(|x| x.is_finite());
    let min = finite.clone().fold(f64::INFINITY, f64::min);
    let max = finite.fold(f64::NEG_INFINITY, f64::max);
    (min <= max).then_some((min, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_cover_the_maximum_in_round_steps() {
        assert_eq!(nice_ticks(23.0), [0.0, 5.0, 10.0, 15.0, 20.0, 25.0]);
        let t = nice_ticks(1.0);
        assert_eq!(t.len(), 6);
        assert!((t[5] - 1.0).abs() < 1e-12);
        assert_eq!(nice_ticks(26_000.0).last(), Some(&30_000.0));
        assert_eq!(nice_ticks(0.0), [0.0, 1.0]);
        assert_eq!(nice_ticks(5.0), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    }

    #[test]
    fn ranges_far_from_zero_start_near_their_minimum() {
        assert_eq!(nice_range_ticks(2.0, 9.0).first(), Some(&0.0));
        let t = nice_range_ticks(21_000.0, 29_000.0);
        assert_eq!((t[0], *t.last().unwrap()), (20_000.0, 30_000.0));
        assert!(t.len() <= 8, "{t:?}");
    }

    #[test]
    fn whole_number_axes_tick_whole_numbers_with_half_a_step_to_spare() {
        let t = x_ticks(&[2.0, 3.0], true);
        assert_eq!(t.ticks, [2.0, 3.0]);
        assert_eq!((t.lo, t.hi), (1.5, 3.5));
        let t = x_ticks(&[2.0, 10.0, 6.0], true);
        assert_eq!(t.ticks, (2..=10).map(f64::from).collect::<Vec<_>>());
        let t = x_ticks(&[1.0, 100.0], true);
        assert!(t.ticks.iter().all(|v| v.fract() == 0.0), "{:?}", t.ticks);
        assert!(t.lo < 1.0 && t.hi > 100.0, "{t:?}");
    }

    #[test]
    fn continuous_axes_keep_their_points_off_the_frame() {
        let t = x_ticks(&[200.0, 2300.0], false);
        assert_eq!(t.lo, 0.0);
        assert!(t.hi > 2300.0, "{t:?}");
        let t = x_ticks(&[21_000.0, 30_000.0], false);
        assert!(t.lo < 21_000.0 && t.hi > 30_000.0, "{t:?}");
    }

    #[test]
    fn log_y_axes_tick_one_two_five() {
        let t = log_y_ticks(&[45.0, 130.0, 2400.0]).unwrap();
        assert_eq!(
            t.ticks,
            [20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0]
        );
        assert_eq!((t.lo, t.hi), (20.0, 5000.0));
        let at = |v: f64| t.map(&v, (0, 1000));
        assert!(((at(100.0) - at(20.0)) - (at(500.0) - at(100.0))).abs() <= 1);
        let wide = log_y_ticks(&[3.0, 250_000.0]).unwrap();
        assert_eq!(
            wide.ticks,
            [1.0, 10.0, 100.0, 1000.0, 10_000.0, 100_000.0, 1_000_000.0]
        );
        let one = log_y_ticks(&[100.0]).unwrap();
        assert!(one.hi > one.lo);
        assert!(log_y_ticks(&[0.0, -1.0]).is_none());
    }

    #[test]
    fn doubling_values_go_on_a_log_axis() {
        assert!(is_geometric(&[1.0, 2.0, 4.0, 8.0]));
        assert!(is_geometric(&[32.0, 2048.0]));
        assert!(!is_geometric(&[1.0, 2.0, 3.0, 4.0, 5.0]));
        assert!(!is_geometric(&[1.0, 2.0]));
        let t = log_ticks(&[1.0, 2.0, 4.0, 8.0, 2.0]);
        assert_eq!(t.ticks, [1.0, 2.0, 4.0, 8.0]);
        assert!((t.lo - 1.0 / 2f64.sqrt()).abs() < 1e-12 && t.log);
        // Evenly spaced on screen.
        let at = |v: f64| t.map(&v, (0, 1000));
        assert_eq!(at(2.0) - at(1.0), at(8.0) - at(4.0));
    }
}
