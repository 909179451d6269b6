//! Text: each percentile with its 95% interval, in the percentile's
//! unit (`p99 1.22 ms [1.18, 1.27]`), and the percentiles too few
//! samples could give none (`p99.99: 812 samples, too few`).

use crate::report::{Percentiles, LEVELS};

/// One operation's intervals, on one line (no line when it has none: a
/// file from before them).
pub fn line(name: &str, count: u64, p: &Percentiles) -> Option<String> {
    let ci = p.ci95.as_ref()?;
    let points = [p.p50, p.p90, p.p99, p.p99_9, p.p99_99];
    let mut parts = Vec::new();
    let mut missing = Vec::new();
    for (((level, _), point), bounds) in LEVELS.iter().zip(points).zip(ci.all()) {
        match bounds {
            Some([lo, hi]) => parts.push(format!("{level} {}", with_bounds(point, lo, hi))),
            None => missing.push(*level),
        }
    }
    if !missing.is_empty() {
        parts.push(format!(
            "{}: {}, too few",
            missing.join(", "),
            serverlab_util::plural(count, "sample", "samples")
        ));
    }
    let widened = ci.effective_samples.map_or(String::new(), |n| {
        format!(" (widened to an effective {n:.0} samples: consecutive latencies correlate)")
    });
    Some(format!(
        "{name} 95% intervals: {}{widened}",
        parts.join("; ")
    ))
}

/// `point [lo, hi]`, all in the point's unit.
fn with_bounds(point: f64, lo: f64, hi: f64) -> String {
    let (div, unit, places) = if point >= 1e6 {
        (1e6, "s", 2)
    } else if point >= 1e3 {
        (1e3, "ms", 2)
    } else {
        (1.0, "µs", 0)
    };
    let f = |v: f64| format!("{:.*}", places, v / div);
    format!("{} {unit} [{}, {}]", f(point), f(lo), f(hi))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Ci95;

    #[test]
    fn intervals_in_the_percentiles_unit_and_the_levels_too_few_samples_leave_bare() {
        let p = Percentiles {
            p50: 98.0,
            p90: 450.0,
            p99: 1220.0,
            p99_9: 2100.0,
            ci95: Some(Ci95 {
                p50: Some([97.2, 99.1]),
                p90: Some([440.0, 460.0]),
                p99: Some([1180.0, 1270.0]),
                ..Ci95::default()
            }),
            ..Percentiles::default()
        };
        assert_eq!(
            line("get", 812, &p).unwrap(),
            "get 95% intervals: p50 98 µs [97, 99]; p90 450 µs [440, 460]; \
             p99 1.22 ms [1.18, 1.27]; p99.9, p99.99: 812 samples, too few"
        );
        let wide = Percentiles {
            ci95: Some(Ci95 {
                effective_samples: Some(300.0),
                ..p.ci95.clone().unwrap()
            }),
            ..p.clone()
        };
        assert!(line("get", 812, &wide)
            .unwrap()
            .ends_with("(widened to an effective 300 samples: consecutive latencies correlate)"));
        assert_eq!(line("get", 812, &Percentiles::default()), None);
    }
}
