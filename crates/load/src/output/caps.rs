//! The CAPS reference client's output, byte for byte: a block per thread
//! (posters first), then seven summary lines. Integer divisions where the
//! reference divides integers; averages over time as C++ prints doubles.

use super::gfmt::g;
use crate::report::LoadReport;
use std::fmt::Write;

pub fn render(report: &LoadReport) -> String {
    let r = &report.results;
    let seconds = r.duration_s.ceil() as usize;
    let mut out = String::new();
    for t in &r.threads {
        let label = if t.role == "poster" { "POST" } else { "READ" };
        let _ = writeln!(out, "{label} thread {} sent:", t.index);
        for s in 0..seconds {
            let _ = writeln!(
                out,
                "\tSecond {s}: {} requests.",
                t.per_second.get(s).copied().unwrap_or(0)
            );
        }
        let runtime = t.runtime_s.max(f64::MIN_POSITIVE);
        let _ = writeln!(out, "\tAverage: {} requests.", g(t.total as f64 / runtime));
        let _ = writeln!(out, "\tRuntime: {} seconds.", g(t.runtime_s));
    }
    let sum = |role: &str| -> (u64, u64) {
        let ts: Vec<_> = r.threads.iter().filter(|t| t.role == role).collect();
        (ts.iter().map(|t| t.total).sum(), ts.len() as u64)
    };
    let (posts, posters) = sum("poster");
    let (reads, readers) = sum("reader");
    let div = |a: u64, b: u64| a.checked_div(b).unwrap_or(0);
    let total = posts + reads;
    let per_thread = div(total, posters + readers);
    let runtime = if r.threads.is_empty() {
        r.duration_s
    } else {
        r.threads.iter().map(|t| t.runtime_s).sum::<f64>() / r.threads.len() as f64
    };
    out.push('\n');
    let _ = writeln!(out, "Total poster requests: {posts}.");
    let _ = writeln!(
        out,
        "Average requests per poster thread: {}.",
        div(posts, posters)
    );
    let _ = writeln!(out, "Total reader requests: {reads}.");
    let _ = writeln!(
        out,
        "Average requests per reader thread: {}.",
        div(reads, readers)
    );
    let _ = writeln!(out, "Total requests: {total}.");
    let _ = writeln!(out, "Average requests per thread: {per_thread}.");
    let _ = writeln!(
        out,
        "Average requests per thread per second: {}.",
        g(per_thread as f64 / runtime.max(f64::MIN_POSITIVE))
    );
    out
}
