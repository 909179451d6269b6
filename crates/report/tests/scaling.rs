//! The scaling section of a sweep with a cores axis: speedup and
//! efficiency per series, the Universal Scalability Law fitted to each,
//! the summary's words on which series scale and where one stops, and
//! points that shared CPUs with the load marked.
// A test reads as one story; the 60-line limit is for the code under test.
#![allow(clippy::too_many_lines)]

mod common;

use common::{fixture, read_json, write_json, write_run};
use serde_json::{json, Value};
use serverlab_report::usl::Law;
use std::path::Path;

/// Stores × cores (× pipeline where `pipelines` has several), 3 runs
/// each within ±2%, following each store's law (pipeline 1 at half of it);
/// at 8 cores the server shared CPUs with the load.
fn sweep_of(dir: &Path, stores: &[(&str, Law)], cores: &[i64], pipelines: &[i64]) {
    let a = fixture("a");
    let mut run = read_json(&a.join("runs/posters=1/rep-1/run.json"));
    run["client_cpus"] = json!(null);
    let templates = (&run, &read_json(&a.join("runs/posters=1/rep-1/load.json")));
    let mut points = Vec::new();
    for (store, law) in stores {
        for &k in cores {
            for &pipeline in pipelines {
                let point = point_of(points.len(), store, k, pipeline, pipelines.len() > 1);
                for rep in 1..=3usize {
                    let wobble = 1.0 + 0.02 * (rep as f64 - 2.0);
                    let x =
                        law.throughput(k as f64) * wobble / if pipeline == 1 { 2.0 } else { 1.0 };
                    write_run(dir, templates, &point, rep, (x, 50.0));
                }
                points.push(point);
            }
        }
    }
    let mut axes = vec![
        json!({"key": "store", "source": {"server-flag": "store"},
               "values": stores.iter().map(|s| s.0).collect::<Vec<_>>()}),
        json!({"key": "cores", "source": "cores", "values": cores}),
    ];
    if pipelines.len() > 1 {
        axes.push(
            json!({"key": "pipeline", "source": {"load-flag": "pipeline"}, "values": pipelines}),
        );
    }
    let manifest = json!({
        "schema": "serverlab-sweep/2", "name": "scaling", "description": "",
        "repetitions": 3, "order": "random", "seed": 1, "target_ci": null, "max_repetitions": null,
        "baseline": null, "client_cpus": null, "timeout_s": 60.0, "serverlab_version": "0.1.0",
        "axes": axes, "points": points
    });
    write_json(&dir.join("sweep.json"), &manifest);
}

fn scaling_sweep(dir: &Path, stores: &[(&str, Law)], cores: &[i64]) {
    sweep_of(dir, stores, cores, &[16]);
}

/// A point of [`sweep_of`], placed as the sweep places one on 16 CPUs
/// (shared at 8, as on a smaller machine).
fn point_of(index: usize, store: &str, k: i64, pipeline: i64, pipeline_axis: bool) -> Value {
    let shared = if k == 8 { json!([0, 1]) } else { json!([]) };
    let (slug, params) = match pipeline_axis {
        true => (
            format!("store={store},cores={k},pipeline={pipeline}"),
            json!({"store": store, "cores": k, "pipeline": pipeline}),
        ),
        false => (
            format!("store={store},cores={k}"),
            json!({"store": store, "cores": k}),
        ),
    };
    json!({
        "index": index, "slug": slug, "params": params,
        "server_protocol": "board",
        "server_flags": ["--store", store, "--cpus", format!("0-{}", k - 1), "--threads", k.to_string()],
        "load_protocol": "board",
        "load_flags": ["--pipeline", pipeline.to_string(), "--cpus", "8-15"],
        "placement": {"cores": k, "server_cpus": format!("0-{}", k - 1), "load_cpus": "8-15",
            "shared": shared, "how": "one per physical core, on NUMA node 0"}
    })
}

const RWLOCK: Law = Law {
    lambda: 1.7e6,
    sigma: 0.1,
    kappa: 0.2,
};
const LOCKFREE: Law = Law {
    lambda: 1.5e6,
    sigma: 0.02,
    kappa: 0.0005,
};

#[test]
fn a_cores_axis_gets_a_scaling_section_that_says_where_each_series_stops() {
    let tmp = tempfile::tempdir().unwrap();
    scaling_sweep(
        tmp.path(),
        &[("rwlock", RWLOCK), ("lockfree", LOCKFREE)],
        &[1, 2, 4, 8],
    );
    let w = serverlab_report::generate(tmp.path(), None).unwrap();
    let summary = w.summary.join("\n");
    let verdict = |series: &str| {
        let head = format!("{series}: **");
        w.summary.iter().find(|l| l.starts_with(&head)).cloned()
    };
    let rwlock = verdict("store=rwlock").expect(&summary);
    assert!(rwlock.contains("**stops scaling**"), "{summary}");
    let peak = RWLOCK.peak().unwrap();
    assert!(
        rwlock.contains(&format!("peak at {peak:.1} cores")),
        "{rwlock}"
    );
    assert!(
        rwlock.contains("σ = 0.1") && rwlock.contains("κ = 0.2"),
        "{rwlock}"
    );
    let lockfree = verdict("store=lockfree").expect(&summary);
    assert!(lockfree.contains("**scales**"), "{summary}");
    assert!(
        summary.contains("At 8 cores the server shared CPUs"),
        "{summary}"
    );

    let table = w.scaling_table.unwrap();
    assert!(table.contains("| store=rwlock | 1 |"), "{table}");
    assert!(table.contains("| store=lockfree | 8† |"), "{table}");
    assert!(table.contains("1.00×") && table.contains("100%"), "{table}");
    let fits = w.scaling_fits.unwrap();
    // nls fits every run: the runs at each count (2% either side) average
    // to the law, so λ is its own (the relative fit of geometric means,
    // the default before, said 1,69…).
    assert!(fits.contains("| store=rwlock | 1,700,000 ("), "{fits}");
    assert!(
        fits.contains("| 0.100 (0.0") && fits.contains("| 0.200 (0.1"),
        "{fits}"
    );

    let md = std::fs::read_to_string(&w.markdown).unwrap();
    assert!(md.contains("## Scaling with cores"), "{md}");
    assert!(md.contains("Fitted by method `nls`"), "the method is named");
    assert!(md.contains("Universal Scalability Law fits"));
    let svg = tmp.path().join("plots/scaling-throughput-vs-cores.svg");
    assert!(w.plots.contains(&svg), "{:?}", w.plots);
    let text = std::fs::read_to_string(&svg).unwrap();
    roxmltree::Document::parse(&text).unwrap();
    assert!(
        text.contains("USL fit") && text.contains("ideal"),
        "curves are drawn"
    );
    assert!(
        text.contains("shares CPUs with the load"),
        "shared points are marked"
    );
    // The generic plot against the cores axis is left to the section.
    assert!(!w
        .plots
        .iter()
        .any(|p| p.ends_with("throughput-vs-cores.svg")));
    if let Ok(keep) = std::env::var("KEEP_PNG") {
        std::fs::copy(
            tmp.path().join("plots/scaling-throughput-vs-cores.png"),
            keep,
        )
        .unwrap();
    }
}

#[test]
fn series_that_cannot_be_fitted_say_so_and_draw_no_curve() {
    let tmp = tempfile::tempdir().unwrap();
    scaling_sweep(tmp.path(), &[("rwlock", RWLOCK)], &[1, 2]);
    let w = serverlab_report::generate(tmp.path(), None).unwrap();
    let summary = w.summary.join("\n");
    assert!(
        summary.contains("store=rwlock: 1.3× on 2 cores"),
        "{summary}"
    );
    assert!(summary.contains("cannot fit: 2 core counts"), "{summary}");
    let fits = w.scaling_fits.unwrap();
    assert!(fits.contains("cannot fit"), "{fits}");
    let svg =
        std::fs::read_to_string(tmp.path().join("plots/scaling-throughput-vs-cores.svg")).unwrap();
    assert!(!svg.contains("USL fit"), "no curve without a fit");

    // One core count (a 2-CPU machine's "1..half"): the section says why.
    let one = tempfile::tempdir().unwrap();
    scaling_sweep(one.path(), &[("rwlock", RWLOCK)], &[1]);
    let w = serverlab_report::generate(one.path(), None).unwrap();
    let summary = w.summary.join("\n");
    // Said once for the whole section, not as a cannot-fit per series.
    assert!(
        summary.contains("Every series ran at 1 server core only")
            && summary.contains("a fit three"),
        "{summary}"
    );
    assert!(!summary.contains("cannot fit"), "{summary}");
}

/// Throughput that zig-zags with the cores: the law fits poorly, and the
/// summary draws no verdict from it (issue 39: "superlinear" from R² =
/// 0.107).
#[test]
fn a_poor_fit_draws_no_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    scaling_sweep(tmp.path(), &[("rwlock", RWLOCK)], &[1, 2, 4, 8, 16]);
    for (k, x) in [(1, 100.0), (2, 400.0), (4, 150.0), (8, 600.0), (16, 200.0)] {
        for rep in 1..=3u32 {
            let wobble = 1.0 + 0.01 * f64::from(rep);
            let slug = format!("store=rwlock,cores={k}");
            common::set_throughput(tmp.path(), &slug, rep, x * wobble);
        }
    }
    let w = serverlab_report::generate(tmp.path(), None).unwrap();
    let summary = w.summary.join("\n");
    let line = summary
        .lines()
        .find(|l| l.contains("store=rwlock: "))
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(line.contains("the law fits poorly (R² = 0."), "{line}");
    for verdict in ["scales", "flattens", "stops scaling", "superlinear", "peak"] {
        assert!(!line.contains(verdict), "{verdict}: {line}");
    }
}

/// σ < 0 (Gunther, Puglia and Tomasette's Hadoop case): fitted, not
/// refused; the summary and the fit table say superlinear, and where the
/// series falls back below the ideal, −σ/κ.
#[test]
fn a_superlinear_series_is_fitted_and_marked() {
    let tmp = tempfile::tempdir().unwrap();
    let hadoop = Law {
        lambda: 1e5,
        sigma: -0.04,
        kappa: 0.0015,
    };
    scaling_sweep(tmp.path(), &[("sharded", hadoop)], &[1, 2, 4, 8, 16, 32]);
    let w = serverlab_report::generate(tmp.path(), None).unwrap();
    let summary = w.summary.join("\n");
    let back = hadoop.payback().unwrap();
    assert!(
        summary.contains("superlinear: σ = -0.040 < 0, coherency κ = 1.50e-3")
            && summary.contains(&format!("below the ideal past N = −σ/κ = {back:.1} cores")),
        "{summary}"
    );
    assert!(!summary.contains("cannot fit"), "{summary}");
    let fits = w.scaling_fits.unwrap();
    assert!(
        fits.contains("| -0.040 (") && fits.contains("), superlinear |"),
        "{fits}"
    );
}

/// With several other axes, a figure per combination of all but the
/// first, whose values are its series.
#[test]
fn a_scaling_figure_per_combination_of_the_other_axes_but_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    let stores = [("rwlock", RWLOCK), ("lockfree", LOCKFREE)];
    sweep_of(tmp.path(), &stores, &[1, 2, 4], &[1, 16]);
    let w = serverlab_report::generate(tmp.path(), None).unwrap();
    let names: Vec<String> = w
        .plots
        .iter()
        .filter_map(|p| p.file_name()?.to_str().map(String::from))
        .filter(|n| n.starts_with("scaling-"))
        .collect();
    assert_eq!(
        names,
        [
            "scaling-throughput-vs-cores-pipeline-1.svg",
            "scaling-throughput-vs-cores-pipeline-16.svg"
        ]
    );
    let svg =
        std::fs::read_to_string(w.plots.iter().find(|p| p.ends_with(&names[1])).unwrap()).unwrap();
    assert!(
        svg.contains("store=lockfree: USL fit"),
        "series are the first axis's values"
    );
    let summary = w.summary.join("\n");
    assert!(
        summary.contains("store=rwlock, pipeline=1: **stops scaling**"),
        "{summary}"
    );
}

/// With a categorical axis and no client axis, the report's first plot
/// answers the experiment's question (throughput against that axis, with
/// its CIs), before the scatter of latency against load; and a comparison
/// of two values is a sentence with its effect size.
#[test]
fn a_categorical_axis_leads_with_its_throughput_plot_and_an_effect_size() {
    let tmp = tempfile::tempdir().unwrap();
    scaling_sweep(
        tmp.path(),
        &[("rwlock", RWLOCK), ("lockfree", LOCKFREE)],
        &[1, 2, 4],
    );
    let w = serverlab_report::generate(tmp.path(), None).unwrap();
    let at = |name: &str| {
        w.plots
            .iter()
            .position(|p| p.ends_with(format!("{name}.svg")))
            .unwrap_or_else(|| panic!("no {name} in {:?}", w.plots))
    };
    assert!(
        at("throughput-vs-store") < at("latency-vs-load"),
        "{:?}",
        w.plots
    );
    let summary = w.summary.join("\n");
    assert!(
        summary.contains("store: rwlock is ")
            && summary.contains("× lockfree in throughput (geometric mean over 3 paired points"),
        "{summary}"
    );
}

/// A sweep made before a run that measured no request failed: its 1-core
/// point recorded "ok" with 0 req/s. The speedup over it is no number, and
/// the report says why instead of printing "NaN×" or "inf×".
#[test]
fn a_base_that_measured_nothing_gives_no_speedup_and_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    scaling_sweep(tmp.path(), &[("rwlock", RWLOCK)], &[1, 2, 4]);
    for rep in 1..=3 {
        let path = tmp
            .path()
            .join(format!("runs/store=rwlock,cores=1/rep-{rep}/load.json"));
        let mut load = read_json(&path);
        load["results"]["throughput_rps"] = 0.0.into();
        load["results"]["requests"] = 0.into();
        load["results"]["operations"][0]["rate_rps"] = 0.0.into();
        load["results"]["operations"][0]["count"] = 0.into();
        write_json(&path, &load);
    }
    let w = serverlab_report::generate(tmp.path(), None).unwrap();
    let table = w.scaling_table.unwrap();
    assert!(
        table.contains("| store=rwlock | 4 |") && table.contains("none: X(1) measured 0 req/s"),
        "{table}"
    );
    let summary = w.summary.join("\n");
    assert!(
        summary.contains("store=rwlock: no speedup at 4 cores (none: X(1) measured 0 req/s)"),
        "{summary}"
    );
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    for bad in ["NaN", "inf×", "∞×"] {
        assert!(!md.contains(bad), "{bad} in the report: {md}");
    }
}
