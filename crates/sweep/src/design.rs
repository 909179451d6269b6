//! How a sweep repeats its runs: the repetitions every point gets, the
//! order of the runs within a block (round-robin, or shuffled with a
//! recorded seed), and the target that adds repetitions to points whose
//! throughput is not yet known precisely enough.

use serde::{Deserialize, Serialize};

pub const DEFAULT_REPETITIONS: u32 = 3;
pub const MAX_REPETITIONS: u32 = 1000;
/// The most repetitions a point gets under a target when the file does
/// not say (`max_repetitions`).
pub const DEFAULT_MAX_WITH_TARGET: u32 = 10;

/// The order of the runs inside a block (every point once, and the
/// baseline once).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// The points in plan order, the baseline first.
    RoundRobin,
    /// A fresh shuffle per block, from the sweep's seed.
    Random,
}

impl Order {
    pub fn describe(self) -> &'static str {
        match self {
            Order::RoundRobin => "round-robin",
            Order::Random => "randomized blocks",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Design {
    /// Blocks every point runs in (its repetitions, at least).
    pub repetitions: u32,
    pub order: Order,
    /// The shuffle's seed when the file fixes it; otherwise the sweep picks
    /// one and records it, and a resumed sweep reuses the recorded one.
    pub seed: Option<u64>,
    /// Add repetitions to a point until the 95% CI of its throughput is
    /// within this share of its mean (0.05: ±5%).
    pub target_ci: Option<f64>,
    /// The most repetitions a point gets under a target, as written.
    pub max_repetitions: Option<u32>,
}

impl Design {
    /// From the experiment file's top-level keys.
    pub fn parse(
        repetitions: Option<i64>,
        order: Option<&str>,
        seed: Option<i64>,
        target_ci: Option<&toml::Value>,
        max_repetitions: Option<i64>,
    ) -> Result<Design, String> {
        let repetitions = match repetitions {
            None => DEFAULT_REPETITIONS,
            Some(n) => count("repetitions", n)?,
        };
        let order = match order {
            None | Some("random") => Order::Random,
            Some("round-robin") => Order::RoundRobin,
            Some(other) => {
                return Err(format!(
                    "order = \"{other}\": expected \"random\" (shuffled blocks) or \"round-robin\""
                ))
            }
        };
        let seed = match seed {
            None => None,
            Some(s) if s >= 0 => Some(s as u64),
            Some(s) => return Err(format!("seed = {s}: must be 0 or more")),
        };
        let target_ci = match target_ci {
            None => None,
            Some(toml::Value::String(s)) => {
                Some(parse_share(s).map_err(|e| format!("target_ci: {e}"))?)
            }
            Some(toml::Value::Float(f)) => Some(share(*f).map_err(|e| format!("target_ci: {e}"))?),
            Some(other) => {
                return Err(format!(
                    "target_ci = {other}: write a share such as \"5%\" or 0.05"
                ))
            }
        };
        let max_repetitions = max_repetitions
            .map(|n| count("max_repetitions", n))
            .transpose()?;
        let design = Design {
            repetitions,
            order,
            seed,
            target_ci,
            max_repetitions,
        };
        design.check()?;
        Ok(design)
    }

    /// With a target (and a limit) from the command line instead of the file's.
    pub fn with_target(mut self, target: Option<f64>, max: Option<u32>) -> Result<Design, String> {
        if target.is_some() {
            self.target_ci = target;
        }
        if max.is_some() {
            self.max_repetitions = max;
        }
        self.check()?;
        Ok(self)
    }

    fn check(&self) -> Result<(), String> {
        match self.max_repetitions {
            Some(max) if max < self.repetitions => Err(format!(
                "max_repetitions = {max} is below repetitions = {}",
                self.repetitions
            )),
            _ => Ok(()),
        }
    }

    /// The most repetitions any point gets: `repetitions` without a target.
    pub fn max(&self) -> u32 {
        match self.target_ci {
            None => self.repetitions,
            Some(_) => self
                .max_repetitions
                .unwrap_or(DEFAULT_MAX_WITH_TARGET.max(self.repetitions)),
        }
    }
}

fn count(key: &str, n: i64) -> Result<u32, String> {
    if (1..=MAX_REPETITIONS as i64).contains(&n) {
        Ok(n as u32)
    } else {
        Err(format!("{key} = {n}: must be 1 to {MAX_REPETITIONS}"))
    }
}

fn share(f: f64) -> Result<f64, String> {
    if f.is_finite() && f > 0.0 && f < 1.0 {
        Ok(f)
    } else {
        Err(format!(
            "{f} is not a share between 0 and 1 (write \"5%\" or 0.05)"
        ))
    }
}

/// `5%` or `0.05`: a share strictly between 0 and 1.
pub fn parse_share(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 0.01),
        None => (t, 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a share (examples: 5%, 0.05)"))?;
    share(v * scale).map_err(|_| format!("'{text}' must lie between 0% and 100%"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(
        reps: Option<i64>,
        order: Option<&str>,
        target: Option<toml::Value>,
        max: Option<i64>,
    ) -> Result<Design, String> {
        Design::parse(reps, order, None, target.as_ref(), max)
    }

    #[test]
    fn shares() {
        assert_eq!(parse_share("5%"), Ok(0.05));
        assert_eq!(parse_share(" 2.5 % "), Ok(0.025));
        assert_eq!(parse_share("0.1"), Ok(0.1));
        for bad in ["", "0%", "100%", "5", "-1%", "five"] {
            assert!(parse_share(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn defaults_and_limits() {
        let d = parse(None, None, None, None).unwrap();
        assert_eq!((d.repetitions, d.order, d.max()), (3, Order::Random, 3));
        let d = parse(Some(4), Some("round-robin"), Some("5%".into()), None).unwrap();
        assert_eq!(
            (d.order, d.target_ci, d.max()),
            (Order::RoundRobin, Some(0.05), 10)
        );
        let d = parse(Some(12), None, Some(0.02.into()), None).unwrap();
        assert_eq!(d.max(), 12);
        let d = parse(Some(3), None, None, Some(6)).unwrap();
        assert_eq!(d.max(), 3, "no target: no extra repetitions");
        assert_eq!(d.with_target(Some(0.05), None).unwrap().max(), 6);
    }

    #[test]
    fn errors_name_the_key() {
        let cases = [
            (parse(Some(0), None, None, None), "repetitions"),
            (parse(None, Some("zigzag"), None, None), "zigzag"),
            (parse(None, None, Some(5.into()), None), "target_ci"),
            (parse(None, None, Some("150%".into()), None), "target_ci"),
            (
                parse(Some(5), None, Some("5%".into()), Some(3)),
                "max_repetitions",
            ),
            (Design::parse(None, None, Some(-1), None, None), "seed"),
        ];
        for (result, key) in cases {
            let e = result.expect_err(key);
            assert!(e.contains(key), "{e} does not name {key}");
        }
    }
}
