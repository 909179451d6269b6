//! Tests take their strategies and stores from the code's one list, so a
//! strategy or store added there is tested everywhere with no test edited.
//! This fails if a file of the test tree (or the strategies benchmark)
//! lists them by hand: a quoted strategy or store name is allowed only as
//! the value of one `--strategy` / `--store` flag (a test about one
//! particular server) or of one `strategy = ` line of an experiment.

use crate::support::*;
use std::path::{Path, PathBuf};

/// The Rust files of the integration tests.
fn test_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the test directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    files
}

/// What may come right before a quoted name that is not a list entry.
const ONE_SERVER: [&str; 3] = ["\"--strategy\",", "\"--store\",", "strategy ="];

/// Every quoted occurrence of one of `names` in `text` that is not the
/// value of a single flag: (line, name).
fn hand_listed(text: &str, names: &[&str]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for name in names {
        let quoted = format!("\"{name}\"");
        for (at, _) in text.match_indices(&quoted) {
            let before = text[..at].trim_end();
            if ONE_SERVER.iter().any(|p| before.ends_with(p)) {
                continue;
            }
            let line = text[..at].matches('\n').count() + 1;
            found.push((line, name.to_string()));
        }
    }
    found.sort();
    found
}

fn names() -> Vec<&'static str> {
    all_strategies().into_iter().chain(stores()).collect()
}

#[test]
fn no_test_lists_strategies_or_stores_by_hand() {
    let names = names();
    let mut offences = Vec::new();
    for file in test_files() {
        let text = std::fs::read_to_string(&file).expect("a test file");
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        if name == "lists.rs" {
            continue;
        }
        for (line, what) in hand_listed(&text, &names) {
            offences.push(format!("{name}:{line}: \"{what}\""));
        }
    }
    assert!(
        offences.is_empty(),
        "strategies or stores named by hand (iterate `strategies()`, `stores()`, \
         `bucket_stores()`, or use `per_strategy!` / `per_strategy_and_store!`):\n{}",
        offences.join("\n")
    );
}

/// The benchmark script asks the binary for its strategies.
#[test]
fn the_strategies_benchmark_lists_none_by_hand() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches/strategies.py");
    let text = std::fs::read_to_string(script).expect("benches/strategies.py");
    let strategies = all_strategies();
    let found = hand_listed(&text, &strategies);
    assert!(found.is_empty(), "benches/strategies.py names {found:?}");
}

/// The scan itself: it catches a list and a matrix entry, and lets one
/// server's flag through.
#[test]
fn the_scan_tells_lists_from_one_server() {
    let names = ["pool-locked", "async", "mutex"];
    let listed = "for s in [\"pool-locked\", \"async\"] {}\nm! { a: \"async\", \"mutex\"; }";
    assert_eq!(
        hand_listed(listed, &names),
        vec![
            (1, "async".to_string()),
            (1, "pool-locked".to_string()),
            (2, "async".to_string()),
            (2, "mutex".to_string()),
        ]
    );
    let one = "start(&[\"--strategy\",\n    \"pool-locked\", \"--store\", \"mutex\"]);\nstrategy = \"async\"";
    assert!(hand_listed(one, &names).is_empty());
}
