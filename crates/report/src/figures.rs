//! Which plots a sweep's data supports, and their series: throughput (and
//! its share of the baseline), per-thread rates, totals and latency
//! against the client's connections; latency percentiles against the
//! throughput achieved; throughput against every other axis (cores,
//! threads, delay range, bucket count…); service time where the server
//! reports it. A new plot of one per-point number against an axis is a
//! [`Metric`] and a call to [`metric_vs_axis`].

use crate::axes::{self, Role};
use crate::chart::{Figure, Marker, Panel, Pt, Series, XScale, PALETTE_SIZE};
use crate::points::PointStats;
use crate::stats::Summary;
use crate::ticks::is_geometric;
use crate::units::TimeUnit;
use serverlab_sweep::{Axis, Manifest, Scalar};

pub const THROUGHPUT: &str = "throughput (requests/s)";
pub const SHARE: &str = "share of the baseline's throughput (1 = as fast)";

/// One number per point, to plot against an axis.
pub struct Metric {
    /// File-name stem before `-vs-<axis>`.
    pub id: &'static str,
    /// Title before ` vs <axis>`.
    pub title: &'static str,
    pub y_title: &'static str,
    pub get: fn(&PointStats) -> Option<Summary>,
}

pub const THROUGHPUT_METRIC: Metric = Metric {
    id: "throughput",
    title: "Throughput",
    y_title: THROUGHPUT,
    get: |s| s.throughput,
};

pub const SHARE_METRIC: Metric = Metric {
    id: "share-of-baseline",
    title: "Throughput as a share of the baseline",
    y_title: SHARE,
    get: |s| s.share,
};

/// Every figure the data supports, in report order.
pub fn figures(m: &Manifest, stats: &[PointStats]) -> Vec<Figure> {
    let clients: Vec<usize> = (0..m.axes.len())
        .filter(|&i| axes::role(&m.axes[i]) == Role::Client)
        .collect();
    let shares = stats.iter().any(|s| s.share.is_some());
    let mut out = Vec::new();
    if let Some(&last) = clients.last() {
        out.extend(client_figures(m, stats, &clients, last));
        out.push(latency_vs_clients(m, stats, &clients, last));
    }
    let per_axis = axis_figures(m, stats, &clients, shares);
    // The plot that answers the experiment's question leads: with client
    // axes, the client figures above; otherwise throughput against each
    // server axis (with its CIs), before the scatter of latency against
    // load, whose points cannot be told apart by configuration.
    if clients.is_empty() {
        out.extend(per_axis);
        out.push(latency_vs_load(m, stats, &clients));
    } else {
        out.push(latency_vs_load(m, stats, &clients));
        out.extend(per_axis);
    }
    if stats.iter().any(|s| !s.service.is_empty()) {
        out.extend(service_time(m, stats, &clients));
    }
    out.extend(crate::openloop::figures(m, stats));
    out.retain(|f| {
        f.panels
            .iter()
            .any(|p| p.series.iter().any(|s| !s.points.is_empty()))
    });
    out
}

/// Throughput (and its share of the baseline) against each axis that is
/// not the client's, nor redundant with the client figures or the
/// scaling section.
fn axis_figures(
    m: &Manifest,
    stats: &[PointStats],
    clients: &[usize],
    shares: bool,
) -> Vec<Figure> {
    let mut out = Vec::new();
    for (i, axis) in m.axes.iter().enumerate() {
        // The server's cores have a section of their own (crate::scaling).
        let redundant = (!clients.is_empty() && axes::is_nominal(axis))
            || axis.source == serverlab_sweep::Source::Cores;
        if axes::role(axis) != Role::Client && !redundant {
            out.push(metric_vs_axis(m, stats, i, &THROUGHPUT_METRIC));
            if shares {
                out.push(metric_vs_axis(m, stats, i, &SHARE_METRIC));
            }
        }
    }
    out
}

/// The value a point has on axis `i`.
pub(crate) fn value<'a>(m: &'a Manifest, stat: &PointStats, i: usize) -> Option<&'a Scalar> {
    let axis = &m.axes[i];
    let v = Scalar::from_json(stat.runs.point.params.get(&axis.key)?)?;
    axis.values.iter().find(|x| **x == v)
}

/// Points grouped by their values on every axis but `exclude`, named
/// `key=value, …`, in order of first appearance. Points without a
/// successful run are left out.
pub(crate) fn groups(
    m: &Manifest,
    stats: &[PointStats],
    exclude: &[usize],
) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for (p, stat) in stats.iter().enumerate() {
        if stat.throughput.is_none() {
            continue;
        }
        let parts: Vec<String> = (0..m.axes.len())
            .filter(|i| !exclude.contains(i))
            .filter_map(|i| {
                let axis: &Axis = &m.axes[i];
                Some(format!(
                    "{}={}",
                    axis.key,
                    axes::label(axis, value(m, stat, i)?)
                ))
            })
            .collect();
        let name = parts.join(", ");
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, members)) => members.push(p),
            None => out.push((name, vec![p])),
        }
    }
    out
}

/// A marker at the summary's centre (its geometric mean) with its CI.
pub(crate) fn pt(x: f64, s: &Summary, k: f64) -> Pt {
    let s = s.scaled(k);
    Pt {
        x,
        y: s.centre(),
        ci: s.ci,
        n: s.n,
        uncertified: false,
    }
}

/// `p`, ringed where some of `stat`'s runs were not certified.
pub(crate) fn marked(p: Pt, stat: &PointStats) -> Pt {
    Pt {
        uncertified: crate::certified::uncertified(stat),
        ..p
    }
}

/// One series per group (`grouped`: its name and members, indices into
/// `stats`), sorted by x, of each member's point `at` gives (its x and
/// summary), marked where runs were not certified; a member without one
/// is left out.
pub(crate) fn group_series(
    stats: &[PointStats],
    grouped: &[(String, Vec<usize>)],
    lines: bool,
    at: &dyn Fn(&PointStats) -> Option<(f64, Summary)>,
) -> Vec<Series> {
    grouped
        .iter()
        .enumerate()
        .map(|(c, (name, members))| {
            let pts = members
                .iter()
                .filter_map(|&p| {
                    let s = &stats[p];
                    let (x, y) = at(s)?;
                    Some(marked(pt(x, &y, 1.0), s))
                })
                .collect();
            series(name, c, pts, lines, true)
        })
        .collect()
}

/// A series of `points`, sorted by x when `by_x` (else in the order given).
pub(crate) fn series(
    name: &str,
    color: usize,
    mut points: Vec<Pt>,
    lines: bool,
    by_x: bool,
) -> Series {
    if by_x {
        points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    Series {
        name: if name.is_empty() {
            "geometric mean, bars: 95% CI".into()
        } else {
            name.to_string()
        },
        points,
        lines,
        dashed: false,
        // Past the palette's colours, a new shape tells series apart.
        marker: Marker::nth(color / PALETTE_SIZE),
        color,
        labels: vec![],
    }
}

/// Several statistics (percentiles) of each group as series, each
/// statistic with its own marker. One group: a colour per statistic.
/// Several: a colour per group, the first statistic solid and the others
/// dashed. `point(p, stat)` gives point `p`'s value.
pub(crate) fn stat_series(
    grouped: &[(String, Vec<usize>)],
    names: &[&str],
    lines: bool,
    by_x: bool,
    point: &dyn Fn(usize, &str) -> Option<Pt>,
) -> Vec<Series> {
    let one = grouped.len() <= 1;
    let mut all = Vec::new();
    for (g, (group, members)) in grouped.iter().enumerate() {
        for (k, stat) in names.iter().enumerate() {
            let pts = members.iter().filter_map(|&p| point(p, stat)).collect();
            let label = if group.is_empty() {
                stat.to_string()
            } else {
                format!("{group} {stat}")
            };
            let mut s = series(&label, if one { k } else { g }, pts, lines, by_x);
            s.dashed = !one && k > 0;
            s.marker = Marker::nth(k);
            all.push(s);
        }
    }
    all
}

/// How the statistics' styles read, for a title: "p50 solid, p99 dashed"
/// when several groups share colours.
pub(crate) fn styles(groups: usize, names: &[&str]) -> String {
    if groups <= 1 || names.len() < 2 {
        return names.join(", ");
    }
    format!("{} solid, {} dashed", names[0], names[1..].join(", "))
}

pub(crate) fn id(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// An x axis for the values `xs`: log₂ when they double, else linear
/// (whole numbers when they are).
fn numeric_scale(xs: &[f64]) -> XScale {
    if is_geometric(xs) {
        XScale::Log2
    } else {
        XScale::Linear {
            integer: xs.iter().all(|x| x.fract() == 0.0),
        }
    }
}

/// `title`, saying so when the scale is logarithmic.
fn scale_title(title: String, scale: &XScale) -> String {
    match scale {
        XScale::Log2 => format!("{title}, log scale"),
        _ => title,
    }
}

/// Axis `i` as an x axis: numbers on a numeric scale (log₂ if they
/// double), anything else (strategies, CPU lists, delay ranges) as named
/// positions.
fn axis_scale(m: &Manifest, i: usize) -> XScale {
    let axis = &m.axes[i];
    let numbers: Option<Vec<f64>> = axis.values.iter().map(Scalar::as_f64).collect();
    match numbers {
        Some(xs) if !axes::is_nominal(axis) && axes::role(axis) != Role::Cores => {
            numeric_scale(&xs)
        }
        _ => XScale::Categories(axis.values.iter().map(|v| axes::label(axis, v)).collect()),
    }
}

/// Where a point sits on axis `i` drawn with `scale`: its value, or its
/// value's position among the axis's values.
fn x_on(m: &Manifest, stat: &PointStats, i: usize, scale: &XScale) -> Option<f64> {
    let v = value(m, stat, i)?;
    match scale {
        XScale::Categories(_) => m.axes[i]
            .values
            .iter()
            .position(|x| x == v)
            .map(|p| p as f64),
        _ => v.as_f64(),
    }
}

fn clients_title(m: &Manifest, clients: &[usize]) -> String {
    let names: Vec<&str> = clients.iter().map(|&i| m.axes[i].key.as_str()).collect();
    if names.contains(&"posters") || names.contains(&"readers") {
        "client connections (posters + readers)".into()
    } else {
        format!("client connections ({})", names.join(", "))
    }
}

/// The x axis of the client's connections, over the points that have them.
fn clients_scale(stats: &[PointStats]) -> XScale {
    let xs: Vec<f64> = stats.iter().filter_map(|s| s.clients).collect();
    numeric_scale(&xs)
}

/// Throughput, per-thread rate, and totals against the client's concurrency,
/// one series per combination of the other axes.
fn client_figures(
    m: &Manifest,
    stats: &[PointStats],
    clients: &[usize],
    last: usize,
) -> Vec<Figure> {
    let x = clients_scale(stats);
    let x_title = scale_title(clients_title(m, clients), &x);
    let grouped = groups(m, stats, &[last]);
    let panel = |y_title: &str, get: &dyn Fn(&PointStats) -> Option<Summary>| Panel {
        y_title: y_title.into(),
        log_y: false,
        series: group_series(stats, &grouped, true, &|s| Some((s.clients?, get(s)?))),
    };
    let figure = |id: &str, title: &str, panels: Vec<Panel>| Figure {
        id: id.into(),
        title: title.into(),
        x_title: x_title.clone(),
        x: x.clone(),
        panels,
    };
    let mut out = vec![figure(
        "throughput-vs-clients",
        "Throughput vs client connections",
        vec![panel(THROUGHPUT, &|s| s.throughput)],
    )];
    if stats.iter().any(|s| s.share.is_some()) {
        out.push(figure(
            "share-of-baseline-vs-clients",
            "Throughput as a share of the baseline vs client connections",
            vec![panel(SHARE, &|s| s.share)],
        ));
    }
    out.extend([
        figure(
            "per-thread-rate-vs-clients",
            "Requests per client thread per second vs client connections",
            vec![panel("requests per client thread per second", &|s| {
                s.per_thread_rps
            })],
        ),
        figure(
            "total-and-per-thread",
            "Total requests and requests per client thread, per run",
            vec![
                panel("total requests per run", &|s| s.requests),
                panel("requests per client thread per run", &|s| {
                    s.requests_per_thread
                }),
            ],
        ),
    ]);
    out
}

/// The latency percentiles shown where several series share a plot.
const TWO_PERCENTILES: [&str; 2] = ["p50", "p99"];

/// The median and p99 latency against the client's concurrency, one
/// colour per combination of the other axes: in a closed loop, latency is
/// what more clients cost once throughput stops growing.
fn latency_vs_clients(
    m: &Manifest,
    stats: &[PointStats],
    clients: &[usize],
    last: usize,
) -> Figure {
    let shown = TWO_PERCENTILES;
    let unit = latency_unit(stats, &shown);
    let grouped = groups(m, stats, &[last]);
    let point = |p: usize, pct: &str| {
        let s = &stats[p];
        Some(marked(pt(s.clients?, s.latency(pct)?, unit.per_us()), s))
    };
    let x = clients_scale(stats);
    Figure {
        id: "latency-vs-clients".into(),
        title: format!(
            "Latency ({}) vs client connections",
            styles(grouped.len(), &shown)
        ),
        x_title: scale_title(clients_title(m, clients), &x),
        x,
        panels: vec![Panel {
            y_title: format!("latency ({}), log scale", unit.symbol()),
            series: stat_series(&grouped, &shown, true, true, &point),
            log_y: true,
        }],
    }
}

/// The unit for the latency percentiles `names` over every point.
fn latency_unit(stats: &[PointStats], names: &[&str]) -> TimeUnit {
    TimeUnit::for_means(
        stats
            .iter()
            .flat_map(|s| names.iter().filter_map(|n| s.latency(n))),
    )
}

/// Latency percentiles against the throughput achieved: all four for one
/// series, the median and p99 for several. With one client axis each
/// series is joined in the order of that axis (not of throughput), so a
/// throughput that falls back as clients are added shows as a line turning
/// back; with several (posters × readers) neighbours are unrelated runs:
/// markers only.
fn latency_vs_load(m: &Manifest, stats: &[PointStats], clients: &[usize]) -> Figure {
    let grouped = groups(m, stats, clients);
    let shown: &[&str] = if grouped.len() <= 1 {
        &["p50", "p90", "p99", "p99.9"]
    } else {
        &TWO_PERCENTILES
    };
    let unit = latency_unit(stats, shown);
    let point = |p: usize, pct: &str| {
        let s = &stats[p];
        Some(marked(
            pt(s.throughput?.centre(), s.latency(pct)?, unit.per_us()),
            s,
        ))
    };
    let joined = clients.len() <= 1;
    let mut series = stat_series(&grouped, shown, joined, false, &point);
    // The highest percentile's markers say which point they are (the
    // others of a point stand below them, at the same throughput).
    let top = shown.len() - 1;
    for (g, (_, members)) in grouped.iter().enumerate() {
        series[g * shown.len() + top].labels = members
            .iter()
            .filter(|&&p| point(p, shown[top]).is_some())
            .map(|&p| stats[p].runs.point.slug.clone())
            .collect();
    }
    Figure {
        id: "latency-vs-load".into(),
        title: "Latency percentiles vs load".into(),
        x_title: THROUGHPUT.into(),
        x: XScale::Linear { integer: false },
        panels: vec![Panel {
            y_title: format!("latency ({}), log scale", unit.symbol()),
            series,
            log_y: true,
        }],
    }
}

/// `metric` against axis `i`'s values, one series per combination of the
/// other axes.
pub fn metric_vs_axis(m: &Manifest, stats: &[PointStats], i: usize, metric: &Metric) -> Figure {
    let axis = &m.axes[i];
    let title = axes::title(axis, &m.points);
    let lines = !axes::is_nominal(axis);
    let x = axis_scale(m, i);
    let at = |s: &PointStats| Some((x_on(m, s, i, &x)?, (metric.get)(s)?));
    let series_list = group_series(stats, &groups(m, stats, &[i]), lines, &at);
    Figure {
        id: format!("{}-vs-{}", metric.id, id(&axis.key)),
        title: format!(
            "{} vs {}",
            metric.title,
            title.split(" (").next().unwrap_or(&title)
        ),
        x_title: scale_title(title, &x),
        x,
        panels: vec![Panel {
            y_title: metric.y_title.into(),
            series: series_list,
            log_y: false,
        }],
    }
}

/// The server's service time (median and p99) against its threads (or
/// the first other axis, or the client's connections).
fn service_time(m: &Manifest, stats: &[PointStats], clients: &[usize]) -> Option<Figure> {
    let pick = (0..m.axes.len())
        .find(|&i| axes::role(&m.axes[i]) == Role::ServerThreads)
        .or_else(|| (0..m.axes.len()).find(|i| !clients.contains(i)));
    let names = ["median", "p99"];
    let unit = TimeUnit::for_means(
        stats
            .iter()
            .flat_map(|s| names.iter().filter_map(|n| s.service(n))),
    );
    let (exclude, x, x_title, id_key) = match pick {
        Some(i) => {
            let x = axis_scale(m, i);
            let title = scale_title(axes::title(&m.axes[i], &m.points), &x);
            (vec![i], x, title, id(&m.axes[i].key))
        }
        None if !clients.is_empty() => {
            let x = clients_scale(stats);
            let title = scale_title(clients_title(m, clients), &x);
            (clients.to_vec(), x, title, "clients".to_string())
        }
        None => return None,
    };
    let x_of = |s: &PointStats| match pick {
        Some(i) => x_on(m, s, i, &x),
        None => s.clients,
    };
    let point = |p: usize, stat: &str| {
        let s = &stats[p];
        Some(marked(pt(x_of(s)?, s.service(stat)?, unit.per_us()), s))
    };
    let lines = pick.map(|i| !axes::is_nominal(&m.axes[i])).unwrap_or(true);
    let grouped = groups(m, stats, &exclude);
    let series = stat_series(&grouped, &names, lines, true, &point);
    Some(Figure {
        id: format!("service-time-vs-{id_key}"),
        title: format!(
            "Server service time per request ({})",
            styles(grouped.len(), &names)
        ),
        x_title,
        x,
        panels: vec![Panel {
            y_title: format!("service time ({}), log scale", unit.symbol()),
            series,
            log_y: true,
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverlab_sweep::{Axis, Source};

    fn manifest(axes: Vec<Axis>) -> Manifest {
        Manifest {
            schema: serverlab_sweep::layout::MANIFEST_SCHEMA.into(),
            name: "t".into(),
            description: String::new(),
            repetitions: 1,
            order: None,
            seed: None,
            target_ci: None,
            max_repetitions: None,
            baseline: None,
            client_cpus: None,
            timeout_s: 1.0,
            serverlab_version: "0".into(),
            axes,
            points: vec![],
            host: None,
            shard: None,
        }
    }

    fn axis(flag: &str, values: Vec<Scalar>) -> Axis {
        Axis {
            key: flag.into(),
            source: Source::ServerFlag(flag.into()),
            values,
        }
    }

    #[test]
    fn numeric_axes_are_numeric_and_doubling_ones_logarithmic() {
        let ints = |v: &[i64]| v.iter().map(|&i| Scalar::Int(i)).collect();
        let strs = |v: &[&str]| v.iter().map(|s| Scalar::Str(s.to_string())).collect();
        let m = manifest(vec![
            axis("threads", ints(&[1, 2, 4, 8])),
            axis("max-connections", ints(&[10, 20, 30])),
            axis("strategy", strs(&["async", "pool-locked"])),
            axis("cpus", strs(&["0", "0-1"])),
        ]);
        assert_eq!(axis_scale(&m, 0), XScale::Log2);
        assert_eq!(axis_scale(&m, 1), XScale::Linear { integer: true });
        assert!(matches!(axis_scale(&m, 2), XScale::Categories(_)));
        assert!(matches!(axis_scale(&m, 3), XScale::Categories(_)));
        assert_eq!(
            scale_title("server threads (--threads)".into(), &XScale::Log2),
            "server threads (--threads), log scale"
        );
    }
}
