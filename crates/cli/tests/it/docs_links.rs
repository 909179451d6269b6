//! The documentation stands on its own in a clone: no page of docs/ or
//! the README cites a file outside the repository (the wire contract is
//! docs/protocols/, not a PROTOCOLS.md elsewhere), every relative link
//! resolves to a file here, and every section of the contract the other
//! pages cite by number exists.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// README.md and every markdown page under docs/.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    pages
}

/// The targets of a page's inline markdown links, `[text](target)`.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, _) in text.match_indices("](") {
        let rest = &text[i + 2..];
        if let Some(end) = rest.find(')') {
            found.push(rest[..end].trim().to_string());
        }
    }
    found
}

/// Words that would send a reader outside the repository.
const OUTSIDE: [&str; 4] = ["PROTOCOLS.md", "../shared", "shared/PROTOCOLS", "DESIGN.md"];

#[test]
fn no_page_cites_a_file_outside_the_repository() {
    let root = root();
    let mut faults = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(&root).unwrap().display().to_string();
        for word in OUTSIDE {
            if text.contains(word) {
                faults.push(format!("{name} cites {word}"));
            }
        }
        // A kept report whose first line says its plots are not kept
        // links plots/ as `serverlab report` wrote it.
        let plots_not_kept = text
            .lines()
            .next()
            .is_some_and(|l| l.starts_with("<!--") && l.contains("its plots are not kept here"));
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") || link.starts_with('#') {
                continue;
            }
            if plots_not_kept && link.starts_with("plots/") {
                continue;
            }
            let file = link.split('#').next().unwrap();
            let target = page.parent().unwrap().join(file);
            match target.canonicalize() {
                Ok(t) if t.starts_with(&root) => {}
                Ok(t) => faults.push(format!("{name} links {link}: {} is outside", t.display())),
                Err(_) => faults.push(format!("{name} links {link}: no such file")),
            }
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

/// "section N.M" and "§N.M" in the docs name a heading `N.M …` of the
/// contract, and the contract has a section for each protocol.
#[test]
fn every_cited_section_of_the_contract_exists() {
    let protocols = root().join("docs/protocols");
    let mut headings = Vec::new();
    for page in ["board", "bucket", "kv", "echo", "resp"] {
        let text = std::fs::read_to_string(protocols.join(format!("{page}.md"))).unwrap();
        for line in text.lines().filter(|l| l.starts_with('#')) {
            let number = line.trim_start_matches('#').split_whitespace().next();
            headings.push(number.unwrap().trim_end_matches('.').to_string());
        }
    }
    for n in 1..=5 {
        assert!(
            headings.contains(&n.to_string()),
            "no section {n}: {headings:?}"
        );
    }
    let index = std::fs::read_to_string(protocols.join("README.md")).unwrap();
    assert!(
        index.contains("## 0. Every protocol"),
        "the contract's section 0"
    );
    let mut faults = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap().replace('\n', " ");
        for cue in ["section ", "§"] {
            for (i, _) in text.match_indices(cue) {
                // An RFC's sections are its own (RFC 9110 §9.3.2).
                let before = &text.as_bytes()[i.saturating_sub(12)..i];
                if before.windows(3).any(|w| w == b"RFC") {
                    continue;
                }
                let number: String = text[i + cue.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                let number = number.trim_end_matches('.');
                if !number.is_empty() && number != "0" && !headings.iter().any(|h| h == number) {
                    faults.push(format!("{}: section {number}", page.display()));
                }
            }
        }
    }
    assert!(
        faults.is_empty(),
        "cited, not in the contract:\n{}",
        faults.join("\n")
    );
}
