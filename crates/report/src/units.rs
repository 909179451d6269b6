//! Units on axes and in tables: a time unit chosen from the values shown
//! (µs, ms or s), so a label never says seconds for milliseconds.

use crate::stats::Summary;

/// A unit for durations measured in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Micros,
    Millis,
    Seconds,
}

impl TimeUnit {
    /// The largest unit in which `max_us` is still at least 1, so numbers
    /// stay readable: under 1 ms → µs, under 1 s → ms, else s.
    pub fn for_max(max_us: f64) -> TimeUnit {
        if max_us >= 1e6 {
            TimeUnit::Seconds
        } else if max_us >= 1e3 {
            TimeUnit::Millis
        } else {
            TimeUnit::Micros
        }
    }

    /// The unit for summaries in µs, from their largest mean (tables and
    /// plots of the same numbers use the same rule, so they agree).
    pub fn for_means<'a>(summaries: impl IntoIterator<Item = &'a Summary>) -> TimeUnit {
        TimeUnit::for_max(summaries.into_iter().map(|s| s.mean).fold(0.0, f64::max))
    }

    /// Multiply a value in µs by this to get it in this unit.
    pub fn per_us(self) -> f64 {
        match self {
            TimeUnit::Micros => 1.0,
            TimeUnit::Millis => 1e-3,
            TimeUnit::Seconds => 1e-6,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Micros => "µs",
            TimeUnit::Millis => "ms",
            TimeUnit::Seconds => "s",
        }
    }
}

/// A number for a table or a tick label: whole numbers as such, and from
/// 100 up; else three significant digits.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let a = v.abs();
    if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        let digits = (2 - a.log10().floor() as i32).clamp(0, 12) as usize;
        format!("{v:.digits$}")
    }
}

/// A tick label: the shortest plain decimal (0.5, 2, 12.5, 150000).
pub fn tick(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_follows_magnitude() {
        assert_eq!(TimeUnit::for_max(850.0), TimeUnit::Micros);
        assert_eq!(TimeUnit::for_max(1000.0), TimeUnit::Millis);
        assert_eq!(TimeUnit::for_max(2_500_000.0), TimeUnit::Seconds);
        assert_eq!(TimeUnit::Millis.per_us() * 2500.0, 2.5);
        assert_eq!(TimeUnit::Seconds.symbol(), "s");
    }

    #[test]
    fn ticks() {
        assert_eq!(tick(0.5), "0.5");
        assert_eq!(tick(150000.0), "150000");
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(0.6000000000000001), "0.6");
        assert_eq!(tick(0.0002), "0.0002");
    }

    #[test]
    fn numbers() {
        assert_eq!(num(25467.4), "25467");
        assert_eq!(num(123.6), "124");
        assert_eq!(num(12.34), "12.3");
        assert_eq!(num(1.234), "1.23");
        assert_eq!(num(0.01234), "0.0123");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(2.0), "2");
        assert_eq!(num(2.5), "2.50");
        assert_eq!(num(f64::NAN), "–");
    }
}
