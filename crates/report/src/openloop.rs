//! What open-loop runs add to a report: latency against the offered rate,
//! one colour per strategy (or per combination of the other axes) — the
//! hockey stick, on a logarithmic latency axis; the achieved rate against
//! the offered one; and each point's capacity at a latency target, from
//! runs that searched for it (`--search`).

use crate::axes::{self, Role};
use crate::chart::{Figure, Marker, Panel, Pt, Series, XScale};
use crate::doc::Table;
use crate::figures::{group_series, groups, marked, pt, stat_series, styles, THROUGHPUT};
use crate::points::PointStats;
use crate::stats::Summary;
use crate::tables::{cells, centre_ci, headers};
use crate::units::TimeUnit;
use serverlab_sweep::Manifest;

/// The latency percentiles a hockey stick shows.
const SHOWN: [&str; 3] = ["p50", "p99", "p99.9"];

pub const OFFERED: &str = "offered rate (requests/s)";

const REFERENCE_COLOR: usize = 7;

/// A point's offered rate: what its runs asked for (the same in each).
fn offered(s: &PointStats) -> Option<f64> {
    let rates: Vec<f64> = s
        .runs
        .runs
        .iter()
        .filter_map(|r| r.metrics.offered_rps)
        .collect();
    (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64)
}

/// The hockey stick and achieved-vs-offered, when the sweep offered two
/// rates or more; nothing otherwise.
pub fn figures(m: &Manifest, stats: &[PointStats]) -> Vec<Figure> {
    let mut rates: Vec<f64> = stats.iter().filter_map(offered).collect();
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    if rates.len() < 2 {
        return Vec::new();
    }
    let rate_axes: Vec<usize> = (0..m.axes.len())
        .filter(|&i| axes::role(&m.axes[i]) == Role::Rate)
        .collect();
    let grouped: Vec<(String, Vec<usize>)> = groups(m, stats, &rate_axes)
        .into_iter()
        .map(|(name, members)| {
            let open = members
                .into_iter()
                .filter(|&p| offered(&stats[p]).is_some());
            (name, open.collect::<Vec<_>>())
        })
        .filter(|(_, members)| !members.is_empty())
        .collect();
    vec![
        hockey_stick(stats, &grouped),
        achieved_vs_offered(stats, &grouped, &rates),
    ]
}

/// Latency (from the intended send time) against the offered rate: flat
/// while the server keeps up, turning up where its queue starts to grow.
fn hockey_stick(stats: &[PointStats], grouped: &[(String, Vec<usize>)]) -> Figure {
    let unit = TimeUnit::for_means(
        stats
            .iter()
            .flat_map(|s| SHOWN.iter().filter_map(|n| s.latency(n))),
    );
    let point = |p: usize, stat: &str| {
        let s = &stats[p];
        Some(marked(pt(offered(s)?, s.latency(stat)?, unit.per_us()), s))
    };
    Figure {
        id: "latency-vs-offered-rate".into(),
        title: format!(
            "Latency vs offered rate, open loop ({})",
            styles(grouped.len(), &SHOWN)
        ),
        x_title: OFFERED.into(),
        x: XScale::Linear { integer: false },
        panels: vec![Panel {
            y_title: format!(
                "latency from the intended send time ({}), log scale",
                unit.symbol()
            ),
            series: stat_series(grouped, &SHOWN, true, true, &point),
            log_y: true,
        }],
    }
}

/// The rate achieved against the rate offered, with the line where they
/// are equal: a series that falls below it could not keep up.
fn achieved_vs_offered(
    stats: &[PointStats],
    grouped: &[(String, Vec<usize>)],
    rates: &[f64],
) -> Figure {
    let mut all = group_series(stats, grouped, true, &|s| {
        Some((offered(s)?, s.throughput?))
    });
    let n = all
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.n))
        .max()
        .unwrap_or(1);
    all.push(Series {
        name: "achieved = offered".into(),
        points: rates
            .iter()
            .map(|&x| Pt {
                x,
                y: x,
                ci: None,
                n,
                uncertified: false,
            })
            .collect(),
        lines: true,
        dashed: true,
        labels: vec![],
        marker: Marker::Circle,
        // Grey (the palette's eighth): a reference, not a series.
        color: REFERENCE_COLOR,
    });
    Figure {
        id: "achieved-vs-offered-rate".into(),
        title: "Achieved vs offered rate, open loop".into(),
        x_title: OFFERED.into(),
        x: XScale::Linear { integer: false },
        panels: vec![Panel {
            y_title: format!("achieved {THROUGHPUT}"),
            series: all,
            log_y: false,
        }],
    }
}

/// Each point's capacity at its search's target, over the runs that
/// found one; None when no run searched.
pub fn capacity_table(m: &Manifest, stats: &[PointStats]) -> Option<Table> {
    let searched = |s: &PointStats| {
        s.runs
            .runs
            .iter()
            .any(|r| r.metrics.capacity_target.is_some())
    };
    if !stats.iter().any(searched) {
        return None;
    }
    let rest = [
        "target".to_string(),
        "capacity, req/s (95% CI)".to_string(),
        "runs with a capacity".to_string(),
    ];
    let rows = stats
        .iter()
        .filter(|s| searched(s))
        .map(|s| {
            let runs = &s.runs.runs;
            let found: Vec<f64> = runs.iter().filter_map(|r| r.metrics.capacity_rps).collect();
            let target = runs
                .iter()
                .find_map(|r| r.metrics.capacity_target.clone())
                .unwrap_or_default();
            let mut row = cells(m, s);
            row.push(format!("`{target}`"));
            row.push(Summary::of(&found).map_or("none found".into(), |c| centre_ci(&c, 1.0)));
            row.push(format!("{} of {}", found.len(), runs.len()));
            row
        })
        .collect();
    Some(Table {
        headers: headers(m, &rest),
        rows,
    })
}

/// How to read the capacity table.
pub const CAPACITY_NOTE: &str = "Each run searched for the highest offered rate (open loop) at \
    which the target statistic of the latency, measured from each request's intended send \
    time, stayed within the target while at least 95% of the rate was achieved: a closed-loop \
    probe, then steps and bisection to within 5% (`serverlab load … --search`). The capacity \
    is that rate; a run where no rate passed has none.";
