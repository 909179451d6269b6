//! The report of hand-made sweeps (fixtures/README.md works out every
//! expected number): statistics, tables, plots (SVG parsed, PNG present),
//! the HTML page, and the comparison of two sweeps.
// A test reads as one story; the 60-line limit is for the code under test.
#![allow(clippy::too_many_lines)]

mod common;

use common::{copy, fixture, set_throughput};
use serverlab_report::data::Sweep;
use serverlab_report::points::PointStats;
use serverlab_report::{generate, Written};
use std::path::Path;

fn close(got: f64, want: f64, tol: f64) {
    assert!((got - want).abs() <= tol, "got {got}, want {want} ± {tol}");
}

#[test]
fn statistics_match_the_hand_computed_values() {
    let sweep = Sweep::read(&fixture("a")).unwrap();
    let stats: Vec<PointStats> = sweep.points.iter().map(PointStats::of).collect();

    let one = &stats[0];
    let t = one.throughput.unwrap();
    assert_eq!(
        (t.n, t.mean, t.median, t.min, t.max),
        (3, 1200.0, 1200.0, 1000.0, 1400.0)
    );
    close(t.sd.unwrap(), 200.0, 1e-9);
    close(t.cv.unwrap(), 1.0 / 6.0, 1e-12);
    // On the log scale: geometric mean ∛(1000·1200·1400), t(0.975, 2) on
    // the logs' sd 0.168433, back-transformed.
    close(t.centre(), 1188.7844, 1e-3);
    let (lo, hi) = t.ci.unwrap();
    close(lo, 782.3302, 1e-3);
    close(hi, 1806.4090, 1e-3);
    assert_eq!(one.clients, Some(2.0));
    // Over the measured 10 s, not the threads' runtimes (10.4 s in rep 1).
    close(one.per_thread_rps.unwrap().mean, 600.0, 1e-9);
    close(one.requests_per_thread.unwrap().mean, 6000.0, 1e-9);
    close(one.latency("p99").unwrap().mean, 500.0, 1e-9);
    let tail = one.latency("p99.9").unwrap();
    close(tail.mean, 2500.0, 1e-9);
    close(tail.centre(), 2466.2121, 1e-3);
    close(tail.ci.unwrap().0, 1489.1682, 1e-3);
    close(tail.ci.unwrap().1, 4084.2947, 1e-3);
    assert!(one.service.is_empty());

    let two = &stats[1];
    assert_eq!(two.runs.failed.len(), 1);
    assert_eq!(two.runs.failed[0].repetition, 3);
    let t = two.throughput.unwrap();
    assert_eq!((t.n, t.mean), (2, 2300.0));
    close(t.sd.unwrap(), 424.26407, 1e-4);
    assert!(t.few());
    assert_eq!(two.clients, Some(3.0));
    for (name, want) in [
        ("p50", 100.0),
        ("p90", 200.0),
        ("p99", 1000.0),
        ("p99.9", 1000.0),
    ] {
        assert_eq!(two.latency(name).unwrap().mean, want, "{name}");
    }
    close(two.service("p99").unwrap().mean, 90.0, 1e-9);
    close(two.service("median").unwrap().mean, 20.0, 1e-9);
    assert_eq!(two.bottlenecked, 1);
}

/// n = 2 (t = 12.7) printed −1,512 … 6,112 req/s with mean ± t·sd/√n;
/// on the log scale it stays above zero, as does a skewed sample's.
#[test]
fn confidence_intervals_never_reach_below_zero() {
    let tmp = copy("a");
    set_throughput(tmp.path(), "posters=1", 3, 60.0);
    let sweep = Sweep::read(tmp.path()).unwrap();
    let stats: Vec<PointStats> = sweep.points.iter().map(PointStats::of).collect();
    let two = stats[1].throughput.unwrap();
    assert_eq!(two.n, 2);
    let (lo, hi) = two.ci.unwrap();
    close(lo, 430.6336, 1e-3);
    close(hi, 12075.2312, 1e-3);
    // 1000, 1200 and 60: skewed by one run twenty times slower.
    let skewed = stats[0].throughput.unwrap();
    let (lo, hi) = skewed.ci.unwrap();
    assert!(
        lo > 0.0 && lo < skewed.centre() && skewed.centre() < hi,
        "{lo} {hi}"
    );
    assert!(
        skewed.mean - 4.302652729911275 * skewed.sd.unwrap() / 3f64.sqrt() < 0.0,
        "the textbook interval would have gone below zero here"
    );
    for s in &stats {
        for (_, l) in &s.latency {
            assert!(l.ci.is_none_or(|(lo, _)| lo > 0.0), "{l:?}");
        }
    }
    let w = report(tmp.path(), None);
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    assert!(
        md.contains(
            "| 2 | 2 | 2,300 | 2,280 | 2,300 | 2,000 | 2,600 | 424 | 18.4% | 431 – 12,075 |"
        ),
        "{md}"
    );
    for line in md.lines().filter(|l| l.contains(" – ")) {
        assert!(
            !line.contains("| -") && !line.contains("(-"),
            "a negative bound: {line}"
        );
    }
}

fn report(dir: &Path, other: Option<&Path>) -> Written {
    generate(dir, other).unwrap()
}

#[test]
fn markdown_tables_hold_the_statistics() {
    let tmp = copy("a");
    let w = report(tmp.path(), None);
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    assert!(
        md.contains(
            "| posters | n | mean req/s | geo. mean | median | min | max | sd | CV | 95% CI |"
        ),
        "{md}"
    );
    assert!(
        md.contains(
            "| 1 | 3 | 1,200 | 1,189 | 1,200 | 1,000 | 1,400 | 200 | 16.7% | 782 – 1,806 |"
        ),
        "{md}"
    );
    assert!(
        md.contains(
            "| 2 | 2 | 2,300 | 2,280 | 2,300 | 2,000 | 2,600 | 424 | 18.4% | 431 – 12,075 |"
        ),
        "{md}"
    );
    // Each latency column in its own unit: p50 in µs; p99 (up to 1000 µs) and p99.9 in ms.
    assert!(
        md.contains("| posters | p50 (µs) | p90 (µs) | p99 (ms) | p99.9 (ms) |"),
        "{md}"
    );
    // The overview: geometric mean (95% CI); n = 2 is marked.
    assert!(md.contains("| 1 | 100 (100 – 100) | 150 (150 – 150) | 0.493 (0.298 – 0.817) | 2.47 (1.49 – 4.08) |"), "{md}");
    assert!(md.contains("[n=2]"), "{md}");
    // Every latency percentile also in full: p99.9 of posters=1 is
    // 2, 2.5, 3 ms (sd 0.5, CV 20%).
    assert!(
        md.contains("### Latency p99.9 (ms), all operations, in full"),
        "{md}"
    );
    assert!(
        md.contains(
            "| posters | n | mean ms | geo. mean | median | min | max | sd | CV | 95% CI |"
        ),
        "{md}"
    );
    assert!(
        md.contains("| 1 | 3 | 2.50 | 2.47 | 2.50 | 2 | 3 | 0.500 | 20% | 1.49 – 4.08 |"),
        "{md}"
    );
    assert!(
        md.contains("### Latency p50 (µs), all operations, in full"),
        "{md}"
    );
    assert!(md.contains("Server service time"), "{md}");
    assert!(
        md.contains("posters=2 rep 3: failed: the load failed"),
        "{md}"
    );
    assert!(md.contains("may have set the pace"), "{md}");
    assert_eq!(w.failed_runs, 1);
    assert_eq!(w.throughput_table.lines().count(), 4);
}

/// Every `<text>` in an SVG document.
fn svg_texts(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text)
        .unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(|t| t.trim().to_string())
        .collect()
}

#[test]
fn plots_parse_and_carry_their_axis_titles() {
    let tmp = copy("a");
    let w = report(tmp.path(), None);
    let plots = tmp.path().join("plots");
    let expect: [(&str, &[&str]); 6] = [
        (
            "throughput-vs-clients",
            &[
                "throughput (requests/s)",
                "client connections (posters + readers)",
            ],
        ),
        (
            "per-thread-rate-vs-clients",
            &[
                "requests per client thread per second",
                "client connections (posters + readers)",
            ],
        ),
        (
            "total-and-per-thread",
            &[
                "total requests per run",
                "requests per client thread per run",
            ],
        ),
        // p99 reaches 1000 µs at 3 clients: the axis is in ms.
        (
            "latency-vs-clients",
            &[
                "latency (ms), log scale",
                "client connections (posters + readers)",
                "p50",
                "p99",
            ],
        ),
        // p99.9 reaches 2.5 ms (CI to 3.7 ms): the axis is in ms, not µs or s.
        (
            "latency-vs-load",
            &[
                "latency (ms), log scale",
                "throughput (requests/s)",
                "p50",
                "p99.9",
            ],
        ),
        ("service-time-vs-clients", &["service time (µs), log scale"]),
    ];
    assert_eq!(w.plots.len(), expect.len(), "{:?}", w.plots);
    for (id, titles) in expect {
        let texts = svg_texts(&plots.join(format!("{id}.svg")));
        for t in titles {
            assert!(
                texts.iter().any(|x| x == t),
                "{id}.svg lacks '{t}': {texts:?}"
            );
        }
        // Titles and axis titles agree (no "threads" title over a
        // "connections" axis).
        if titles.contains(&"client connections (posters + readers)") {
            assert!(
                texts.iter().any(
                    |t| t.ends_with("vs client connections") || t.starts_with("Total requests")
                ),
                "{id}: {texts:?}"
            );
        }
        let png = std::fs::read(plots.join(format!("{id}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{id}.png");
        assert!(png.len() > 10_000, "{id}.png is suspiciously small");
    }
}

/// Percentiles are told apart by their markers, not only by colour or
/// dashes (which marker-only plots do not have); every caption says how
/// many runs a marker stands for and what its bars are.
#[test]
fn percentiles_have_their_own_markers_and_captions_say_n_and_bars() {
    let tmp = copy("a");
    let w = report(tmp.path(), None);
    let svg = std::fs::read_to_string(tmp.path().join("plots/latency-vs-load.svg")).unwrap();
    // p50 circles; p90 and p99.9 triangles and diamonds (polygons); p99 squares.
    assert!(svg.contains("<circle"), "no circle markers");
    assert!(
        svg.matches("<polygon").count() >= 4,
        "no triangle or diamond markers"
    );
    assert!(svg.contains("<rect"), "no square markers");
    let html = std::fs::read_to_string(&w.html).unwrap();
    let captions: Vec<&str> = html.split("<figcaption>").skip(1).collect();
    assert_eq!(captions.len(), w.plots.len());
    for c in captions {
        let c = &c[..c.find("</figcaption>").unwrap()];
        assert!(c.contains("n = 2"), "{c}");
        assert!(c.contains("error bars: its 95% confidence interval"), "{c}");
    }
}

/// The latency axes are logarithmic: their tick labels step 1, 2, 5 ×
/// 10ⁿ, and a tenfold step is as tall wherever it is.
#[test]
fn latency_axes_are_logarithmic() {
    let tmp = copy("a");
    report(tmp.path(), None);
    let text = std::fs::read_to_string(tmp.path().join("plots/latency-vs-load.svg")).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    // Tick labels of the y axis: numbers drawn right-aligned at one x.
    let mut labels: Vec<(f64, f64, f64)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| {
            let v: f64 = n.text()?.trim().replace(',', "").parse().ok()?;
            let x: f64 = n.attribute("x")?.parse().ok()?;
            let y: f64 = n.attribute("y")?.parse().ok()?;
            Some((x, y, v))
        })
        .collect();
    let left = labels.iter().map(|l| l.0).fold(f64::INFINITY, f64::min);
    labels.retain(|l| (l.0 - left).abs() < 1.0);
    labels.sort_by(|a, b| b.1.total_cmp(&a.1));
    let values: Vec<f64> = labels.iter().map(|l| l.2).collect();
    // p50 100 µs … p99.9 up to 4.1 ms: 0.1 … 5 ms.
    assert_eq!(values, [0.1, 0.2, 0.5, 1.0, 2.0, 5.0], "{labels:?}");
    let y = |v: f64| labels.iter().find(|l| l.2 == v).unwrap().1;
    let decade = y(0.1) - y(1.0);
    assert!(decade > 50.0);
    assert!(
        ((y(0.2) - y(2.0)) - decade).abs() <= 1.5,
        "not a log axis: {labels:?}"
    );
    assert!(
        ((y(0.5) - y(5.0)) - decade).abs() <= 1.5,
        "not a log axis: {labels:?}"
    );
}

/// Latency vs load joins each series in client order, so a throughput that
/// drops back as clients are added shows as a line turning back.
#[test]
fn latency_vs_load_follows_the_client_axis() {
    let tmp = copy("a");
    for rep in 1..=2 {
        let path = tmp
            .path()
            .join(format!("runs/posters=2/rep-{rep}/load.json"));
        let mut load: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        load["results"]["throughput_rps"] = 500.0.into();
        std::fs::write(&path, load.to_string()).unwrap();
    }
    let sweep = Sweep::read(tmp.path()).unwrap();
    let stats: Vec<PointStats> = sweep.points.iter().map(PointStats::of).collect();
    let figs = serverlab_report::figures::figures(&sweep.manifest, &stats);
    let fig = figs.iter().find(|f| f.id == "latency-vs-load").unwrap();
    for s in &fig.panels[0].series {
        let xs: Vec<f64> = s.points.iter().map(|p| p.x).collect();
        assert_eq!(xs.len(), 2, "{}", s.name);
        close(xs[0], 1188.7844, 1e-3);
        close(xs[1], 500.0, 1e-9);
        assert!(s.lines);
    }
}

#[test]
fn html_is_self_contained_with_every_plot_inline() {
    let tmp = copy("a");
    let w = report(tmp.path(), None);
    let html = std::fs::read_to_string(&w.html).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<svg").count(), w.plots.len());
    assert!(!html.contains("<?xml"), "an XML prolog inside HTML");
    assert!(
        !html.contains("<img"),
        "plots must be inline, not linked images"
    );
    for title in [
        "Throughput vs client connections",
        "Latency percentiles vs load",
    ] {
        assert!(
            html.contains(&format!("<figcaption><strong>{title}")),
            "{title}"
        );
    }
    assert!(html.contains("<td>782 – 1,806</td>"));
}

#[test]
fn comparison_with_another_sweep() {
    let tmp = copy("a");
    let w = report(tmp.path(), Some(&fixture("b")));
    let table = w.comparison_table.expect("a comparison");
    let row = |point: &str, metric: &str| -> Vec<String> {
        table
            .lines()
            .find(|l| l.contains(&format!("| {point} | {metric}")))
            .unwrap_or_else(|| panic!("no row {point} {metric}: {table}"))
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    // this ÷ other of the geometric means: 1188.78 / 1997.50.
    let r = row("posters=1", "throughput");
    assert_eq!(r[5], "0.595", "{r:?}");
    assert_eq!(r[7], "-40.5%");
    assert!(r[9].starts_with('-'), "a negative effect size: {r:?}");
    assert_eq!(r[10], "yes", "{r:?}");
    let r = row("posters=2", "throughput");
    assert_eq!(r[5], "0.994", "{r:?}");
    assert_eq!(r[10], "no", "{r:?}");
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    assert!(md.contains("Compared with"));
    assert!(md.contains("same settings"), "{md}");
    assert!(md.contains("Welch's t-test on the logarithms"), "{md}");
    assert!(md.contains("Assumptions: runs are independent"), "{md}");
    assert!(md.contains("Hedges' g"), "{md}");
    assert!(md.contains("about 0.2 significant"), "{md}");
}

/// The comparison names the fixed flags that differ and counts the points
/// that found no partner.
#[test]
fn comparison_names_differing_flags_and_unmatched_points() {
    let tmp = copy("a");
    let other = copy("b");
    let path = other.path().join("sweep.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let points = m["points"].as_array_mut().unwrap();
    points.truncate(1);
    points[0]["server_flags"][1] = "async".into();
    m["client_cpus"] = serde_json::Value::Null;
    std::fs::write(&path, m.to_string()).unwrap();
    // Its runs say what ran: make them agree with the edited manifest.
    for rep in 1..=3 {
        let run = other
            .path()
            .join(format!("runs/posters=1/rep-{rep}/run.json"));
        let mut r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&run).unwrap()).unwrap();
        r["server"]["flags"][1] = "async".into();
        r["client_cpus"] = serde_json::Value::Null;
        std::fs::write(&run, r.to_string()).unwrap();
    }
    let w = report(tmp.path(), Some(other.path()));
    let notes = w.comparison_notes.join("\n");
    assert!(
        notes.contains("server --strategy: pool-locked here, async there"),
        "{notes}"
    );
    assert!(
        notes.contains("client_cpus: 1 here, not pinned there"),
        "{notes}"
    );
    assert!(
        notes.contains("1 of this sweep and 0 of the other"),
        "{notes}"
    );
    assert!(
        !notes.contains("--posters"),
        "an axis listed as a difference: {notes}"
    );
}

/// A run in which no request completed has no latency: it is left out of
/// the latency statistics (not averaged in as 0 µs), but its throughput of
/// 0 counts.
#[test]
fn a_run_with_no_completed_request_has_no_latency() {
    let tmp = copy("a");
    let path = tmp.path().join("runs/posters=1/rep-3/load.json");
    let mut load: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let r = &mut load["results"];
    r["requests"] = 0.into();
    r["throughput_rps"] = 0.0.into();
    for op in r["operations"].as_array_mut().unwrap() {
        op["count"] = 0.into();
        op["rate_rps"] = 0.0.into();
        op["histogram_us"] = serde_json::json!([]);
        for v in op["latency_us"].as_object_mut().unwrap().values_mut() {
            *v = 0.into();
        }
    }
    std::fs::write(&path, load.to_string()).unwrap();

    let sweep = Sweep::read(tmp.path()).unwrap();
    let one = PointStats::of(&sweep.points[0]);
    let p99 = one.latency("p99").unwrap();
    assert_eq!((p99.n, p99.mean), (2, 450.0));
    let t = one.throughput.unwrap();
    assert_eq!((t.n, t.mean), (3, (1000.0 + 1200.0) / 3.0));
    assert_eq!(one.empty, [3]);
}

/// A run whose record says it ran with other flags than its point (an old
/// configuration left in the directory) is listed as stale and left out.
#[test]
fn a_run_made_with_other_flags_is_stale_and_left_out() {
    let tmp = copy("a");
    let record = tmp.path().join("runs/posters=1/rep-3/run.json");
    let text = std::fs::read_to_string(&record).unwrap();
    let mut run: serde_json::Value = serde_json::from_str(&text).unwrap();
    run["load"]["flags"][5] = "30s".into();
    std::fs::write(&record, run.to_string()).unwrap();

    let sweep = Sweep::read(tmp.path()).unwrap();
    let one = &sweep.points[0];
    assert_eq!(one.runs.len(), 2);
    assert_eq!(one.stale.len(), 1);
    assert!(one.stale[0].error.contains("30s"), "{}", one.stale[0].error);
    let stats = PointStats::of(one);
    assert_eq!(stats.throughput.unwrap().mean, 1100.0);

    let w = report(tmp.path(), None);
    assert_eq!(w.stale_runs, 1);
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    assert!(md.contains("posters=1 rep 3: stale"), "{md}");
    assert!(md.contains("1 stale"), "{md}");
}

#[test]
fn not_a_sweep_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let err = generate(tmp.path(), None).err().expect("an error");
    assert!(
        err.to_string().contains("is not a sweep's results"),
        "{err}"
    );
}
