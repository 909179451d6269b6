//! A latency target, as a capacity search takes it: a statistic of the
//! latency (from the intended send time), at most so long —
//! `p99<=2ms`, `p99.9<=500us`, `mean<=1ms` — or under it, `p99<1ms`.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// A statistic of a latency distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Stat {
    Mean,
    /// The quantile, 0.5 for p50.
    Percentile(Quantile),
}

/// The percentiles a target may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantile {
    P50,
    P90,
    P99,
    P99_9,
    P99_99,
}

const QUANTILES: [(Quantile, &str, f64); 5] = [
    (Quantile::P50, "p50", 0.5),
    (Quantile::P90, "p90", 0.9),
    (Quantile::P99, "p99", 0.99),
    (Quantile::P99_9, "p99.9", 0.999),
    (Quantile::P99_99, "p99.99", 0.9999),
];

impl Stat {
    pub fn name(self) -> &'static str {
        match self {
            Stat::Mean => "mean",
            Stat::Percentile(q) => QUANTILES.iter().find(|e| e.0 == q).map_or("?", |e| e.1),
        }
    }

    /// The quantile a percentile stands for (0.99 for p99); None: the mean.
    pub fn quantile(self) -> Option<f64> {
        match self {
            Stat::Mean => None,
            Stat::Percentile(q) => QUANTILES.iter().find(|e| e.0 == q).map(|e| e.2),
        }
    }

    /// This statistic of `h` (nanoseconds), in microseconds; None when
    /// `h` is empty.
    pub fn of(self, h: &Histogram<u64>) -> Option<f64> {
        if h.is_empty() {
            return None;
        }
        let ns = match self.quantile() {
            None => h.mean(),
            Some(q) => h.value_at_quantile(q) as f64,
        };
        Some(ns / 1000.0)
    }
}

impl FromStr for Stat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s == "mean" {
            return Ok(Stat::Mean);
        }
        QUANTILES
            .iter()
            .find(|e| e.1 == s)
            .map(|e| Stat::Percentile(e.0))
            .ok_or_else(|| {
                format!("unknown percentile '{s}' (one of p50, p90, p99, p99.9, p99.99, or mean)")
            })
    }
}

impl From<Stat> for String {
    fn from(s: Stat) -> String {
        s.name().into()
    }
}

impl TryFrom<String> for Stat {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

/// What a rate must meet to pass: `stat` of the latency at most `limit`
/// (`<=`), or under it (`<`, `strict`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    pub stat: Stat,
    pub limit: Duration,
    pub strict: bool,
}

impl Target {
    pub fn limit_us(&self) -> f64 {
        self.limit.as_secs_f64() * 1e6
    }

    /// Whether a statistic of `us` microseconds meets the target.
    pub fn met_by(&self, us: f64) -> bool {
        let limit = self.limit_us();
        if self.strict {
            us < limit
        } else {
            us <= limit
        }
    }
}

impl FromStr for Target {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let (stat, limit, strict) = match t.split_once("<=") {
            Some((stat, limit)) => (stat, limit, false),
            None => t
                .split_once('<')
                .map(|(s, l)| (s, l, true))
                .ok_or_else(|| {
                    format!(
                        "'{text}' is not a latency target (examples: p99<=2ms, p99.9<=500us, \
                     mean<1ms)"
                    )
                })?,
        };
        let stat: Stat = stat.parse()?;
        if !limit.ends_with('s') {
            return Err(format!(
                "'{limit}' in '{text}' needs a unit: µs, us, ms or s"
            ));
        }
        let limit = serverlab_util::duration::parse(limit)?;
        Ok(Target {
            stat,
            limit,
            strict,
        })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = if self.strict { "<" } else { "<=" };
        write!(f, "{}{op}{}", self.stat.name(), duration_text(self.limit))
    }
}

/// A duration in the largest unit that keeps it readable: `2ms`,
/// `500us`, `1.5s`.
pub fn duration_text(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    let trim = |x: f64| {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    if us >= 1e6 {
        format!("{}s", trim(us / 1e6))
    } else if us >= 1e3 {
        format!("{}ms", trim(us / 1e3))
    } else {
        format!("{}us", trim(us))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_print() {
        let t: Target = "p99<=2ms".parse().unwrap();
        assert_eq!(t.stat, Stat::Percentile(Quantile::P99));
        assert_eq!(t.limit, Duration::from_millis(2));
        assert_eq!(t.to_string(), "p99<=2ms");
        let t: Target = " p99.9 <= 500µs".parse().unwrap();
        assert_eq!((t.stat.name(), t.limit_us()), ("p99.9", 500.0));
        let t: Target = "mean<1.5s".parse().unwrap();
        assert_eq!(t.to_string(), "mean<1.5s");
        assert_eq!(
            "p99.99<=250us".parse::<Target>().unwrap().stat.name(),
            "p99.99"
        );
    }

    /// `<` is strictly less: a statistic at the limit fails it, and
    /// meets `<=`.
    #[test]
    fn less_than_is_strict() {
        let under: Target = "p99<1ms".parse().unwrap();
        let at_most: Target = "p99<=1ms".parse().unwrap();
        assert!(under.strict && !at_most.strict);
        assert!(!under.met_by(1000.0) && at_most.met_by(1000.0));
        assert!(under.met_by(999.9) && !at_most.met_by(1000.1));
    }

    #[test]
    fn bad_targets_say_why() {
        let why = |s: &str| s.parse::<Target>().unwrap_err();
        assert!(why("p95<=2ms").contains("unknown percentile 'p95'"));
        assert!(why("p99<=2").contains("needs a unit"));
        assert!(why("p99=2ms").contains("not a latency target"));
        assert!(why("p99<=soons").contains("not a duration"));
        assert!(why("p99<=0ms").contains("positive"));
    }

    #[test]
    fn statistics_of_a_histogram() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for us in 1..=1000u64 {
            h.record(us * 1000).unwrap();
        }
        let p99 = Stat::Percentile(Quantile::P99).of(&h).unwrap();
        assert!((p99 - 990.0).abs() < 1.0, "{p99}");
        let mean = Stat::Mean.of(&h).unwrap();
        assert!((mean - 500.5).abs() < 1.0, "{mean}");
        assert_eq!(Stat::Mean.of(&Histogram::new(3).unwrap()), None);
    }
}
