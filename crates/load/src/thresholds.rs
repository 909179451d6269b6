//! Pass/fail targets on a run's results, as k6's thresholds:
//! `--threshold 'p99<10ms'` (a statistic of the latency, over every
//! operation or one: `get:p99<2ms`), `'errors<0.1%'` (failed requests
//! over requests tried) and `'rate>=0.99'` (an open loop's rate reached
//! over the rate asked). Each is judged once the run is over and shown
//! passed or failed (`results.thresholds`); `load` exits 4 when one fails.

use crate::harness::target::Stat;
use crate::report::{merged_quantile, OpSummary, Results};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The exit status of a run whose thresholds did not all pass (nothing
/// else having failed).
pub const EXIT_FAILED: u8 = 4;

/// One threshold, as given.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// As written (`get:p99<2ms`).
    pub text: String,
    /// One operation's (`get`), or every operation's.
    pub op: Option<String>,
    pub metric: Metric,
    pub cmp: Cmp,
    /// Latency: µs; errors and rate: a share (0.001 for 0.1%).
    pub limit: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// A statistic of the latency (from the intended send time, open loop).
    Latency(Stat),
    /// The longest latency.
    Max,
    /// Failed requests (error replies, failed connections) over requests tried.
    Errors,
    /// An open loop's rate reached over its rate asked.
    Rate,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    fn holds(self, x: f64, limit: f64) -> bool {
        match self {
            Cmp::Lt => x < limit,
            Cmp::Le => x <= limit,
            Cmp::Gt => x > limit,
            Cmp::Ge => x >= limit,
        }
    }
}

const EXAMPLES: &str = "examples: p99<10ms, get:p99.9<=2ms, mean<500us, max<1s, errors<0.1%, \
     rate>=0.99";

impl FromStr for Threshold {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let at = t
            .find(['<', '>'])
            .ok_or_else(|| format!("'{text}' is not a threshold ({EXAMPLES})"))?;
        let (lhs, rest) = t.split_at(at);
        let (cmp, value) = match (rest.as_bytes()[0], rest.as_bytes().get(1)) {
            (b'<', Some(b'=')) => (Cmp::Le, &rest[2..]),
            (b'<', _) => (Cmp::Lt, &rest[1..]),
            (_, Some(b'=')) => (Cmp::Ge, &rest[2..]),
            _ => (Cmp::Gt, &rest[1..]),
        };
        let (op, name) = match lhs.rsplit_once(':') {
            Some((op, name)) if !op.is_empty() => (Some(op.to_string()), name),
            _ => (None, lhs),
        };
        let metric = match name {
            "errors" => Metric::Errors,
            "rate" => Metric::Rate,
            "max" => Metric::Max,
            stat => Metric::Latency(stat.parse().map_err(|_| {
                format!(
                    "'{text}': '{stat}' is not p50, p90, p99, p99.9, p99.99, mean, max, errors \
                     or rate ({EXAMPLES})"
                )
            })?),
        };
        if op.is_some() && matches!(metric, Metric::Errors | Metric::Rate) {
            return Err(format!(
                "'{text}': {name} is judged over the whole run, not per operation (write {name}{})",
                &rest
            ));
        }
        let limit = match metric {
            Metric::Errors | Metric::Rate => share(value),
            Metric::Latency(_) | Metric::Max => latency_us(value),
        }
        .ok_or_else(|| {
            let want = match metric {
                Metric::Errors | Metric::Rate => "a share (0.99, 99%, 0.1%)",
                _ => "a duration (10ms, 500us, 1s)",
            };
            format!("'{text}': '{value}' is not {want}")
        })?;
        Ok(Threshold {
            text: text.trim().to_string(),
            op,
            metric,
            cmp,
            limit,
        })
    }
}

/// `0.99`, `99%` or `0.1%` as a share.
fn share(s: &str) -> Option<f64> {
    let (num, scale) = match s.strip_suffix('%') {
        Some(n) => (n, 0.01),
        None => (s, 1.0),
    };
    let x = num.parse::<f64>().ok()? * scale;
    (x.is_finite() && x >= 0.0).then_some(x)
}

/// `10ms`, `500us`, `2s`, `1.5ms` in microseconds.
fn latency_us(s: &str) -> Option<f64> {
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (num, unit) = s.split_at(split);
    let scale = match unit {
        "ns" => 1e-3,
        "us" | "µs" => 1.0,
        "ms" => 1e3,
        "s" => 1e6,
        _ => return None,
    };
    let x = num.parse::<f64>().ok()? * scale;
    (x.is_finite() && x >= 0.0).then_some(x)
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A threshold judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    /// As given.
    pub threshold: String,
    pub passed: bool,
    /// What was measured: latency in µs, errors and rate as a share;
    /// null when there was nothing to measure (which fails).
    pub actual: Option<f64>,
    /// The measure and the limit in words (`p99 3.1 ms, under 10 ms`).
    pub detail: String,
}

impl Threshold {
    /// Whether this operation is among `ops` (its name given in any case).
    pub fn names_op_in(&self, ops: &[&str]) -> bool {
        self.op
            .as_ref()
            .is_none_or(|o| ops.iter().any(|n| n.eq_ignore_ascii_case(o)))
    }

    /// Judge it on `r`.
    pub fn judge(&self, r: &Results) -> Judged {
        let (actual, what) = match self.metric {
            Metric::Errors => (Some(error_share(r)), "errors".to_string()),
            Metric::Rate => (rate_share(r), "rate reached over asked".to_string()),
            Metric::Latency(_) | Metric::Max => self.latency(r),
        };
        let passed = actual.is_some_and(|x| self.cmp.holds(x, self.limit));
        let said = |x: f64| self.say(x);
        let detail = match actual {
            Some(x) => format!(
                "{what} {}, {} {}",
                said(x),
                self.cmp_words(),
                said(self.limit)
            ),
            None => format!("{what}: nothing measured, so it cannot pass"),
        };
        Judged {
            threshold: self.text.clone(),
            passed,
            actual,
            detail,
        }
    }

    fn cmp_words(&self) -> &'static str {
        match self.cmp {
            Cmp::Lt => "must be under",
            Cmp::Le => "must be at most",
            Cmp::Gt => "must be over",
            Cmp::Ge => "must be at least",
        }
    }

    fn say(&self, x: f64) -> String {
        match self.metric {
            Metric::Errors | Metric::Rate => format!("{}%", trim(x * 100.0)),
            _ => crate::output::micros(x),
        }
    }

    /// The latency statistic, and what it is of.
    fn latency(&self, r: &Results) -> (Option<f64>, String) {
        let ops: Vec<&OpSummary> = r
            .operations
            .iter()
            .filter(|o| o.count > 0)
            .filter(|o| {
                self.op
                    .as_ref()
                    .is_none_or(|n| o.name.eq_ignore_ascii_case(n))
            })
            .collect();
        let name = match self.metric {
            Metric::Latency(s) => s.name(),
            _ => "max",
        };
        let of = match &self.op {
            Some(op) => format!("{op} {name}"),
            None => name.to_string(),
        };
        if ops.is_empty() {
            return (None, of);
        }
        let x = match (self.metric, ops.as_slice()) {
            (Metric::Max, _) => ops.iter().map(|o| o.latency_us.max).fold(0.0, f64::max),
            (Metric::Latency(Stat::Mean), _) => {
                let n: u64 = ops.iter().map(|o| o.count).sum();
                let sum: f64 = ops.iter().map(|o| o.latency_us.mean * o.count as f64).sum();
                sum / n as f64
            }
            (Metric::Latency(s), [one]) => s.quantile().map_or(0.0, |q| quantile_of(one, q)),
            (Metric::Latency(s), many) => {
                let owned: Vec<OpSummary> = many.iter().map(|o| (*o).clone()).collect();
                merged_quantile(&owned, s.quantile().unwrap_or(0.5)).unwrap_or(0.0)
            }
            _ => 0.0,
        };
        (Some(x), of)
    }
}

/// An operation's own percentile, as its summary says it.
fn quantile_of(o: &OpSummary, q: f64) -> f64 {
    let p = &o.latency_us;
    match q {
        q if q <= 0.5 => p.p50,
        q if q <= 0.9 => p.p90,
        q if q <= 0.99 => p.p99,
        q if q <= 0.999 => p.p99_9,
        _ => p.p99_99,
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Failed requests (error replies, and failures: connections that
/// failed) over the requests tried.
fn error_share(r: &Results) -> f64 {
    let replies = r.protocol.as_ref().map_or(0, |p| p.error_replies());
    let failed = replies + r.failures;
    let tried = r.requests + r.failures;
    if tried == 0 {
        return if failed > 0 { 1.0 } else { 0.0 };
    }
    (failed as f64 / tried as f64).min(1.0)
}

/// An open loop's rate reached over its rate asked.
fn rate_share(r: &Results) -> Option<f64> {
    r.schedule.as_ref().map(|s| s.achieved_share)
}

/// Judge each of `thresholds` on `r` (into `r.thresholds`); true when
/// every one passed.
pub fn judge_all(thresholds: &[Threshold], r: &mut Results) -> bool {
    r.thresholds = thresholds.iter().map(|t| t.judge(r)).collect();
    r.thresholds.iter().all(|j| j.passed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_parse_as_written() {
        let t: Threshold = "p99<10ms".parse().unwrap();
        assert_eq!(
            (t.op.as_deref(), t.metric, t.cmp, t.limit),
            (
                None,
                Metric::Latency("p99".parse().unwrap()),
                Cmp::Lt,
                10_000.0
            )
        );
        let t: Threshold = "get:p99.9 <= 2ms".parse().unwrap();
        assert_eq!(
            (t.op.as_deref(), t.cmp, t.limit),
            (Some("get"), Cmp::Le, 2000.0)
        );
        let t: Threshold = "errors<0.1%".parse().unwrap();
        assert_eq!(t.metric, Metric::Errors);
        assert!((t.limit - 0.001).abs() < 1e-12);
        let t: Threshold = "rate>=0.99".parse().unwrap();
        assert_eq!((t.metric, t.cmp, t.limit), (Metric::Rate, Cmp::Ge, 0.99));
        assert_eq!("max>1s".parse::<Threshold>().unwrap().limit, 1e6);
        for bad in [
            "p99",
            "p98<1ms",
            "p99<10",
            "errors<x",
            "get:errors<1%",
            "rate>=fast",
            "",
        ] {
            assert!(bad.parse::<Threshold>().is_err(), "{bad}");
        }
        assert!("get:rate>0.9"
            .parse::<Threshold>()
            .unwrap_err()
            .contains("whole run"));
    }

    #[test]
    fn comparisons_hold_at_their_edges() {
        assert!(Cmp::Le.holds(1.0, 1.0) && !Cmp::Lt.holds(1.0, 1.0));
        assert!(Cmp::Ge.holds(1.0, 1.0) && !Cmp::Gt.holds(1.0, 1.0));
        assert_eq!(share("99%"), Some(0.99));
        assert_eq!(latency_us("1.5ms"), Some(1500.0));
        assert_eq!(latency_us("10"), None);
    }
}
