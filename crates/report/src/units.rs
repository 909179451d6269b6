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
/// 100 up; else three significant digits. Thousands are separated
/// (25,467).
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    // Float noise (a geometric mean of equal values) is not a fraction.
    let v = if (v - v.round()).abs() <= 1e-9 * v.abs().max(1.0) {
        v.round()
    } else {
        v
    };
    let a = v.abs();
    let text = if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        let digits = (2 - a.log10().floor() as i32).clamp(0, 12) as usize;
        format!("{v:.digits$}")
    };
    thousands(&text)
}

/// A share as a percentage: `120%`, `12.3%`, `5.3%`, `20%`, `0.45%`.
pub fn percent(share: f64) -> String {
    let p = 100.0 * share;
    let text = if !p.is_finite() || p.abs() < 1.0 || p.abs() >= 100.0 {
        num(p)
    } else {
        let t = format!("{p:.1}");
        t.strip_suffix(".0").map(String::from).unwrap_or(t)
    };
    format!("{text}%")
}

/// A tick label: the shortest plain decimal, thousands separated (0.5, 2,
/// 12.5, 150,000).
pub fn tick(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        thousands(s)
    }
}

/// `-1234567.5` → `-1,234,567.5`: commas between groups of three digits
/// of the whole part.
fn thousands(text: &str) -> String {
    let (sign, rest) = match text.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", text),
    };
    let (whole, frac) = match rest.find('.') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{sign}{grouped}{frac}")
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
        assert_eq!(tick(150000.0), "150,000");
        assert_eq!(tick(1500.5), "1,500.5");
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(0.6000000000000001), "0.6");
        assert_eq!(tick(0.0002), "0.0002");
    }

    #[test]
    fn numbers() {
        assert_eq!(num(25467.4), "25,467");
        assert_eq!(num(-1234567.0), "-1,234,567");
        assert_eq!(num(999.0), "999");
        assert_eq!(percent(0.1234), "12.3%");
        assert_eq!(percent(0.0532), "5.3%");
        assert_eq!(percent(0.2), "20%");
        assert_eq!(percent(0.0045), "0.450%");
        assert_eq!(percent(12.0), "1,200%");
        assert_eq!(num(123.6), "124");
        assert_eq!(num(12.34), "12.3");
        assert_eq!(num(1.234), "1.23");
        assert_eq!(num(0.01234), "0.0123");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(2.0), "2");
        assert_eq!(num(2.5), "2.50");
        assert_eq!(num(0.9999999999999), "1");
        assert_eq!(num(f64::NAN), "–");
    }
}
