//! What `serverlab man` adds to clap_mangen's pages: EXIT STATUS, EXAMPLES
//! (the README's own command lines) and SEE ALSO (the pages beside it).

use clap::Command;
use std::path::Path;

/// What exit status 1 means, by top-level command.
const FAILS: [(&str, &str); 8] = [
    (
        "serve",
        "it could not serve (its address taken, its log unusable, a bad --command)",
    ),
    (
        "load",
        "the load had errors or replies that failed --verify, or could not run",
    ),
    (
        "check",
        "a case failed, the history was not linearizable, or the server could not be checked",
    ),
    (
        "sweep",
        "the experiment could not run, or a point failed (its log says why)",
    ),
    ("report", "the results could not be read"),
    (
        "merge",
        "the merged run failed, or the files cannot be merged",
    ),
    ("fit", "the points could not be read or fitted"),
    ("demo", "the demo's server or load failed"),
];

/// Command lines, by the page's command path (the README's).
const EXAMPLES: [(&str, &[&str]); 24] = [
    ("", &["serverlab serve board --cpus 0", "serverlab load board --posters 5 --readers 5 --duration 10s --cpus 1 --verify", "serverlab check board 127.0.0.1:12345", "serverlab sweep experiments/caps.toml"]),
    ("serve", &["serverlab serve board --strategy pool-locked --threads 2 --store sharded --cpus 0", "serverlab serve --help"]),
    ("serve board", &["serverlab serve board --strategy pool-locked --threads 2 --store sharded --cpus 0", "serverlab serve board --strategy uring --threads 2 --cpus 0,1"]),
    ("serve echo", &["serverlab serve echo --cpus 0"]),
    ("serve kv", &["serverlab serve kv --strategy pool-locked --store rwlock --cpus 0", "serverlab serve kv --metrics 127.0.0.1:9464"]),
    ("serve bucket", &["serverlab serve bucket 32 --strategy thread-per-request --delay-unit ms --cpus 0"]),
    ("serve resp", &["serverlab serve resp --cpus 0"]),
    ("serve external", &["serverlab serve external --command 'redis-server --port $PORT --save \"\" --appendonly no'"]),
    ("load", &["serverlab load board --posters 5 --readers 5 --duration 10s --cpus 1 --verify"]),
    ("load board", &["serverlab load board --posters 5 --readers 5 --duration 10s --cpus 1 --verify", "serverlab load board 127.0.0.1 5 5 10 0 --cpus 1"]),
    ("load kv", &["serverlab load kv --sessions 1000 --requests-per-session 100 --concurrency 10 --preload --verify --cpus 1"]),
    ("load bucket", &["serverlab load bucket --connections 32 --delay 1-3 --delay-unit ms --duration 5s --verify --cpus 1"]),
    ("load resp", &["serverlab load resp --addr 127.0.0.1:6379 --mix get=80,set=20 --pipeline 16 --duration 5s --verify --cpus 1"]),
    ("check", &["serverlab check board 127.0.0.1:12345"]),
    ("check board", &["serverlab check board 127.0.0.1:12345"]),
    ("check kv", &["serverlab check kv 127.0.0.1:8080"]),
    ("check resp", &["serverlab check resp 127.0.0.1:6379"]),
    ("sweep", &["serverlab sweep experiments/caps.toml"]),
    ("report", &["serverlab report results/caps"]),
    ("merge", &["serverlab merge results/agents --json merged.json"]),
    ("fit", &["serverlab fit crates/report/tests/data/specsdm91.csv"]),
    ("demo", &["serverlab demo"]),
    ("completions", &["source <(serverlab completions bash)"]),
    ("man", &["serverlab man | man -l -", "serverlab man ~/.local/share/man/man1"]),
];

/// The page of `cmd` (at `path` under `root`, built): clap_mangen's,
/// then ours.
pub fn page(root: &Command, cmd: &Command, path: &[&str]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut out)?;
    out.extend(exit_status(path).as_bytes());
    out.extend(examples(path).as_bytes());
    out.extend(see_also(root, path).as_bytes());
    Ok(out)
}

/// Every page of `root` (built) into `dir`, a file each
/// (`serverlab-load-board.1`).
pub fn write_pages(root: &Command, dir: &Path) -> std::io::Result<()> {
    fn each(
        root: &Command,
        cmd: &Command,
        path: &mut Vec<String>,
        dir: &Path,
    ) -> std::io::Result<()> {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            path.push(sub.get_name().to_string());
            each(root, sub, path, dir)?;
            path.pop();
        }
        let words: Vec<&str> = path.iter().map(String::as_str).collect();
        let file = dir.join(clap_mangen::Man::new(cmd.clone()).get_filename());
        std::fs::write(file, page(root, cmd, &words)?)
    }
    each(root, root, &mut Vec::new(), dir)
}

/// Text as roff takes it: backslashes and dashes escaped, a line that
/// begins with a dot or quote kept as text.
fn roff(text: &str) -> String {
    let t = text.replace('\\', "\\e").replace('-', "\\-");
    if t.starts_with('.') || t.starts_with('\'') {
        format!("\\&{t}")
    } else {
        t
    }
}

fn exit_status(path: &[&str]) -> String {
    let fails = path
        .first()
        .and_then(|top| FAILS.iter().find(|(c, _)| c == top))
        .map_or("the command failed (its message says why)", |(_, why)| why);
    let mut out = format!(
        ".SH \"EXIT STATUS\"\n.TP\n0\nsuccess\n.TP\n1\n{}\n.TP\n2\n{}\n",
        roff(fails),
        roff("a usage error: a bad flag or value, named in the message")
    );
    if path.first() == Some(&"load") {
        for (code, why) in LOAD_STATUSES {
            out.push_str(&format!(".TP\n{code}\n{}\n", roff(why)));
        }
    }
    out
}

/// `load`'s statuses besides 0, 1 and 2, each when nothing else failed.
const LOAD_STATUSES: [(u8, &str); 3] = [
    (
        3,
        "with --require-certified: the run's figures did not certify themselves",
    ),
    (4, "a --threshold failed (each said on stderr)"),
    (
        130,
        "interrupted (SIGINT, SIGTERM): what was measured is still printed",
    ),
];

fn examples(path: &[&str]) -> String {
    let key = path.join(" ");
    let lines: Vec<String> = match EXAMPLES.iter().find(|(p, _)| *p == key) {
        Some((_, lines)) => lines.iter().map(|l| roff(l)).collect(),
        None => vec![roff(&format!("serverlab {key} --help").replace("  ", " "))],
    };
    format!(".SH EXAMPLES\n.nf\n{}\n.fi\n", lines.join("\n"))
}

/// The pages beside this one: the top page, its parent's, and for a
/// protocol's page the other commands' pages of that protocol.
fn see_also(root: &Command, path: &[&str]) -> String {
    let page = |p: &[&str]| {
        let mut name = vec!["serverlab"];
        name.extend(p);
        format!("{}(1)", name.join("\\-"))
    };
    let mut pages = Vec::new();
    if !path.is_empty() {
        pages.push(page(&[]));
    }
    if path.len() > 1 {
        pages.push(page(&path[..path.len() - 1]));
    }
    if let [top, protocol] = path {
        for other in ["serve", "load", "check"] {
            let has = root
                .find_subcommand(other)
                .is_some_and(|c| c.find_subcommand(protocol).is_some());
            if other != *top && has {
                pages.push(page(&[other, protocol]));
            }
        }
    }
    if path.is_empty() {
        for sub in [
            "serverlab-serve(1)",
            "serverlab-load(1)",
            "serverlab-check(1)",
        ] {
            pages.push(sub.replace('-', "\\-"));
        }
    }
    format!(
        ".SH \"SEE ALSO\"\n{}\n.PP\nThe guides are docs/ in the source tree (docs/getting\\-started.md first).\n",
        pages.join(", ")
    )
}
