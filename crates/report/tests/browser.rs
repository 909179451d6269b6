//! The HTML report as a person sees it: a CAPS-sized report rendered by
//! headless Chromium at 1280 × 1600. It takes a screenshot of the first
//! screen (kept under the target directory to look at), and measures the
//! page: a copy of the report with a small script that writes, into the
//! DOM Chromium dumps, where the summary, the plots heading and the first
//! figure are. Positions from the page's own layout do not depend on
//! fonts' pixels matching a reference picture, so the check is robust
//! where comparing screenshots would not be.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The first screen: the window the screenshot is taken at.
const WIDTH: u32 = 1280;
const HEIGHT: u32 = 1600;

/// Marks the line the probe script writes (spelt in two halves in the
/// script, so that the script's own text does not match).
const MARK: &str = "GEOMETRY ";

/// Writes `GEOMETRY summary-top plots-top figure-top figure-bottom
/// inner-width inner-height` (page coordinates, CSS pixels) into the page.
const PROBE: &str = r#"<script>
(function () {
  function at(e) { var b = e.getBoundingClientRect(); return [b.top + window.scrollY, b.bottom + window.scrollY]; }
  var f = document.querySelector('figure');
  var out = document.createElement('pre');
  out.textContent = 'GEO' + 'METRY ' + [at(document.getElementById('summary'))[0], at(document.getElementById('plots'))[0],
    at(f)[0], at(f)[1], window.innerWidth, window.innerHeight].join(' ');
  document.body.appendChild(out);
})();
</script>
"#;

fn chromium() -> PathBuf {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::var("PATH").unwrap_or_default().split(':') {
            let path = Path::new(dir).join(name);
            if path.is_file() {
                return path;
            }
        }
    }
    panic!("chromium is not installed: apt-get install chromium (.ci/run installs it)");
}

/// Run headless Chromium on `page` with `args`; its stdout. Fails the
/// test if it does not finish within a minute or exits badly.
fn run_chromium(page: &Path, profile: &Path, args: &[&str]) -> String {
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={WIDTH},{HEIGHT}"))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).ok();
        text
    });
    let status = serverlab_util::child::wait_or_kill(&mut child, Duration::from_secs(60))
        .expect("chromium did not finish within a minute");
    assert!(status.success(), "chromium failed: {status}");
    reader.join().unwrap()
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
#[ignore = "needs chromium (apt-get install chromium); run: cargo test --workspace -- --ignored"]
fn the_summary_and_the_first_plot_are_on_the_first_screen() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("caps");
    common::caps_like(&dir);
    let written = serverlab_report::generate(&dir, None).unwrap();

    // What a person sees first.
    let shot = tmp.path().join("first-screen.png");
    run_chromium(
        &written.html,
        &tmp.path().join("profile-1"),
        &[&format!("--screenshot={}", shot.display())],
    );
    let bytes = std::fs::read(&shot).expect("chromium wrote no screenshot");
    assert_eq!(png_size(&bytes), (WIDTH, HEIGHT));
    let kept = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-first-screen.png");
    std::fs::write(&kept, &bytes).unwrap();
    println!("the first screen of the report: {}", kept.display());

    // Where things are on the page.
    let html = std::fs::read_to_string(&written.html).unwrap();
    let probe = dir.join("probe.html");
    std::fs::write(&probe, html.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
    let dom = run_chromium(
        &probe,
        &tmp.path().join("profile-2"),
        &["--dump-dom", "--virtual-time-budget=5000"],
    );
    let line = dom
        .lines()
        .find_map(|l| l.split(MARK).nth(1))
        .unwrap_or_else(|| panic!("the probe wrote nothing: {dom}"));
    let v: Vec<f64> = line
        .split_whitespace()
        .map_while(|x| x.trim_end_matches("</pre>").parse().ok())
        .collect();
    let [summary, plots, fig_top, fig_bottom, width, _] = v[..] else {
        panic!("unexpected geometry: {line}");
    };
    println!(
        "summary at {summary} px, plots at {plots} px, first figure {fig_top}–{fig_bottom} px"
    );
    assert_eq!(
        width,
        f64::from(WIDTH),
        "the page was laid out at another width: {line}"
    );
    assert!(
        summary < 200.0,
        "the summary starts at {summary} px: {line}"
    );
    assert!(
        summary < plots && plots < fig_top,
        "summary, plots, figure out of order: {line}"
    );
    assert!(
        fig_bottom <= f64::from(HEIGHT),
        "the first plot ends at {fig_bottom} px, below the first screen ({HEIGHT} px): {line}"
    );
}
