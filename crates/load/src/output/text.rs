//! The default, human output: totals, rates and latency percentiles per
//! operation, errors, verification, and the client's own CPU use.

use crate::report::LoadReport;
use std::fmt::Write;

pub fn render(report: &LoadReport) -> String {
    let r = &report.results;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} load: {} requests in {:.2} s = {:.1} req/s ({})",
        report.protocol, r.requests, r.duration_s, r.throughput_rps, report.load_model
    );
    let _ = writeln!(
        out,
        "  {:<8} {:>10} {:>11} {:>9} {:>9} {:>9} {:>9} {:>10}",
        "op", "count", "rate/s", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs"
    );
    for op in r.operations.iter().filter(|o| o.count > 0) {
        let l = &op.latency_us;
        let _ = writeln!(
            out,
            "  {:<8} {:>10} {:>11.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>10.1}",
            op.name, op.count, op.rate_rps, l.p50, l.p90, l.p99, l.p99_9, l.max
        );
    }
    // The protocol's own lines.
    for line in r.protocol.iter().flat_map(|p| p.text_lines()) {
        let _ = writeln!(out, "  {line}");
    }
    if r.late_replies > 0 {
        // Late replies are checked only when every reply is.
        let fate = if r.verification.enabled {
            "checked, not counted"
        } else {
            "not counted"
        };
        let _ = writeln!(
            out,
            "  {} replies arrived after the window: {fate}",
            r.late_replies
        );
    }
    if r.errors.is_empty() {
        let _ = writeln!(out, "  errors: none");
    } else {
        let _ = writeln!(out, "  errors: {}", r.errors.len());
        for e in &r.errors {
            let _ = writeln!(out, "    {e}");
        }
    }
    let v = &r.verification;
    if v.enabled {
        let _ = writeln!(
            out,
            "  verification: {} checks, {} mismatches",
            v.checked, v.mismatches
        );
        for e in &v.examples {
            let _ = writeln!(out, "    {e}");
        }
    } else {
        let _ = writeln!(out, "  verification: off (--verify checks every reply)");
    }
    let c = &r.client_cpu;
    let _ = writeln!(
        out,
        "  client CPU: {:.2} s user + {:.2} s system, {:.2} s of it polling for replies; working {:.0}% of {} core(s)",
        c.user_s,
        c.system_s,
        c.idle_poll_s,
        c.utilization * 100.0,
        c.cores
    );
    if c.bottleneck {
        let _ = writeln!(
            out,
            "  warning: the client kept its cores {:.0}% busy, so it may have set the pace, not the server \
             (on loopback part of that is the kernel delivering requests to the server: docs/measuring.md). \
             Give it more cores or fewer connections, and pin server and client apart (taskset, --cpus).",
            c.utilization * 100.0
        );
    }
    out
}
