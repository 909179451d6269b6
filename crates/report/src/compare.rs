//! Two sweeps side by side: points paired by the axis values they share,
//! and per pair the ratio of throughput and of p99 latency with its 95%
//! confidence interval from Welch's t on the logarithms, its p-value, its
//! effect size (Hedges' g) and whether it is significant; what else
//! differs between the sweeps' settings, and how many points found no
//! partner.

use crate::doc::Table;
use crate::error::ReportError;
use crate::points::PointStats;
use crate::stats::Summary;
use crate::tables::{centre_ci, latency_unit};
use crate::units::{num, TimeUnit};
use crate::welch::{self, Contrast, Scale};
use serverlab_sweep::{params_text, Manifest};

pub struct Row {
    /// The shared axis values, `key=value, …`.
    pub point: String,
    pub metric: String,
    pub this: Summary,
    pub other: Summary,
    pub diff: Option<Contrast>,
    /// Multiply µs by this for the row's unit (1 for throughput).
    pub scale: f64,
    /// p99: what the runs' own 95% intervals say of the two points
    /// ([`crate::overlap`]), in the row's unit; None for throughput, or
    /// where a run has no interval.
    pub intervals: Option<crate::overlap::Said>,
    /// The row's unit's symbol.
    pub unit: &'static str,
}

pub struct Comparison {
    pub rows: Vec<Row>,
    /// Points of this sweep with no partner in the other.
    pub unpaired: usize,
    /// Points of the other sweep with no partner in this one.
    pub unpaired_other: usize,
    /// Settings that are not axes and differ between the two sweeps
    /// (`server --threads: 2 here, 4 there`): what the comparison measures.
    pub differences: Vec<String>,
}

/// The key a point is paired by: its values on the `shared` axes.
fn key(stat: &PointStats, shared: &[String]) -> String {
    let params = &stat.runs.point.params;
    params_text(shared.iter().filter_map(|k| params.get_key_value(k)), ", ")
}

/// `--flag value` pairs (a bare flag has the value "on").
fn flag_pairs(flags: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut it = flags.iter().peekable();
    while let Some(f) = it.next() {
        let Some(name) = f.strip_prefix("--") else {
            continue;
        };
        let value = match it.peek() {
            Some(v) if !v.starts_with("--") => it.next().cloned().unwrap_or_default(),
            _ => "on".into(),
        };
        out.push((name.to_string(), value));
    }
    out
}

/// The fixed settings of a sweep (from its first point), without those
/// that are an axis of either sweep: `(side flag, value)`.
fn fixed(m: &Manifest, axes: &[&str]) -> Vec<(String, String)> {
    let Some(p) = m.points.first() else {
        return vec![];
    };
    let mut out = vec![
        ("load protocol".to_string(), p.load_protocol.clone()),
        (
            "client_cpus".to_string(),
            m.client_cpus.clone().unwrap_or_else(|| "not pinned".into()),
        ),
        ("repetitions".to_string(), m.repetitions.to_string()),
        (
            "baseline".to_string(),
            m.baseline
                .as_ref()
                .map(|b| {
                    format!(
                        "serve {} {} / load {} {}",
                        b.server_protocol,
                        b.server_flags.join(" "),
                        b.load_protocol,
                        b.load_flags.join(" ")
                    )
                })
                .unwrap_or_else(|| "none".into()),
        ),
    ];
    if !axes.contains(&"protocol") {
        out.push(("server protocol".into(), p.server_protocol.clone()));
    }
    for (side, flags) in [("server", &p.server_flags), ("load", &p.load_flags)] {
        for (name, value) in flag_pairs(flags) {
            if !axes.contains(&name.as_str()) {
                out.push((format!("{side} --{name}"), value));
            }
        }
    }
    out
}

/// Every fixed setting that differs, or is set in only one sweep.
fn differences(this_m: &Manifest, other_m: &Manifest) -> Vec<String> {
    let axis_names: Vec<&str> = this_m
        .axes
        .iter()
        .chain(&other_m.axes)
        .flat_map(crate::axes::flags)
        .collect();
    let (a, b) = (fixed(this_m, &axis_names), fixed(other_m, &axis_names));
    let get = |list: &[(String, String)], k: &str| {
        list.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| "not set".into())
    };
    let mut names: Vec<&String> = a.iter().chain(&b).map(|(n, _)| n).collect();
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(*n));
    names
        .into_iter()
        .filter_map(|n| {
            let (x, y) = (get(&a, n), get(&b, n));
            (x != y).then(|| format!("{n}: {x} here, {y} there"))
        })
        .collect()
}

pub fn compare(
    this_m: &Manifest,
    this: &[PointStats],
    other_m: &Manifest,
    other: &[PointStats],
) -> Result<Comparison, ReportError> {
    let shared: Vec<String> = this_m
        .axes
        .iter()
        .map(|a| a.key.clone())
        .filter(|k| other_m.axes.iter().any(|b| b.key == *k))
        .collect();
    unique_keys("this sweep", this, &shared)?;
    unique_keys("the other sweep", other, &shared)?;
    let unit = latency_unit(this.iter().chain(other), "p99");
    let unpaired_other = other
        .iter()
        .filter(|b| {
            let k = key(b, &shared);
            !this.iter().any(|a| key(a, &shared) == k)
        })
        .count();
    let mut rows = Vec::new();
    let mut unpaired = 0;
    for a in this {
        let k = key(a, &shared);
        match other.iter().find(|b| key(b, &shared) == k) {
            Some(b) => rows.extend(pair_rows(&k, a, b, unit)),
            None => unpaired += 1,
        }
    }
    Ok(Comparison {
        rows,
        unpaired,
        unpaired_other,
        differences: differences(this_m, other_m),
    })
}

/// Points of one sweep must differ on the axes both sweeps have, or they
/// could not be paired.
fn unique_keys(name: &str, side: &[PointStats], shared: &[String]) -> Result<(), ReportError> {
    let mut keys: Vec<String> = side.iter().map(|s| key(s, shared)).collect();
    keys.sort();
    if !keys.windows(2).any(|w| w[0] == w[1]) {
        return Ok(());
    }
    Err(ReportError::Incomparable(format!(
        "in {name}, several points share the values of the axes both sweeps have ({}); \
         compare sweeps that vary the same things",
        if shared.is_empty() {
            "none".to_string()
        } else {
            shared.join(", ")
        }
    )))
}

/// The rows of a pair of points (key `k`): throughput and p99 latency,
/// where both have them.
fn pair_rows(k: &str, a: &PointStats, b: &PointStats, unit: TimeUnit) -> Vec<Row> {
    let point = if k.is_empty() { "all" } else { k };
    let pairs = [
        (
            "throughput (req/s)".to_string(),
            a.throughput,
            b.throughput,
            1.0,
            "req/s",
        ),
        (
            format!("p99 latency ({})", unit.symbol()),
            a.latency("p99").copied(),
            b.latency("p99").copied(),
            unit.per_us(),
            unit.symbol(),
        ),
    ];
    pairs
        .into_iter()
        .enumerate()
        .filter_map(|(k, (metric, x, y, scale, symbol))| {
            let (x, y) = (x?, y?);
            Some(Row {
                point: point.to_string(),
                metric,
                diff: welch::contrast(&x.scaled(scale), &y.scaled(scale)),
                intervals: (k == 1)
                    .then(|| crate::overlap::Said::of(a, b, x.centre(), y.centre()))
                    .flatten(),
                this: x,
                other: y,
                scale,
                unit: symbol,
            })
        })
        .collect()
}

/// What `--compare` computes, and what it takes for granted.
pub const METHOD: &str = "Test: Welch's t-test on the logarithms of the runs' values (a \
    run with throughput 0 has no logarithm: that pair is tested on the raw values, as a \
    difference). It gives the ratio this ÷ other of the geometric means with its 95% \
    confidence interval and a two-sided p-value; significant: the interval excludes 1 \
    (p < 0.05). Assumptions: runs are independent of each other, their logarithms are \
    roughly normal within each point, and both sweeps ran on the same machine close in \
    time (Welch's test does not assume equal variances or equal repetition counts). \
    Effect size: Hedges' g, the difference in pooled standard deviations (on the same \
    scale, corrected for small samples): about 0.2 is small, 0.5 medium, 0.8 large. \
    With 2–3 runs a side even a large g may not be significant.";

impl Comparison {
    /// Rows whose difference is significant at the 5% level.
    pub fn significant(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r.diff.is_some_and(|d| d.significant))
            .count()
    }

    /// Rows with a test (n ≥ 2 on both sides).
    pub fn tested(&self) -> usize {
        self.rows.iter().filter(|r| r.diff.is_some()).count()
    }

    /// What a reader must know before trusting the table: the settings
    /// that differ, the points left unpaired, and how many rows would be
    /// "significant" by chance alone.
    pub fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.differences.is_empty() {
            out.push(
                "Besides the paired axes, both sweeps ran with the same settings: any \
                 difference is the machine's, or chance."
                    .to_string(),
            );
        } else {
            out.push(format!(
                "Settings that differ between the sweeps (what this compares): {}.",
                self.differences.join("; ")
            ));
        }
        if self.unpaired + self.unpaired_other > 0 {
            out.push(format!(
                "Unmatched points, left out: {} of this sweep and {} of the other have no \
                 partner with the same axis values.",
                self.unpaired, self.unpaired_other
            ));
        }
        let within = self
            .rows
            .iter()
            .filter(|r| r.intervals.as_ref().is_some_and(|i| i.overlap))
            .count();
        if within > 0 {
            out.push(format!(
                "{within} of the p99 rows lie within each other's intervals (the runs' own 95% \
                 intervals overlap): within the intervals, not a difference, whatever the ratio."
            ));
        }
        let tested = self.tested();
        if tested > 1 {
            out.push(format!(
                "{} of {tested} differences are significant at the 5% level. Each test alone \
                 has a 5% chance of a false alarm, so even two identical sweeps would show \
                 about {:.1} significant rows here: look for a consistent pattern, or repeat \
                 the comparison, before trusting a single one.",
                self.significant(),
                tested as f64 * 0.05
            ));
        }
        out
    }

    pub fn table(&self) -> Table {
        let headers = [
            "point",
            "metric",
            "this (95% CI)",
            "other (95% CI)",
            "this ÷ other",
            "95% CI",
            "change",
            "p",
            "Hedges' g",
            "significant",
            "p99's 95% intervals (each run's own)",
        ]
        .map(String::from)
        .to_vec();
        let rows = self
            .rows
            .iter()
            .map(|r| {
                let mut row = vec![
                    r.point.clone(),
                    r.metric.clone(),
                    centre_ci(&r.this, r.scale),
                    centre_ci(&r.other, r.scale),
                ];
                row.extend(contrast_cells(r));
                row.push(match (&r.intervals, r.unit) {
                    (Some(i), _) => i.cell(r.scale, r.unit),
                    (None, "req/s") => "–".into(),
                    (None, _) => crate::overlap::NONE.into(),
                });
                row
            })
            .collect();
        Table { headers, rows }
    }
}

/// `this ÷ other` to three decimals; where that is no number (the other
/// side measured 0), why there is none.
fn ratio_cell(this: f64, other: f64) -> String {
    let ratio = this / other;
    if ratio.is_finite() {
        format!("{ratio:.3}")
    } else {
        format!("none: other is {}", num(other))
    }
}

/// The cells after the two summaries: estimate, its CI, change, p, g,
/// significant.
fn contrast_cells(r: &Row) -> Vec<String> {
    let Some(d) = &r.diff else {
        return vec![
            ratio_cell(r.this.centre(), r.other.centre()),
            "needs n ≥ 2 on both sides".into(),
            "–".into(),
            "–".into(),
            "–".into(),
            "unknown".into(),
        ];
    };
    let (estimate, ci) = match d.scale {
        Scale::Log => (
            format!("{:.3}", d.estimate),
            format!("{:.3} – {:.3}", d.ci.0, d.ci.1),
        ),
        Scale::Raw => (
            format!("{} (difference)", num(d.estimate)),
            format!("{} – {}", num(d.ci.0), num(d.ci.1)),
        ),
    };
    vec![
        estimate,
        ci,
        d.change(r.other.scaled(r.scale).centre())
            .map(|x| format!("{:+.1}%", 100.0 * x))
            .unwrap_or_else(|| "–".into()),
        if d.p < 0.001 {
            "< 0.001".into()
        } else {
            format!("{:.3}", d.p)
        },
        d.g.map(|g| format!("{g:+.2}"))
            .unwrap_or_else(|| "–".into()),
        if d.significant { "yes" } else { "no" }.into(),
    ]
}

#[cfg(test)]
mod ratio_tests {
    use super::ratio_cell;

    #[test]
    fn a_ratio_over_nothing_says_why_it_is_none() {
        assert_eq!(ratio_cell(3.0, 2.0), "1.500");
        assert_eq!(ratio_cell(3.0, 0.0), "none: other is 0");
        assert_eq!(ratio_cell(0.0, 0.0), "none: other is 0");
        assert_eq!(ratio_cell(0.0, 2.0), "0.000");
    }
}
