//! What a reader must know before trusting the numbers, run by run:
//! failed, stale and missing runs, runs in which nothing completed, runs
//! made on a busy machine, outliers (with their files), points with too
//! few runs or above the sweep's precision target, and points where the
//! client may have set the pace.

use crate::points::PointStats;
use crate::stats::{outlier_cutoff, MIN_N};
use crate::units::{num, percent};
use serverlab_sweep::layout;
use serverlab_sweep::Manifest;

/// One kind of problem: its lines for one point.
type Kind<'f> = &'f dyn Fn(&PointStats) -> Vec<String>;

/// Every problem of `stats` (the points, then the baseline), grouped by kind.
pub fn problems(m: &Manifest, stats: &[&PointStats]) -> Vec<String> {
    let kinds: [Kind; 5] = [&lost, &busy, &outliers, &|s| imprecise(m, s), &bottlenecked];
    kinds
        .iter()
        .flat_map(|kind| stats.iter().flat_map(|s| kind(s)))
        .collect()
}

fn slug<'a>(s: &'a PointStats) -> &'a str {
    &s.runs.point.slug
}

/// Failed, stale, not yet run, and runs in which nothing completed.
fn lost(s: &PointStats) -> Vec<String> {
    let slug = slug(s);
    let mut out = Vec::new();
    for f in &s.runs.failed {
        out.push(format!("{slug} rep {}: failed: {}", f.repetition, f.error));
    }
    for f in &s.runs.stale {
        out.push(format!(
            "{slug} rep {}: stale (made with other flags, left out): {}",
            f.repetition, f.error
        ));
    }
    if !s.runs.missing.is_empty() {
        let reps: Vec<String> = s.runs.missing.iter().map(|r| r.to_string()).collect();
        out.push(format!(
            "{slug}: repetitions {} not run yet",
            reps.join(", ")
        ));
    }
    for rep in &s.empty {
        out.push(format!(
            "{slug} rep {rep}: no request completed in the measured window \
             (a stalled server, or a machine too busy to measure on); its throughput \
             of 0 counts, it has no latency"
        ));
    }
    out
}

fn busy(s: &PointStats) -> Vec<String> {
    s.busy
        .iter()
        .map(|(rep, state)| {
            format!(
                "{} rep {rep}: made on a busy machine ({}): `runs/{}/rep-{rep}/{}`",
                slug(s),
                state.describe(),
                slug(s),
                layout::RUN_RECORD
            )
        })
        .collect()
}

fn outliers(s: &PointStats) -> Vec<String> {
    s.outliers
        .iter()
        .map(|o| {
            let fate = if s.dropped.contains(&o.repetition) {
                "left out of every number (--drop-outliers)"
            } else {
                "kept in the numbers (report --drop-outliers leaves it out)"
            };
            let n = s.runs.runs.len();
            format!(
                "{} rep {}: outlier: throughput {} req/s against the point's median {}, \
                 {:.1} robust sds {} it on the log scale (the bar at {n} runs is {}) \
                 (`{}/{}`); {fate}",
                slug(s),
                o.repetition,
                num(o.value),
                num(o.median),
                o.z.abs(),
                if o.z > 0.0 { "above" } else { "below" },
                outlier_cutoff(n).map(num).unwrap_or_default(),
                o.dir.display(),
                layout::LOAD_JSON
            )
        })
        .collect()
}

/// Too few runs for a sturdy interval, or wider than the sweep's target.
fn imprecise(m: &Manifest, s: &PointStats) -> Vec<String> {
    let Some(t) = &s.throughput else {
        return vec![];
    };
    let mut out = Vec::new();
    if t.n < MIN_N {
        out.push(format!(
            "{}: only {} successful run{}: {}",
            slug(s),
            t.n,
            if t.n == 1 { "" } else { "s" },
            if t.n == 1 {
                "no confidence interval".to_string()
            } else {
                format!("intervals from fewer than {MIN_N} runs are wide and fragile")
            }
        ));
    }
    if let (Some(target), Some(w)) = (m.target_ci, t.relative_half_width()) {
        if w > target {
            out.push(format!(
                "{}: its throughput CI reaches ±{} after {} runs, above the target ±{}",
                slug(s),
                percent(w),
                t.n,
                percent(target)
            ));
        }
    }
    out
}

fn bottlenecked(s: &PointStats) -> Vec<String> {
    if s.bottlenecked == 0 {
        return vec![];
    }
    vec![format!(
        "{}: in {} of its runs the client used over 90% of its CPUs and may have set the pace",
        slug(s),
        s.bottlenecked
    )]
}
