//! The scaling section of a sweep with a cores axis (`cores` in
//! `[server]`): throughput against the server's cores per series (every
//! combination of the other axes) on a log₂ axis beside the ideal line,
//! the speedup X(k)/X(1) and parallel efficiency, and per series the
//! Universal Scalability Law fitted ([`crate::usl`]) and drawn over the
//! measured points, with a sentence per series on whether it scales,
//! flattens or stops, and where. Points whose server shared CPUs with the
//! load (too few CPUs) are marked everywhere.

use crate::chart::{Figure, Marker, Panel, Pt, Series, XScale, PALETTE_SIZE};
use crate::doc::{Block, Table};
use crate::figures::{self, groups, THROUGHPUT};
use crate::points::PointStats;
use crate::stats::Summary;
use crate::tables::centre_ci;
use crate::units::{num, percent};
use crate::usl::{self, Fit};
use serverlab_sweep::{Manifest, Source};
use serverlab_util::Named;

/// Marks a point whose server shared CPUs with the load.
pub const SHARED_MARK: &str = "†";
/// Efficiency at the most cores from which a series "scales".
const SCALES: f64 = 0.7;
/// Samples of a drawn fit between two measured core counts.
const CURVE_STEPS: usize = 48;

/// One measured core count of a series.
pub struct Step<'a> {
    pub cores: usize,
    pub stats: &'a PointStats<'a>,
    pub throughput: Summary,
    /// The server shared CPUs with the load here.
    pub shared: bool,
}

/// A combination of the other axes, measured at several core counts.
pub struct ScalingSeries<'a> {
    /// `store=rwlock, pipeline=16` (empty with no other axis).
    pub name: String,
    /// Its value on the first other axis (`strategy=async`), and on the
    /// rest (`store=rwlock, pipeline=16`): a figure per facet, a series
    /// per value within it.
    pub within: String,
    pub facet: String,
    /// By cores, ascending.
    pub steps: Vec<Step<'a>>,
    /// The law, or why it cannot be fitted.
    pub fit: Result<Fit, String>,
}

impl ScalingSeries<'_> {
    fn label(&self) -> &str {
        if self.name.is_empty() {
            "all points"
        } else {
            &self.name
        }
    }

    /// Throughput at the fewest cores measured (X(1) where 1 was run).
    fn base(&self) -> Option<&Step<'_>> {
        self.steps.first()
    }

    /// X(k)/X(base) scaled to the base's cores: the speedup over one core;
    /// or why there is none, in words, where either throughput is no
    /// positive number (a base that measured 0 req/s divides by zero).
    fn speedup(&self, step: &Step) -> Result<f64, String> {
        let base = self.base().ok_or("no base point")?;
        let (x, x1) = (step.throughput.centre(), base.throughput.centre());
        let usable = |x: f64| x.is_finite() && x > 0.0;
        if !usable(x1) {
            return Err(format!(
                "none: X({}) measured {} req/s",
                base.cores,
                num(x1)
            ));
        }
        if !usable(x) {
            return Err(format!("none: measured {} req/s", num(x)));
        }
        Ok(x / x1 * base.cores as f64)
    }
}

/// The cores axis, if the sweep has one.
pub fn cores_axis(m: &Manifest) -> Option<usize> {
    m.axes.iter().position(|a| a.source == Source::Cores)
}

/// Every series along the cores axis, fitted.
pub fn series<'a>(m: &Manifest, stats: &'a [PointStats<'a>]) -> Vec<ScalingSeries<'a>> {
    let Some(axis) = cores_axis(m) else {
        return vec![];
    };
    groups(m, stats, &[axis])
        .into_iter()
        .map(|(name, members)| {
            let mut steps: Vec<Step> = members
                .iter()
                .filter_map(|&p| step(m, &stats[p], axis))
                .collect();
            steps.sort_by_key(|s| s.cores);
            let fit = usl::fit(&steps.iter().map(observed).collect::<Vec<_>>());
            let labels = stats.get(members[0]).map_or(vec![], |s| labels(m, s, axis));
            ScalingSeries {
                name,
                within: labels.first().cloned().unwrap_or_default(),
                facet: labels.get(1..).unwrap_or_default().join(", "),
                steps,
                fit,
            }
        })
        .collect()
}

/// `key=value` of a point on every axis but the cores.
fn labels(m: &Manifest, stats: &PointStats, cores: usize) -> Vec<String> {
    (0..m.axes.len())
        .filter(|&i| i != cores)
        .filter_map(|i| {
            let axis = &m.axes[i];
            let v = figures::value(m, stats, i)?;
            Some(format!("{}={}", axis.key, crate::axes::label(axis, v)))
        })
        .collect()
}

fn step<'a>(m: &Manifest, stats: &'a PointStats<'a>, axis: usize) -> Option<Step<'a>> {
    let cores = figures::value(m, stats, axis)?.as_f64()? as usize;
    let shared = stats
        .runs
        .point
        .placement
        .as_ref()
        .is_some_and(|p| p.is_shared());
    Some(Step {
        cores,
        stats,
        throughput: stats.throughput?,
        shared,
    })
}

/// A step's runs as the fit takes them (those the report counts).
fn observed(step: &Step) -> usl::Cores {
    let s = step.stats;
    usl::Cores {
        n: step.cores as f64,
        runs: s
            .runs
            .runs
            .iter()
            .filter(|r| !s.dropped.contains(&r.repetition))
            .map(|r| r.metrics.throughput_rps)
            .filter(|x| *x > 0.0)
            .collect(),
    }
}

/// The scaling section: every series along the cores axis.
pub struct Section<'a> {
    pub series: Vec<ScalingSeries<'a>>,
}

impl<'a> Section<'a> {
    /// None without a cores axis.
    pub fn of(m: &Manifest, stats: &'a [PointStats<'a>]) -> Option<Section<'a>> {
        cores_axis(m)?;
        Some(Section {
            series: series(m, stats),
        })
    }

    /// Whether any point shared CPUs with the load.
    fn any_shared(&self) -> bool {
        self.series.iter().flat_map(|s| &s.steps).any(|s| s.shared)
    }

    /// The summary's sentences: one per series, and the shared points.
    /// Where every series ran at one core count alone (a machine too
    /// small for more), one sentence says so instead of one per series.
    pub fn findings(&self) -> Vec<String> {
        let ks: std::collections::BTreeSet<usize> = self
            .series
            .iter()
            .flat_map(|s| s.steps.iter().map(|st| st.cores))
            .collect();
        if let [k] = ks.iter().copied().collect::<Vec<_>>()[..] {
            return vec![format!(
                "Every series ran at {k} server core{} only: no scaling to report \
                 (the cores axis needs two counts or more, and a fit three).",
                if k == 1 { "" } else { "s" }
            )];
        }
        let mut out: Vec<String> = self.series.iter().map(verdict).collect();
        if self.any_shared() {
            let ks = shared_counts(&self.series);
            out.push(format!(
                "At {} cores the server shared CPUs with the load (this machine has too \
                 few CPUs to keep them apart; marked {SHARED_MARK}): read those points as \
                 lower bounds.",
                ks.join(", ")
            ));
        }
        out
    }

    /// Text and tables after the heading; the figure goes between.
    pub fn blocks(&self) -> (Vec<Block>, Vec<Block>) {
        let intro = vec![Block::Para(METHOD.into())];
        let mut after = vec![
            Block::Subheading("Speedup and parallel efficiency".into()),
            Block::Table(self.speedup_table()),
            Block::Subheading("Universal Scalability Law fits".into()),
            Block::Para(fit_note()),
            Block::Table(self.fit_table()),
        ];
        if self.any_shared() {
            after.push(Block::Para(format!(
                "{SHARED_MARK}: the server shared CPUs with the load at this point."
            )));
        }
        (intro, after)
    }

    /// Series × cores: throughput, speedup over 1 core, efficiency.
    pub fn speedup_table(&self) -> Table {
        let headers = [
            "series",
            "cores",
            "throughput (req/s, 95% CI)",
            "speedup X(k)/X(1)",
            "efficiency",
        ];
        let mut rows = Vec::new();
        for s in &self.series {
            for step in &s.steps {
                let speedup = s.speedup(step);
                let mark = if step.shared { SHARED_MARK } else { "" };
                rows.push(vec![
                    s.label().to_string(),
                    format!("{}{mark}", step.cores),
                    centre_ci(&step.throughput, 1.0),
                    match &speedup {
                        Ok(x) => format!("{x:.2}×"),
                        Err(why) => why.clone(),
                    },
                    speedup.map_or("–".into(), |x| percent(x / step.cores as f64)),
                ]);
            }
        }
        Table {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows,
        }
    }

    /// Per series: λ, σ, κ, the peak and the throughput there, R².
    pub fn fit_table(&self) -> Table {
        let headers = ["series", "λ (req/s)", "σ", "κ", "peak N*", "X(N*)", "R²"];
        let rows = self
            .series
            .iter()
            .map(|s| {
                let mut row = vec![s.label().to_string()];
                match &s.fit {
                    Ok(f) => row.extend(fit_cells(f, s.steps.last().map_or(1, |st| st.cores))),
                    Err(why) => {
                        row.push(why.clone());
                        row.extend(std::iter::repeat_n(String::new(), 5));
                    }
                }
                row
            })
            .collect();
        Table {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows,
        }
    }

    /// Throughput against cores: the measured points, each fitted law
    /// drawn over them, and the ideal line of each series; a figure per
    /// combination of the other axes but the first, whose values are the
    /// series.
    pub fn figures(&self) -> Vec<Figure> {
        // In the order of the points (the axes' own order).
        let mut facets: Vec<&str> = Vec::new();
        for s in &self.series {
            if !facets.contains(&s.facet.as_str()) {
                facets.push(&s.facet);
            }
        }
        facets.into_iter().map(|f| self.figure(f)).collect()
    }

    fn figure(&self, facet: &str) -> Figure {
        let mut all = Vec::new();
        let members = self.series.iter().filter(|s| s.facet == facet);
        for (c, s) in members.enumerate() {
            all.extend(drawn(s, c));
        }
        let (id, title) = match facet {
            "" => (String::new(), String::new()),
            f => (format!("-{}", figures::id(f)), format!(": {f}")),
        };
        Figure {
            id: format!("scaling-throughput-vs-cores{id}"),
            title: format!("Throughput vs server cores{title}"),
            x_title: "server cores (k: --cpus, --threads), log scale".into(),
            x: XScale::Log2,
            panels: vec![Panel {
                y_title: THROUGHPUT.into(),
                series: all,
                log_y: false,
            }],
        }
    }
}

/// The cores at which some point shared CPUs with the load.
fn shared_counts(series: &[ScalingSeries]) -> Vec<String> {
    let mut ks: Vec<usize> = series
        .iter()
        .flat_map(|s| &s.steps)
        .filter(|s| s.shared)
        .map(|s| s.cores)
        .collect();
    ks.sort_unstable();
    ks.dedup();
    ks.iter().map(|k| k.to_string()).collect()
}

/// λ, σ, κ, N*, X(N*), R², each with its interval where there is one.
/// A peak past [`IN_REACH`] times the most cores measured (`kmax`) is
/// said as beyond that, with no throughput: the law is extrapolated
/// there from points that show no bend.
fn fit_cells(f: &Fit, kmax: usize) -> Vec<String> {
    let iv = f.intervals;
    let with = |v: String, range: Option<(f64, f64)>, fmt: &dyn Fn(f64) -> String| match range {
        Some((lo, hi)) => format!("{v} ({} – {})", fmt(lo), fmt(hi)),
        None => v,
    };
    let law = f.law;
    let reach = IN_REACH * kmax as f64;
    let (peak, at_peak) = match f.peak() {
        Some((n, x)) if n <= reach => (
            with(cores_text(n), iv.and_then(|i| i.peak), &cores_text),
            num(x),
        ),
        Some(_) => (format!("beyond {reach:.0}"), "–".into()),
        None => ("none (κ = 0)".into(), "–".into()),
    };
    vec![
        with(num(law.lambda), iv.map(|i| i.lambda), &num),
        with(coefficient(law.sigma), iv.map(|i| i.sigma), &coefficient)
            + if law.superlinear() {
                ", superlinear"
            } else {
                ""
            },
        with(coefficient(law.kappa), iv.map(|i| i.kappa), &coefficient),
        peak,
        at_peak,
        format!("{:.3}", f.r2),
    ]
}

/// How far past the most cores measured a fitted peak is still said as a
/// number of cores.
const IN_REACH: f64 = 4.0;

/// A peak's cores: one decimal; past 1000, no peak in sight.
fn cores_text(n: f64) -> String {
    if n > 1000.0 {
        "∞".into()
    } else {
        format!("{n:.1}")
    }
}

/// σ or κ: three significant digits, those below 0.01 in scientific
/// notation (below 10⁻⁹: 0, the fit's bound).
pub fn coefficient(v: f64) -> String {
    if v.abs() < usl::NEGLIGIBLE {
        "0".into()
    } else if v.abs() < 0.01 {
        format!("{v:.2e}")
    } else {
        format!("{v:.3}")
    }
}

/// A series' sentence: whether it scales, flattens or stops, and where.
pub fn verdict(s: &ScalingSeries) -> String {
    let name = s.label();
    let Some(last) = s.steps.last() else {
        return format!("{name}: no successful run");
    };
    let k = last.cores;
    let speedup = match s.speedup(last) {
        Ok(x) => x,
        Err(why) => return format!("{name}: no speedup at {k} cores ({why})"),
    };
    let gain = format!(
        "{speedup:.1}× on {k} cores (efficiency {})",
        percent(speedup / k as f64)
    );
    let law = match &s.fit {
        Err(why) if s.steps.len() < 2 => return format!("{name}: only k = {k} ran; {why}"),
        Err(why) => return format!("{name}: {gain}; {why}"),
        Ok(f) => f,
    };
    // A poor fit says nothing of contention, coherency or a peak.
    if law.poor() {
        return format!(
            "{name}: {gain}; the law fits poorly (R² = {:.3}, below {}): no verdict from it",
            law.r2,
            usl::POOR_R2
        );
    }
    let params = parameters(&law.law);
    match law.peak() {
        Some((n, x)) if n <= k as f64 => format!(
            "{name}: **stops scaling** — {params}, peak at {n:.1} cores ({} req/s), \
             then falls: {gain}",
            num(x)
        ),
        peak if speedup / k as f64 >= SCALES => {
            let beyond = match peak {
                Some((n, _)) if n <= IN_REACH * k as f64 => {
                    format!("; the law puts its peak at {n:.0} cores")
                }
                Some(_) => format!("; no peak within {:.0} cores", IN_REACH * k as f64),
                None => String::new(),
            };
            format!("{name}: **scales** — {gain}; {params}{beyond}")
        }
        _ => format!("{name}: **flattens** — {gain}; {params}"),
    }
}

/// σ and κ in a verdict: `contention σ = 0.100, coherency κ = 0.200`; a
/// superlinear series says so, and where it falls back below the ideal.
fn parameters(law: &usl::Law) -> String {
    let kappa = coefficient(law.kappa);
    if !law.superlinear() {
        return format!(
            "contention σ = {}, coherency κ = {kappa}",
            coefficient(law.sigma)
        );
    }
    let back = match law.payback() {
        Some(n) => format!("below the ideal past N = −σ/κ = {n:.1} cores"),
        None => "above the ideal at every N".into(),
    };
    format!(
        "superlinear: σ = {} < 0, coherency κ = {kappa}, {back}",
        coefficient(law.sigma)
    )
}

/// A series as drawn: its measured points (those that shared CPUs as
/// squares), the fitted law over them, and its ideal line.
fn drawn(s: &ScalingSeries, c: usize) -> Vec<Series> {
    let label = match s.within.as_str() {
        "" => s.label(),
        within => within,
    };
    let mark = Marker::nth(c / PALETTE_SIZE);
    let point = |st: &Step| figures::pt(st.cores as f64, &st.throughput, 1.0);
    let (shared, apart): (Vec<&Step>, Vec<&Step>) = s.steps.iter().partition(|st| st.shared);
    let mut out = vec![line(
        label,
        c,
        apart.iter().map(|st| point(st)).collect(),
        mark,
        false,
    )];
    if !shared.is_empty() {
        let name = format!("{label} {SHARED_MARK} shares CPUs with the load");
        let pts = shared.iter().map(|st| point(st)).collect();
        out.push(line(&name, c, pts, Marker::Square, false));
    }
    let (Some(first), Some(last)) = (s.steps.first(), s.steps.last()) else {
        return out;
    };
    let (lo, hi) = (first.cores as f64, last.cores as f64);
    if let Ok(f) = &s.fit {
        let curve = sample(lo, hi)
            .map(|n| bare(n, f.law.throughput(n)))
            .collect();
        out.push(line(
            &format!("{label}: USL fit"),
            c,
            curve,
            Marker::None,
            true,
        ));
    }
    let per_core = first.throughput.centre() / lo;
    // Sampled too: on the log axis k × X(1) is no straight line.
    let ideal = sample(lo, hi).map(|n| bare(n, per_core * n)).collect();
    let mut ideal = line(
        &format!("{label}: ideal (k × X(1))"),
        c,
        ideal,
        Marker::None,
        true,
    );
    ideal.dashed = true;
    out.push(ideal);
    out
}

/// Core counts from `lo` to `hi`, evenly on the log axis.
fn sample(lo: f64, hi: f64) -> impl Iterator<Item = f64> {
    let (a, b) = (lo.log2(), hi.log2());
    (0..=CURVE_STEPS).map(move |i| (a + (b - a) * i as f64 / CURVE_STEPS as f64).exp2())
}

/// A point of a drawn curve (no runs behind it).
fn bare(x: f64, y: f64) -> Pt {
    Pt {
        x,
        y,
        ci: None,
        n: 0,
        uncertified: false,
    }
}

fn line(name: &str, color: usize, points: Vec<Pt>, marker: Marker, lines: bool) -> Series {
    Series {
        name: name.to_string(),
        points,
        lines,
        dashed: false,
        marker,
        color,
        labels: vec![],
    }
}

const METHOD: &str = "Each series is one combination of the other axes, measured with the \
    server on k CPUs (`--cpus`, and `--threads k` where the strategy has threads) and the load \
    on CPUs the server does not use. Speedup is X(k) ÷ X(1), the throughput on k cores over \
    that on one; parallel efficiency is the speedup ÷ k (100%: every core adds a whole \
    core's throughput). The lines are the Universal Scalability Law fitted to each series, \
    the dashed ones the ideal k × X(1).";

/// What the fit table shows, and how it was fitted.
fn fit_note() -> String {
    let method = usl::Method::default();
    format!(
        "X(N) = λN / (1 + σ(N−1) + κN(N−1)): λ is one core's throughput, σ the contention (a \
         share of the work that waits for something shared: it flattens the curve towards \
         1/σ) and κ the coherency cost (crosstalk between every pair of cores: past the peak \
         N* = √((1−σ)/κ) more cores lower the throughput). Fitted by method `{}`: {}, over \
         every run, with κ ≥ 0 and σ < 1; R² is over the runs; the ranges in brackets are 95% \
         bootstrap intervals from the repetitions (runs resampled within each core count and \
         refitted). A negative σ marks a **superlinear** series (each of the first cores adds \
         more than a core's throughput), which falls back below the ideal past N = −σ/κ. A \
         series with fewer than 3 core counts, or one the law cannot describe (σ ≥ 1), says so \
         instead. `serverlab fit` fits a table of N and X the same way (docs/experiments.md).",
        method.name(),
        method.describe()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usl::Law;

    fn fit(sigma: f64, kappa: f64) -> Fit {
        Fit {
            law: Law {
                lambda: 100.0,
                sigma,
                kappa,
            },
            method: usl::Method::Nls,
            se: usl::StdErrors::default(),
            r2: 0.99,
            intervals: None,
            observations: 8,
        }
    }

    #[test]
    fn a_peak_far_past_the_cores_measured_is_not_given_as_a_number() {
        // κ tiny: the law peaks at about 3,162 cores, fitted from 1..8.
        let cells = fit_cells(&fit(0.0, 1e-7), 8);
        assert_eq!((cells[3].as_str(), cells[4].as_str()), ("beyond 32", "–"));
        // Within reach: the peak and the throughput there.
        let cells = fit_cells(&fit(0.0, 0.01), 8);
        assert_eq!(cells[3], "10.0");
        assert_ne!(cells[4], "–");
        let cells = fit_cells(&fit(0.1, 0.0), 8);
        assert_eq!(
            (cells[3].as_str(), cells[4].as_str()),
            ("none (κ = 0)", "–")
        );
    }
}
