//! `serverlab completions SHELL` and `serverlab man [DIR]`: generated
//! from the command line's definitions, so every subcommand (and every
//! protocol of serve, load and check) is in each shell's script and has
//! its man page.

use crate::support::*;

/// The subcommands `serverlab [command] --help` lists, `help` left out.
fn subcommands(command: &[&str]) -> Vec<String> {
    let mut listed = listed_subcommands(command);
    listed.retain(|c| c != "help");
    listed
}

/// Every command path: `["load"]`, `["load", "board"]`, …
fn command_paths() -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let top = subcommands(&[]);
    for cmd in [
        "serve",
        "load",
        "check",
        "sweep",
        "report",
        "fit",
        "completions",
        "man",
    ] {
        assert!(top.iter().any(|c| c == cmd), "{cmd} not in {top:?}");
    }
    for cmd in top {
        let nested = subcommands(&[&cmd]);
        paths.push(vec![cmd.clone()]);
        paths.extend(nested.into_iter().map(|n| vec![cmd.clone(), n]));
    }
    paths
}

fn completion(shell: &str) -> String {
    let out = run(&["completions", shell]);
    assert!(out.status.success(), "{shell}: {}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{shell}: {}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn every_subcommand_is_completed_in_bash_zsh_and_fish() {
    let (bash, zsh, fish) = (completion("bash"), completion("zsh"), completion("fish"));
    for path in command_paths() {
        let name = path.last().unwrap();
        assert!(bash.contains(&format!(",{name})")), "bash lacks {path:?}");
        assert!(zsh.contains(&format!("'{name}:")), "zsh lacks {path:?}");
        assert!(
            fish.contains(&format!("-a \"{name}\"")),
            "fish lacks {path:?}"
        );
    }
    // Flags too: one of load's and one of serve's.
    for flag in ["--verify", "--strategy", "--format"] {
        for (shell, script) in [("bash", &bash), ("zsh", &zsh)] {
            assert!(script.contains(flag), "{shell} lacks {flag}");
        }
    }
    // The bash script is valid bash.
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("serverlab.bash");
    std::fs::write(&script, &bash).unwrap();
    let checked = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .expect("bash");
    assert!(checked.status.success(), "{}", text(&checked.stderr));
    usage_error(&["completions", "tcsh"], "tcsh");
}

#[test]
fn every_subcommand_has_its_man_page() {
    let out = run(&["man"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let top = text(&out.stdout);
    assert!(
        top.starts_with(".ie") || top.contains(".TH serverlab 1"),
        "{top}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("man1");
    let out = run(&["man", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(dir.join("serverlab.1")).unwrap(),
        top
    );
    for path in command_paths() {
        let page = format!("serverlab-{}", path.join("-"));
        let file = dir.join(format!("{page}.1"));
        let body =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(body.contains(".TH"), "{page}: {body}");
        if path.len() == 1 {
            let cited = format!("serverlab\\-{}(1)", path[0]);
            assert!(top.contains(&cited), "serverlab.1 does not list {cited}");
        }
    }
    let board = std::fs::read_to_string(dir.join("serverlab-load-board.1")).unwrap();
    assert!(
        board.contains("\\-\\-posters"),
        "load board's page has its flags"
    );
}
