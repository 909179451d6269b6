//! docs/checking.md names every case of every protocol, with the right
//! counts, so the page cannot fall behind the code. The protocols are the
//! registry's (`serverlab_proto::for_each_protocol!`): each has a checker
//! here, `serverlab_check::Variant`, or this does not compile.

use serverlab_check::{Board, Protocol};

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

/// Each protocol's case names, by the registry.
fn case_names_per_protocol() -> Vec<(&'static str, Vec<&'static str>)> {
    macro_rules! each {
        ([] $($snake:ident: $variant:ident),* $(,)?) => {
            vec![$((
                <serverlab_check::$variant as Protocol>::NAME,
                <serverlab_check::$variant as Protocol>::cases().iter().map(|c| c.name).collect(),
            )),*]
        };
    }
    serverlab_proto::for_each_protocol!(each)
}

#[test]
fn every_case_is_documented() {
    let page = page();
    macro_rules! each {
        ([] $($snake:ident: $variant:ident),* $(,)?) => {
            $(documented::<serverlab_check::$variant>(&page);)*
        };
    }
    serverlab_proto::for_each_protocol!(each);
}

/// Each checker answers to its registered name and port.
#[test]
fn every_registered_protocol_has_its_checker() {
    use serverlab_proto::ProtocolKind;
    use serverlab_util::Named;
    let names: Vec<&str> = case_names_per_protocol().iter().map(|(n, _)| *n).collect();
    let registered: Vec<&str> = ProtocolKind::ALL.iter().map(|p| p.name()).collect();
    assert_eq!(names, registered);
    macro_rules! each {
        ([] $($snake:ident: $variant:ident),* $(,)?) => {
            $(assert_eq!(
                <serverlab_check::$variant as Protocol>::DEFAULT_PORT,
                ProtocolKind::$variant.default_port()
            );)*
        };
    }
    serverlab_proto::for_each_protocol!(each);
}

/// Board has at least the CAPS verifier's 18 cases; names are distinct
/// within a protocol and never the concurrency phase's.
#[test]
fn case_names() {
    assert!(Board::cases().len() >= 18);
    let all = case_names_per_protocol();
    for (protocol, cases) in all {
        let mut sorted = cases.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(
            sorted.len(),
            cases.len(),
            "{protocol}: duplicate case names: {cases:?}"
        );
        assert!(!cases.contains(&serverlab_check::run::LINEARIZABLE));
    }
}
