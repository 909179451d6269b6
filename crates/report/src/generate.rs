//! Building a sweep's report: read the results, summarise each point,
//! draw the plots (SVG and PNG under `plots/`), and write `report.md` and
//! `report.html`, with a comparison section when another sweep is given.

use crate::chart::Figure;
use crate::compare::{self, Comparison};
use crate::data::Sweep;
use crate::doc::{Block, Document, FigureRef};
use crate::error::ReportError;
use crate::metrics::PERCENTILES;
use crate::points::PointStats;
use crate::{figures, html, markdown, tables};
use std::path::{Path, PathBuf};

pub const MARKDOWN: &str = "report.md";
pub const HTML: &str = "report.html";
pub const PLOTS: &str = "plots";

/// What a report wrote.
pub struct Written {
    pub markdown: PathBuf,
    pub html: PathBuf,
    /// `plots/<id>.svg` for each plot (a `.png` beside each).
    pub plots: Vec<PathBuf>,
    /// The throughput table, as Markdown.
    pub throughput_table: String,
    /// The comparison table, as Markdown, when one was asked for.
    pub comparison_table: Option<String>,
    /// What to know before reading it: differing settings, unmatched
    /// points, significance by chance.
    pub comparison_notes: Vec<String>,
    pub failed_runs: usize,
    pub missing_runs: usize,
    /// Runs made with other flags than their point's: listed, left out.
    pub stale_runs: usize,
}

/// Write the report of the sweep in `dir` (compared with `other`, if given).
pub fn generate(dir: &Path, other: Option<&Path>) -> Result<Written, ReportError> {
    let sweep = Sweep::read(dir)?;
    let stats: Vec<PointStats> = sweep.points.iter().map(PointStats::of).collect();
    let other_sweep = other.map(Sweep::read).transpose()?;
    let other_stats: Option<Vec<PointStats>> = other_sweep
        .as_ref()
        .map(|s| s.points.iter().map(PointStats::of).collect());
    let comparison = match (&other_sweep, &other_stats) {
        (Some(o), Some(os)) => Some(compare::compare(&sweep.manifest, &stats, &o.manifest, os)?),
        _ => None,
    };

    let plots_dir = dir.join(PLOTS);
    std::fs::create_dir_all(&plots_dir).map_err(|e| write_err(&plots_dir, e))?;
    let mut refs = Vec::new();
    let mut plots = Vec::new();
    for fig in figures::figures(&sweep.manifest, &stats) {
        refs.push(draw(&fig, &plots_dir)?);
        plots.push(plots_dir.join(format!("{}.svg", fig.id)));
    }

    let doc = document(&sweep, &stats, refs, comparison.as_ref(), other);
    let markdown_path = dir.join(MARKDOWN);
    let html_path = dir.join(HTML);
    write(&markdown_path, &markdown::render(&doc))?;
    write(&html_path, &html::render(&doc))?;
    Ok(Written {
        markdown: markdown_path,
        html: html_path,
        plots,
        throughput_table: markdown::table(&tables::throughput(&sweep.manifest, &stats)),
        comparison_table: comparison.as_ref().map(|c| markdown::table(&c.table())),
        comparison_notes: comparison.map(|c| c.notes()).unwrap_or_default(),
        failed_runs: sweep.points.iter().map(|p| p.failed.len()).sum(),
        missing_runs: sweep.points.iter().map(|p| p.missing.len()).sum(),
        stale_runs: sweep.points.iter().map(|p| p.stale.len()).sum(),
    })
}

fn write_err(path: &Path, source: std::io::Error) -> ReportError {
    ReportError::Write {
        path: path.to_path_buf(),
        source,
    }
}

fn write(path: &Path, text: &str) -> Result<(), ReportError> {
    std::fs::write(path, text).map_err(|e| write_err(path, e))
}

/// Both files of one figure.
fn draw(fig: &Figure, dir: &Path) -> Result<FigureRef, ReportError> {
    let plot_err = |source| ReportError::Plot {
        plot: fig.id.clone(),
        source,
    };
    let svg = fig.svg().map_err(plot_err)?;
    let svg_path = dir.join(format!("{}.svg", fig.id));
    write(&svg_path, &svg)?;
    fig.png(&dir.join(format!("{}.png", fig.id)))
        .map_err(plot_err)?;
    Ok(FigureRef {
        title: fig.title.clone(),
        note: fig.note(),
        svg_path: format!("{PLOTS}/{}.svg", fig.id),
        png_path: format!("{PLOTS}/{}.png", fig.id),
        svg,
    })
}

fn document(
    sweep: &Sweep,
    stats: &[PointStats],
    figures: Vec<FigureRef>,
    comparison: Option<&Comparison>,
    other: Option<&Path>,
) -> Document {
    let m = &sweep.manifest;
    let mut b = Vec::new();
    if !m.description.is_empty() {
        b.push(Block::Para(m.description.clone()));
    }
    b.push(Block::Heading("What ran".into()));
    b.push(Block::List(setup(sweep)));
    b.push(Block::Heading("How to read this".into()));
    b.push(Block::Para(
        "Each point ran on a fresh server, repeated. Throughput and each latency percentile \
         get a full summary over the successful repetitions (n, mean, median, min, max, sample \
         standard deviation, 95% confidence interval of the mean); the other tables give the \
         mean ± the half-width of that interval. The interval comes from Student's t with \
         n − 1 degrees of freedom: if the experiment were \
         repeated many times, 95% of intervals built this way would contain the true mean. \
         Two points whose intervals do not overlap differ beyond the noise; intervals that \
         overlap may or may not. Closed-loop load: each client connection waits for a reply \
         before sending again, so throughput and latency are measured together."
            .into(),
    ));
    b.push(Block::Heading("Throughput".into()));
    b.push(Block::Table(tables::throughput(m, stats)));
    b.push(Block::Heading(
        "Latency, all operations (mean ± 95% CI)".into(),
    ));
    b.push(Block::Table(tables::latency(m, stats)));
    for (name, _) in PERCENTILES {
        let (unit, table) = tables::latency_summary(m, stats, name);
        b.push(Block::Heading(format!(
            "Latency {name} ({}), all operations, in full",
            unit.symbol()
        )));
        b.push(Block::Table(table));
    }
    if let Some(t) = tables::per_thread(m, stats) {
        b.push(Block::Heading("Per client thread (mean ± 95% CI)".into()));
        b.push(Block::Table(t));
    }
    if let Some(t) = tables::operations(m, stats) {
        b.push(Block::Heading("Operations (mean ± 95% CI)".into()));
        b.push(Block::Table(t));
    }
    if let Some(t) = tables::service(m, stats) {
        b.push(Block::Heading("Server service time (mean ± 95% CI)".into()));
        b.push(Block::Table(t));
    }
    if let (Some(c), Some(other)) = (comparison, other) {
        b.push(Block::Heading(format!("Compared with {}", other.display())));
        b.push(Block::Para(
            "Difference = this sweep − the other, per point, with its 95% confidence interval \
             from Welch's t (unequal variances). Significant: the interval excludes zero. \
             Both sweeps should have run on the same machine, close in time."
                .into(),
        ));
        b.push(Block::List(c.notes()));
        b.push(Block::Table(c.table()));
    }
    if !figures.is_empty() {
        b.push(Block::Heading("Plots".into()));
        b.extend(figures.into_iter().map(Block::Figure));
    }
    let problems = problems(stats);
    if !problems.is_empty() {
        b.push(Block::Heading(
            "Failed, stale, missing and suspect runs".into(),
        ));
        b.push(Block::List(problems));
    }
    Document {
        title: format!("serverlab report: {}", m.name),
        blocks: b,
    }
}

/// The configuration, pinning, axes and environment, as list items.
fn setup(sweep: &Sweep) -> Vec<String> {
    let m = &sweep.manifest;
    let mut items = Vec::new();
    let runs: usize = sweep.points.iter().map(|p| p.runs.len()).sum();
    let failed: usize = sweep.points.iter().map(|p| p.failed.len()).sum();
    let missing: usize = sweep.points.iter().map(|p| p.missing.len()).sum();
    let stale: usize = sweep.points.iter().map(|p| p.stale.len()).sum();
    let stale = if stale > 0 {
        format!(", {stale} stale (made with other flags; left out)")
    } else {
        String::new()
    };
    items.push(format!(
        "{} points × {} repetitions: {runs} successful runs, {failed} failed, {missing} not run{stale}",
        m.points.len(),
        m.repetitions
    ));
    for a in &m.axes {
        let values: Vec<String> = a.values.iter().map(|v| v.to_string()).collect();
        items.push(format!("axis `{}`: {}", a.key, values.join(", ")));
    }
    if let Some(p) = m.points.first() {
        items.push(format!(
            "server (first point): `serverlab serve {} {}`",
            p.server_protocol,
            p.server_flags.join(" ")
        ));
        items.push(format!(
            "load (first point): `serverlab load {} {}`",
            p.load_protocol,
            p.load_flags.join(" ")
        ));
    }
    items.push(match &m.client_cpus {
        Some(c) => format!("load pinned to CPUs {c}"),
        None => "load not pinned".into(),
    });
    if let Some(run) = sweep.runs().next() {
        let e = &run.load.environment;
        items.push(format!(
            "environment: serverlab {}, {} {} ({}), load model: {}",
            e.serverlab_version, e.os, e.arch, e.kernel, run.load.load_model
        ));
    }
    items.push("every run's exact command lines: `runs/<point>/rep-<k>/run.json`".into());
    items
}

fn problems(stats: &[PointStats]) -> Vec<String> {
    let mut out = Vec::new();
    for s in stats {
        let slug = &s.runs.point.slug;
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
        if s.bottlenecked > 0 {
            out.push(format!(
                "{slug}: in {} repetitions the client used over 90% of its CPUs and may have set the pace",
                s.bottlenecked
            ));
        }
    }
    out
}
