//! Drawing a figure (panels of series over one x axis, with confidence
//! interval error bars and a legend below the plot) as SVG text and as a
//! PNG file, with plotters and the embedded font. Latency panels use a
//! logarithmic y axis; series on a categorical x axis are set side by side
//! around each category so they never overlap.

use crate::font;
use crate::ticks::{log_ticks, log_y_ticks, nice_ticks, x_ticks, Ticked};
use crate::units::tick;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontDesc;
use std::path::Path;

/// What to draw: backend-independent.
#[derive(Debug, Clone)]
pub struct Figure {
    /// File stem: `plots/<id>.svg` and `.png`.
    pub id: String,
    pub title: String,
    pub x_title: String,
    pub x: XScale,
    /// Stacked top to bottom, sharing the x axis.
    pub panels: Vec<Panel>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum XScale {
    /// Numbers on a linear axis; `integer`: whole numbers only (counts of
    /// clients or threads), ticked at whole numbers.
    Linear { integer: bool },
    /// Positive numbers that double (threads 1, 2, 4, 8) on a log₂ axis,
    /// ticked at the values.
    Log2,
    /// Named positions 0, 1, 2… with these labels.
    Categories(Vec<String>),
}

#[derive(Debug, Clone)]
pub struct Panel {
    pub y_title: String,
    pub series: Vec<Series>,
    /// A logarithmic y axis (latencies: p50 and p99.9 differ by factors).
    pub log_y: bool,
}

/// The shape of a series' points: what tells percentiles apart where
/// there are no lines to dash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Triangle,
    Square,
    Diamond,
    /// No marker: a line alone (a fitted curve, an ideal).
    None,
}

impl Marker {
    /// The marker of the `i`-th of several statistics drawn alike.
    pub fn nth(i: usize) -> Marker {
        [
            Marker::Circle,
            Marker::Triangle,
            Marker::Square,
            Marker::Diamond,
        ][i % 4]
    }
}

#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<Pt>,
    /// Join the points, in the order given; otherwise markers only.
    pub lines: bool,
    pub dashed: bool,
    pub marker: Marker,
    /// Index into the palette.
    pub color: usize,
    /// Beside each marker, which point it is (none where empty; else one
    /// per point, in order).
    pub labels: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pt {
    pub x: f64,
    pub y: f64,
    /// The 95% confidence interval of y, drawn as an error bar.
    pub ci: Option<(f64, f64)>,
    /// The runs behind it.
    pub n: usize,
    /// Some of those runs were not certified: drawn ringed.
    pub uncertified: bool,
}

/// A plot could not be drawn (the backend's complaint).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DrawError(String);

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for DrawError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        DrawError(e.to_string())
    }
}

const WIDTH: u32 = 960;
const PANEL_HEIGHT: u32 = 520;
const TITLE_HEIGHT: u32 = 60;
const MAX_LEGEND: usize = 24;
const LEGEND_ROW: u32 = 22;
/// Line sample and gap before a legend entry's text.
const LEGEND_SAMPLE: u32 = 40;
const LEGEND_GAP: u32 = 24;
const LEGEND_MARGIN: u32 = 20;
const LEGEND_FONT: u32 = 14;
/// Pixels between error bars of different series at the same x.
const DODGE: f64 = 5.0;
/// The share of a category's width its series spread over.
const CATEGORY_SPREAD: f64 = 0.6;

/// How many colours series get before they repeat.
pub const PALETTE_SIZE: usize = PALETTE.len();

/// Tableau 10: distinguishable, and readable in grey.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// One legend entry: a series' name and how it is drawn.
struct Entry<'a> {
    name: &'a str,
    color: usize,
    dashed: bool,
    lines: bool,
    marker: Marker,
}

/// Where the legend's entries go: as many columns, as wide as the longest
/// name, as fit across the figure; filled top to bottom.
struct LegendLayout {
    column_width: u32,
    rows: usize,
    height: u32,
}

impl LegendLayout {
    /// Where entry `i`'s sample starts, and its middle height: down the
    /// columns, so related entries (a group's p50 and p99) stay together.
    fn place(&self, i: usize) -> (i32, i32) {
        let (row, col) = (i % self.rows, i / self.rows);
        (
            (LEGEND_MARGIN + col as u32 * self.column_width) as i32,
            (LEGEND_MARGIN / 2 + LEGEND_ROW / 2 + row as u32 * LEGEND_ROW) as i32,
        )
    }
}

impl Figure {
    /// The points that stand for runs (not those of a drawn curve).
    fn measured(&self) -> impl Iterator<Item = &Pt> {
        self.panels.iter().flat_map(|p| {
            p.series
                .iter()
                .filter(|s| s.marker != Marker::None)
                .flat_map(|s| s.points.iter())
        })
    }

    /// Whether some error bar runs past its panel's y axis (below 0), so
    /// it is cut at the axis and ends in an arrow instead of a cap.
    pub fn truncates_bars(&self) -> bool {
        self.panels.iter().any(|p| {
            let y = y_axis(p);
            p.series
                .iter()
                .flat_map(|s| s.points.iter())
                .filter_map(|pt| pt.ci)
                // Relative slack: a bound equal to a tick, up to rounding.
                .any(|(lo, hi)| lo < y.lo - 1e-9 * y.lo.abs() || hi > y.hi + 1e-9 * y.hi.abs())
        })
    }

    /// What a caption should add to the title: how many runs each marker
    /// stands for, what the bars are, and anything unusual.
    pub fn note(&self) -> String {
        let mut text = self.caption();
        if self.truncates_bars() {
            text += " Error bars that run past the axis are cut at it and end in an arrow.";
        }
        if self.measured().any(|p| p.uncertified) {
            text += " A ring and ‡ around a marker: some of its point's runs were not \
                     certified (see Problems).";
        }
        text
    }

    /// `Each marker: the geometric mean of n = 4 runs (n = 2–4 where runs
    /// failed); bars: its 95% confidence interval (Student's t on the log
    /// scale). Latency axis logarithmic.`
    pub fn caption(&self) -> String {
        let ns: Vec<usize> = self.measured().map(|p| p.n).collect();
        let (lo, hi) = (
            ns.iter().copied().min().unwrap_or(0),
            ns.iter().copied().max().unwrap_or(0),
        );
        let n = if lo == hi {
            format!("n = {hi} runs")
        } else {
            format!("n = {lo}–{hi} runs (fewer where runs failed or were left out)")
        };
        let mut text = format!(
            "Each marker: the geometric mean of {n}; error bars: its 95% confidence \
             interval (Student's t on the log scale; a percentile bootstrap of the mean \
             where a run measured 0)."
        );
        if lo < 2 {
            text += " Points from a single run have no bar.";
        }
        if self.panels.iter().any(|p| p.log_y) {
            text += " The y axis is logarithmic.";
        }
        if matches!(self.x, XScale::Categories(_)) && self.series_count() > 1 {
            text += " Series are set side by side within each category.";
        }
        text
    }

    fn series_count(&self) -> usize {
        self.panels
            .iter()
            .map(|p| p.series.len())
            .max()
            .unwrap_or(0)
    }

    /// Where series `k` of `n` sits within a category (data units); 0 on
    /// other axes.
    fn category_offset(&self, k: usize, n: usize) -> f64 {
        if !matches!(self.x, XScale::Categories(_)) || n < 2 {
            return 0.0;
        }
        let step = CATEGORY_SPREAD / n as f64;
        (k as f64 - (n - 1) as f64 / 2.0) * step
    }

    /// Distinct series names in order, each with its first style.
    fn entries(&self) -> Vec<Entry<'_>> {
        let mut seen: Vec<Entry> = Vec::new();
        for s in self.panels.iter().flat_map(|p| p.series.iter()) {
            if !seen.iter().any(|e| e.name == s.name) {
                seen.push(Entry {
                    name: &s.name,
                    color: s.color,
                    dashed: s.dashed,
                    // A line sample only where a line is drawn.
                    lines: s.lines && s.points.len() > 1,
                    marker: s.marker,
                });
            }
        }
        seen
    }

    fn legend_layout(&self) -> LegendLayout {
        let entries = self.entries();
        let mut labels: Vec<String> = entries
            .iter()
            .take(MAX_LEGEND)
            .map(|e| e.name.to_string())
            .collect();
        if entries.len() > MAX_LEGEND {
            labels.push(more(entries.len() - MAX_LEGEND));
        }
        let widest = labels.iter().map(|l| text_width(l)).max().unwrap_or(0);
        let column_width = LEGEND_SAMPLE + widest + LEGEND_GAP;
        let usable = WIDTH - 2 * LEGEND_MARGIN;
        let columns = ((usable / column_width.max(1)) as usize).clamp(1, labels.len().max(1));
        let rows = labels.len().div_ceil(columns);
        LegendLayout {
            column_width,
            rows: rows.max(1),
            height: if rows == 0 {
                0
            } else {
                rows as u32 * LEGEND_ROW + 2 * LEGEND_MARGIN
            },
        }
    }

    fn size(&self) -> (u32, u32) {
        let panels = self.panels.len().max(1) as u32;
        (
            WIDTH,
            TITLE_HEIGHT + PANEL_HEIGHT * panels + self.legend_layout().height,
        )
    }

    /// The x axis every panel shares.
    fn x_axis(&self) -> Ticked {
        // Ticks at the measured values; a drawn curve only passes between.
        let xs: Vec<f64> = self.measured().map(|p| p.x).collect();
        match &self.x {
            XScale::Categories(c) => Ticked {
                lo: -0.5,
                hi: c.len().max(1) as f64 - 0.5,
                ticks: (0..c.len()).map(|i| i as f64).collect(),
                log: false,
            },
            XScale::Linear { integer } => x_ticks(&xs, *integer),
            XScale::Log2 => log_ticks(&xs),
        }
    }

    /// The figure as an SVG document.
    pub fn svg(&self) -> Result<String, DrawError> {
        font::register();
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, self.size()).into_drawing_area();
            draw(&root, self)?;
            root.present()?;
        }
        Ok(out)
    }

    /// The figure as a PNG file at `path`.
    pub fn png(&self, path: &Path) -> Result<(), DrawError> {
        font::register();
        let root = BitMapBackend::new(path, self.size()).into_drawing_area();
        draw(&root, self)?;
        root.present()?;
        Ok(())
    }
}

fn more(n: usize) -> String {
    format!("… and {n} more")
}

fn legend_font() -> FontDesc<'static> {
    (font::FAMILY, LEGEND_FONT).into_font()
}

/// The width of `text` in the legend's font.
fn text_width(text: &str) -> u32 {
    font::register();
    legend_font()
        .box_size(text)
        .map(|(w, _)| w)
        .unwrap_or(8 * text.chars().count() as u32)
}

/// How far past the markers an axis stretches for error bars: an interval
/// from 3 noisy runs can span a factor of 100, and an axis drawn to hold it
/// would flatten every marker. Bars beyond are cut, with an arrow.
const BAR_ROOM_LINEAR: f64 = 2.0;
const BAR_ROOM_LOG: f64 = 10.0;

/// A panel's y axis: from 0 to a round number above every mean and CI
/// (up to twice the largest mean); or, when logarithmic, from a 1-2-5 step
/// below the lowest value to one above the highest (within a factor of 10
/// of the markers).
fn y_axis(panel: &Panel) -> Ticked {
    let points = || panel.series.iter().flat_map(|s| s.points.iter());
    let top = points().map(|p| p.y).fold(0.0, f64::max);
    if panel.log_y {
        let bottom = points()
            .map(|p| p.y)
            .filter(|y| *y > 0.0)
            .fold(f64::INFINITY, f64::min);
        let values: Vec<f64> = points()
            .flat_map(|p| {
                let (lo, hi) = p.ci.unwrap_or((p.y, p.y));
                [
                    p.y,
                    lo.max(bottom / BAR_ROOM_LOG),
                    hi.min(top * BAR_ROOM_LOG),
                ]
            })
            .filter(|v| *v > 0.0 && v.is_finite())
            .collect();
        if let Some(t) = log_y_ticks(&values) {
            return t;
        }
    }
    let y_max = points()
        .map(|p| {
            p.ci.map(|c| c.1)
                .unwrap_or(p.y)
                .min(top * BAR_ROOM_LINEAR)
                .max(p.y)
        })
        .fold(0.0, f64::max);
    let ticks = nice_ticks(y_max);
    Ticked {
        lo: 0.0,
        hi: *ticks.last().unwrap_or(&1.0),
        ticks,
        log: false,
    }
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, fig: &Figure) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let titled = root
        .margin(12, 0, 0, 0)
        .titled(&fig.title, (font::FAMILY, 24).into_font().color(&BLACK))?;
    let layout = fig.legend_layout();
    let (_, h) = titled.dim_in_pixel();
    let (plots, legend) = titled.split_vertically(h.saturating_sub(layout.height));
    let areas = plots.split_evenly((fig.panels.len().max(1), 1));
    let x_axis = fig.x_axis();
    for (panel, area) in fig.panels.iter().zip(areas.iter()) {
        draw_panel(area, fig, &x_axis, panel)?;
    }
    draw_legend(&legend, fig, &layout)
}

/// The plotting area of one panel: its axes, titled and ticked.
type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Ticked, Ticked>>;

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    fig: &Figure,
    x_axis: &Ticked,
    panel: &Panel,
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let y_axis = y_axis(panel);
    let y_range = (y_axis.lo, y_axis.hi);
    let mut chart = axes(area, fig, x_axis, y_axis, panel)?;
    let dodge = dodges(panel);
    let count = panel.series.len();
    for (k, s) in panel.series.iter().enumerate() {
        // On a categorical axis each series has its own place in the category.
        let s = &shifted(s, fig.category_offset(k, count));
        let pts: Vec<(f64, f64)> = s.points.iter().map(|p| (p.x, p.y)).collect();
        draw_line(&mut chart, s, &pts)?;
        // Markers alone (no line to stay on) move with their error bars.
        let shift = |x: f64| if s.lines { 0 } else { dodge(k, x) };
        draw_markers(&mut chart, s, &pts, &shift)?;
        draw_labels(&mut chart, s, &pts, &shift)?;
        draw_uncertified(&mut chart, s, &shift)?;
        for p in &s.points {
            draw_error_bar(&mut chart, p, color(s.color), dodge(k, p.x), y_range)?;
        }
    }
    Ok(())
}

/// The panel's axes with their titles, ticks and grid.
fn axes<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    fig: &Figure,
    x_axis: &Ticked,
    y_axis: Ticked,
    panel: &Panel,
) -> Result<Chart<'a, DB>, DrawError>
where
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        // Half the widest tick label ("120,000" at 14 px is about 56 px
        // wide), so the last x tick, centred on the right edge, is whole.
        .margin_right(40)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(x_axis.clone(), y_axis)?;
    let categories = match &fig.x {
        XScale::Categories(c) => Some(c.clone()),
        _ => None,
    };
    let x_fmt = move |v: &f64| match &categories {
        Some(c) => c.get(v.round() as usize).cloned().unwrap_or_default(),
        None => tick(*v),
    };
    chart
        .configure_mesh()
        .x_desc(fig.x_title.as_str())
        .y_desc(panel.y_title.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&|v| tick(*v))
        .axis_desc_style((font::FAMILY, 17))
        .label_style((font::FAMILY, 14))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.12))
        .draw()?;
    Ok(chart)
}

/// The series moved `offset` along x.
fn shifted(s: &Series, offset: f64) -> Series {
    Series {
        points: s
            .points
            .iter()
            .map(|p| Pt {
                x: p.x + offset,
                ..*p
            })
            .collect(),
        ..s.clone()
    }
}

/// The line joining a series' points, solid or dashed, where it has one.
fn draw_line<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    s: &Series,
    pts: &[(f64, f64)],
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    if !s.lines || pts.len() < 2 {
        return Ok(());
    }
    let style = color(s.color).stroke_width(2);
    if s.dashed {
        chart.draw_series(DashedLineSeries::new(pts.to_vec(), 9, 6, style))?;
    } else {
        chart.draw_series(LineSeries::new(pts.to_vec(), style))?;
    }
    Ok(())
}

/// A marker of the series' shape at each point, `shift(x)` pixels aside.
fn draw_markers<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    s: &Series,
    pts: &[(f64, f64)],
    shift: &dyn Fn(f64) -> i32,
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let fill = color(s.color).filled();
    let at = |p: (f64, f64)| EmptyElement::at(p);
    match s.marker {
        Marker::None => {}
        Marker::Circle => {
            let shape = |p: (f64, f64)| at(p) + Circle::new((shift(p.0), 0), 4, fill);
            chart.draw_series(pts.iter().map(|&p| shape(p)))?;
        }
        Marker::Triangle => {
            let shape = |p: (f64, f64)| at(p) + TriangleMarker::new((shift(p.0), 0), 6, fill);
            chart.draw_series(pts.iter().map(|&p| shape(p)))?;
        }
        Marker::Square => {
            let shape = |p: (f64, f64)| {
                let d = shift(p.0);
                at(p) + Rectangle::new([(d - 4, -4), (d + 4, 4)], fill)
            };
            chart.draw_series(pts.iter().map(|&p| shape(p)))?;
        }
        Marker::Diamond => {
            let shape = |p: (f64, f64)| {
                let d = shift(p.0);
                let corners = vec![(d, -6), (d + 6, 0), (d, 6), (d - 6, 0)];
                at(p) + Polygon::new(corners, fill)
            };
            chart.draw_series(pts.iter().map(|&p| shape(p)))?;
        }
    }
    Ok(())
}

/// Each marker's label, above and to the right of it, in its colour.
fn draw_labels<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    s: &Series,
    pts: &[(f64, f64)],
    shift: &dyn Fn(f64) -> i32,
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    if s.labels.len() != pts.len() {
        return Ok(());
    }
    let style = (font::FAMILY, 11).into_font().color(&color(s.color));
    chart.draw_series(pts.iter().zip(&s.labels).map(|(&p, label)| {
        EmptyElement::at(p) + Text::new(label.clone(), (shift(p.0) + 6, -16), style.clone())
    }))?;
    Ok(())
}

/// A ring and `‡` around each marker whose point has runs that were not
/// certified.
fn draw_uncertified<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    s: &Series,
    shift: &dyn Fn(f64) -> i32,
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let ring = BLACK.stroke_width(2);
    let style = (font::FAMILY, 14).into_font().color(&BLACK);
    let flagged = s.points.iter().filter(|p| p.uncertified);
    chart.draw_series(flagged.map(|p| {
        let d = shift(p.x);
        EmptyElement::at((p.x, p.y))
            + Circle::new((d, 0), 10, ring)
            + Text::new(crate::certified::MARK, (d - 16, -20), style.clone())
    }))?;
    Ok(())
}

/// A point's confidence interval as a bar `dx` pixels aside: a cap where
/// the interval ends, an arrow where the axis (`y_lo`..`y_hi`) cuts it.
fn draw_error_bar<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    p: &Pt,
    c: RGBColor,
    dx: i32,
    (y_lo, y_hi): (f64, f64),
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    // No interval (n = 1), or one of zero width: the marker says it all.
    let Some((lo, hi)) = p.ci.filter(|(lo, hi)| hi > lo) else {
        return Ok(());
    };
    let (top, bottom) = (hi.min(y_hi), lo.max(y_lo));
    if top < bottom {
        return Ok(());
    }
    let span = chart.backend_coord(&(p.x, top)).1 - chart.backend_coord(&(p.x, bottom)).1;
    let thin = c.stroke_width(1);
    let bar = EmptyElement::at((p.x, bottom)) + PathElement::new(vec![(dx, 0), (dx, span)], thin);
    chart.draw_series(std::iter::once(bar))?;
    for (y, inside, dir) in [(bottom, lo >= y_lo, 1), (top, hi <= y_hi, -1)] {
        let end: Vec<(i32, i32)> = if inside {
            vec![(dx - 5, 0), (dx + 5, 0)]
        } else {
            vec![(dx - 4, -6 * dir), (dx, 0), (dx + 4, -6 * dir)]
        };
        let end = EmptyElement::at((p.x, y)) + PathElement::new(end, thin);
        chart.draw_series(std::iter::once(end))?;
    }
    Ok(())
}

/// Pixel offsets that keep error bars of different series at the same x
/// apart where they would overlap: `f(series index, x)`.
fn dodges(panel: &Panel) -> impl Fn(usize, f64) -> i32 + '_ {
    move |k: usize, x: f64| {
        let at_x: Vec<(usize, (f64, f64))> = panel
            .series
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let ci = s.points.iter().find(|p| p.x == x)?.ci?;
                Some((i, ci))
            })
            .collect();
        let overlap = at_x.iter().enumerate().any(|(a, (_, (lo, hi)))| {
            at_x[a + 1..]
                .iter()
                .any(|(_, (lo2, hi2))| lo <= hi2 && lo2 <= hi)
        });
        let n = at_x.len();
        if !overlap || n < 2 {
            return 0;
        }
        let i = at_x.iter().position(|(i, _)| *i == k).unwrap_or(0) as f64;
        let step = DODGE.min(30.0 / (n - 1) as f64);
        ((i - (n - 1) as f64 / 2.0) * step).round() as i32
    }
}

/// Series names below the plot, in columns, each with its colour, line
/// style and marker.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    fig: &Figure,
    layout: &LegendLayout,
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let entries = fig.entries();
    let text = legend_font().color(&BLACK);
    let shown = entries.len().min(MAX_LEGEND);
    let place = |i: usize| layout.place(i);
    for (i, e) in entries.iter().take(shown).enumerate() {
        let (x, y) = place(i);
        let c = color(e.color);
        let style = c.stroke_width(2);
        if e.lines && e.dashed {
            for dx in [2, 13, 24] {
                area.draw(&PathElement::new(vec![(x + dx, y), (x + dx + 7, y)], style))?;
            }
        } else if e.lines {
            area.draw(&PathElement::new(vec![(x + 2, y), (x + 31, y)], style))?;
        }
        let centre = (x + 16, y);
        let fill = c.filled();
        match e.marker {
            Marker::None => {}
            Marker::Circle => area.draw(&Circle::new(centre, 4, fill))?,
            Marker::Triangle => area.draw(&TriangleMarker::new(centre, 6, fill))?,
            Marker::Square => area.draw(&Rectangle::new(
                [(centre.0 - 4, y - 4), (centre.0 + 4, y + 4)],
                fill,
            ))?,
            Marker::Diamond => area.draw(&Polygon::new(
                vec![
                    (centre.0, y - 6),
                    (centre.0 + 6, y),
                    (centre.0, y + 6),
                    (centre.0 - 6, y),
                ],
                fill,
            ))?,
        }
        let at = (x + LEGEND_SAMPLE as i32, y - 8);
        area.draw(&Text::new(e.name.to_string(), at, text.clone()))?;
    }
    if entries.len() > shown {
        let (x, y) = place(shown);
        let at = (x + LEGEND_SAMPLE as i32, y - 8);
        area.draw(&Text::new(more(entries.len() - shown), at, text))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(names: &[String], ci: (f64, f64)) -> Figure {
        let series = names
            .iter()
            .enumerate()
            .map(|(i, name)| Series {
                name: name.clone(),
                points: vec![Pt {
                    x: 1.0,
                    y: 10.0,
                    ci: Some(ci),
                    n: 3,
                    uncertified: false,
                }],
                lines: true,
                dashed: false,
                marker: Marker::Circle,
                color: i,
                labels: vec![],
            })
            .collect();
        Figure {
            id: "t".into(),
            title: "t".into(),
            x_title: "x".into(),
            x: XScale::Linear { integer: true },
            panels: vec![Panel {
                y_title: "y".into(),
                series,
                log_y: false,
            }],
        }
    }

    /// erss series names run to about 50 characters: every one is drawn
    /// whole, inside the figure, and below the plot, not beside it.
    #[test]
    fn long_legend_names_fit_whole() {
        let names: Vec<String> = (0..8)
            .map(|i| format!("buckets=2048, strategy=thread-per-request, cpus={i} (0-1)"))
            .collect();
        let fig = figure(&names, (5.0, 15.0));
        let layout = fig.legend_layout();
        assert!(layout.height >= 4 * LEGEND_ROW, "{}", layout.height);
        for (i, name) in names.iter().enumerate() {
            let (x, _) = layout.place(i);
            let right = x as u32 + LEGEND_SAMPLE + text_width(name);
            assert!(right <= WIDTH, "{name} ends at {right}");
        }
        let (_, h) = fig.size();
        assert_eq!(h, TITLE_HEIGHT + PANEL_HEIGHT + layout.height);
    }

    #[test]
    fn bars_past_the_axis_are_said_to_be_cut() {
        let names = vec!["a".to_string()];
        assert!(!figure(&names, (5.0, 15.0)).note().contains("cut"));
        let fig = figure(&names, (-5.0, 25.0));
        assert!(fig.truncates_bars());
        assert!(fig.note().contains("cut"));
        let svg = fig.svg().unwrap();
        roxmltree::Document::parse(&svg).unwrap();
        // A bar from 3 noisy runs up to 100 × the marker does not set the
        // axis: it stops at twice the largest marker, the bar cut.
        let wild = figure(&names, (0.3, 1000.0));
        assert_eq!(y_axis(&wild.panels[0]).hi, 20.0);
        assert!(wild.truncates_bars());
        let mut log = wild.clone();
        log.panels[0].log_y = true;
        let axis = y_axis(&log.panels[0]);
        assert_eq!((axis.lo, axis.hi), (1.0, 100.0));
    }

    #[test]
    fn captions_say_n_and_what_the_bars_are() {
        let names = vec!["a".to_string(), "b".to_string()];
        let mut fig = figure(&names, (5.0, 15.0));
        let note = fig.note();
        assert!(
            note.contains("n = 3 runs") && note.contains("95% confidence interval"),
            "{note}"
        );
        fig.panels[0].series[1].points[0].n = 1;
        let note = fig.note();
        assert!(
            note.contains("n = 1–3 runs") && note.contains("no bar"),
            "{note}"
        );
        fig.panels[0].log_y = true;
        assert!(fig.note().contains("logarithmic"));
    }

    /// On a categorical axis every series has its own place in each
    /// category, whatever its interval.
    #[test]
    fn categorical_series_sit_side_by_side() {
        let names: Vec<String> = (0..4).map(|i| i.to_string()).collect();
        let mut fig = figure(&names, (5.0, 15.0));
        fig.x = XScale::Categories(vec!["async".into(), "pool-locked".into()]);
        let offsets: Vec<f64> = (0..4).map(|k| fig.category_offset(k, 4)).collect();
        assert!(offsets.windows(2).all(|w| w[1] > w[0]), "{offsets:?}");
        assert!(offsets[0] > -0.5 && offsets[3] < 0.5, "{offsets:?}");
        assert!(
            (offsets[0] + offsets[3]).abs() < 1e-12,
            "centred: {offsets:?}"
        );
        fig.x = XScale::Linear { integer: true };
        assert_eq!(fig.category_offset(0, 4), 0.0);
        assert!(fig.svg().is_ok());
    }

    #[test]
    fn overlapping_bars_at_one_x_are_dodged_apart() {
        let names = vec!["a".to_string(), "b".to_string()];
        let fig = figure(&names, (5.0, 15.0));
        let dodge = dodges(&fig.panels[0]);
        assert!(dodge(0, 1.0) < 0 && dodge(1, 1.0) > 0);
        assert_eq!(dodge(0, 2.0), 0);
        let mut apart = fig.clone();
        apart.panels[0].series[1].points[0].ci = Some((20.0, 30.0));
        let dodge = dodges(&apart.panels[0]);
        assert_eq!((dodge(0, 1.0), dodge(1, 1.0)), (0, 0));
    }
}
