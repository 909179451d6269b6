//! What a load shows while it runs (`--progress`): a one-line bar that
//! redraws on a terminal, or a line per second of the window on stderr,
//! from the seconds the event loops hand over ([`serverlab_load::live`]).

use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressStyle};
use serverlab_load::live::{SecondSeen, Totals};
use serverlab_load::Progress;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How a run shows its progress.
#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
pub enum Mode {
    /// Nothing until the result
    None,
    /// A line per second of the window on stderr: rate, errors, p50 and p99 of that second,
    /// behind schedule, time left
    Line,
    /// One line on stderr that redraws (on a terminal only), with the last second's figures
    Bar,
}

/// How long after a second ends its line is written: the loops hand a
/// second over at their first reply of the next.
const SETTLE: Duration = Duration::from_millis(250);
/// How often the display wakes.
const TICK: Duration = Duration::from_millis(100);

/// Run `work` while showing requests done and the current rate on stderr
/// (when it is a terminal) over `planned` time.
pub fn show<T>(planned: Duration, progress: &Progress, work: impl FnOnce() -> T) -> T {
    watch(Mode::Bar, planned, progress, work)
}

/// Run `work` while showing its progress as `mode` says; `planned`: how
/// long it should take, the warm-up included.
pub fn watch<T>(mode: Mode, planned: Duration, progress: &Progress, work: impl FnOnce() -> T) -> T {
    let shown = match mode {
        Mode::None => return work(),
        Mode::Bar if !std::io::stderr().is_terminal() => return work(),
        m => m,
    };
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| match shown {
            Mode::Line => lines(progress, &done),
            _ => bar(planned, progress, &done),
        });
        let out = work();
        done.store(true, Ordering::Release);
        out
    })
}

/// A duration of nanoseconds, short: `850 µs`, `12.3 ms`, `1.20 s`.
pub fn short(ns: u64) -> String {
    let us = ns as f64 / 1e3;
    if us < 1000.0 {
        format!("{us:.0} µs")
    } else if us < 1e6 {
        format!("{:.1} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// A second's figures: `2000 req/s, 0 errors, p50 120 µs, p99 340 µs`
/// and, open loop, `behind 0 µs`.
pub fn figures(s: &SecondSeen, open: bool) -> String {
    let q = |p: f64| short(s.latency.value_at_quantile(p));
    let mut out = format!(
        "{} req/s, {}, p50 {}, p99 {}",
        s.responses,
        serverlab_util::plural(s.errors, "error", "errors"),
        q(0.5),
        q(0.99),
    );
    if open {
        out += &format!(", behind {}", short(s.behind_ns));
    }
    out
}

/// The line of second `k` of the window, if the loops handed it over.
fn line(t: &Totals, k: usize) -> Option<String> {
    let s = t.seconds.iter().find(|s| s.second == k)?;
    let (_, length) = t.window?;
    let left = length.map_or(String::new(), |l| {
        format!(", {:.0} s left", (l - (k + 1) as f64).max(0.0))
    });
    Some(format!(
        "serverlab load: second {}: {}{left}",
        k + 1,
        figures(s, t.open)
    ))
}

/// A line per second of the window on stderr, until `done`.
fn lines(progress: &Progress, done: &AtomicBool) {
    let Some(live) = progress.live() else {
        return;
    };
    let mut next = 0usize;
    while !done.load(Ordering::Acquire) {
        std::thread::sleep(TICK);
        let Some(Some((start, _))) = live.read(|t| t.window) else {
            continue;
        };
        if Instant::now() < start + Duration::from_secs(next as u64 + 1) + SETTLE {
            continue;
        }
        let text = live.read(|t| line(t, next)).flatten();
        // A second with no reply at all still gets its line.
        let text =
            text.unwrap_or_else(|| format!("serverlab load: second {}: no replies", next + 1));
        eprintln!("{text}");
        next += 1;
    }
    // The run is over and every loop has handed its last second over:
    // the seconds not shown yet.
    while let Some(text) = live.read(|t| line(t, next)).flatten() {
        eprintln!("{text}");
        next += 1;
    }
}

/// The redrawing bar on stderr, until `done`.
fn bar(planned: Duration, progress: &Progress, done: &AtomicBool) {
    let bar = ProgressBar::new(planned.as_millis() as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed_precise} [{bar:30}] {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let start = Instant::now();
    let (mut last, mut last_t) = (0u64, start);
    while !done.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(200));
        let (n, now) = (progress.done(), Instant::now());
        let rate = (n - last) as f64 / (now - last_t).as_secs_f64();
        (last, last_t) = (n, now);
        bar.set_position((now - start).as_millis().min(planned.as_millis()) as u64);
        let second = progress
            .live()
            .and_then(|l| l.read(|t| t.seconds.back().map(|s| figures(s, t.open))))
            .flatten();
        bar.set_message(match second {
            Some(f) => format!(
                "{}; last second: {f}",
                serverlab_util::plural(n, "request", "requests")
            ),
            None => format!(
                "{}, {rate:.0} req/s",
                serverlab_util::plural(n, "request", "requests")
            ),
        });
    }
    bar.finish_and_clear();
}
