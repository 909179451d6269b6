//! Durations as every flag and experiment file spells them: a number and
//! a unit (`ns`, `us` or `µs`, `ms`, `s`, `m`, `h`), or plain seconds.

use std::time::Duration;

/// The longest duration accepted anywhere: a year.
pub const MAX: Duration = Duration::from_secs(366 * 86_400);

const UNITS: [(&str, f64); 7] = [
    ("ns", 1e-9),
    ("us", 1e-6),
    ("µs", 1e-6),
    ("ms", 1e-3),
    ("s", 1.0),
    ("m", 60.0),
    ("h", 3600.0),
];

/// A positive duration: `10s`, `500ms`, `250us`, `2m`, `1h`, `1.5`.
pub fn parse(text: &str) -> Result<Duration, String> {
    let d = parse_with_zero(text)?;
    if d.is_zero() {
        return Err(format!("'{text}' must be a positive duration"));
    }
    Ok(d)
}

/// As [`parse`], but `0` (in any unit) is allowed.
pub fn parse_with_zero(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "" => 1.0,
        u => UNITS
            .iter()
            .find(|(name, _)| *name == u)
            .map(|(_, s)| *s)
            .ok_or_else(|| not_a_duration(text))?,
    };
    let value: f64 = num.trim().parse().map_err(|_| not_a_duration(text))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!("'{text}' must be a positive duration"));
    }
    let secs = value * scale;
    if secs > MAX.as_secs_f64() {
        return Err(format!("'{text}' is longer than a year"));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn not_a_duration(text: &str) -> String {
    format!("'{text}' is not a duration (examples: 10s, 500ms, 250us, 2m, 1h)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit() {
        assert_eq!(parse("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse("250µs"), Ok(Duration::from_micros(250)));
        assert_eq!(parse("300ns"), Ok(Duration::from_nanos(300)));
        assert_eq!(parse("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse(" 3 s "), Ok(Duration::from_secs(3)));
    }

    #[test]
    fn refused() {
        for bad in [
            "", "0", "0ms", "-1s", "soon", "1d", "10 sec", "9999h", "inf", "NaN",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_with_zero("0s"), Ok(Duration::ZERO));
        assert!(parse_with_zero("-0.5s").is_err());
    }
}
