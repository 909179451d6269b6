//! docs/checking.md names every case of every protocol, with the right
//! counts, so the page cannot fall behind the code.

use serverlab_check::{Board, Bucket, Kv, Protocol};

fn page() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/checking.md");
    std::fs::read_to_string(path).expect("docs/checking.md")
}

fn documented<P: Protocol>(page: &str) {
    let cases = P::cases();
    let heading = format!("### {} ({} cases)", P::NAME, cases.len());
    assert!(
        page.contains(&heading),
        "docs/checking.md lacks '{heading}'"
    );
    for c in cases {
        assert!(
            page.contains(&format!("| `{}`", c.name)),
            "docs/checking.md does not describe {} case {}",
            P::NAME,
            c.name
        );
    }
}

#[test]
fn every_case_is_documented() {
    let page = page();
    documented::<Board>(&page);
    documented::<Bucket>(&page);
    documented::<Kv>(&page);
}

/// Board has at least the CAPS verifier's 18 cases; names are distinct
/// within a protocol and never the concurrency phase's.
#[test]
fn case_names() {
    assert!(Board::cases().len() >= 18);
    for cases in [
        Board::cases().iter().map(|c| c.name).collect::<Vec<_>>(),
        Bucket::cases().iter().map(|c| c.name).collect(),
        Kv::cases().iter().map(|c| c.name).collect(),
    ] {
        let mut sorted = cases.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), cases.len(), "duplicate case names: {cases:?}");
        assert!(!cases.contains(&serverlab_check::run::LINEARIZABLE));
    }
}
