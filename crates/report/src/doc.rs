//! A report as a document (headings, paragraphs, tables, figures), so the
//! Markdown and HTML renderers say exactly the same things.

#[derive(Debug, Clone)]
pub struct Document {
    pub title: String,
    pub blocks: Vec<Block>,
}

#[derive(Debug, Clone)]
pub enum Block {
    /// A section.
    Heading(String),
    /// A part of a section (the appendix's tables).
    Subheading(String),
    /// Text; `backticks` mark code, `**stars**` strong text.
    Para(String),
    List(Vec<String>),
    Table(Table),
    Figure(FigureRef),
}

#[derive(Debug, Clone, Default)]
pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

#[derive(Debug, Clone)]
pub struct FigureRef {
    pub title: String,
    /// Said under the title: how to read something unusual in the plot.
    pub note: Option<String>,
    /// Relative to the report: `plots/<id>.svg`.
    pub svg_path: String,
    pub png_path: String,
    /// The SVG document, for inlining.
    pub svg: String,
}
