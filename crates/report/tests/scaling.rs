//! The scaling section of a sweep with a cores axis: speedup and
//! efficiency per series, the Universal Scalability Law fitted to each,
//! the summary's words on which series scale and where one stops, and
//! points that shared CPUs with the load marked.

mod common;

use common::{fixture, read_json, write_json, write_run};
use serde_json::json;
use serverlab_report::usl::Law;
use std::path::Path;

/// Stores × cores 1, 2, 4, 8 (3 runs each, within ±2%): rwlock follows a
/// law that peaks near 2 cores, lockfree one that scales; at 8 cores the
/// server shared CPUs with the load.
fn scaling_sweep(dir: &Path, stores: &[(&str, Law)], cores: &[i64]) {
    let a = fixture("a");
    let mut run = read_json(&a.join("runs/posters=1/rep-1/run.json"));
    run["client_cpus"] = json!(null);
    let templates = (&run, &read_json(&a.join("runs/posters=1/rep-1/load.json")));
    let mut points = Vec::new();
    for (store, law) in stores {
        for &k in cores {
            let shared = if k == 8 { json!([0, 1]) } else { json!([]) };
            let point = json!({
                "index": points.len(), "slug": format!("store={store},cores={k}"),
                "params": {"store": store, "cores": k},
                "server_protocol": "board",
                "server_flags": ["--store", store, "--cpus", format!("0-{}", k - 1), "--threads", k.to_string()],
                "load_protocol": "board", "load_flags": ["--pipeline", "16", "--cpus", "8-15"],
                "placement": {"cores": k, "server_cpus": format!("0-{}", k - 1), "load_cpus": "8-15",
                    "shared": shared, "how": "one per physical core, on NUMA node 0"}
            });
            for rep in 1..=3usize {
                let wobble = 1.0 + 0.02 * (rep as f64 - 2.0);
                write_run(
                    dir,
                    templates,
                    &point,
                    rep,
                    (law.throughput(k as f64) * wobble, 50.0),
                );
            }
            points.push(point);
        }
    }
    let manifest = json!({
        "schema": "serverlab-sweep/2", "name": "scaling", "description": "",
        "repetitions": 3, "order": "random", "seed": 1, "target_ci": null, "max_repetitions": null,
        "baseline": null, "client_cpus": null, "timeout_s": 60.0, "serverlab_version": "0.1.0",
        "axes": [
            {"key": "store", "source": {"server-flag": "store"},
             "values": stores.iter().map(|s| s.0).collect::<Vec<_>>()},
            {"key": "cores", "source": "cores", "values": cores}
        ],
        "points": points
    });
    write_json(&dir.join("sweep.json"), &manifest);
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
    assert!(fits.contains("| store=rwlock | 1,69"), "{fits}");
    assert!(
        fits.contains("| 0.100 (0.0") && fits.contains("| 0.200 (0.1"),
        "{fits}"
    );

    let md = std::fs::read_to_string(&w.markdown).unwrap();
    assert!(md.contains("## Scaling with cores"), "{md}");
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
    assert!(
        summary.contains("store=rwlock: only k = 1 ran; cannot fit"),
        "{summary}"
    );
}
