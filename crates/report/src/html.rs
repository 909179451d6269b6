//! `report.html`: the document as one self-contained page, every plot's
//! SVG inlined (no file beside it is needed to read it).

use crate::doc::{Block, Document, Table};

const STYLE: &str = "body{font-family:'DejaVu Sans',sans-serif;max-width:1100px;margin:1em auto;padding:0 1em;color:#222;line-height:1.35}\
h1{font-size:1.6em;margin:0.4em 0}h2{margin:1em 0 0.4em}ul{margin:0.4em 0;padding-left:1.4em}li{margin:0.15em 0}\
#summary+p,#summary~ul{font-size:0.95em}\
table{border-collapse:collapse;margin:1em 0;font-size:0.9em}\
th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:right}\
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}\
code{background:#f3f3f3;padding:0 0.2em}figure{margin:2em 0}\
figure svg{max-width:100%;height:auto}figcaption{font-size:0.9em;color:#555}";

pub fn render(doc: &Document) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(&doc.title),
        escape(&doc.title)
    );
    for block in &doc.blocks {
        match block {
            Block::Heading(h) => out += &format!("<h2 id=\"{}\">{}</h2>\n", anchor(h), escape(h)),
            Block::Subheading(h) => {
                out += &format!("<h3 id=\"{}\">{}</h3>\n", anchor(h), escape(h))
            }
            Block::Para(p) => out += &format!("<p>{}</p>\n", inline(p)),
            Block::List(items) => {
                out += "<ul>\n";
                for item in items {
                    out += &format!("<li>{}</li>\n", inline(item));
                }
                out += "</ul>\n";
            }
            Block::Table(t) => out += &table(t),
            Block::Figure(f) => {
                let note = f
                    .note
                    .as_deref()
                    .map(|n| format!(" {}", inline(n)))
                    .unwrap_or_default();
                out += &format!(
                    "<figure id=\"{}\">\n{}\n<figcaption><strong>{}</strong> (<a href=\"{}\">SVG</a>, <a href=\"{}\">PNG</a>).{note}</figcaption>\n</figure>\n",
                    escape(&f.svg_path),
                    strip_prolog(&f.svg),
                    escape(&f.title),
                    escape(&f.svg_path),
                    escape(&f.png_path)
                );
            }
        }
    }
    out += "</body>\n</html>\n";
    out
}

fn table(t: &Table) -> String {
    let mut out = String::from("<table>\n<thead><tr>");
    for h in &t.headers {
        out += &format!("<th>{}</th>", inline(h));
    }
    out += "</tr></thead>\n<tbody>\n";
    for row in &t.rows {
        out += "<tr>";
        for c in row {
            out += &format!("<td>{}</td>", inline(c));
        }
        out += "</tr>\n";
    }
    out += "</tbody>\n</table>\n";
    out
}

/// An SVG document without its XML declaration, to sit inside HTML.
fn strip_prolog(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// An id for a heading: `Appendix: full tables` → `appendix-full-tables`.
fn anchor(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// Escaped text with `code` spans and `**strong**` text.
fn inline(s: &str) -> String {
    escape(s)
        .split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<code>{part}</code>")
            } else {
                strong(part)
            }
        })
        .collect()
}

fn strong(s: &str) -> String {
    s.split("**")
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<strong>{part}</strong>")
            } else {
                part.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_code() {
        assert_eq!(inline("a <b> `x&y`"), "a &lt;b&gt; <code>x&amp;y</code>");
        assert_eq!(
            inline("**caps**: `a**b`"),
            "<strong>caps</strong>: <code>a**b</code>"
        );
        assert_eq!(anchor("Appendix: full tables"), "appendix-full-tables");
        assert_eq!(strip_prolog("<?xml version=\"1.0\"?>\n<svg/>"), "<svg/>");
    }
}
