//! The report's tables, one row per point: the full summary (n, mean,
//! median, min, max, sd, 95% CI) of throughput and of each latency
//! percentile, an overview of the percentiles, the CAPS-style per-thread
//! numbers, operations, and the server's service time.

use crate::axes;
use crate::doc::Table;
use crate::metrics::PERCENTILES;
use crate::points::PointStats;
use crate::stats::Summary;
use crate::units::{num, TimeUnit};
use serverlab_sweep::{Manifest, Scalar};

/// The point's axis values as leading cells.
fn point_cells(m: &Manifest, s: &PointStats) -> Vec<String> {
    m.axes
        .iter()
        .map(|a| {
            s.runs
                .point
                .params
                .get(&a.key)
                .and_then(Scalar::from_json)
                .map(|v| axes::label(a, &v))
                .unwrap_or_default()
        })
        .collect()
}

fn headers(m: &Manifest, rest: &[String]) -> Vec<String> {
    let mut h: Vec<String> = m.axes.iter().map(|a| a.key.clone()).collect();
    if h.is_empty() {
        h.push("point".into());
    }
    h.extend(rest.iter().cloned());
    h
}

fn cells(m: &Manifest, s: &PointStats) -> Vec<String> {
    let mut c = point_cells(m, s);
    if c.is_empty() {
        c.push(s.runs.point.slug.clone());
    }
    c
}

/// `mean ± half` (the half-width of the 95% CI), or the mean alone for n = 1.
pub fn mean_ci(s: &Summary, k: f64) -> String {
    let s = s.scaled(k);
    match s.ci_half() {
        Some(h) => format!("{} ± {}", num(s.mean), num(h)),
        None => num(s.mean),
    }
}

/// A measurement's full summary as cells: n, mean, median, min, max, sd,
/// 95% CI (every value multiplied by `k`); n = 0 and dashes without one.
fn summary_cells(s: Option<&Summary>, k: f64) -> Vec<String> {
    match s.map(|s| s.scaled(k)) {
        Some(t) => vec![
            t.n.to_string(),
            num(t.mean),
            num(t.median),
            num(t.min),
            num(t.max),
            t.sd.map(num).unwrap_or_else(|| "–".into()),
            t.ci.map(|(lo, hi)| format!("{} – {}", num(lo), num(hi)))
                .unwrap_or_else(|| "needs n ≥ 2".into()),
        ],
        None => {
            let mut row = vec!["0".to_string()];
            row.extend(std::iter::repeat_n("–".to_string(), 6));
            row
        }
    }
}

/// One row per point: n, mean, median, min, max, sd and the 95% CI of
/// what `get` picks, in `unit` (the mean's header names it), each value
/// multiplied by `k`.
fn summary_table(
    m: &Manifest,
    stats: &[PointStats],
    unit: &str,
    k: f64,
    get: &dyn Fn(&PointStats) -> Option<Summary>,
) -> Table {
    let mean = format!("mean {unit}");
    let rest: Vec<String> = ["n", &mean, "median", "min", "max", "sd", "95% CI of mean"]
        .map(String::from)
        .to_vec();
    let rows = stats
        .iter()
        .map(|s| {
            let mut row = cells(m, s);
            row.extend(summary_cells(get(s).as_ref(), k));
            row
        })
        .collect();
    Table {
        headers: headers(m, &rest),
        rows,
    }
}

/// Throughput: n, mean, median, min, max, sd, 95% CI.
pub fn throughput(m: &Manifest, stats: &[PointStats]) -> Table {
    summary_table(m, stats, "req/s", 1.0, &|s| s.throughput)
}

/// One latency percentile over all operations: n, mean, median, min, max,
/// sd, 95% CI, in the unit its means call for (returned with the table).
pub fn latency_summary(m: &Manifest, stats: &[PointStats], percentile: &str) -> (TimeUnit, Table) {
    let unit = latency_unit(stats, percentile);
    let table = summary_table(m, stats, unit.symbol(), unit.per_us(), &|s| {
        s.latency(percentile).copied()
    });
    (unit, table)
}

/// The unit a latency column uses: from its largest mean, so small
/// percentiles stay in µs while the tail may be in ms.
pub fn latency_unit<'a, 'b: 'a>(
    stats: impl IntoIterator<Item = &'a PointStats<'b>>,
    percentile: &str,
) -> TimeUnit {
    TimeUnit::for_means(stats.into_iter().filter_map(|s| s.latency(percentile)))
}

/// Latency percentiles over all operations, mean ± CI half-width, each
/// column in its own unit.
pub fn latency(m: &Manifest, stats: &[PointStats]) -> Table {
    let names = PERCENTILES.map(|(n, _)| n);
    let units: Vec<TimeUnit> = names.iter().map(|n| latency_unit(stats, n)).collect();
    let rest: Vec<String> = names
        .iter()
        .zip(&units)
        .map(|(n, u)| format!("{n} ({})", u.symbol()))
        .collect();
    let rows = stats
        .iter()
        .filter(|s| s.throughput.is_some())
        .map(|s| {
            let mut row = cells(m, s);
            for (n, unit) in names.iter().zip(&units) {
                row.push(
                    s.latency(n)
                        .map(|l| mean_ci(l, unit.per_us()))
                        .unwrap_or_else(|| "–".into()),
                );
            }
            row
        })
        .collect();
    Table {
        headers: headers(m, &rest),
        rows,
    }
}

/// As the CAPS reference client reports: client threads, total requests,
/// requests per thread, requests per thread per second (means over runs).
pub fn per_thread(m: &Manifest, stats: &[PointStats]) -> Option<Table> {
    if stats.iter().all(|s| s.threads.is_none()) {
        return None;
    }
    let rest: Vec<String> = [
        "client threads",
        "total requests",
        "requests per thread",
        "requests per thread per second",
    ]
    .map(String::from)
    .to_vec();
    let rows = stats
        .iter()
        .filter(|s| s.throughput.is_some())
        .map(|s| {
            let mut row = cells(m, s);
            let opt =
                |x: Option<&Summary>| x.map(|v| mean_ci(v, 1.0)).unwrap_or_else(|| "–".into());
            row.push(s.threads.map(num).unwrap_or_else(|| "–".into()));
            row.push(opt(s.requests.as_ref()));
            row.push(opt(s.requests_per_thread.as_ref()));
            row.push(opt(s.per_thread_rps.as_ref()));
            row
        })
        .collect();
    Some(Table {
        headers: headers(m, &rest),
        rows,
    })
}

/// Requests per second of each operation, when more than one happened.
pub fn operations(m: &Manifest, stats: &[PointStats]) -> Option<Table> {
    let mut names: Vec<String> = Vec::new();
    for s in stats {
        for (n, v) in &s.ops {
            if v.max > 0.0 && !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    if names.len() < 2 {
        return None;
    }
    let rest: Vec<String> = names.iter().map(|n| format!("{n} req/s")).collect();
    let rows = stats
        .iter()
        .filter(|s| s.throughput.is_some())
        .map(|s| {
            let mut row = cells(m, s);
            for n in &names {
                let v = s
                    .ops
                    .iter()
                    .find(|(o, _)| o == n)
                    .map(|(_, v)| mean_ci(v, 1.0));
                row.push(v.unwrap_or_else(|| "–".into()));
            }
            row
        })
        .collect();
    Some(Table {
        headers: headers(m, &rest),
        rows,
    })
}

/// The server's service time statistics, when its final statistics hold them.
pub fn service(m: &Manifest, stats: &[PointStats]) -> Option<Table> {
    let names: Vec<String> = stats
        .iter()
        .find(|s| !s.service.is_empty())?
        .service
        .iter()
        .map(|(n, _)| n.clone())
        .collect();
    let unit = TimeUnit::for_means(stats.iter().flat_map(|s| s.service.iter().map(|(_, v)| v)));
    let rest: Vec<String> = names
        .iter()
        .map(|n| format!("{n} ({})", unit.symbol()))
        .collect();
    let rows = stats
        .iter()
        .filter(|s| !s.service.is_empty())
        .map(|s| {
            let mut row = cells(m, s);
            for n in &names {
                let v = s.service(n).map(|v| mean_ci(v, unit.per_us()));
                row.push(v.unwrap_or_else(|| "–".into()));
            }
            row
        })
        .collect();
    Some(Table {
        headers: headers(m, &rest),
        rows,
    })
}
