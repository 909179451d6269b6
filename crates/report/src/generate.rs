//! Building a sweep's report: read the results, summarise each point,
//! draw the plots (SVG and PNG under `plots/`), and write `report.md` and
//! `report.html`, top-down: the summary, the plots, the problems, a
//! comparison when another sweep is given, and the full tables last.

use crate::chart::Figure;
use crate::compare::{self, Comparison};
use crate::data::Sweep;
use crate::doc::{Block, Document, FigureRef};
use crate::error::ReportError;
use crate::metrics::PERCENTILES;
use crate::points::PointStats;
use crate::scaling::Section;
use crate::shards::Shards;
use crate::summary::Findings;
use crate::{figures, html, markdown, problems, summary, tables};
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
    /// The summary's sentences: the setting, then the findings.
    pub summary: Vec<String>,
    /// The tables as CSV beside report.md (`report-throughput.csv`,
    /// `report-latency.csv`).
    pub csv: Vec<PathBuf>,
    /// The throughput table, as Markdown.
    pub throughput_table: String,
    /// With a cores axis: the speedup table and the fits, as Markdown.
    pub scaling_table: Option<String>,
    pub scaling_fits: Option<String>,
    /// The comparison table, as Markdown, when one was asked for.
    pub comparison_table: Option<String>,
    /// What to know before reading it: differing settings, unmatched
    /// points, significance by chance.
    pub comparison_notes: Vec<String>,
    pub failed_runs: usize,
    pub missing_runs: usize,
    /// Runs made with other flags than their point's: listed, left out.
    pub stale_runs: usize,
    /// Every problem the report lists.
    pub problems: usize,
    /// The runs' verdicts: how many were judged, not certified, and
    /// which checks failed.
    pub certification: crate::certified::Tally,
    /// Of several shards' directories: where each ran, and every point as
    /// a ratio to its own block's baseline.
    pub shards: Option<ShardsWritten>,
}

/// What a report of several shards adds.
pub struct ShardsWritten {
    /// One sentence: the machines, and how points are compared.
    pub note: String,
    /// A row per shard (Markdown).
    pub table: String,
    /// Every point as a ratio to its own block's baseline (Markdown).
    pub ratios: Option<String>,
    /// The shards of the split that no directory held (`--allow-missing`).
    pub missing: Vec<crate::shards::MissingShard>,
}

/// How to build a report.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options<'a> {
    /// Another sweep to compare with.
    pub compare: Option<&'a Path>,
    /// Leave outlier runs out of every number (they are listed either way).
    pub drop_outliers: bool,
    /// Report shards even when some of the split are missing (they are
    /// named, their runs counted as not run); otherwise that is an error.
    pub allow_missing: bool,
}

/// Write the report of the sweep in `dir` (compared with `other`, if given).
pub fn generate(dir: &Path, other: Option<&Path>) -> Result<Written, ReportError> {
    generate_with(
        dir,
        &Options {
            compare: other,
            ..Options::default()
        },
    )
}

/// Every point's statistics, and the baseline's.
fn statistics(sweep: &Sweep, drop: bool) -> (Vec<PointStats<'_>>, Option<PointStats<'_>>) {
    let base = sweep.baseline.as_ref();
    (
        sweep
            .points
            .iter()
            .map(|p| PointStats::with(p, base, drop))
            .collect(),
        base.map(|b| PointStats::with(b, None, drop)),
    )
}

/// Shards' statistics: where they ran on several machines, no absolute
/// throughput (a point's runs were made on different machines), only the
/// ratio to each block's own baseline.
fn shard_statistics<'a>(
    sweep: &'a Sweep,
    shards: &Shards,
    drop: bool,
) -> (Vec<PointStats<'a>>, Option<PointStats<'a>>) {
    let (mut stats, mut baseline) = statistics(sweep, drop);
    if shards.several_machines() {
        for s in stats.iter_mut().chain(baseline.as_mut()) {
            s.throughput = None;
            s.per_thread_rps = None;
            // A run far from its point's median may only be on the faster
            // machine: outliers by absolute throughput mean nothing here.
            s.outliers.clear();
        }
    }
    (stats, baseline)
}

/// The sweep compared with the one `opts` names, if any.
fn comparison(
    sweep: &Sweep,
    stats: &[PointStats],
    opts: &Options,
) -> Result<Option<Comparison>, ReportError> {
    let Some(path) = opts.compare else {
        return Ok(None);
    };
    // A sharded sweep's parent directory: its shards, read as one.
    if let Some(dirs) = crate::shards::under(path) {
        let (other, shards) = crate::shards::read(&dirs, path)?;
        if !shards.missing.is_empty() && !opts.allow_missing {
            return Err(ReportError::MissingShards(shards.missing_error()));
        }
        let other_stats = shard_statistics(&other, &shards, opts.drop_outliers).0;
        return compare::compare(&sweep.manifest, stats, &other.manifest, &other_stats).map(Some);
    }
    let other = Sweep::read(path)?;
    let other_stats = statistics(&other, opts.drop_outliers).0;
    compare::compare(&sweep.manifest, stats, &other.manifest, &other_stats).map(Some)
}

/// Write the report of the sweep in `dir` as `opts` say.
pub fn generate_with(dir: &Path, opts: &Options) -> Result<Written, ReportError> {
    let sweep = Sweep::read(dir)?;
    let stats = statistics(&sweep, opts.drop_outliers);
    write_report(&sweep, stats, None, opts)
}

/// Write the report of a sweep run in shards (one directory each) into
/// `out`: every point as a ratio to its own block's baseline, and the
/// machine each shard ran on.
pub fn generate_shards(
    dirs: &[PathBuf],
    out: &Path,
    opts: &Options,
) -> Result<Written, ReportError> {
    let (sweep, shards) = crate::shards::read(dirs, out)?;
    if !shards.missing.is_empty() && !opts.allow_missing {
        return Err(ReportError::MissingShards(shards.missing_error()));
    }
    let stats = shard_statistics(&sweep, &shards, opts.drop_outliers);
    write_report(&sweep, stats, Some(&shards), opts)
}

/// Write the report of `sweep` (read from one directory or several).
fn write_report(
    sweep: &Sweep,
    (stats, baseline): (Vec<PointStats>, Option<PointStats>),
    shards: Option<&Shards>,
    opts: &Options,
) -> Result<Written, ReportError> {
    let dir = sweep.dir.as_path();
    let comparison = comparison(sweep, &stats, opts)?;

    let scaling = Section::of(&sweep.manifest, &stats);
    let (refs, scaling_figures) = draw_plots(sweep, &stats, scaling.as_ref())?;
    let plots = refs
        .iter()
        .chain(&scaling_figures)
        .map(|f| dir.join(&f.svg_path))
        .collect();
    let mut findings = summary::summary(sweep, &stats, baseline.as_ref());
    findings
        .findings
        .extend(scaling.iter().flat_map(Section::findings));
    let mut all: Vec<&PointStats> = stats.iter().collect();
    all.extend(baseline.as_ref());
    let certification = crate::certified::Tally::of(&all);
    findings.findings.extend(certification.sentence());
    let mut problems = problems::problems(&sweep.manifest, &all);
    if let Some(s) = shards.filter(|s| !s.clashes.is_empty()) {
        let clashes = s.clashes.iter().map(|c| (c.slug.clone(), c.problem()));
        problems.splice(0..0, problems::group_lines(clashes.collect()));
    }
    let parts = Parts {
        findings: &findings,
        problems: &problems,
        figures: refs,
        scaling: scaling.as_ref().map(|s| (s, scaling_figures)),
        comparison: comparison.as_ref().zip(opts.compare),
    };
    let mut doc = document(sweep, &stats, parts);
    let shards = shards.map(|s| with_shards(&mut doc, sweep, &stats, s));
    let markdown_path = dir.join(MARKDOWN);
    let html_path = dir.join(HTML);
    write(&markdown_path, &markdown::render(&doc))?;
    write(&html_path, &html::render(&doc))?;
    Ok(Written {
        markdown: markdown_path,
        html: html_path,
        plots,
        csv: crate::tables_csv::write(dir, &sweep.manifest, &stats)?,
        summary: findings
            .setting
            .iter()
            .chain(&findings.findings)
            .cloned()
            .collect(),
        throughput_table: markdown::table(&tables::throughput(&sweep.manifest, &stats)),
        scaling_table: scaling
            .as_ref()
            .map(|s| markdown::table(&s.speedup_table())),
        scaling_fits: scaling.as_ref().map(|s| markdown::table(&s.fit_table())),
        comparison_table: comparison.as_ref().map(|c| markdown::table(&c.table())),
        comparison_notes: comparison.map(|c| c.notes()).unwrap_or_default(),
        failed_runs: sweep.points.iter().map(|p| p.failed.len()).sum(),
        missing_runs: sweep.points.iter().map(|p| p.missing.len()).sum(),
        stale_runs: sweep.points.iter().map(|p| p.stale.len()).sum(),
        problems: problems.len(),
        certification,
        shards,
    })
}

/// The report's plots, and the scaling section's, drawn under `plots/`.
fn draw_plots(
    sweep: &Sweep,
    stats: &[PointStats],
    scaling: Option<&Section>,
) -> Result<(Vec<FigureRef>, Vec<FigureRef>), ReportError> {
    let plots_dir = sweep.dir.join(PLOTS);
    std::fs::create_dir_all(&plots_dir).map_err(|e| write_err(&plots_dir, e))?;
    let refs = draw_all(&figures::figures(&sweep.manifest, stats), &plots_dir)?;
    let scaling_figures = match scaling {
        Some(s) => draw_all(&s.figures(), &plots_dir)?,
        None => vec![],
    };
    Ok((refs, scaling_figures))
}

/// The shards' section added to `doc`, and what it says.
fn with_shards(
    doc: &mut Document,
    sweep: &Sweep,
    stats: &[PointStats],
    shards: &Shards,
) -> ShardsWritten {
    let ratios = crate::shards::ratio_table(sweep, stats);
    shard_section(doc, shards, ratios.clone());
    ShardsWritten {
        note: shards.note(),
        table: markdown::table(&shards.table()),
        ratios: ratios.as_ref().map(markdown::table),
        missing: shards.missing.clone(),
    }
}

/// The shards, right after the summary: where each ran, and the ratios.
fn shard_section(doc: &mut Document, s: &Shards, ratios: Option<crate::doc::Table>) {
    let at = doc
        .blocks
        .iter()
        .skip(1)
        .position(|b| matches!(b, Block::Heading(_)))
        .map_or(doc.blocks.len(), |i| i + 1);
    let mut section = vec![
        Block::Heading("Shards".into()),
        Block::Para(s.note()),
        Block::Table(s.table()),
    ];
    section.extend(ratios.map(Block::Table));
    doc.blocks.splice(at..at, section);
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

/// Both files of every figure, in order.
fn draw_all(figs: &[Figure], dir: &Path) -> Result<Vec<FigureRef>, ReportError> {
    figs.iter().map(|f| draw(f, dir)).collect()
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
        note: Some(fig.note()),
        svg_path: format!("{PLOTS}/{}.svg", fig.id),
        png_path: format!("{PLOTS}/{}.png", fig.id),
        svg,
    })
}

/// What the document is made of, besides the sweep and its statistics.
struct Parts<'a> {
    findings: &'a Findings,
    problems: &'a [String],
    figures: Vec<FigureRef>,
    /// With a cores axis: the section and its drawn figures.
    scaling: Option<(&'a Section<'a>, Vec<FigureRef>)>,
    comparison: Option<(&'a Comparison, &'a Path)>,
}

/// Top-down: the summary, the plots, the problems, the comparison, then
/// the full tables in an appendix.
fn document(sweep: &Sweep, stats: &[PointStats], parts: Parts) -> Document {
    let m = &sweep.manifest;
    let mut b = vec![Block::Heading(SUMMARY.into())];
    if !m.description.is_empty() {
        b.push(Block::Para(m.description.clone()));
    }
    b.push(Block::List(parts.findings.setting.clone()));
    let mut findings = parts.findings.findings.clone();
    if let Some((c, other)) = parts.comparison {
        findings.push(format!(
            "Compared with `{}`: {} of {} differences are significant (see “Compared with”).",
            other.display(),
            c.significant(),
            c.tested()
        ));
    }
    if !parts.problems.is_empty() {
        findings.push(format!(
            "{} problems are listed under Problems: read them before trusting a number.",
            parts.problems.len()
        ));
    }
    b.push(Block::List(findings));
    if let Some((section, figures)) = parts.scaling {
        let (intro, after) = section.blocks();
        b.push(Block::Heading(SCALING.into()));
        b.extend(intro);
        b.extend(figures.into_iter().map(Block::Figure));
        b.extend(after);
    }
    if let Some(t) = crate::openloop::capacity_table(m, stats) {
        b.push(Block::Heading("Capacity".into()));
        b.push(Block::Para(crate::openloop::CAPACITY_NOTE.into()));
        b.push(Block::Table(t));
    }
    if !parts.figures.is_empty() {
        b.push(Block::Heading("Plots".into()));
        b.extend(parts.figures.into_iter().map(Block::Figure));
    }
    b.push(Block::Heading("Problems".into()));
    if parts.problems.is_empty() {
        b.push(Block::Para(
            "None: every run succeeded with its point's flags, none was an outlier or ran on \
             a busy machine, and every point has at least 3 runs."
                .into(),
        ));
    } else {
        b.push(Block::List(parts.problems.to_vec()));
    }
    if let Some((c, other)) = parts.comparison {
        b.push(Block::Heading(format!("Compared with {}", other.display())));
        b.push(Block::Para(compare::METHOD.into()));
        b.push(Block::List(c.notes()));
        b.push(Block::Table(c.table()));
    }
    b.push(Block::Heading("Appendix: full tables".into()));
    b.extend(appendix(sweep, stats));
    Document {
        title: format!("serverlab report: {}", m.name),
        blocks: b,
    }
}

/// What ran, how to read the numbers, and every table.
fn appendix(sweep: &Sweep, stats: &[PointStats]) -> Vec<Block> {
    let m = &sweep.manifest;
    let mut b = vec![
        Block::Subheading("What ran".into()),
        Block::List(setup(sweep)),
        Block::Subheading("How to read this".into()),
        Block::Para(HOW_TO_READ.into()),
    ];
    if stats.iter().any(crate::certified::uncertified) {
        b.push(Block::Para(UNCERTIFIED_NOTE.into()));
    }
    b.extend([
        Block::Subheading("Throughput".into()),
        Block::Table(tables::throughput(m, stats)),
        Block::Subheading("Latency, all operations (geometric mean, 95% CI)".into()),
        Block::Table(tables::latency(m, stats)),
    ]);
    for (name, _) in PERCENTILES {
        let (unit, table) = tables::latency_summary(m, stats, name);
        b.push(Block::Subheading(format!(
            "Latency {name} ({}), all operations, in full",
            unit.symbol()
        )));
        b.push(Block::Table(table));
    }
    let optional = [
        (
            "Per client thread (geometric mean, 95% CI)",
            tables::per_thread(m, stats),
        ),
        (
            "Operations (geometric mean, 95% CI)",
            tables::operations(m, stats),
        ),
        (
            "Server service time (geometric mean, 95% CI)",
            tables::service(m, stats),
        ),
    ];
    for (title, table) in optional {
        if let Some(t) = table {
            b.push(Block::Subheading(title.into()));
            b.push(Block::Table(t));
        }
    }
    b
}

pub const SUMMARY: &str = "Summary";

/// The footnote to the tables' ‡ (said once, before them).
const UNCERTIFIED_NOTE: &str = "‡ after a point: at least one of its runs was not certified \
    (its `load.json` verdict failed a check: the schedule, the arrivals, stationarity, \
    independence or the sample size; see Problems). Its numbers still count; read them \
    with that in mind. The plots ring such points.";
pub const SCALING: &str = "Scaling with cores";

const HOW_TO_READ: &str = "Each point ran on a fresh server, repeated in interleaved blocks \
    (every point once per block, in a shuffled or round-robin order), so slow drift of the \
    machine spreads over all points. Throughput and each latency percentile get a full \
    summary over the successful runs: n, mean, geometric mean, median, min, max, sample \
    standard deviation, coefficient of variation (CV = sd ÷ mean) and a 95% confidence \
    interval. The interval is Student's t on the logarithms of the runs' values, turned \
    back: it is an interval for the geometric mean, never below zero, and wider above \
    than below (runs slowed by a busy machine are slower by a factor). Where a run \
    measured 0 (no logarithm) it is a percentile bootstrap of the mean instead, marked \
    so. The compact tables give the geometric mean and that interval, `[n=2]` marking \
    fewer than 3 runs. Two points whose intervals do not overlap differ beyond the noise; \
    intervals that overlap may or may not (the summary's tests say). With a baseline, \
    each run's throughput is also divided by the baseline run of the same block: that \
    share cancels what the machine's speed did to both. Closed-loop load: each client \
    connection waits for a reply before sending again, so throughput and latency are \
    measured together.";

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
    items.push(format!("load {}", crate::summary::load_pinning(m)));
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
