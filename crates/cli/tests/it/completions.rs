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

/// What bash offers completing the last of `words` (the words after
/// `serverlab`), in `dir`, with the script at `script` sourced.
fn bash_offers(script: &std::path::Path, dir: &std::path::Path, words: &[&str]) -> Vec<String> {
    let mut all = vec!["serverlab"];
    all.extend(words);
    let quoted: Vec<String> = all.iter().map(|w| format!("'{w}'")).collect();
    let (cur, prev) = (all[all.len() - 1], all[all.len() - 2]);
    let program = format!(
        "source {}; COMP_WORDS=({}); COMP_CWORD={}; _serverlab serverlab '{cur}' '{prev}'; \
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" "),
        all.len() - 1
    );
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(program)
        .current_dir(dir)
        .output()
        .expect("bash");
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout).lines().map(str::to_string).collect()
}

/// Bash completes the values flags take, not file names: `check P
/// --only` and `--skip` the protocol's cases, `load resp --mix` its
/// commands; and `sweep` an experiment's .toml file (and folders), not
/// its flags (before: files, files, and every flag of sweep).
#[test]
fn bash_completes_cases_mixes_and_experiments() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("serverlab.bash");
    std::fs::write(&script, completion("bash")).unwrap();
    let dir = tmp.path().join("work");
    std::fs::create_dir_all(dir.join("experiments")).unwrap();
    for f in ["caps.toml", "notes.txt"] {
        std::fs::write(dir.join(f), "").unwrap();
    }
    let offers = |words: &[&str]| bash_offers(&script, &dir, words);

    let sweep = offers(&["sweep", ""]);
    assert!(sweep.contains(&"caps.toml".to_string()), "{sweep:?}");
    assert!(sweep.contains(&"experiments".to_string()), "{sweep:?}");
    assert!(
        !sweep.iter().any(|o| o == "notes.txt" || o.starts_with('-')),
        "{sweep:?}"
    );
    assert!(offers(&["sweep", "--dr"]).contains(&"--dry-run".to_string()));

    let cases = offers(&["check", "board", "--only", ""]);
    assert!(cases.contains(&"linearizable".to_string()), "{cases:?}");
    assert!(cases.len() > 5, "{cases:?}");
    assert!(!cases.iter().any(|c| c.contains('.')), "files: {cases:?}");
    let skip = offers(&["check", "resp", "--skip", ""]);
    assert!(skip.contains(&"linearizable".to_string()), "{skip:?}");

    let mix = offers(&["load", "resp", "--mix", ""]);
    for op in ["get=1", "set=1", "lrange=1"] {
        assert!(mix.contains(&op.to_string()), "{op}: {mix:?}");
    }
    assert!(!mix.iter().any(|c| c.contains('.')), "files: {mix:?}");
}

/// Every page has EXIT STATUS, EXAMPLES and SEE ALSO, and renders; the
/// folder's path is printed clean (before: `man -l man//serverlab.1`).
#[test]
fn man_pages_have_exit_status_examples_and_see_also() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = format!("{}/man1/", tmp.path().display());
    let out = run(&["man", &dir]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    let clean = format!("man -l {}/man1/serverlab.1", tmp.path().display());
    assert!(said.contains(&clean) && !said.contains("//"), "{said}");
    for e in std::fs::read_dir(tmp.path().join("man1")).unwrap() {
        let page = std::fs::read_to_string(e.unwrap().path()).unwrap();
        for section in [".SH \"EXIT STATUS\"", ".SH EXAMPLES", ".SH \"SEE ALSO\""] {
            assert!(page.contains(section), "{section}: {page}");
        }
    }
    let kv = std::fs::read_to_string(tmp.path().join("man1/serverlab-load-kv.1")).unwrap();
    assert!(kv.contains("serverlab load kv \\-\\-sessions"), "{kv}");
    assert!(kv.contains("serverlab\\-serve\\-kv(1)"), "{kv}");
    // man renders it (where man is installed), the sections with it.
    let Ok(shown) = std::process::Command::new("man")
        .args(["-l", "-P", "cat"])
        .arg(tmp.path().join("man1/serverlab-load-kv.1"))
        .env("MANWIDTH", "200")
        .output()
    else {
        return;
    };
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    let shown = text(&shown.stdout);
    for section in ["EXIT STATUS", "EXAMPLES", "SEE ALSO"] {
        assert!(shown.contains(section), "{section}: {shown}");
    }
}
