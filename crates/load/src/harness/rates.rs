//! Request rates as flags and experiment files write them: a number of
//! requests per second with an optional `k` (thousand) or `M` (million),
//! `20k`, `1.5M`, `750`; and a scan's range of them, `1k:20k:1k`.

use std::fmt;
use std::str::FromStr;

/// The highest rate accepted: far beyond what one client can send, low
/// enough that every gap is a whole number of nanoseconds or more.
pub const MAX_RATE: f64 = 1e9;

/// A positive rate, in requests per second.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, scale) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1e3),
        Some((i, 'M')) => (&t[..i], 1e6),
        _ => (t, 1.0),
    };
    let value = num
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(|v| v * scale)
        .ok_or_else(|| format!("'{text}' is not a rate (examples: 500, 20k, 1.5M requests/s)"))?;
    if value <= 0.0 {
        return Err(format!("'{text}' must be a positive rate"));
    }
    if value > MAX_RATE {
        return Err(format!("'{text}' is above {MAX_RATE:e} requests/s"));
    }
    Ok(value)
}

/// A rate as written back: `20k`, `1.5M`, `750`.
pub fn rate_text(rps: f64) -> String {
    let trim = |x: f64| {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    if rps >= 1e6 && (rps / 1e6 * 1000.0).fract() == 0.0 {
        format!("{}M", trim(rps / 1e6))
    } else if rps >= 1e3 && (rps / 1e3 * 1000.0).fract() == 0.0 {
        format!("{}k", trim(rps / 1e3))
    } else {
        trim(rps)
    }
}

/// The rates of a scan: `min` to `max` (both included) in steps of `step`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateRange {
    pub min: f64,
    pub max: f64,
    pub step: f64,
}

/// A scan runs at most this many rates.
pub const MAX_SCAN_STEPS: usize = 1000;

impl RateRange {
    /// Every rate of the scan, in order.
    pub fn rates(&self) -> Vec<f64> {
        let n = ((self.max - self.min) / self.step + 1e-9).floor() as usize;
        (0..=n).map(|i| self.min + i as f64 * self.step).collect()
    }
}

impl FromStr for RateRange {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text.split(':').collect();
        let [min, max, step] = parts[..] else {
            return Err(format!(
                "'{text}' is not MIN:MAX:STEP (example: 1k:20k:1k, requests/s)"
            ));
        };
        let (min, max, step) = (parse_rate(min)?, parse_rate(max)?, parse_rate(step)?);
        if max < min {
            return Err(format!("'{text}': MAX is below MIN"));
        }
        let range = RateRange { min, max, step };
        if (max - min) / step >= MAX_SCAN_STEPS as f64 {
            return Err(format!(
                "'{text}' has more than {MAX_SCAN_STEPS} steps: take a larger STEP"
            ));
        }
        Ok(range)
    }
}

impl fmt::Display for RateRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}",
            rate_text(self.min),
            rate_text(self.max),
            rate_text(self.step)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_with_suffixes() {
        assert_eq!(parse_rate("20k"), Ok(20_000.0));
        assert_eq!(parse_rate("1.5M"), Ok(1_500_000.0));
        assert_eq!(parse_rate(" 750 "), Ok(750.0));
        assert_eq!(parse_rate("0.5"), Ok(0.5));
        assert_eq!(parse_rate("2K"), Ok(2000.0));
        for bad in [
            "0", "-5", "-1k", "fast", "", "k", "1e12", "NaN", "inf", "5m",
        ] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
        assert!(parse_rate("0").unwrap_err().contains("positive"));
    }

    #[test]
    fn rates_written_back() {
        assert_eq!(rate_text(20_000.0), "20k");
        assert_eq!(rate_text(1_500_000.0), "1.5M");
        assert_eq!(rate_text(750.0), "750");
        assert_eq!(rate_text(1234.5678), "1234.568");
    }

    #[test]
    fn scan_ranges() {
        let r: RateRange = "1k:5k:1k".parse().unwrap();
        assert_eq!(r.rates(), [1000.0, 2000.0, 3000.0, 4000.0, 5000.0]);
        assert_eq!(r.to_string(), "1k:5k:1k");
        let r: RateRange = "100:250:100".parse().unwrap();
        assert_eq!(r.rates(), [100.0, 200.0]);
        let r: RateRange = "0.1:0.3:0.1".parse().unwrap();
        assert_eq!(r.rates().len(), 3, "no step lost to rounding");
        for bad in ["1k:5k", "5k:1k:1k", "1k:5k:0", "a:b:c", "1:1M:1"] {
            assert!(bad.parse::<RateRange>().is_err(), "{bad}");
        }
    }
}
