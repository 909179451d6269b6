//! Flag value parsers shared by the subcommands: each names what it
//! expected, so clap's error names the flag and exits 2.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use serverlab_server::StrategyKind;
use serverlab_store::StoreKind;
use serverlab_util::Named;
use std::time::Duration;

/// Any value of `T`, by name; `--help` lists each with its description.
pub fn named<T: Named + Send + Sync>() -> impl TypedValueParser<Value = T> {
    named_from(T::ALL)
}

/// One of `values`, by name; `--help` lists each with its description.
pub fn named_from<T: Named + Send + Sync>(
    values: &'static [T],
) -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(values.iter().map(|v| {
        let value = PossibleValue::new(v.name());
        match v.describe() {
            "" => value,
            help => value.help(help),
        }
    }))
    .map(|s| serverlab_util::named::parse::<T>(&s).expect("a listed value"))
}

/// The strategies and stores, a line each, for `serve --help`.
pub fn serve_after_help() -> String {
    let mut s = String::from("Strategies (--strategy):\n");
    for &k in StrategyKind::ALL {
        s += &format!("  {:<22} {}\n", k.name(), k.describe());
    }
    s += "\nStores (--store):\n";
    for &k in StoreKind::ALL {
        s += &format!("  {:<22} {}\n", k.name(), k.describe());
    }
    s
}

/// A positive duration in the one grammar every flag uses (`10s`,
/// `500ms`, `250us`, `2m`, `1h`, or plain seconds).
pub fn duration(text: &str) -> Result<Duration, String> {
    serverlab_util::duration::parse(text)
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
}
