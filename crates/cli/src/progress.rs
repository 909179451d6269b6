//! A live one-line progress display, on a terminal only.

use indicatif::{ProgressBar, ProgressStyle};
use serverlab_load::Progress;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Run `work` while showing requests done and the current rate on stderr
/// (when it is a terminal) over `planned` time.
pub fn show<T>(planned: Duration, progress: &Progress, work: impl FnOnce() -> T) -> T {
    if !std::io::stderr().is_terminal() {
        return work();
    }
    let bar = ProgressBar::new(planned.as_millis() as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed_precise} [{bar:30}] {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let start = Instant::now();
            let (mut last, mut last_t) = (0u64, start);
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(200));
                let (n, now) = (progress.done(), Instant::now());
                let rate = (n - last) as f64 / (now - last_t).as_secs_f64();
                (last, last_t) = (n, now);
                bar.set_position((now - start).as_millis().min(planned.as_millis()) as u64);
                bar.set_message(format!(
                    "{}, {rate:.0} req/s",
                    serverlab_util::plural(n, "request", "requests")
                ));
            }
            bar.finish_and_clear();
        });
        let out = work();
        done.store(true, std::sync::atomic::Ordering::Release);
        out
    })
}
