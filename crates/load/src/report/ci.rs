//! The 95% confidence interval of each percentile ([`Ci95`]), read off
//! the same histogram the percentile comes from
//! ([`crate::certify::quantile`]).

use crate::certify::quantile;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The percentiles given an interval, and their quantiles.
pub const LEVELS: [(&str, f64); 5] = [
    ("p50", 0.5),
    ("p90", 0.9),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
];

/// Each percentile's distribution-free 95% interval, `[low, high]` in
/// µs; null where there were too few samples for one (fewer than
/// [`quantile::fewest`]: the interval would reach past the largest
/// sample).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ci95 {
    pub p50: Option<[f64; 2]>,
    pub p90: Option<[f64; 2]>,
    pub p99: Option<[f64; 2]>,
    pub p99_9: Option<[f64; 2]>,
    pub p99_99: Option<[f64; 2]>,
    /// When consecutive latencies were correlated: the effective number
    /// of independent samples the intervals were widened to (fewer than
    /// the count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_samples: Option<f64>,
}

impl Ci95 {
    /// `h`'s intervals (values in ns, given in µs); `effective`: the
    /// samples' effective number, when fewer than recorded.
    pub fn of(h: &Histogram<u64>, effective: Option<f64>) -> Self {
        let effective = effective.filter(|&e| e < h.len() as f64);
        let at = |p: f64| {
            quantile::interval(h, p, effective)
                .map(|(lo, hi)| [lo as f64 / 1000.0, hi as f64 / 1000.0])
        };
        Ci95 {
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            p99_9: at(0.999),
            p99_99: at(0.9999),
            effective_samples: effective.map(|e| e.floor()),
        }
    }

    /// The intervals in the order of [`LEVELS`].
    pub fn all(&self) -> [Option<[f64; 2]>; 5] {
        [self.p50, self.p90, self.p99, self.p99_9, self.p99_99]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Percentiles;

    #[test]
    fn each_percentile_gets_its_interval_until_the_samples_run_out() {
        let mut h = crate::record::new_histogram();
        for us in 1..=1000u64 {
            h.record(us * 1000).unwrap();
        }
        let p = Percentiles::with_intervals(&h, None);
        let ci = p.ci95.clone().unwrap();
        let [lo, hi] = ci.p99.unwrap();
        assert!(lo <= p.p99 && p.p99 <= hi, "{ci:?}");
        assert_eq!((lo.round(), hi.round()), (983.0, 997.0));
        assert!(ci.p50.is_some() && ci.p90.is_some());
        assert_eq!((ci.p99_9, ci.p99_99), (None, None));
        let json = serde_json::to_value(&p).unwrap();
        assert!(json["ci95"]["p99_99"].is_null(), "{json}");
        assert_eq!(json["ci95"]["p99"][0], serde_json::json!(lo));
        assert!(json["ci95"].get("effective_samples").is_none());
        // A third as many effective samples: wider.
        let wide = Ci95::of(&h, Some(333.0));
        let [wlo, whi] = wide.p90.unwrap();
        let [nlo, nhi] = ci.p90.unwrap();
        assert!(wlo < nlo && whi > nhi, "{wide:?}");
        assert_eq!(wide.p99, None);
        assert_eq!(wide.effective_samples, Some(333.0));
        // An old file's percentiles (no interval) still read.
        let old: Percentiles = serde_json::from_str(
            r#"{"mean":1,"p50":1,"p90":1,"p99":1,"p99_9":1,"p99_99":1,"max":1}"#,
        )
        .unwrap();
        assert_eq!(old.ci95, None);
    }
}
