//! During the concurrency phase, one redrawing line on stderr (on a
//! terminal only, as `load`'s bar): while the clients run, the time and
//! the operations done; while the history is checked, the time spent
//! against `--lin-budget`, the operations decided and the configurations
//! searched.

use indicatif::{ProgressBar, ProgressStyle};
use serverlab_check::concurrency::checking;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The display, while it lives; dropping it clears the line.
pub struct Shown {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Shown {
    /// Start it, if stderr is a terminal: for a phase of `duration`
    /// whose check has `budget` (`--lin-budget`).
    pub fn start(duration: Duration, budget: Duration) -> Option<Shown> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        let thread = std::thread::spawn(move || show(duration, budget, &d));
        Some(Shown {
            done,
            thread: Some(thread),
        })
    }
}

impl Drop for Shown {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// How often the line is redrawn.
const TICK: Duration = Duration::from_millis(50);

/// Redraw until `done`.
fn show(duration: Duration, budget: Duration, done: &AtomicBool) {
    let c = checking();
    let bar = ProgressBar::new_spinner();
    bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
    let (mut driving, mut checking_since) = (None, None);
    while !done.load(Ordering::Acquire) {
        if c.active.load(Ordering::Acquire) {
            let since = *checking_since.get_or_insert_with(Instant::now);
            bar.set_message(line(since.elapsed(), budget));
            bar.tick();
        } else if c.driving.load(Ordering::Acquire) {
            let since = *driving.get_or_insert_with(Instant::now);
            // Relaxed: a figure for display.
            let sent = c.sent.load(Ordering::Relaxed);
            bar.set_message(format!(
                "clients: {:.1} s of {:.1} s, {sent} operations",
                since.elapsed().as_secs_f64(),
                duration.as_secs_f64()
            ));
            bar.tick();
        }
        std::thread::sleep(TICK);
    }
    bar.finish_and_clear();
}

/// `checking: 12 s of 30 s, 4500/60000 operations decided, 81234 states`.
pub fn line(elapsed: Duration, budget: Duration) -> String {
    let c = checking();
    let (decided, states) = c.progress.read();
    // Relaxed: a figure for display.
    let total = c.operations.load(Ordering::Relaxed);
    format!(
        "checking: {:.0} s of {:.0} s, {decided}/{total} operations decided, {states} states",
        elapsed.as_secs_f64(),
        budget.as_secs_f64(),
    )
}
