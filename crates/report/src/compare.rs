//! Two sweeps side by side: points paired by the axis values they share,
//! and per pair the difference in throughput and p99 latency with its
//! Welch 95% confidence interval and whether it is significant.

use crate::doc::Table;
use crate::error::ReportError;
use crate::points::PointStats;
use crate::stats::Summary;
use crate::tables::{latency_unit, mean_ci};
use crate::units::num;
use crate::welch::{self, Difference};
use serverlab_sweep::Manifest;

pub struct Row {
    /// The shared axis values, `key=value, …`.
    pub point: String,
    pub metric: String,
    pub this: Summary,
    pub other: Summary,
    pub diff: Option<Difference>,
    /// Multiply µs by this for the row's unit (1 for throughput).
    pub scale: f64,
}

pub struct Comparison {
    pub rows: Vec<Row>,
    /// Points of this sweep with no partner in the other.
    pub unpaired: usize,
}

/// The key a point is paired by: its values on the `shared` axes.
fn key(stat: &PointStats, shared: &[String]) -> String {
    shared
        .iter()
        .map(|k| {
            let v = stat.runs.point.params.get(k).cloned().unwrap_or_default();
            match v {
                serde_json::Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
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
    for (name, side) in [("this sweep", this), ("the other sweep", other)] {
        let mut keys: Vec<String> = side.iter().map(|s| key(s, &shared)).collect();
        keys.sort();
        if keys.windows(2).any(|w| w[0] == w[1]) {
            return Err(ReportError::Incomparable(format!(
                "in {name}, several points share the values of the axes both sweeps have ({}); \
                 compare sweeps that vary the same things",
                if shared.is_empty() {
                    "none".to_string()
                } else {
                    shared.join(", ")
                }
            )));
        }
    }
    let unit = latency_unit(this.iter().chain(other), "p99");
    let mut rows = Vec::new();
    let mut unpaired = 0;
    for a in this {
        let k = key(a, &shared);
        let Some(b) = other.iter().find(|b| key(b, &shared) == k) else {
            unpaired += 1;
            continue;
        };
        let point = if k.is_empty() { "all".to_string() } else { k };
        let pairs = [
            (
                "throughput (req/s)".to_string(),
                a.throughput,
                b.throughput,
                1.0,
            ),
            (
                format!("p99 latency ({})", unit.symbol()),
                a.latency("p99").copied(),
                b.latency("p99").copied(),
                unit.per_us(),
            ),
        ];
        for (metric, x, y, scale) in pairs {
            let (Some(x), Some(y)) = (x, y) else { continue };
            rows.push(Row {
                point: point.clone(),
                metric,
                diff: welch::difference(&x.scaled(scale), &y.scaled(scale)),
                this: x,
                other: y,
                scale,
            });
        }
    }
    Ok(Comparison { rows, unpaired })
}

impl Comparison {
    pub fn table(&self) -> Table {
        let headers = [
            "point",
            "metric",
            "this (mean ± CI)",
            "other (mean ± CI)",
            "difference",
            "95% CI of difference",
            "change",
            "p",
            "significant",
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
                    mean_ci(&r.this, r.scale),
                    mean_ci(&r.other, r.scale),
                ];
                match &r.diff {
                    Some(d) => row.extend([
                        num(d.diff),
                        format!("{} – {}", num(d.ci.0), num(d.ci.1)),
                        d.relative
                            .map(|x| format!("{:+.1}%", 100.0 * x))
                            .unwrap_or_else(|| "–".into()),
                        if d.p < 0.001 {
                            "< 0.001".into()
                        } else {
                            format!("{:.3}", d.p)
                        },
                        if d.significant {
                            "yes".into()
                        } else {
                            "no".into()
                        },
                    ]),
                    None => {
                        let diff = (r.this.mean - r.other.mean) * r.scale;
                        row.extend([
                            num(diff),
                            "needs n ≥ 2 on both sides".into(),
                            "–".into(),
                            "–".into(),
                            "unknown".into(),
                        ]);
                    }
                }
                row
            })
            .collect();
        Table { headers, rows }
    }
}
