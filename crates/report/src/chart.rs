//! Drawing a figure (panels of series over one x axis, with confidence
//! interval error bars and a legend beside the plot) as SVG text and as a
//! PNG file, with plotters and the embedded font.

use crate::font;
use crate::ticks::{nice_range_ticks, nice_ticks, Ticked};
use crate::units::tick;
use plotters::coord::Shift;
use plotters::prelude::*;
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

#[derive(Debug, Clone)]
pub enum XScale {
    /// Values on a linear axis from 0.
    Numeric,
    /// Named positions 0, 1, 2… with these labels.
    Categories(Vec<String>),
}

#[derive(Debug, Clone)]
pub struct Panel {
    pub y_title: String,
    pub series: Vec<Series>,
}

#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<Pt>,
    /// Join the points (an ordered x); otherwise markers only.
    pub lines: bool,
    pub dashed: bool,
    /// Index into the palette.
    pub color: usize,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pt {
    pub x: f64,
    pub y: f64,
    /// The 95% confidence interval of y, drawn as an error bar.
    pub ci: Option<(f64, f64)>,
}

const WIDTH: u32 = 960;
const PANEL_HEIGHT: u32 = 520;
const LEGEND_WIDTH: u32 = 250;
const MAX_LEGEND: usize = 24;

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

impl Figure {
    fn size(&self) -> (u32, u32) {
        (WIDTH, 60 + PANEL_HEIGHT * self.panels.len().max(1) as u32)
    }

    /// The figure as an SVG document.
    pub fn svg(&self) -> Result<String, String> {
        font::register();
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, self.size()).into_drawing_area();
            draw(&root, self)?;
            root.present().map_err(|e| e.to_string())?;
        }
        Ok(out)
    }

    /// The figure as a PNG file at `path`.
    pub fn png(&self, path: &Path) -> Result<(), String> {
        font::register();
        let root = BitMapBackend::new(path, self.size()).into_drawing_area();
        draw(&root, self)?;
        root.present().map_err(|e| e.to_string())
    }
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, fig: &Figure) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let titled = root
        .margin(12, 0, 0, 0)
        .titled(&fig.title, (font::FAMILY, 24).into_font().color(&BLACK))
        .map_err(e)?;
    let (w, _) = titled.dim_in_pixel();
    let (plots, legend) = titled.split_horizontally(w.saturating_sub(LEGEND_WIDTH));
    let areas = plots.split_evenly((fig.panels.len().max(1), 1));
    for (panel, area) in fig.panels.iter().zip(areas.iter()) {
        draw_panel(area, fig, panel)?;
    }
    draw_legend(&legend, fig).map_err(e)
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    fig: &Figure,
    panel: &Panel,
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let all: Vec<&Pt> = panel.series.iter().flat_map(|s| s.points.iter()).collect();
    let x_axis = match &fig.x {
        XScale::Categories(c) => Ticked {
            lo: -0.5,
            hi: c.len().max(1) as f64 - 0.5,
            ticks: (0..c.len()).map(|i| i as f64).collect(),
        },
        XScale::Numeric => {
            let max = all.iter().map(|p| p.x).fold(0.0, f64::max);
            let min = all.iter().map(|p| p.x).fold(f64::INFINITY, f64::min);
            let ticks = nice_range_ticks(min, max);
            Ticked {
                lo: ticks[0],
                hi: *ticks.last().unwrap_or(&1.0),
                ticks,
            }
        }
    };
    let y_max = all
        .iter()
        .map(|p| p.ci.map(|c| c.1).unwrap_or(p.y).max(p.y))
        .fold(0.0, f64::max);
    let y_ticks = nice_ticks(y_max);
    let y_axis = Ticked {
        lo: 0.0,
        hi: *y_ticks.last().unwrap_or(&1.0),
        ticks: y_ticks,
    };
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .margin_right(20)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(x_axis, y_axis)
        .map_err(e)?;
    let categories = match &fig.x {
        XScale::Categories(c) => Some(c.clone()),
        XScale::Numeric => None,
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
        .draw()
        .map_err(e)?;
    for s in &panel.series {
        let c = color(s.color);
        let style = c.stroke_width(2);
        let pts: Vec<(f64, f64)> = s.points.iter().map(|p| (p.x, p.y)).collect();
        if s.lines && pts.len() > 1 {
            if s.dashed {
                chart
                    .draw_series(DashedLineSeries::new(pts.clone(), 9, 6, style))
                    .map_err(e)?;
            } else {
                chart
                    .draw_series(LineSeries::new(pts.clone(), style))
                    .map_err(e)?;
            }
        }
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.filled())))
            .map_err(e)?;
        for p in &s.points {
            let Some((lo, hi)) = p.ci else { continue };
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(p.x, lo), (p.x, hi)],
                    c.stroke_width(1),
                )))
                .map_err(e)?;
            for y in [lo, hi] {
                let cap = EmptyElement::at((p.x, y))
                    + PathElement::new(vec![(-5, 0), (5, 0)], c.stroke_width(1));
                chart.draw_series(std::iter::once(cap)).map_err(e)?;
            }
        }
    }
    Ok(())
}

/// Series names beside the plot, each with its colour and line style.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    fig: &Figure,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let mut seen: Vec<(&str, usize, bool)> = Vec::new();
    for s in fig.panels.iter().flat_map(|p| p.series.iter()) {
        if !seen.iter().any(|(n, _, _)| *n == s.name) {
            seen.push((&s.name, s.color, s.dashed));
        }
    }
    let text = (font::FAMILY, 14).into_font().color(&BLACK);
    let shown = seen.len().min(MAX_LEGEND);
    for (i, (name, c, dashed)) in seen.iter().take(shown).enumerate() {
        let y = 40 + 22 * i as i32;
        let style = color(*c).stroke_width(2);
        if *dashed {
            for x in [2, 12, 22] {
                area.draw(&PathElement::new(vec![(x, y), (x + 6, y)], style))?;
            }
        } else {
            area.draw(&PathElement::new(vec![(4, y), (28, y)], style))?;
            area.draw(&Circle::new((16, y), 4, color(*c).filled()))?;
        }
        area.draw(&Text::new(name.to_string(), (36, y - 8), text.clone()))?;
    }
    if seen.len() > shown {
        let y = 40 + 22 * shown as i32;
        let more = format!("… and {} more", seen.len() - shown);
        area.draw(&Text::new(more, (36, y - 8), text))?;
    }
    Ok(())
}
