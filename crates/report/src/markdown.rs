//! `report.md`: the document as GitHub-flavoured Markdown, plots linked
//! as SVG with their PNG beside.

use crate::doc::{Block, Document, Table};

pub fn render(doc: &Document) -> String {
    let mut out = format!("# {}\n", doc.title);
    for block in &doc.blocks {
        out.push('\n');
        match block {
            Block::Heading(h) => out += &format!("## {h}\n"),
            Block::Subheading(h) => out += &format!("### {h}\n"),
            Block::Para(p) => out += &format!("{p}\n"),
            Block::List(items) => {
                for item in items {
                    out += &format!("- {item}\n");
                }
            }
            Block::Table(t) => out += &table(t),
            Block::Figure(f) => {
                out += &format!(
                    "![{}]({})\n\n*{}* ([PNG]({}))\n",
                    f.title, f.svg_path, f.title, f.png_path
                );
                if let Some(note) = &f.note {
                    out += &format!("\n{note}\n");
                }
            }
        }
    }
    out
}

/// A pipe table; `|` in cells escaped.
pub fn table(t: &Table) -> String {
    let row = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
        format!("| {} |\n", cells.join(" | "))
    };
    let mut out = row(&t.headers);
    out += &row(&vec!["---".to_string(); t.headers.len()]);
    for r in &t.rows {
        out += &row(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_and_escaping() {
        let t = Table {
            headers: vec!["a".into(), "b".into()],
            rows: vec![vec!["1|2".into(), "x".into()]],
        };
        assert_eq!(table(&t), "| a | b |\n| --- | --- |\n| 1\\|2 | x |\n");
    }
}
