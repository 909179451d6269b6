//! Which plots a sweep's data supports, and their series: throughput,
//! per-thread rates, totals and latency against the client's connections;
//! latency percentiles against the throughput achieved; throughput against every other axis (cores,
//! threads, delay range, bucket count…); service time where the server
//! reports it.

use crate::axes::{self, Role};
use crate::chart::{Figure, Panel, Pt, Series, XScale};
use crate::points::PointStats;
use crate::stats::Summary;
use crate::units::TimeUnit;
use serverlab_sweep::{Axis, Manifest, Scalar};

pub const THROUGHPUT: &str = "throughput (requests/s)";

/// Every figure the data supports, in report order.
pub fn figures(m: &Manifest, stats: &[PointStats]) -> Vec<Figure> {
    let clients: Vec<usize> = (0..m.axes.len())
        .filter(|&i| axes::role(&m.axes[i]) == Role::Client)
        .collect();
    let mut out = Vec::new();
    if let Some(&last) = clients.last() {
        out.extend(client_figures(m, stats, &clients, last));
        out.push(latency_vs_clients(m, stats, &clients, last));
    }
    out.push(latency_vs_load(m, stats, &clients));
    for (i, axis) in m.axes.iter().enumerate() {
        let redundant = !clients.is_empty() && axes::is_nominal(axis);
        if axes::role(axis) != Role::Client && !redundant {
            out.push(throughput_vs_axis(m, stats, i));
        }
    }
    if stats.iter().any(|s| !s.service.is_empty()) {
        out.extend(service_time(m, stats, &clients));
    }
    out.retain(|f| {
        f.panels
            .iter()
            .any(|p| p.series.iter().any(|s| !s.points.is_empty()))
    });
    out
}

/// The value a point has on axis `i`.
fn value<'a>(m: &'a Manifest, stat: &PointStats, i: usize) -> Option<&'a Scalar> {
    let axis = &m.axes[i];
    let v = Scalar::from_json(stat.runs.point.params.get(&axis.key)?)?;
    axis.values.iter().find(|x| **x == v)
}

/// Points grouped by their values on every axis but `exclude`, named
/// `key=value, …`, in order of first appearance. Points without a
/// successful run are left out.
fn groups(m: &Manifest, stats: &[PointStats], exclude: &[usize]) -> Vec<(String, Vec<usize>)> {
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

fn pt(x: f64, s: &Summary, k: f64) -> Pt {
    let s = s.scaled(k);
    Pt {
        x,
        y: s.mean,
        ci: s.ci,
    }
}

fn series(name: &str, color: usize, mut points: Vec<Pt>, lines: bool) -> Series {
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    Series {
        name: if name.is_empty() {
            "mean, bars: 95% CI".into()
        } else {
            name.to_string()
        },
        points,
        lines,
        dashed: false,
        color,
    }
}

fn id(text: &str) -> String {
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

fn clients_title(m: &Manifest, clients: &[usize]) -> String {
    let names: Vec<&str> = clients.iter().map(|&i| m.axes[i].key.as_str()).collect();
    if names.contains(&"posters") || names.contains(&"readers") {
        "client connections (posters + readers)".into()
    } else {
        format!("client connections ({})", names.join(", "))
    }
}

/// Throughput, per-thread rate, and totals against the client's concurrency,
/// one series per combination of the other axes.
fn client_figures(
    m: &Manifest,
    stats: &[PointStats],
    clients: &[usize],
    last: usize,
) -> Vec<Figure> {
    let x_title = clients_title(m, clients);
    let grouped = groups(m, stats, &[last]);
    let panel = |y_title: &str, get: &dyn Fn(&PointStats) -> Option<Summary>| Panel {
        y_title: y_title.into(),
        series: grouped
            .iter()
            .enumerate()
            .map(|(c, (name, members))| {
                let pts = members
                    .iter()
                    .filter_map(|&p| Some(pt(stats[p].clients?, &get(&stats[p])?, 1.0)))
                    .collect();
                series(name, c, pts, true)
            })
            .collect(),
    };
    let figure = |id: &str, title: &str, panels: Vec<Panel>| Figure {
        id: id.into(),
        title: title.into(),
        x_title: x_title.clone(),
        x: XScale::Numeric,
        panels,
    };
    vec![
        figure(
            "throughput-vs-clients",
            "Throughput vs client connections",
            vec![panel(THROUGHPUT, &|s| s.throughput)],
        ),
        figure(
            "per-thread-rate-vs-clients",
            "Requests per client thread per second vs client threads",
            vec![panel("requests per thread per second", &|s| {
                s.per_thread_rps
            })],
        ),
        figure(
            "total-and-per-thread",
            "Total requests and requests per thread, per run",
            vec![
                panel("total requests per run", &|s| s.requests),
                panel("requests per thread per run", &|s| s.requests_per_thread),
            ],
        ),
    ]
}

/// The median (solid) and p99 (dashed) latency against the client's
/// concurrency, one colour per combination of the other axes: in a closed
/// loop, latency is what more clients cost once throughput stops growing.
fn latency_vs_clients(
    m: &Manifest,
    stats: &[PointStats],
    clients: &[usize],
    last: usize,
) -> Figure {
    let shown = ["p50", "p99"];
    let max_us = stats
        .iter()
        .flat_map(|s| shown.iter().filter_map(|n| s.latency(n)))
        .map(|s| s.ci.map(|c| c.1).unwrap_or(s.max).max(s.mean))
        .fold(0.0, f64::max);
    let unit = TimeUnit::for_max(max_us);
    let mut all = Vec::new();
    for (g, (name, members)) in groups(m, stats, &[last]).iter().enumerate() {
        for (k, pct) in shown.iter().enumerate() {
            let pts = members
                .iter()
                .filter_map(|&p| {
                    let s = &stats[p];
                    Some(pt(s.clients?, s.latency(pct)?, unit.per_us()))
                })
                .collect();
            let label = if name.is_empty() {
                pct.to_string()
            } else {
                format!("{name} {pct}")
            };
            let mut s = series(&label, g, pts, true);
            s.dashed = k > 0;
            all.push(s);
        }
    }
    Figure {
        id: "latency-vs-clients".into(),
        title: "Latency (p50 solid, p99 dashed) vs client connections".into(),
        x_title: clients_title(m, clients),
        x: XScale::Numeric,
        panels: vec![Panel {
            y_title: format!("latency ({})", unit.symbol()),
            series: all,
        }],
    }
}

/// Latency percentiles against the throughput achieved: all four for one
/// series, the median (solid) and p99 (dashed) for several, each series
/// joined along its client axis when there is just one.
fn latency_vs_load(m: &Manifest, stats: &[PointStats], clients: &[usize]) -> Figure {
    let grouped = groups(m, stats, clients);
    let shown: &[&str] = if grouped.len() <= 1 {
        &["p50", "p90", "p99", "p99.9"]
    } else {
        &["p50", "p99"]
    };
    let max_us = stats
        .iter()
        .flat_map(|s| shown.iter().filter_map(|n| s.latency(n)))
        .map(|s| s.ci.map(|c| c.1).unwrap_or(s.max).max(s.mean))
        .fold(0.0, f64::max);
    let unit = TimeUnit::for_max(max_us);
    // One client axis orders a series' points; with several (posters ×
    // readers) neighbours in throughput are unrelated runs: markers only.
    let joined = clients.len() <= 1;
    let mut all = Vec::new();
    for (g, (name, members)) in grouped.iter().enumerate() {
        for (k, pct) in shown.iter().enumerate() {
            let pts = members
                .iter()
                .filter_map(|&p| {
                    let s = &stats[p];
                    Some(pt(s.throughput?.mean, s.latency(pct)?, unit.per_us()))
                })
                .collect();
            let (label, color, dashed) = if grouped.len() <= 1 {
                (pct.to_string(), k, false)
            } else {
                (format!("{name} {pct}"), g, k > 0)
            };
            let mut s = series(&label, color, pts, joined);
            s.dashed = dashed;
            all.push(s);
        }
    }
    Figure {
        id: "latency-vs-load".into(),
        title: "Latency percentiles vs load".into(),
        x_title: THROUGHPUT.into(),
        x: XScale::Numeric,
        panels: vec![Panel {
            y_title: format!("latency ({})", unit.symbol()),
            series: all,
        }],
    }
}

/// Throughput against one axis's values, one series per combination of
/// the others.
fn throughput_vs_axis(m: &Manifest, stats: &[PointStats], i: usize) -> Figure {
    let axis = &m.axes[i];
    let title = axes::title(axis, &m.points);
    let lines = !axes::is_nominal(axis);
    let grouped = groups(m, stats, &[i]);
    let series_list = grouped
        .iter()
        .enumerate()
        .map(|(c, (name, members))| {
            let pts = members
                .iter()
                .filter_map(|&p| {
                    let x = axis
                        .values
                        .iter()
                        .position(|v| Some(v) == value(m, &stats[p], i))?;
                    Some(pt(x as f64, &stats[p].throughput?, 1.0))
                })
                .collect();
            series(name, c, pts, lines)
        })
        .collect();
    Figure {
        id: format!("throughput-vs-{}", id(&axis.key)),
        title: format!(
            "Throughput vs {}",
            title.split(" (").next().unwrap_or(&title)
        ),
        x_title: title,
        x: XScale::Categories(axis.values.iter().map(|v| axes::label(axis, v)).collect()),
        panels: vec![Panel {
            y_title: THROUGHPUT.into(),
            series: series_list,
        }],
    }
}

/// The server's service time (median solid, p99 dashed) against its
/// threads (or the first other axis, or the client's connections).
fn service_time(m: &Manifest, stats: &[PointStats], clients: &[usize]) -> Option<Figure> {
    let pick = (0..m.axes.len())
        .find(|&i| axes::role(&m.axes[i]) == Role::ServerThreads)
        .or_else(|| (0..m.axes.len()).find(|i| !clients.contains(i)));
    let names = ["median", "p99"];
    let max_us = stats
        .iter()
        .flat_map(|s| names.iter().filter_map(|n| s.service(n)))
        .map(|s| s.ci.map(|c| c.1).unwrap_or(s.max).max(s.mean))
        .fold(0.0, f64::max);
    let unit = TimeUnit::for_max(max_us);
    let (exclude, x_title, x, id_key): (Vec<usize>, String, XScale, String) = match pick {
        Some(i) => {
            let axis = &m.axes[i];
            let labels = axis.values.iter().map(|v| axes::label(axis, v)).collect();
            (
                vec![i],
                axes::title(axis, &m.points),
                XScale::Categories(labels),
                id(&axis.key),
            )
        }
        None if !clients.is_empty() => (
            clients.to_vec(),
            clients_title(m, clients),
            XScale::Numeric,
            "clients".into(),
        ),
        None => return None,
    };
    let x_of = |s: &PointStats| -> Option<f64> {
        match pick {
            Some(i) => {
                let v = value(m, s, i);
                m.axes[i]
                    .values
                    .iter()
                    .position(|x| Some(x) == v)
                    .map(|p| p as f64)
            }
            None => s.clients,
        }
    };
    let lines = pick.map(|i| !axes::is_nominal(&m.axes[i])).unwrap_or(true);
    let mut all = Vec::new();
    for (g, (name, members)) in groups(m, stats, &exclude).iter().enumerate() {
        for (k, stat) in names.iter().enumerate() {
            let pts: Vec<Pt> = members
                .iter()
                .filter_map(|&p| Some(pt(x_of(&stats[p])?, stats[p].service(stat)?, unit.per_us())))
                .collect();
            let label = if name.is_empty() {
                stat.to_string()
            } else {
                format!("{name} {stat}")
            };
            let mut s = series(&label, g, pts, lines);
            s.dashed = k > 0;
            all.push(s);
        }
    }
    Some(Figure {
        id: format!("service-time-vs-{id_key}"),
        title: "Server service time per request".into(),
        x_title,
        x,
        panels: vec![Panel {
            y_title: format!("service time ({})", unit.symbol()),
            series: all,
        }],
    })
}
