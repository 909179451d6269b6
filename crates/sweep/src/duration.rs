//! Durations in experiment files: `90s`, `500ms`, `2m`, or plain seconds.

use std::time::Duration;

/// Parse `text`, or say what was expected.
pub fn parse(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (t, 1.0)
    };
    let value: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a duration (examples: 90s, 500ms, 2m)"))?;
    if !value.is_finite() || value <= 0.0 || value * scale > 7.0 * 86_400.0 {
        return Err(format!("'{text}' must be a positive duration under a week"));
    }
    Ok(Duration::from_secs_f64(value * scale))
}

#[cfg(test)]
mod tests {
    use super::parse;
    use std::time::Duration;

    #[test]
    fn units() {
        assert_eq!(parse("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse("1.5"), Ok(Duration::from_millis(1500)));
        for bad in ["", "0", "-1s", "soon", "9999h"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
