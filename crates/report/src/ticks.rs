//! Axis ticks: round steps from zero, and a coordinate with exactly those
//! ticks (plotters' own picks its own, and drops custom label formatters
//! when wrapped).

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use std::ops::Range;

/// Tick values from 0 to a round number at or above `max`: 1, 2 or 5 × 10ⁿ
/// steps, about five of them.
pub fn nice_ticks(max: f64) -> Vec<f64> {
    if !(max.is_finite() && max > 0.0) {
        return vec![0.0, 1.0];
    }
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let n = (max / step).ceil() as usize;
    (0..=n.max(1)).map(|i| i as f64 * step).collect()
}

/// A linear f64 axis from `lo` to `hi` whose grid lines and labels sit at
/// `ticks` only.
pub struct Ticked {
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = if self.hi > self.lo {
            self.hi - self.lo
        } else {
            1.0
        };
        let frac = (value - self.lo) / span;
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

#[cfg(test)]
mod tests {
    use super::{nice_range_ticks, nice_ticks};

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
}
