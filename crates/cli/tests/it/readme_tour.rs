//! The README's tour, run in order as a new user would, shortened: every
//! command must exit 0 with nothing on stderr, so the README cannot drift
//! from the binary. Servers listen on a loopback address of the test's own
//! (127.x.y.z, at the protocol's default port), so the tour's default
//! addresses work unchanged and no other test's port is taken.

use crate::support::*;
use std::path::Path;
use std::time::Duration;

fn root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The tour's commands, without `serverlab` and comments.
fn tour() -> Vec<Vec<String>> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .expect("README.md");
    let tour = readme
        .split("## A short tour")
        .nth(1)
        .expect("a tour section");
    let block = tour
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block");
    block
        .lines()
        .map(|l| {
            l.split(" #")
                .next()
                .unwrap()
                .split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .filter(|words| !words.is_empty())
        .map(|words| {
            assert_eq!(
                words[0], "serverlab",
                "a tour line runs serverlab: {words:?}"
            );
            words[1..].to_vec()
        })
        .collect()
}

/// The value after `flag` set to `value`, if the flag is there.
fn set(args: &mut [String], flag: &str, value: &str) {
    if let Some(i) = args.iter().position(|a| a == flag) {
        args[i + 1] = value.into();
    }
}

/// `load board IP POSTERS READERS SECONDS THROTTLE [flags]`: the CAPS
/// reference client's form.
fn reference_form(args: &[String]) -> bool {
    args.len() >= 7
        && args[..2] == ["load", "board"]
        && !args[2].starts_with('-')
        && args[3..7].iter().all(|a| a.parse::<f64>().is_ok())
}

/// A command of the tour made short and pointed at the test's address.
fn shortened(mut args: Vec<String>, ip: &str, results: &Path) -> Vec<String> {
    for a in args.iter_mut() {
        *a = a.replace("127.0.0.1", ip);
    }
    set(&mut args, "--duration", "1s");
    set(&mut args, "--sessions", "20");
    match args[0].as_str() {
        "load" if !args.iter().any(|a| a.contains(ip)) => args.extend(["--addr".into(), ip.into()]),
        // The reference form: IP POSTERS READERS SECONDS THROTTLE.
        "load" if reference_form(&args) => args[5] = "1".into(),
        "sweep" => args.push("--dry-run".into()),
        "report" => args[1] = results.to_str().unwrap().into(),
        _ => {}
    }
    args
}

/// A real sweep's results, small, for the tour's `report`.
fn tiny_results(dir: &Path) -> std::path::PathBuf {
    let exp = dir.join("tiny.toml");
    std::fs::write(
        &exp,
        "name = \"tiny\"\nprotocol = \"board\"\nrepetitions = 2\n[server]\nstrategy = \"pool-locked\"\n\
         threads = 1\n[load]\nposters = 1\nreaders = 1\nduration = \"1s\"\n",
    )
    .unwrap();
    let out = dir.join("results");
    let done = run(&[
        "sweep",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(done.status.success(), "{}", text(&done.stderr));
    out
}

#[test]
fn readme_tour() {
    let pid = std::process::id();
    let ip = format!("127.{}.{}.{}", 100 + pid % 100, (pid / 100) % 250 + 1, 7);
    let tmp = tempfile::tempdir().unwrap();
    let results = tiny_results(tmp.path());
    let mut server: Option<ServerProc> = None;
    for line in tour() {
        let args = shortened(line, &ip, &results);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        if argv[0] == "serve" && argv.get(1).is_some_and(|p| !p.starts_with('-')) {
            drop(server.take());
            let port = match argv[1] {
                "kv" => 8080,
                "resp" => 6379,
                _ => 12345,
            };
            let addr = format!("{ip}:{port}");
            server = Some(ServerProc::spawn(&[&argv[..], &["--addr", &addr]].concat()));
            continue;
        }
        // From the repository's root, as the README is read.
        let out = std::process::Command::new(BIN)
            .args(&argv)
            .current_dir(root())
            .output()
            .unwrap();
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(
            out.status.success(),
            "serverlab {args:?} failed:\n{stdout}{stderr}"
        );
        // A warning that the client may have set the pace depends on how
        // busy this machine is, not on the README; anything else on stderr
        // is a fault.
        let unexpected: Vec<&str> = stderr
            .lines()
            .filter(|l| !l.starts_with("serverlab: warning: the client"))
            .collect();
        assert!(
            unexpected.is_empty(),
            "serverlab {args:?} wrote to stderr: {stderr}"
        );
        // Every load is pinned apart from its server, as the README tells
        // readers to: none is told to pin them apart.
        assert!(
            !stdout.contains("Pin server and client apart") && !stderr.contains("Pin server"),
            "serverlab {args:?} is not pinned apart from its server:\n{stdout}{stderr}"
        );
        if argv[0] == "load" {
            assert!(
                argv.contains(&"--cpus"),
                "the tour's `{args:?}` is not pinned"
            );
        }
        if reference_form(&args) {
            // As the README says: its EXIT stops the server.
            let mut s = server.take().expect("a server for the reference form");
            assert!(
                s.wait_exit(Duration::from_secs(10))
                    .is_some_and(|st| st.success()),
                "the reference form's EXIT did not stop the server"
            );
        }
    }
    drop(server);
}
