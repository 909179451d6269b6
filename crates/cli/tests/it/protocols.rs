//! The protocols are the registry's (`serverlab_proto::for_each_protocol!`):
//! every one is served, loaded and checked by the real binary, with the
//! same limits in `serve` and `check`, and has its place in the docs.

use crate::support::*;
use serverlab_proto::ProtocolKind;
use serverlab_util::Named;
use std::path::Path;

fn registered() -> Vec<&'static str> {
    ProtocolKind::ALL.iter().map(|p| p.name()).collect()
}

/// The subcommands `serverlab <command> --help` lists.
fn subcommands(command: &str) -> Vec<String> {
    listed_subcommands(&[command])
}

#[test]
fn every_protocol_is_served_loaded_and_checked() {
    for command in ["serve", "load", "check"] {
        let listed = subcommands(command);
        for name in registered() {
            assert!(
                listed.iter().any(|c| c == name),
                "`serverlab {command} --help` lacks {name}: {listed:?}"
            );
            let out = run(&[command, name, "--help"]);
            assert!(out.status.success(), "{command} {name} --help");
        }
    }
    // `check` has nothing but the registry's protocols; `load` has them
    // and `http`, for any HTTP/1.1 server.
    let mut expected: Vec<String> = registered().iter().map(|s| s.to_string()).collect();
    let mut loads = expected.clone();
    loads.extend(["http".to_string(), "help".to_string()]);
    expected.push("help".into());
    assert_eq!(subcommands("load"), loads);
    assert_eq!(subcommands("check"), expected);
}

/// The lines of a `--help` under its "Limits" heading.
fn limits_section(args: &[&str]) -> Vec<String> {
    let out = run(args);
    assert!(out.status.success(), "{args:?}");
    text(&out.stdout)
        .lines()
        .skip_while(|l| !l.starts_with("Limits"))
        .take_while(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// `serve P` and `check P` take the same limit flags, with the same
/// defaults: one struct flattened into both.
#[test]
fn serve_and_check_take_the_same_limits() {
    for name in registered() {
        let served = limits_section(&["serve", name, "-h"]);
        assert!(
            served.len() > 1,
            "serve {name} -h has no limits: {served:?}"
        );
        assert_eq!(
            served,
            limits_section(&["check", name, "-h"]),
            "{name}: serve and check differ"
        );
    }
}

#[test]
fn every_protocol_has_its_docs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let read = |p: &str| std::fs::read_to_string(root.join(p)).expect(p);
    let readme = read("README.md");
    let checking = read("docs/checking.md");
    let getting_started = read("docs/getting-started.md");
    let addresses = getting_started
        .split("## Addresses")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("docs/getting-started.md has an Addresses section");
    for name in registered() {
        let page = format!("docs/protocols/{name}.md");
        assert!(root.join(&page).is_file(), "{page} is missing");
        assert!(
            readme.contains(&format!("({page})")),
            "README does not link {page}"
        );
        assert!(
            checking.contains(&format!("### {name} (")),
            "docs/checking.md has no section for {name}"
        );
        let port = ProtocolKind::ALL
            .iter()
            .find(|p| p.name() == name)
            .unwrap()
            .default_port();
        assert!(
            addresses.contains(&format!("{port} for")) && addresses.contains(name),
            "docs/getting-started.md's Addresses does not give {name}'s port {port}"
        );
    }
}
