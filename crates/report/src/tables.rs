//! The report's tables, one row per point: the full summary (n, mean,
//! geometric mean, median, min, max, sd, CV, 95% CI) of throughput (and
//! its share of the baseline) and of each latency percentile, an overview
//! of the percentiles, the CAPS-style per-thread numbers, operations, and
//! the server's service time.

use crate::axes;
use crate::doc::Table;
use crate::metrics::PERCENTILES;
use crate::points::PointStats;
use crate::stats::{Interval, Summary};
use crate::units::{num, percent, TimeUnit};
use serverlab_sweep::{Manifest, Scalar};

/// The point's axis values as leading cells, labelled.
fn point_cells(m: &Manifest, s: &PointStats) -> Vec<String> {
    axis_values(m, s, axes::label)
}

/// The point's value on each axis, as `show` writes it (empty where the
/// point has none).
pub(crate) fn axis_values(
    m: &Manifest,
    s: &PointStats,
    show: impl Fn(&serverlab_sweep::Axis, &Scalar) -> String,
) -> Vec<String> {
    m.axes
        .iter()
        .map(|a| {
            s.runs
                .point
                .params
                .get(&a.key)
                .and_then(Scalar::from_json)
                .map(|v| show(a, &v))
                .unwrap_or_default()
        })
        .collect()
}

pub(crate) fn headers(m: &Manifest, rest: &[String]) -> Vec<String> {
    let mut h: Vec<String> = m.axes.iter().map(|a| a.key.clone()).collect();
    if h.is_empty() {
        h.push("point".into());
    }
    h.extend(rest.iter().cloned());
    h
}

/// The point's leading cells, the last marked ‡ where some of its runs
/// were not certified.
pub(crate) fn cells(m: &Manifest, s: &PointStats) -> Vec<String> {
    let mut c = point_cells(m, s);
    if c.is_empty() {
        c.push(s.runs.point.slug.clone());
    }
    if crate::certified::uncertified(s) {
        if let Some(last) = c.last_mut() {
            last.push_str(&format!(" {}", crate::certified::MARK));
        }
    }
    c
}

/// `low – high`, marked when it is a bootstrap interval.
pub fn interval(s: &Summary, fmt: &dyn Fn(f64) -> String) -> String {
    match (s.ci, s.interval) {
        (Some((lo, hi)), Some(Interval::Bootstrap)) => {
            format!("{} – {}, bootstrap", fmt(lo), fmt(hi))
        }
        (Some((lo, hi)), _) => format!("{} – {}", fmt(lo), fmt(hi)),
        (None, _) => "needs n ≥ 2".into(),
    }
}

/// `centre (low – high)`: the geometric mean (the mean where a run was 0)
/// and its 95% CI, every value × `k`; `[n=2]` warns of few runs.
pub fn centre_ci(s: &Summary, k: f64) -> String {
    centre_ci_with(&s.scaled(k), &num)
}

/// As [`centre_ci`], formatting numbers with `fmt`.
pub fn centre_ci_with(s: &Summary, fmt: &dyn Fn(f64) -> String) -> String {
    format!("{}{}", centre_ci_bare(s, fmt), few(s))
}

/// `centre (low – high)`, without the few-runs mark.
pub fn centre_ci_bare(s: &Summary, fmt: &dyn Fn(f64) -> String) -> String {
    match s.ci {
        Some(_) => format!("{} ({})", fmt(s.centre()), interval(s, fmt)),
        None => fmt(s.centre()),
    }
}

/// ` [n=2]` for fewer than 3 runs, else nothing.
pub fn few(s: &Summary) -> String {
    if s.few() {
        format!(" [n={}]", s.n)
    } else {
        String::new()
    }
}

/// The coefficient of variation as a percentage, or a dash.
pub fn cv(s: &Summary) -> String {
    s.cv.map(percent).unwrap_or_else(|| "–".into())
}

/// The headers of [`summary_cells`] after n and the mean.
const SUMMARY_REST: [&str; 7] = ["geo. mean", "median", "min", "max", "sd", "CV", "95% CI"];

/// A measurement's full summary as cells: n, mean, geometric mean, median,
/// min, max, sd, CV, 95% CI (every value multiplied by `k`); n = 0 and
/// dashes without one.
fn summary_cells(s: Option<&Summary>, k: f64) -> Vec<String> {
    let dash = || "–".to_string();
    match s.map(|s| s.scaled(k)) {
        Some(t) => vec![
            t.n.to_string(),
            num(t.mean),
            t.geomean.map(num).unwrap_or_else(dash),
            num(t.median),
            num(t.min),
            num(t.max),
            t.sd.map(num).unwrap_or_else(dash),
            cv(&t),
            interval(&t, &num),
        ],
        None => {
            let mut row = vec!["0".to_string()];
            row.extend(std::iter::repeat_n(dash(), 1 + SUMMARY_REST.len()));
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
    let rest: Vec<String> = ["n", &mean]
        .into_iter()
        .chain(SUMMARY_REST)
        .map(String::from)
        .collect();
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

/// Throughput: n, mean, geometric mean, median, min, max, sd, CV, 95% CI;
/// with a baseline, also the share of it (geometric mean and CI, CV).
pub fn throughput(m: &Manifest, stats: &[PointStats]) -> Table {
    let mut t = summary_table(m, stats, "req/s", 1.0, &|s| s.throughput);
    if stats.iter().any(|s| s.share.is_some()) {
        t.headers
            .extend(["share of baseline (95% CI)".into(), "share CV".into()]);
        for (row, s) in t.rows.iter_mut().zip(stats) {
            match &s.share {
                Some(share) => {
                    row.push(centre_ci_with(share, &percent));
                    row.push(cv(share));
                }
                None => row.extend(["–".to_string(), "–".to_string()]),
            }
        }
    }
    t
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

/// Latency percentiles over all operations, geometric mean (95% CI), each
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
                        .map(|l| centre_ci(l, unit.per_us()))
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
                |x: Option<&Summary>| x.map(|v| centre_ci(v, 1.0)).unwrap_or_else(|| "–".into());
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
    let points: Vec<&PointStats> = stats.iter().filter(|s| s.throughput.is_some()).collect();
    Some(named_columns(m, &points, &names, &rest, |s, n| {
        s.ops
            .iter()
            .find(|(o, _)| o == n)
            .map(|(_, v)| centre_ci(v, 1.0))
    }))
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
    let points: Vec<&PointStats> = stats.iter().filter(|s| !s.service.is_empty()).collect();
    Some(named_columns(m, &points, &names, &rest, |s, n| {
        s.service(n).map(|v| centre_ci(v, unit.per_us()))
    }))
}

/// A table of `points` with a column per name in `names` (headed `rest`):
/// `value` gives a point's cell for a name, "–" where it has none.
fn named_columns(
    m: &Manifest,
    points: &[&PointStats],
    names: &[String],
    rest: &[String],
    value: impl Fn(&PointStats, &str) -> Option<String>,
) -> Table {
    let rows = points
        .iter()
        .map(|s| {
            let mut row = cells(m, s);
            for n in names {
                row.push(value(s, n).unwrap_or_else(|| "–".into()));
            }
            row
        })
        .collect();
    Table {
        headers: headers(m, rest),
        rows,
    }
}
