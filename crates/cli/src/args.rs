//! Flag value parsers shared by the subcommands: each names what it
//! expected, so clap's error names the flag and exits 2.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use serverlab_proto::bucket::{DelayMode, DelayUnit};
use serverlab_server::StrategyKind;
use serverlab_store::StoreKind;
use std::time::Duration;

pub fn strategy() -> impl TypedValueParser<Value = StrategyKind> {
    PossibleValuesParser::new(
        StrategyKind::ALL.map(|k| PossibleValue::new(k.name()).help(k.describe())),
    )
    .map(|s| s.parse::<StrategyKind>().expect("a listed strategy"))
}

pub fn store(kinds: &'static [StoreKind]) -> impl TypedValueParser<Value = StoreKind> {
    PossibleValuesParser::new(
        kinds
            .iter()
            .map(|k| PossibleValue::new(k.name()).help(k.describe())),
    )
    .map(|s| s.parse::<StoreKind>().expect("a listed store"))
}

/// `--delay-unit`: s, ms or us.
pub fn delay_unit() -> impl TypedValueParser<Value = DelayUnit> {
    PossibleValuesParser::new(DelayUnit::ALL.map(|u| PossibleValue::new(u.name())))
        .map(|s| s.parse::<DelayUnit>().expect("a listed unit"))
}

/// `--delay-mode`: spin, sleep or work.
pub fn delay_mode() -> impl TypedValueParser<Value = DelayMode> {
    PossibleValuesParser::new(
        DelayMode::ALL.map(|m| PossibleValue::new(m.name()).help(m.describe())),
    )
    .map(|s| s.parse::<DelayMode>().expect("a listed mode"))
}

/// The strategies and stores, a line each, for `serve --help`.
pub fn serve_after_help() -> String {
    let mut s = String::from("Strategies (--strategy):\n");
    for k in StrategyKind::ALL {
        s += &format!("  {:<22} {}\n", k.name(), k.describe());
    }
    s += "\nStores (--store):\n";
    for k in StoreKind::ALL {
        s += &format!("  {:<22} {}\n", k.name(), k.describe());
    }
    s
}

/// A duration: `10s`, `500ms`, `2m`, or plain seconds (`1.5`).
pub fn duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        (t, 1.0)
    };
    let value: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a duration (examples: 10s, 500ms, 2m)"))?;
    if !value.is_finite() || value <= 0.0 || value * scale > 86_400.0 * 365.0 {
        return Err(format!("'{text}' must be a positive duration"));
    }
    Ok(Duration::from_secs_f64(value * scale))
}

/// A size parser accepting `min..=max` bytes, written as a plain number or
/// with a binary suffix: `1048576`, `1MiB`, `64KiB`, `16K`, `1G`.
pub fn size(min: u64, max: u64) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync {
    move |text: &str| {
        let t = text.trim();
        let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, suffix) = t.split_at(digits);
        let scale: u64 = match suffix.trim() {
            "" | "B" => 1,
            "K" | "KiB" => 1 << 10,
            "M" | "MiB" => 1 << 20,
            "G" | "GiB" => 1 << 30,
            _ => {
                return Err(format!(
                    "'{text}' is not a size (examples: 1000, 64KiB, 1MiB)"
                ))
            }
        };
        let value = num
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(scale))
            .ok_or_else(|| format!("'{text}' is not a size (examples: 1000, 64KiB, 1MiB)"))?;
        if value < min || value > max {
            return Err(format!("'{text}' must be from {min} to {max} bytes"));
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let p = size(1, 1 << 30);
        assert_eq!(p("1MiB"), Ok(1 << 20));
        assert_eq!(p("64KiB"), Ok(64 << 10));
        assert_eq!(p("16K"), Ok(16 << 10));
        assert_eq!(p("1000"), Ok(1000));
        assert_eq!(p("7B"), Ok(7));
        assert_eq!(p("1G"), Ok(1 << 30));
        assert!(p("2G").is_err());
        assert!(p("0").is_err());
        assert!(p("1.5M").is_err());
        assert!(p("MiB").is_err());
        assert!(p("-1").is_err());
        assert!(p("99999999999999999999").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(duration("1.5"), Ok(Duration::from_millis(1500)));
        assert!(duration("0").is_err());
        assert!(duration("-1s").is_err());
        assert!(duration("soon").is_err());
    }
}
