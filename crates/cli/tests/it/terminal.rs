//! The live progress display as a person sees it: the demo and a short
//! sweep in a real terminal (tmux), the pane captured as they run.

use crate::support::*;
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of this test's own, with one detached session.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// Run `shell` (a shell command line) in a new 200×50 pane.
    fn start(name: &str, shell: &str) -> Tmux {
        let found = Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            found,
            "tmux is not installed: apt-get install tmux (.ci/run installs it)"
        );
        let tmux = Tmux {
            socket: format!("serverlab-{name}-{}", std::process::id()),
        };
        let ok = tmux
            .cmd(&[&words("new-session -d -s t -x 200 -y 50")[..], &[shell]].concat())
            .status
            .success();
        assert!(ok, "tmux new-session failed");
        tmux
    }

    fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("run tmux")
    }

    /// The pane's text now.
    fn pane(&self) -> String {
        text(&self.cmd(&["capture-pane", "-p", "-t", "t"]).stdout)
    }

    /// Every distinct live line (`is_live`) seen until `done` shows in
    /// the pane; then the final pane.
    fn watch(&self, is_live: impl Fn(&str) -> bool, done: &str) -> (Vec<String>, String) {
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut seen: Vec<String> = Vec::new();
        loop {
            let pane = self.pane();
            for l in pane.lines().filter(|l| is_live(l)) {
                if seen.last().map(String::as_str) != Some(l.trim_end()) {
                    seen.push(l.trim_end().to_string());
                }
            }
            if pane.contains(done) {
                return (seen, pane);
            }
            assert!(Instant::now() < deadline, "{done:?} never showed:\n{pane}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

/// The demo on a terminal: a live line counting requests, replaced as it
/// runs, and gone from the final output.
#[test]
#[ignore = "needs tmux (apt-get install tmux); run: cargo test --workspace -- --ignored"]
fn demo_live_line_in_a_terminal() {
    let shell = format!("{BIN} demo --duration 3s; echo END-OF-DEMO; sleep 60");
    let tmux = Tmux::start("demo", &shell);
    let is_live = |l: &str| l.contains(" requests, ") && l.contains(" req/s");
    let (seen, pane) = tmux.watch(is_live, "END-OF-DEMO");
    assert!(
        seen.len() >= 2,
        "the live line was not seen replaced: {seen:?}\n{pane}"
    );
    let left: Vec<&str> = pane.lines().filter(|l| is_live(l)).collect();
    assert!(
        left.is_empty(),
        "the live line is left in the final output: {left:?}\n{pane}"
    );
    assert!(
        pane.contains("Reading it:") && pane.contains("board load:"),
        "{pane}"
    );
}

/// A short sweep on a terminal: each run's result line above a bar with
/// an ETA, and no bar left at the end.
#[test]
#[ignore = "needs tmux (apt-get install tmux); run: cargo test --workspace -- --ignored"]
fn sweep_bar_and_run_lines_in_a_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = tmp.path().join("t.toml");
    std::fs::write(
        &exp,
        "name = \"t\"\nprotocol = \"board\"\nrepetitions = 3\n[server]\nstrategy = \"pool-locked\"\n\
         threads = 1\n[load]\nposters = 1\nreaders = 1\nduration = \"1s\"\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let shell = format!(
        "{BIN} sweep {} --out {}; echo END-OF-SWEEP; sleep 60",
        exp.display(),
        out.display()
    );
    let tmux = Tmux::start("sweep", &shell);
    let (seen, pane) = tmux.watch(|l| l.contains("ETA"), "END-OF-SWEEP");
    assert!(
        seen.len() >= 2,
        "the bar was not seen replaced: {seen:?}\n{pane}"
    );
    assert!(
        !pane.contains("ETA"),
        "the bar is left in the final output:\n{pane}"
    );
    for n in 1..=3 {
        assert!(
            pane.contains(&format!("[{n}/3] the point rep ")),
            "run {n}'s line is missing:\n{pane}"
        );
    }
    assert!(pane.contains("serverlab sweep: 3 runs done"), "{pane}");
}
